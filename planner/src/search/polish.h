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

/// The same pipeline under the other of 1F1B and GPipe (the same stages, devices and
/// micro-batches), costed: a plan of another shape, which one schedule's pass may miss when
/// the other's finds it. With two micro-batches the 1F1B twin of a GPipe plan is never slower
/// (only the last stage's order differs, and its backwards end no later), and it needs less
/// memory (GNMT large at GBS 128 on 16 single-GPU machines: a GPipe plan of 325.6 ms, whose
/// 1F1B twin runs 323.7 ms and no 1F1B pass found). Empty for one stage or one micro-batch
/// (the schedules run the same operations), other schedules, and twins that do not fit.
std::optional<CostedPlan> schedule_twin(const CostModel& cost, const PipelineSpec& spec,
                                        int global_batch);

}  // namespace pe::detail
