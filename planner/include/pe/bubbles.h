// Where the stages of a simulated pipeline sit idle ("bubbles").
#pragma once

#include <vector>

#include "pe/timeline.h"
#include "pe/units.h"

namespace pe {

/// Busy and idle time of one stage in one iteration, in seconds. Only Forward and Backward
/// events count as compute. For a timeline from simulate():
/// busy + warmup + wait_transfer + wait_stage + drain == makespan.
struct StageBubbles {
  int stage = 0;               ///< Stage index, 0-based.
  Seconds busy = 0;            ///< Forward and backward compute.
  Seconds idle = 0;            ///< makespan - busy.
  double bubble_fraction = 0;  ///< idle / makespan; 0 when the makespan is 0.
  Seconds warmup = 0;          ///< Idle before the stage's first compute.
  Seconds drain = 0;           ///< Idle after its last compute, all-reduce included.
  Seconds allreduce = 0;       ///< The stage's all-reduce time (a part of the drain).
  /// Steady-phase idle (between the first and last compute) while the input the next
  /// operation waits for had been produced but was still crossing, or queued for, a link.
  Seconds wait_transfer = 0;
  /// Steady-phase idle while the stage that produces that input was still computing it
  /// (or, for inputs the timeline does not show, any steady-phase idle).
  Seconds wait_stage = 0;
  Seconds filler = 0;  ///< Filler work placed into the idle time (see pe/fill.h).
};

/// Bubbles of every stage of one iteration.
struct BubbleReport {
  Seconds makespan = 0;              ///< The timeline's makespan (iteration length).
  std::vector<StageBubbles> stages;  ///< One per stage, in stage order.
  double mean_bubble_fraction = 0;   ///< Mean of the stages' bubble fractions.
};

/// Attributes each stage's idle time. A steady-phase gap before an operation is split at
/// the moment its producer (forward of the previous stage, or backward of the next) ended:
/// before it the stage waited on the other stage, after it on the transfer. Throws
/// InputError (where "timeline") for events with a stage outside [0, stage_count), a
/// micro-batch id below -1 or not below the event count, or non-finite or reversed times.
BubbleReport bubbles(const Timeline& timeline);

}  // namespace pe
