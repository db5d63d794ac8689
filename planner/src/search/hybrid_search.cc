// The hybrid search for one global batch size: branch and bound on the simulated time.
// Candidates come from the seeds (one-stage and equal-work pipelines, accumulation plans)
// and from one dynamic-programming pass per pipeline shape, which returns the plans of the
// shape with the least path lower bound (cost/path_bound.h). Candidates are simulated in
// order of their lower bounds while a bound is below the best simulated time found (the
// incumbent); the passes drop every plan whose bound cannot beat the incumbent. What no
// pass could rule out is the certificate: the least lower bound over every shape.
#include "search/hybrid_search.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>

#include "cost/evaluate.h"
#include "cost/micro_step.h"
#include "cost/stage_samples.h"
#include "pe/timeline.h"
#include "search/pipeline_dp.h"

namespace pe::detail {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr std::size_t kWave = 8;  // shapes searched together with one shared bound
constexpr int kRounds = 3;        // searches of a shape that runs out of effort, at most
constexpr int kPlansPerPass = 4;  // candidates one pass returns, least bound first

bool same_shape(const Plan& a, const Plan& b) {
  return a.pipeline_replicas == b.pipeline_replicas && a.micro_batch_size == b.micro_batch_size &&
         a.schedule == b.schedule;
}

// How simple a plan is, simplest first: fewer stages, devices, copies; even micro-batches;
// larger micro-batches; 1F1B; then the stage string, so the order is total.
using Simplicity = std::tuple<std::size_t, int, int, bool, int, int, std::string>;
Simplicity simplicity(const Plan& p) {
  return {p.stages.size(),          p.device_count(),    p.pipeline_replicas,
          p.uneven_micro_batches(), -p.micro_batch_size, static_cast<int>(p.schedule),
          stages_string(p)};
}

// A plan with its simplicity, computed once.
struct Candidate {
  Plan plan;
  Simplicity simple;
  Seconds time() const { return plan.iteration_time; }
};

// Plans within kSimpler of the fastest count as tied and the simplest of them leads; the
// rest follow by time.
void rank(std::vector<Candidate>& plans) {
  if (plans.empty()) return;
  Seconds fastest = kInfinity;
  for (const Candidate& c : plans) fastest = std::min(fastest, c.time());
  auto key = [&](const Candidate& c) {
    const bool tied = c.time() <= fastest * (1 + kSimpler);
    return std::make_tuple(!tied, tied ? 0.0 : c.time(), std::cref(c.simple));
  };
  std::stable_sort(plans.begin(), plans.end(),
                   [&](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
}

// Every candidate plan offered, simulated or not, and the incumbent.
class Pool {
 public:
  explicit Pool(int top) : top_(top) {}

  void add(Plan plan) {
    Simplicity simple = simplicity(plan);
    waiting_.push_back({std::move(plan), std::move(simple)});
  }

  // Simulates waiting candidates in order of lower bound while a bound can still make the
  // best `top` (with the simplicity margin); the rest stay waiting, their bounds kept for
  // the certificate. A plan too large to simulate (pe::simulate's limit) is left out.
  void simulate_promising() {
    std::stable_sort(waiting_.begin(), waiting_.end(), [](const Candidate& a, const Candidate& b) {
      return std::tie(a.plan.lower_bound, a.simple) < std::tie(b.plan.lower_bound, b.simple);
    });
    std::size_t i = 0;
    for (; i < waiting_.size() && waiting_[i].plan.lower_bound <= cutoff(); ++i) {
      Plan& plan = waiting_[i].plan;
      if (static_cast<double>(plan.stages.size()) * plan.micro_batches > kMaxSimulatedPairs) {
        least_unsimulated_ = std::min(least_unsimulated_, plan.lower_bound);
        continue;
      }
      const Seconds makespan = simulated_makespan(plan.shape());
      plan.simulated_time = plan.iteration_time = makespan;
      plan.speedup = plan.one_device_time / makespan;
      insert(std::move(waiting_[i]));
    }
    for (; i < waiting_.size(); ++i)
      least_unsimulated_ = std::min(least_unsimulated_, waiting_[i].plan.lower_bound);
    waiting_.clear();
  }

  // Plans with a lower bound above this cannot enter the answer.
  Seconds cutoff() const {
    return static_cast<int>(kept_.size()) < top_ ? kInfinity : kept_.back().time() * (1 + kSimpler);
  }
  Seconds best_time() const { return kept_.empty() ? kInfinity : kept_.front().time(); }
  // The bound for one shape's pass: only one plan per shape is kept, so a plan slower than
  // the shape's kept one (beyond the margin) can never be reported, whatever `top` is.
  Seconds cutoff_for(const PipelineShapeChoice& shape) const {
    for (const Candidate& kept : kept_)
      if (kept.plan.pipeline_replicas == shape.replicas &&
          kept.plan.micro_batch_size == shape.micro_batch && kept.plan.schedule == shape.schedule &&
          !kept.plan.uneven_micro_batches())
        return std::min(cutoff(), kept.time() * (1 + kSimpler));
    return cutoff();
  }
  Seconds least_unsimulated() const { return least_unsimulated_; }
  std::vector<Plan> answer() const {
    std::vector<Candidate> ranked = kept_;
    rank(ranked);
    std::vector<Plan> plans;
    for (Candidate& c : ranked)
      if (static_cast<int>(plans.size()) < top_) plans.push_back(std::move(c.plan));
    return plans;
  }

 private:
  // Keeps the best simulated plan of each shape, and of those the best `top` shapes (plus
  // any within the margin of the last, which a simpler plan may still need).
  void insert(Candidate candidate) {
    for (Candidate& kept : kept_)
      if (same_shape(kept.plan, candidate.plan)) {
        std::vector<Candidate> pair{std::move(kept), std::move(candidate)};
        rank(pair);
        kept = std::move(pair.front());
        sort_and_trim();
        return;
      }
    kept_.push_back(std::move(candidate));
    sort_and_trim();
  }
  void sort_and_trim() {
    std::stable_sort(kept_.begin(), kept_.end(), [](const Candidate& a, const Candidate& b) {
      return std::make_tuple(a.time(), std::cref(a.simple)) <
             std::make_tuple(b.time(), std::cref(b.simple));
    });
    while (static_cast<int>(kept_.size()) > top_ &&
           kept_.back().time() > kept_[top_ - 1].time() * (1 + kSimpler))
      kept_.pop_back();
  }

  int top_;
  std::vector<Candidate> waiting_, kept_;
  Seconds least_unsimulated_ = kInfinity;
};

// What one shape's pass found: its candidates, the least bound of any of its plans (a
// valid lower bound, also when the pass stopped), and the effort used.
struct ShapeResult {
  std::vector<Plan> plans;
  Seconds lower_bound = kInfinity;
  bool complete = true;
  std::uint64_t steps = 0;
};

// A lower bound on every plan of a shape without searching it: some stage does at least
// a copy's share of each micro-batch's work, M times (every stage width is at most W).
Seconds shape_floor(const CostModel& cost, const PipelineShapeChoice& shape, int width) {
  return shape.micro_batches * cost.whole_model_time(shape.micro_batch) / width;
}

ShapeResult search_shape(const CostModel& cost, int global_batch, const PipelineShapeChoice& shape,
                         Seconds bound, std::uint64_t effort, int max_width) {
  const int width = cost.cluster().device_count() / shape.replicas;
  const DpQuery query{
      shape.replicas, width,         shape.micro_batch, shape.micro_batches, shape.schedule, bound,
      effort,         kPlansPerPass, max_width};
  DpResult dp = best_pipeline(cost, query);
  ShapeResult result;
  result.steps = dp.steps;
  if (dp.stopped) {
    result.complete = false;
    result.lower_bound = shape_floor(cost, shape, width);
    return result;
  }
  // Every plan left out has a bound above `bound`.
  result.lower_bound = dp.plans.empty() ? bound : dp.plans.front().lower_bound;
  for (const DpPlan& found : dp.plans) {
    Evaluation ev = evaluate(cost, found.spec, global_batch);
    if (ev.fits) result.plans.push_back(std::move(ev.plan));
  }
  return result;
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
          Pool& pool) {
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
    if (ev.fits) pool.add(std::move(ev.plan));
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
                       Pool& pool) {
  if (std::count(options.schedules.begin(), options.schedules.end(), Schedule::OneFOneB) == 0)
    return;
  const int devices = cost.cluster().device_count();
  for (int r : divisors(std::gcd(global_batch, devices))) {
    // Its one stage spans the whole copy.
    if (options.max_pipeline_copies > 0 && r > options.max_pipeline_copies) continue;
    if (options.max_stage_width > 0 && devices / r > options.max_stage_width) continue;
    if (std::optional<PipelineSpec> spec = accumulation_spec(cost, global_batch, r)) {
      Evaluation ev = evaluate(cost, *spec, global_batch);
      if (ev.fits) pool.add(std::move(ev.plan));
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

SearchResult search_plans(const CostModel& cost, int global_batch, const SearchOptions& options) {
  std::vector<PipelineShapeChoice> shapes =
      pipeline_shapes(global_batch, cost.cluster().device_count(), cost.settings().min_micro_batch,
                      options.schedules, options.max_pipeline_copies);
  // 1F1B first: its plans usually win, and the bound they leave prunes GPipe's search.
  std::stable_partition(shapes.begin(), shapes.end(), [](const PipelineShapeChoice& s) {
    return s.schedule == Schedule::OneFOneB;
  });
  Pool pool(std::max(1, options.top));
  for (const PipelineShapeChoice& shape : shapes)
    seed(cost, global_batch, shape, options.max_stage_width, pool);
  seed_accumulation(cost, global_batch, options, pool);
  pool.simulate_promising();
  // The effort is shared in shape order: each wave's shapes get equal parts of what is
  // left, and what a cheap shape leaves unused passes on to later waves. Shapes that ran
  // out are searched again from the start with what the others left (and the tighter
  // bound), up to kRounds times. All of it depends on the steps each shape took, not on
  // timing, so the result is the same on any thread count.
  std::uint64_t left = options.effort ? options.effort : std::numeric_limits<std::uint64_t>::max();
  std::vector<Seconds> bounds(shapes.size(), 0);
  std::vector<std::size_t> todo(shapes.size());
  std::iota(todo.begin(), todo.end(), std::size_t{0});
  for (int round = 0; round < kRounds && !todo.empty() && left > 0; ++round) {
    std::vector<std::size_t> stopped;
    for (std::size_t start = 0; start < todo.size(); start += kWave) {
      const std::size_t end = std::min(todo.size(), start + kWave);
      const std::uint64_t share = left / (todo.size() - start);
      std::vector<Seconds> bound(end - start);
      for (std::size_t i = start; i < end; ++i) bound[i - start] = pool.cutoff_for(shapes[todo[i]]);
      std::vector<ShapeResult> found(end - start);
      tbb::parallel_for(start, end, [&](std::size_t i) {
        found[i - start] = search_shape(cost, global_batch, shapes[todo[i]], bound[i - start],
                                        share, options.max_stage_width);
      });
      for (std::size_t i = start; i < end; ++i) {
        ShapeResult& shape = found[i - start];
        if (!shape.complete) stopped.push_back(todo[i]);
        bounds[todo[i]] = shape.lower_bound;
        left -= std::min(left, shape.steps);
        for (Plan& plan : shape.plans) pool.add(std::move(plan));
      }
      pool.simulate_promising();
    }
    todo = std::move(stopped);
  }
  // Shapes never searched (no effort left) keep their floor.
  for (std::size_t i : todo)
    if (bounds[i] == 0)
      bounds[i] = shape_floor(cost, shapes[i], cost.cluster().device_count() / shapes[i].replicas);
  SearchResult result;
  result.plans = pool.answer();
  Seconds lower = std::min(pool.least_unsimulated(), pool.best_time());
  for (Seconds b : bounds) lower = std::min(lower, b);
  result.lower_bound = lower;
  result.exact = !result.plans.empty() ? lower >= pool.best_time() * (1 - kTie) : todo.empty();
  return result;
}

}  // namespace pe::detail
