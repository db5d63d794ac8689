// Event-driven simulation of a pipeline schedule: the ground truth that the analytic
// estimate is checked against, and the source of traces, charts and bubble reports.
#pragma once

#include <string>
#include <vector>

#include "pe/schedule.h"
#include "pe/units.h"

namespace pe {

enum class EventKind {
  Forward,         ///< Forward compute of one micro-batch on a stage.
  Backward,        ///< Backward compute of one micro-batch on a stage.
  SendActivation,  ///< Activations of a micro-batch crossing the cut after a stage.
  SendGradient,    ///< Gradients of a micro-batch crossing the cut before a stage
                   ///< (recorded on the sending stage, i.e. the later one).
  AllReduce,       ///< Gradient all-reduce of a stage after its last backward.
  Filler,          ///< Extra work placed into a bubble (see bubble filling).
};

std::string to_string(EventKind kind);

/// One interval of work. `stage` is the stage that does it (for sends: the sender).
struct Event {
  int stage = 0;
  EventKind kind = EventKind::Forward;
  int micro_batch = -1;  ///< -1 for all-reduce and work not tied to one micro-batch.
  Seconds start = 0;
  Seconds end = 0;
  std::string label;     ///< Filler work name; empty otherwise.
};

/// All events of one training iteration, sorted by (stage, start, kind).
struct Timeline {
  std::vector<Event> events;
  int stage_count = 0;
  Seconds makespan = 0;  ///< End of the last event (all-reduces included).
};

/// Simulates one iteration. Each stage is one compute resource (its replicas run in
/// lock-step); each cut has one link per direction, used first come, first served.
/// A forward of micro-batch m on stage s starts when the stage is free and its activation
/// arrived; a backward needs the stage's own forward of m and the gradient from s+1.
Timeline simulate(const PipelineShape& shape);

}  // namespace pe
