// The batch sizes of a sweep learn from one another (Planner::sweep): where a point's search
// stopped short, the best plans of the other points, with that point's micro-batches, are
// candidates too.
#pragma once

#include <vector>

#include "cost/cost_model.h"
#include "pe/planner.h"

namespace pe::detail {

/// Rounds of share_sweep_plans, each from the plans the round before left, until none
/// changes: a plan taken in one round may be faster at another point in the next. Each round
/// tries every pair of points once, so the cap bounds the work.
inline constexpr int kSweepRounds = 4;

/// For each point of `points` that is not exact, the best plans of the other points at its
/// batch size (rescaled_plan: the same stages and devices, its own micro-batches). The fastest,
/// where it beats the point's plan by more than kSimpler, is finished (finish_plan: local
/// moves, then the simplest plan within the margin) and reported instead; the point's
/// runners-up keep distinct shapes and their count. The point's lower bound stays (the plan
/// is one of the space it bounds), so its gap only shrinks, and it is exact where that bound
/// meets the new plan. Up to kSweepRounds rounds. Deterministic for any thread count. Points
/// skipped (global_batch 0) or without a plan take no part. `cost` is the cost model of
/// `model` on the cluster under `settings`.
void share_sweep_plans(const ModelProfile& model, const CostModel& cost,
                       const TrainingSettings& settings, const SearchOptions& options,
                       std::vector<PointResult>& points);

}  // namespace pe::detail
