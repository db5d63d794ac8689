#include "search/sweep_plans.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "search/final_plan.h"
#include "search/hybrid_search.h"
#include "search/pipeline_shapes.h"

namespace pe::detail {
namespace {

// The fastest of the other points' plans (`bests`, one per point or none) at point i's batch
// size, where it beats the point's plan by more than kSimpler, finished; empty otherwise.
// Ties go to the earliest point.
std::optional<Plan> faster_elsewhere(const CostModel& cost, const PartCostModel& part,
                                     const SearchOptions& options,
                                     const std::vector<std::optional<Plan>>& bests,
                                     const PointResult& point, std::size_t i) {
  const Seconds own = point.plans.front().iteration_time;
  std::optional<Plan> best;
  for (std::size_t j = 0; j < bests.size(); ++j) {
    if (j == i || !bests[j]) continue;
    std::optional<Plan> plan = rescaled_plan(cost, part, *bests[j], point.global_batch, options);
    const Seconds beat = best ? best->iteration_time : own * (1 - kSimpler);
    if (plan && plan->iteration_time < beat) best = std::move(plan);
  }
  if (!best) return std::nullopt;
  return finish_plan(cost, part, *best, point.global_batch, best->iteration_time, false,
                     options.max_stage_width, final_pairs(options.effort))
      .plan;
}

// `plan` leads the point's plans: a runner-up of its shape goes, and so does the last where
// that leaves more than before.
void lead(PointResult& point, Plan plan) {
  const std::size_t count = point.plans.size();
  const PipelineShapeChoice shape = shape_of(plan);
  std::erase_if(point.plans, [&](const Plan& p) { return same_shape(shape_of(p), shape); });
  point.lower_bound = std::min(point.lower_bound, plan.iteration_time);  // as Planner::plan
  point.plans.insert(point.plans.begin(), std::move(plan));
  if (point.plans.size() > count) point.plans.resize(count);
  point.exact = point.exact || point.lower_bound >= point.plans.front().iteration_time * (1 - kTie);
}

}  // namespace

void share_sweep_plans(const ModelProfile& model, const CostModel& cost,
                       const TrainingSettings& settings, const SearchOptions& options,
                       std::vector<PointResult>& points) {
  const PartCostModel part = part_cost_of(model, settings);
  for (int round = 0; round < kSweepRounds; ++round) {
    std::vector<std::optional<Plan>> bests(points.size());
    for (std::size_t i = 0; i < points.size(); ++i)
      if (points[i].global_batch > 0 && !points[i].plans.empty())
        bests[i] = points[i].plans.front();
    std::vector<std::optional<Plan>> faster(points.size());
    tbb::parallel_for(std::size_t{0}, points.size(), [&](std::size_t i) {
      if (bests[i] && !points[i].exact)
        faster[i] = faster_elsewhere(cost, part, options, bests, points[i], i);
    });
    bool changed = false;
    for (std::size_t i = 0; i < points.size(); ++i)
      if (faster[i]) {
        simulate_plan(*faster[i]);
        lead(points[i], std::move(*faster[i]));
        changed = true;
      }
    if (!changed) return;
  }
}

}  // namespace pe::detail
