// Pipeline schedules and the per-stage times an event simulation needs.
#pragma once

#include <string>
#include <vector>

#include "pe/units.h"

namespace pe {

/// How micro-batches flow through the stages.
enum class Schedule {
  OneFOneB,  ///< DAPPLE / PipeDream-flush "early backward": stage s warms up with
             ///< min(M, S - s) forwards, then alternates one backward, one forward.
  GPipe,     ///< All forwards, then all backwards; keeps every micro-batch in flight.
};

/// "1f1b" or "gpipe".
std::string to_string(Schedule schedule);

/// Times of one pipeline stage for one micro-batch, as the slowest replica sees them.
struct StageTimes {
  Seconds forward = 0;    ///< Forward compute of one micro-batch.
  Seconds backward = 0;   ///< Backward compute of one micro-batch.
  Seconds send = 0;       ///< Transfer across the cut after this stage, one direction
                          ///< (activations forward, gradients backward; 0 for the last).
  Seconds allreduce = 0;  ///< Gradient all-reduce still running after the stage's last
                          ///< backward (each layer's reduction starts when its own
                          ///< backward ends, so part of it hides behind the backward).
};

/// What the simulator needs to know about a plan.
struct PipelineShape {
  std::vector<StageTimes> stages;          ///< One per stage, in pipeline order.
  int micro_batches = 1;                   ///< Micro-batches per iteration (M >= 1).
  Schedule schedule = Schedule::OneFOneB;  ///< Order of the stages' operations.
};

/// Micro-batches whose activations stage `stage` (0-based) of `stage_count` keeps at once.
int in_flight(Schedule schedule, int stage, int stage_count, int micro_batches);

}  // namespace pe
