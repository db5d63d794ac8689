// The cost of one candidate plan before it is simulated: stage times, memory, the analytic
// estimate that explains it, and the path lower bound the search minimizes.
#pragma once

#include "cost/cost_model.h"
#include "cost/layout.h"
#include "cost/pipeline_spec.h"
#include "pe/plan.h"

namespace pe::detail {

/// Fills in a plan's devices, per-stage times, memory and the estimate (README, "The model behind
/// the numbers"):
///   slot        = 1F1B: max over stages of (f + g), over cuts of the one-way transfer c,
///                 and over stages s with k = S - s < M of (fill_drain of stages s..S-1) / k
///                 (only k micro-batches are in flight, so a slot lasts a k-th of the
///                 round trip); GPipe: max(f, c) + max(g, c), the forward wave's slot
///                 plus the backward wave's,
///   fill_drain  = sum of (f + g) + 2 * sum of c,
///   exposed     = max(0, max_s (AR_s - sum_{t < s} (g_t + c_t))),
///   estimate    = (M - 1) * slot + fill_drain + exposed,
///   lower_bound = path_lower_bound of the stage times (cost/path_bound.h).
/// iteration_time holds the estimate until the plan is simulated (simulate_plan), which
/// sets it to the simulated makespan, the number plans are ranked by.
/// AR_s is the part of stage s's all-reduce left after its own last backward (layers are
/// reduced as their backward ends); stage s's last backward ends sum_{t<s}(g_t + c_t)
/// before stage 0's, so that much more of it hides behind the drain. f and g are times of
/// the stage's timed samples per device, activations those of its memory samples
/// (stage_samples, with global_batch / replicas as the share). `fits` is false when a
/// device's peak exceeds memory.
struct Evaluation {
  Plan plan;
  bool fits = true;
};
Evaluation evaluate(const CostModel& cost, const PipelineSpec& spec, int global_batch);

/// Records `makespan`, the simulated time of `plan`'s schedule, as the time the plan is ranked
/// by and reports (and its speedup with it).
inline void set_simulated(Plan& plan, Seconds makespan) {
  plan.simulated_time = plan.iteration_time = makespan;
  plan.speedup = plan.one_device_time / makespan;
}

/// Micro-batches stage `stage` of `stage_count` keeps (schedule.h) — restated for specs.
int spec_in_flight(const PipelineSpec& spec, int stage);

}  // namespace pe::detail
