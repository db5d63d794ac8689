// Event-driven simulation of a pipeline schedule: the ground truth that the analytic
// estimate is checked against, and the source of traces, charts and bubble reports.
// docs/timeline.md describes the model in full.
#pragma once

#include <string>
#include <vector>

#include "pe/schedule.h"
#include "pe/units.h"

namespace pe {

/// What an event does. The order of the enumerators is the tie-break order of events that
/// start at the same time on the same stage.
enum class EventKind {
  Forward,         ///< Forward compute of one micro-batch on a stage.
  Backward,        ///< Backward compute of one micro-batch on a stage.
  SendActivation,  ///< Activations of a micro-batch crossing the cut after a stage.
  SendGradient,    ///< Gradients of a micro-batch crossing the cut before a stage
                   ///< (recorded on the sending stage, i.e. the later one).
  AllReduce,       ///< Gradient all-reduce of a stage after its last backward.
  Filler,          ///< Extra work placed into a bubble (see bubble filling, pe/fill.h).
};

/// "forward", "backward", "send-activation", "send-gradient", "allreduce" or "filler".
std::string to_string(EventKind kind);

/// True for the kinds that occupy a stage's compute units (Forward, Backward, Filler).
/// Transfers and all-reduces run on links and are assumed not to.
bool uses_compute(EventKind kind);

/// One interval of work. `stage` is the stage that does it (for sends: the sender).
/// Times are seconds from the start of the iteration; start <= end.
struct Event {
  int stage = 0;                        ///< Stage index, 0-based.
  EventKind kind = EventKind::Forward;  ///< What the event does.
  int micro_batch = -1;                 ///< -1 for all-reduce and work not tied to one micro-batch.
  Seconds start = 0;                    ///< Seconds from the start of the iteration.
  Seconds end = 0;                      ///< Seconds from the start of the iteration; >= start.
  std::string label;                    ///< Filler work name; empty otherwise.
  /// The stage's chunk the work belongs to (interleaved schedule: pipeline stage
  /// chunk x stage_count + stage); 0 otherwise.
  int chunk = 0;

  /// end - start, in seconds.
  Seconds duration() const { return end - start; }
};

/// The canonical event order: by stage, start, kind, micro-batch, label, then chunk.
bool event_less(const Event& a, const Event& b);

/// All events of one training iteration, sorted by event_less, i.e. by
/// (stage, start, kind, micro_batch).
struct Timeline {
  std::vector<Event> events;  ///< Sorted by event_less.
  int stage_count = 0;        ///< Number of stages (interleaved: device groups).
  Seconds makespan = 0;       ///< End of the last event (all-reduces included).
};

/// Simulates one iteration. Each stage is one compute resource (its replicas run in
/// lock-step) that runs its operations in the schedule's fixed order: 1F1B does
/// min(M, S - s) warm-up forwards, then alternates backward (oldest) and forward (next)
/// until the forwards run out, then the remaining backwards; GPipe does all forwards, then
/// all backwards, both in micro-batch order. Each cut has one link per direction (forward:
/// activations, backward: gradients), first come, first served.
/// A forward of micro-batch m on stage s > 0 starts when the stage is free and the
/// activations of m crossed cut s-1; a backward needs the stage's own forward of m and,
/// except on the last stage, the gradient of m across cut s. A stage's all-reduce starts
/// when its last backward ends. Every (stage, micro-batch) gets one Forward and one
/// Backward event, every cut one SendActivation and one SendGradient per micro-batch,
/// every stage one AllReduce; zero-duration events are kept. `send` of the last stage is
/// ignored. Runs in time and memory linear in the number of events (up to a sort per stage).
/// Interleaved: each device group is one compute resource that runs its chunks' operations
/// in the order of scheduled_op(); events carry the group as `stage` and the chunk as
/// `chunk`. A group has one outgoing link per direction, which all its chunks' transfers
/// share (forward: to the next group, the last group's to group 0; backward: to the
/// previous group, group 0's to the last), and one all-reduce link its chunks' all-reduces
/// take in turn, each from the chunk's last backward.
/// Throws InputError (where "pipeline shape") for no stages, micro_batches < 1, negative or
/// non-finite times, or more than 2^26 (stage, micro-batch) pairs; and for chunks other than
/// 1 outside the interleaved schedule, or an interleaved shape with chunks < 2, fewer than two
/// groups, stages not a multiple of chunks, or M not a multiple of the groups.
Timeline simulate(const PipelineShape& shape);

/// simulate(shape).makespan without building the events: what the search ranks plans by.
/// Throws as simulate() does.
Seconds simulated_makespan(const PipelineShape& shape);

}  // namespace pe
