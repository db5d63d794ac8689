// Local searches over plans of one shape: polish() moves one stage boundary or devices between
// neighbouring stages, splits and merges stages, kept while the simulated time falls;
// simplify() merges and narrows stages while the plan stays within a margin of the fastest. They
// only find plans (better first incumbents let the exact passes prune more, and the reported
// plan is finished with them, search/final_plan.h); they prove nothing.
#pragma once

#include <cstdint>
#include <optional>

#include "cost/cost_model.h"
#include "cost/pipeline_spec.h"
#include "pe/plan.h"

namespace pe::detail {

/// A plan and the spec it was evaluated from; iteration_time holds its simulated time.
struct CostedPlan {
  PipelineSpec spec;
  Plan plan;
};

/// `spec` evaluated (cost/evaluate.h) and its schedule simulated, the time it is ranked by
/// (set_simulated); empty where it does not fit memory.
std::optional<Plan> simulated_plan(const CostModel& cost, const PipelineSpec& spec,
                                   int global_batch);

/// Moves from `start` until none improves the simulated time or `pairs` (a budget of
/// simulated (stage, micro-batch) pairs, spent as it goes, each plan tried also 8,192 for
/// its evaluation) runs out. A move shifts the boundary between two stages by 1, 2, 4, ...
/// states (up to an eighth of the model's), moves 1, 2, 4, ... groups of t devices
/// (the stages' tensor-parallel degree) from a stage to a neighbour, splits a stage of two
/// groups or more into two (its states and groups halved), or merges two neighbouring
/// stages of one variant into one on their devices; stage widths stay
/// within `width_limit` (SearchOptions::max_stage_width; 0 = no limit) and the shape's limits,
/// variants within stage_variants, and every plan tried must fit memory. Deterministic: moves are
/// tried in a fixed order and the first that improves is taken. Empty when `start` does not fit
/// or no move improved it. With `peels`, two more moves come last: a stage's first or last
/// state on a device of its own (one of the copy's idle devices, or one of the stage's), and
/// a group of t idle devices more on a stage (finish_plan, search/final_plan.h).
std::optional<CostedPlan> polish(const CostModel& cost, const PipelineSpec& start, int global_batch,
                                 int width_limit, std::int64_t& pairs, bool peels = false);

/// Simpler plans of `start`'s shape (candidate_pool.h's simplicity: fewer stages, then fewer
/// devices) within `margin` of `fastest`, the fastest time known: from `start`, the first move,
/// in a fixed order, that makes the plan simpler and keeps it within the margin is taken, until
/// none does or `pairs` (as for polish) runs out; a plan taken that is faster than `fastest`
/// becomes it. A move merges two neighbouring stages of one variant into one on their devices,
/// on the wider's or on the narrower's, or takes a group of t devices from a stage (t its
/// tensor-parallel degree). Empty when no move was taken.
std::optional<CostedPlan> simplify(const CostModel& cost, const PipelineSpec& start,
                                   int global_batch, Seconds& fastest, double margin,
                                   int width_limit, std::int64_t& pairs);

/// The 1F1B twin of a GPipe plan: the same stages, devices and micro-batches under 1F1B,
/// costed. A plan of another shape, which that shape's pass may miss where GPipe's finds it
/// (its exact pass runs out sooner: 1F1B's bound is lower). It keeps no more activations in
/// flight than the GPipe plan, and with two micro-batches it is never slower (only the last
/// stage's order differs, F0 B0 F1 B1 for F0 F1 B0 B1, and its backwards end no later). On 16
/// single-GPU machines DAPPLE's simplified GNMT-32 at GBS 192 has a GPipe plan of 3
/// micro-batches whose 1F1B twin is 8.4 % faster than any plan the search found without
/// twins. Empty for one stage or one micro-batch (the schedules run the same operations),
/// other schedules, and twins that do not fit.
std::optional<CostedPlan> one_f_one_b_twin(const CostModel& cost, const PipelineSpec& spec,
                                           int global_batch);

}  // namespace pe::detail
