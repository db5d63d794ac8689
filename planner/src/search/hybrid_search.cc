// Search over pipeline shapes. For each shape the slot cap is lowered step by step
// (parametric search): each dynamic-programming pass returns the least
// fill_drain + exposed all-reduce under the cap; the next pass asks for a strictly
// smaller slot. Every point of the (slot, fill_drain + exposed) Pareto front is visited
// until bounds show no better plan can follow, so the result is exact.
#include "search/hybrid_search.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "search/evaluate.h"
#include "search/pipeline_dp.h"

namespace pe {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr std::size_t kWave = 8;  // shapes searched together with one shared bound
constexpr double kTie = 1e-9;     // plans within this relative margin count as ties

struct Best {
  std::vector<Plan> plans;
  int top = 1;
  Seconds bound() const {
    return static_cast<int>(plans.size()) < top ? kInfinity : plans.back().iteration_time;
  }
  void offer(const Plan& plan);
};

bool same_shape(const Plan& a, const Plan& b) {
  return a.pipeline_replicas == b.pipeline_replicas &&
         a.micro_batch_size == b.micro_batch_size && a.schedule == b.schedule;
}

void Best::offer(const Plan& plan) {
  for (Plan& kept : plans)
    if (same_shape(kept, plan)) {
      if (better(plan, kept)) kept = plan;
      std::sort(plans.begin(), plans.end(), better);
      return;
    }
  plans.insert(std::upper_bound(plans.begin(), plans.end(), plan, better), plan);
  if (static_cast<int>(plans.size()) > top) plans.pop_back();
}

// Searches one shape under an upper bound; returns every plan found on the way.
std::vector<Plan> search_shape(const CostModel& cost, int global_batch,
                               const PipelineShapeChoice& shape, Seconds bound) {
  const int width = cost.cluster().device_count() / shape.replicas;
  const double m = shape.micro_batches - 1;
  const Seconds work = cost.whole_model_time(shape.micro_batch);
  const Seconds slot_floor = work / width, h_floor = work / width;
  DpQuery q{shape.replicas, width, shape.micro_batch, shape.micro_batches, shape.schedule,
            m > 0 ? (bound - h_floor) / m * (1 + kTie) : kInfinity, kInfinity};
  std::vector<Plan> found;
  while (m == 0 || q.slot_cap >= slot_floor * (1 - kTie)) {
    q.bound = bound - m * slot_floor;
    std::optional<PipelineSpec> spec = best_pipeline(cost, q);
    if (!spec) break;
    Evaluation ev = evaluate(cost, *spec, global_batch);
    if (!ev.fits) break;  // cannot happen: the DP checks memory
    const Plan& plan = ev.plan;
    bound = std::min(bound, plan.iteration_time);
    found.push_back(plan);
    if (m == 0) break;
    const Seconds h = plan.fill_drain + plan.exposed_allreduce;
    // Next pass: a strictly smaller slot, and small enough to beat the bound.
    q.slot_cap = std::min(plan.slot * (1 - kTie), (bound - h) / m * (1 + kTie));
  }
  return found;
}

// The one-stage plan of a shape (plain data parallelism inside each copy): a cheap
// first bound that lets the exact passes prune from the start.
void seed(const CostModel& cost, int global_batch, const PipelineShapeChoice& shape,
          Best& best) {
  const int width = cost.cluster().device_count() / shape.replicas;
  PipelineSpec spec{shape.replicas, width, shape.micro_batch, shape.micro_batches,
                    shape.schedule, {{0, cost.states() - 1, 0, std::min(width, shape.micro_batch)}}};
  Evaluation ev = evaluate(cost, spec, global_batch);
  if (ev.fits) best.offer(ev.plan);
}

// GPipe plans cost the same as their 1F1B twins and keep more activations, so when both
// schedules are allowed only 1F1B needs searching (GPipe can only tie, and ties go to 1F1B).
std::vector<Schedule> searched_schedules(const std::vector<Schedule>& allowed) {
  const bool both = std::count(allowed.begin(), allowed.end(), Schedule::OneFOneB) > 0 &&
                    std::count(allowed.begin(), allowed.end(), Schedule::GPipe) > 0;
  return both ? std::vector<Schedule>{Schedule::OneFOneB} : allowed;
}

}  // namespace

std::vector<PipelineShapeChoice> pipeline_shapes(int global_batch, int devices,
                                                 int min_micro_batch,
                                                 const std::vector<Schedule>& schedules) {
  std::vector<PipelineShapeChoice> shapes;
  for (int r = 1; r <= devices; ++r) {
    if (devices % r != 0 || global_batch % r != 0) continue;
    const int share = global_batch / r;
    const int floor = std::min(min_micro_batch, share);
    for (int b = floor; b <= share; ++b)
      if (share % b == 0)
        for (Schedule s : schedules) shapes.push_back({r, b, share / b, s});
  }
  return shapes;
}

bool better(const Plan& a, const Plan& b) {
  auto key = [](const Plan& p) {
    return std::make_tuple(p.iteration_time, p.stages.size(), p.device_count(),
                           p.pipeline_replicas, -p.micro_batch_size,
                           static_cast<int>(p.schedule), stages_string(p));
  };
  return key(a) < key(b);
}

std::vector<Plan> search_plans(const CostModel& cost, int global_batch,
                               const SearchOptions& options) {
  const std::vector<PipelineShapeChoice> shapes =
      pipeline_shapes(global_batch, cost.cluster().device_count(),
                      cost.settings().min_micro_batch, searched_schedules(options.schedules));
  Best best{{}, std::max(1, options.top)};
  for (const PipelineShapeChoice& shape : shapes) seed(cost, global_batch, shape, best);
  for (std::size_t start = 0; start < shapes.size(); start += kWave) {
    const std::size_t end = std::min(shapes.size(), start + kWave);
    const Seconds bound = best.bound();
    std::vector<std::vector<Plan>> found(end - start);
    tbb::parallel_for(start, end, [&](std::size_t i) {
      found[i - start] = search_shape(cost, global_batch, shapes[i], bound);
    });
    for (const std::vector<Plan>& plans : found)
      for (const Plan& plan : plans) best.offer(plan);
  }
  return best.plans;
}

}  // namespace pe
