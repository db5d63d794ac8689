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
#include <numeric>
#include <tuple>

#include "cost/evaluate.h"
#include "cost/micro_step.h"
#include "cost/stage_samples.h"
#include "search/pipeline_dp.h"

namespace pe::detail {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr std::size_t kWave = 8;  // shapes searched together with one shared bound
constexpr double kTie = 1e-9;     // plans within this relative margin count as ties
constexpr int kRounds = 3;        // searches of a shape that runs out of effort, at most

struct Best {
  std::vector<Plan> plans;
  int top = 1;
  Seconds bound() const {
    return static_cast<int>(plans.size()) < top ? kInfinity : plans.back().iteration_time;
  }
  void offer(const Plan& plan);
};

bool same_shape(const Plan& a, const Plan& b) {
  return a.pipeline_replicas == b.pipeline_replicas && a.micro_batch_size == b.micro_batch_size &&
         a.schedule == b.schedule;
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

// The next cap strictly below x: a relative step of kTie, at least one ulp, so that the
// parametric loops end even when times are subnormal (where x * (1 - kTie) == x).
Seconds below(Seconds x) { return std::min(x * (1 - kTie), std::nextafter(x, Seconds{0})); }

// What one shape's search found, and whether it ran to the end.
struct ShapeResult {
  std::vector<Plan> plans;
  bool complete = true;
  std::uint64_t steps = 0;  // effort used
};

// One shape's search state: the query, the bound, and the plans found.
struct ShapeSearch {
  const CostModel& cost;
  int global_batch;
  DpQuery query;
  Seconds bound;
  double m;                  // micro-batches - 1
  Seconds floor;             // lower bound on any slot: all work spread over a copy's devices
  std::uint64_t steps_left;  // the shape's remaining search effort
  ShapeResult result;

  // Runs one pass; returns the plan found, if any, and tightens the bound. A pass that
  // runs out of effort returns nothing and marks the shape's search incomplete.
  const Plan* pass() {
    query.bound = bound - m * floor;
    query.step_limit = steps_left;
    DpResult dp = best_pipeline(cost, query);
    steps_left -= dp.steps;
    result.steps += dp.steps;
    if (dp.stopped) result.complete = false;
    if (!dp.spec) return nullptr;
    Evaluation ev = evaluate(cost, *dp.spec, global_batch);
    bound = std::min(bound, ev.plan.iteration_time);
    result.plans.push_back(std::move(ev.plan));
    return &result.plans.back();
  }
  // The largest slot a plan with this fill_drain + exposed may have and still win.
  Seconds useful_slot(Seconds h) const { return (bound - h) / m * (1 + kTie); }
};

// 1F1B: lower the slot cap below each plan's slot (parametric search on one value).
void search_one_f_one_b(ShapeSearch& s) {
  s.query.slot_cap = s.m > 0 ? s.useful_slot(s.floor) : kInfinity;
  while (s.m == 0 || s.query.slot_cap >= s.floor * (1 - kTie)) {
    const Plan* plan = s.pass();
    // No plan has a slot below the floor, so a plan at the floor ends the search.
    if (!plan || s.m == 0 || plan->slot <= s.floor * (1 + kTie)) return;
    const Seconds h = plan->fill_drain + plan->exposed_allreduce;
    s.query.slot_cap = std::min({below(plan->slot), below(s.query.slot_cap), s.useful_slot(h)});
  }
}

// Largest forward-wave slot max(f, c) of a GPipe plan.
Seconds forward_slot(const Plan& plan) {
  Seconds slot = 0;
  for (const PlanStage& st : plan.stages) slot = std::max({slot, st.times.forward, st.times.send});
  return slot;
}

// GPipe: the slot is a forward part plus a backward part, so the search is parametric in
// both. For a forward cap it walks the (backward slot, fill_drain + exposed) front; a plan
// with a forward slot at least the largest one on that front cannot beat the front's
// plans, so the next forward cap lies strictly below it. Each wave's slot is at least its
// work spread over the copy's devices.
void search_gpipe(ShapeSearch& s, Seconds forward_floor, Seconds backward_floor) {
  Seconds forward_cap = s.m > 0 ? s.useful_slot(s.floor) - backward_floor : kInfinity;
  while (forward_cap >= forward_floor * (1 - kTie)) {
    s.query.forward_cap = forward_cap;
    s.query.backward_cap = s.m > 0 ? s.useful_slot(s.floor) - forward_floor : kInfinity;
    Seconds widest = -1;
    while (s.query.backward_cap >= backward_floor * (1 - kTie)) {
      const Plan* plan = s.pass();
      if (!plan || s.m == 0) break;
      const Seconds forward = forward_slot(*plan);
      const Seconds h = plan->fill_drain + plan->exposed_allreduce;
      if (widest < 0 && s.m * (forward_floor + backward_floor) + h > s.bound) return;
      widest = std::max(widest, forward);
      if (plan->slot - forward <= backward_floor * (1 + kTie)) break;
      s.query.backward_cap = std::min({below(plan->slot - forward), below(s.query.backward_cap),
                                       s.useful_slot(h) - forward_floor});
    }
    if (widest <= forward_floor * (1 + kTie)) return;
    forward_cap = std::min(below(widest), below(forward_cap));
  }
}

// Searches one shape under an upper bound; returns every plan found on the way.
ShapeResult search_shape(const CostModel& cost, int global_batch, const PipelineShapeChoice& shape,
                         Seconds bound, std::uint64_t effort, int max_width) {
  const int width = cost.cluster().device_count() / shape.replicas;
  const Seconds floor = cost.whole_model_time(shape.micro_batch) / width;
  ShapeSearch s{cost,
                global_batch,
                {shape.replicas, width, shape.micro_batch, shape.micro_batches, shape.schedule},
                bound,
                shape.micro_batches - 1.0,
                floor,
                effort,
                {}};
  s.query.max_stage_width = max_width;
  if (shape.schedule == Schedule::GPipe)
    search_gpipe(s, cost.forward(0, cost.states() - 1, shape.micro_batch) / width,
                 cost.backward(0, cost.states() - 1, shape.micro_batch) / width);
  else
    search_one_f_one_b(s);
  return std::move(s.result);
}

// Cuts the states into `stages` runs of about equal work (by prefix sums), each a stage
// (CostModel::stage: when the states are not a chain, an end's cut contains the previous one).
std::vector<std::size_t> balanced_ends(const CostModel& cost, int stages, int micro_batch) {
  const std::size_t n = cost.states();
  const Seconds total = cost.forward(0, n - 1, micro_batch) + cost.backward(0, n - 1, micro_batch);
  std::vector<std::size_t> ends;
  auto joins = [&](std::size_t e) { return ends.empty() || cost.stage(ends.back() + 1, e); };
  std::size_t e = 0;
  for (int s = 1; s < stages; ++s) {
    const Seconds target = total * s / stages;
    while (
        e + 1 < n &&
        (cost.forward(0, e, micro_batch) + cost.backward(0, e, micro_batch) < target || !joins(e)))
      ++e;
    if (e + 1 >= n) break;
    ends.push_back(e);
  }
  ends.push_back(n - 1);
  return ends;
}

// Cheap first bounds that let the exact passes prune from the start: per shape, the
// one-stage plan (plain data parallelism inside each copy) and equal-width pipelines of
// 2, 4, 8, ... stages cut at equal work.
void seed(const CostModel& cost, int global_batch, const PipelineShapeChoice& shape, int max_width,
          Best& best) {
  const int width = cost.cluster().device_count() / shape.replicas;
  for (int stages = 1; stages <= width && stages <= static_cast<int>(cost.states()); stages *= 2) {
    // One stage may use the whole copy, pipeline stages up to the micro-batch size.
    int per_stage = max_stage_width(stages == 1, shape.micro_batch, width / stages);
    if (max_width > 0) per_stage = std::min(per_stage, max_width);
    PipelineSpec spec{shape.replicas,      width,          shape.micro_batch,
                      shape.micro_batches, shape.schedule, {}};
    std::size_t first = 0;
    for (std::size_t last : balanced_ends(cost, stages, shape.micro_batch)) {
      spec.stages.push_back(
          {first, last, static_cast<int>(spec.stages.size()) * per_stage, per_stage});
      first = last + 1;
    }
    Evaluation ev = evaluate(cost, spec, global_batch);
    if (ev.fits) best.offer(ev.plan);
  }
}

// The divisors of n >= 1, ascending, by trial division up to sqrt(n).
std::vector<int> divisors(int n) {
  std::vector<int> small, large;
  for (int d = 1; d <= n / d; ++d)
    if (n % d == 0) {
      small.push_back(d);
      if (d != n / d) large.push_back(n / d);
    }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

// Accumulation plans (accumulation_spec) of every copy count, when 1F1B is searched.
void seed_accumulation(const CostModel& cost, int global_batch, const SearchOptions& options,
                       Best& best) {
  if (std::count(options.schedules.begin(), options.schedules.end(), Schedule::OneFOneB) == 0)
    return;
  const int devices = cost.cluster().device_count();
  for (int r : divisors(std::gcd(global_batch, devices))) {
    // Its one stage spans the whole copy.
    if (options.max_pipeline_copies > 0 && r > options.max_pipeline_copies) continue;
    if (options.max_stage_width > 0 && devices / r > options.max_stage_width) continue;
    if (std::optional<PipelineSpec> spec = accumulation_spec(cost, global_batch, r)) {
      Evaluation ev = evaluate(cost, *spec, global_batch);
      if (ev.fits) best.offer(ev.plan);
    }
  }
}

}  // namespace

std::optional<PipelineSpec> accumulation_spec(const CostModel& cost, int global_batch,
                                              int replicas) {
  const int width = cost.cluster().device_count() / replicas;
  const int share = global_batch / replicas;
  const int per_device = (share + width - 1) / width;
  const int step = largest_micro_step(cost, per_device);
  if (step < 1) return std::nullopt;
  const int steps = (per_device + step - 1) / step;
  if (share / steps < std::min(cost.settings().min_micro_batch, share)) return std::nullopt;
  return PipelineSpec{replicas,
                      width,
                      (share + steps - 1) / steps,
                      steps,
                      Schedule::OneFOneB,
                      {{0, cost.states() - 1, 0, width}}};
}

std::vector<PipelineShapeChoice> pipeline_shapes(int global_batch, int devices, int min_micro_batch,
                                                 const std::vector<Schedule>& schedules,
                                                 int max_copies) {
  // With one micro-batch GPipe and 1F1B run the same plan: only 1F1B's is kept then.
  const bool has_1f1b = std::count(schedules.begin(), schedules.end(), Schedule::OneFOneB) > 0;
  std::vector<PipelineShapeChoice> shapes;
  for (int r : divisors(std::gcd(global_batch, devices))) {
    if (max_copies > 0 && r > max_copies) break;  // divisors ascend
    const int share = global_batch / r;
    const int floor = std::min(min_micro_batch, share);
    for (int b : divisors(share))
      if (b >= floor)
        for (Schedule s : schedules)
          if (!(has_1f1b && s == Schedule::GPipe && b == share))
            shapes.push_back({r, b, share / b, s});
  }
  return shapes;
}

bool better(const Plan& a, const Plan& b) {
  // Times within about 1e-9 of each other (rounding noise) fall into one bucket and count
  // as ties; the bucket index is a monotone function of the time, so this stays a strict
  // weak order.
  auto key = [](const Plan& p) {
    const long long bucket = std::llround(std::log(std::max(p.iteration_time, 1e-300)) / kTie);
    return std::make_tuple(bucket, p.stages.size(), p.device_count(), p.pipeline_replicas,
                           p.uneven_micro_batches(), -p.micro_batch_size,
                           static_cast<int>(p.schedule), stages_string(p));
  };
  return key(a) < key(b);
}

SearchResult search_plans(const CostModel& cost, int global_batch, const SearchOptions& options) {
  std::vector<PipelineShapeChoice> shapes =
      pipeline_shapes(global_batch, cost.cluster().device_count(), cost.settings().min_micro_batch,
                      options.schedules, options.max_pipeline_copies);
  // 1F1B first: its plans usually win, and the bound they leave prunes GPipe's search.
  std::stable_partition(shapes.begin(), shapes.end(), [](const PipelineShapeChoice& s) {
    return s.schedule == Schedule::OneFOneB;
  });
  Best best{{}, std::max(1, options.top)};
  for (const PipelineShapeChoice& shape : shapes)
    seed(cost, global_batch, shape, options.max_stage_width, best);
  seed_accumulation(cost, global_batch, options, best);
  // The effort is shared in shape order: each wave's shapes get equal parts of what is
  // left, and what a cheap shape leaves unused passes on to later waves. Shapes that ran
  // out are searched again from the start with what the others left (and the tighter
  // bound), up to kRounds times. All of it depends on the steps each shape took, not on
  // timing, so the result is the same on any thread count.
  std::uint64_t left = options.effort ? options.effort : std::numeric_limits<std::uint64_t>::max();
  std::vector<std::size_t> todo(shapes.size());
  std::iota(todo.begin(), todo.end(), std::size_t{0});
  for (int round = 0; round < kRounds && !todo.empty() && left > 0; ++round) {
    std::vector<std::size_t> stopped;
    for (std::size_t start = 0; start < todo.size(); start += kWave) {
      const std::size_t end = std::min(todo.size(), start + kWave);
      const std::uint64_t share = left / (todo.size() - start);
      const Seconds bound = best.bound();
      std::vector<ShapeResult> found(end - start);
      tbb::parallel_for(start, end, [&](std::size_t i) {
        found[i - start] = search_shape(cost, global_batch, shapes[todo[i]], bound, share,
                                        options.max_stage_width);
      });
      for (std::size_t i = start; i < end; ++i) {
        const ShapeResult& shape = found[i - start];
        if (!shape.complete) stopped.push_back(todo[i]);
        left -= shape.steps;
        for (const Plan& plan : shape.plans) best.offer(plan);
      }
    }
    todo = std::move(stopped);
  }
  const bool exact = todo.empty();
  return {std::move(best.plans), exact};
}

}  // namespace pe::detail
