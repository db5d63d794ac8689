#include "search/seeds.h"

#include <algorithm>
#include <numeric>

#include "cost/evaluate.h"
#include "cost/layout.h"
#include "cost/micro_step.h"
#include "cost/stage_samples.h"
#include "cost/stage_variants.h"
#include "search/balanced_ends.h"
#include "search/hybrid_search.h"

namespace pe::detail {
namespace {

// Seeds polished per search: the fastest of this many shapes, within this much of the
// fastest seed.
constexpr std::size_t kPolished = 8;
constexpr double kPolishWithin = 0.5;

// A seed in variant {t, no recomputation} on every stage, then with recomputation on the
// stages that do not fit without it; nothing when a stage cannot run split t ways there.
void seed_variant(const CostModel& cost, const Layout& layout, int global_batch, PipelineSpec spec,
                  int t, std::vector<CostedPlan>& seeds) {
  for (StageSpec& s : spec.stages) {
    const int most = spec.stages.size() == 1 ? s.width : spec.micro_batch;
    const std::vector<StageVariant> allowed = stage_variants(cost, layout, s.offset, s.width, most);
    if (std::none_of(allowed.begin(), allowed.end(),
                     [t](const StageVariant& v) { return v.tensor_parallel == t; }))
      return;
    s.variant = {t, false};
  }
  Evaluation ev = evaluate(cost, spec, global_batch);
  if (!ev.fits && cost.recomputable()) {
    for (std::size_t i = 0; i < spec.stages.size(); ++i)
      spec.stages[i].variant.recompute =
          ev.plan.stages[i].peak_memory() > ev.plan.stages[i].device_memory;
    ev = evaluate(cost, spec, global_batch);
  }
  if (ev.fits) seeds.push_back({std::move(spec), std::move(ev.plan)});
}

}  // namespace

void seed(const CostModel& cost, int global_batch, const PipelineShapeChoice& shape, int max_width,
          std::vector<CostedPlan>& seeds) {
  const int width = cost.device_count() / shape.replicas;
  const Layout layout = cost.layout(shape.replicas, width);
  std::vector<int> used{width};
  for (int part = cost.cluster().machine_gpus.front(); part < width; part *= 2)
    used.push_back(part);
  // A copy wider than its share of the batch leaves devices without a sample: the same
  // plans on as many devices as samples compute as fast and reduce over fewer devices.
  const int share = global_batch / shape.replicas;
  if (share < width && std::find(used.begin(), used.end(), share) == used.end())
    used.push_back(share);
  for (int devices : used)
    for (int stages = 1; stages <= devices && stages <= static_cast<int>(cost.states());
         stages *= 2)
      for (int t = 1; t <= cost.max_tensor_parallel(); ++t) {
        if (!cost.tensor_parallel_allowed(t)) continue;
        // One stage may use all its devices, pipeline stages up to the micro-batch size.
        int per_stage = max_stage_width(stages == 1, shape.micro_batch, devices / stages, t);
        if (max_width > 0) per_stage = std::min(per_stage, max_width);
        per_stage -= per_stage % t;
        if (per_stage < 1) continue;
        PipelineSpec spec{shape.replicas,      width,          shape.micro_batch,
                          shape.micro_batches, shape.schedule, {}};
        std::size_t first = 0;
        std::vector<double> speeds;
        for (int k = 0; k < stages; ++k)
          speeds.push_back(cost.place(layout, k * per_stage, per_stage).speed);
        for (std::size_t last : balanced_ends(cost, speeds, shape.micro_batch)) {
          spec.stages.push_back(
              {first, last, static_cast<int>(spec.stages.size()) * per_stage, per_stage, {}});
          first = last + 1;
        }
        seed_variant(cost, layout, global_batch, std::move(spec), t, seeds);
      }
}

std::optional<PipelineSpec> accumulation_spec(const CostModel& cost, int global_batch,
                                              int replicas) {
  const int width = cost.device_count() / replicas;
  const int share = global_batch / replicas;
  const int per_device = (share + width - 1) / width;
  const int step = largest_micro_step(cost, per_device, cost.device_count());
  if (step < 1) return std::nullopt;
  const int steps = (per_device + step - 1) / step;
  if (share / steps < std::min(cost.settings().min_micro_batch, share)) return std::nullopt;
  return PipelineSpec{replicas,
                      width,
                      (share + steps - 1) / steps,
                      steps,
                      Schedule::OneFOneB,
                      {{0, cost.states() - 1, 0, width, {}}}};
}

void seed_accumulation(const CostModel& cost, int global_batch, const SearchOptions& options,
                       std::vector<CostedPlan>& seeds) {
  if (!searches(options.schedules, Schedule::OneFOneB)) return;
  const int devices = cost.device_count();
  for (int r : divisors(std::gcd(global_batch, devices))) {
    // Its one stage spans the whole copy.
    if (options.max_pipeline_copies > 0 && r > options.max_pipeline_copies) continue;
    if (options.max_stage_width > 0 && devices / r > options.max_stage_width) continue;
    if (std::optional<PipelineSpec> spec = accumulation_spec(cost, global_batch, r)) {
      Evaluation ev = evaluate(cost, *spec, global_batch);
      if (ev.fits) seeds.push_back({*spec, std::move(ev.plan)});
    }
  }
}

void polish_seeds(const CostModel& cost, int global_batch, int width_limit, std::int64_t& pairs,
                  std::vector<CostedPlan>& seeds) {
  std::vector<std::size_t> least;  // per shape, the seed of least bound
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    const Plan& plan = seeds[i].plan;
    auto same = std::find_if(least.begin(), least.end(),
                             [&](std::size_t j) { return matches(seeds[j].plan, shape_of(plan)); });
    if (same == least.end())
      least.push_back(i);
    else if (plan.lower_bound < seeds[*same].plan.lower_bound)
      *same = i;
  }
  std::stable_sort(least.begin(), least.end(), [&](std::size_t a, std::size_t b) {
    return seeds[a].plan.lower_bound < seeds[b].plan.lower_bound;
  });
  const std::size_t count = std::min(least.size(), kPolished);
  for (std::size_t k = 0; k < count && pairs > 0; ++k) {
    const Plan& plan = seeds[least[k]].plan;
    if (plan.lower_bound > seeds[least.front()].plan.lower_bound * (1 + kPolishWithin)) break;
    if (too_large_to_simulate(plan.stages.size(), plan.micro_batches)) continue;
    std::optional<CostedPlan> better =
        polish(cost, seeds[least[k]].spec, global_batch, width_limit, pairs);
    if (better) seeds.push_back(std::move(*better));
  }
}

}  // namespace pe::detail
