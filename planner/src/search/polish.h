// Local improvement of candidate plans: moves of one stage boundary or of devices between
// neighbouring stages, splits and merges of stages, kept while the simulated time falls. It only
// finds candidates (better first incumbents let the exact passes prune more); it proves nothing.
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
/// or no move improved it.
std::optional<CostedPlan> polish(const CostModel& cost, const PipelineSpec& start, int global_batch,
                                 int width_limit, std::int64_t& pairs);

}  // namespace pe::detail
