// Bubble report: per-stage idle time and where it happens.
#include "pe/bubbles.h"

#include <algorithm>

#include "simulate/event_index.h"

namespace pe {
namespace {

// When the input an operation waits for was produced and when it arrived. Without a
// producer in the timeline both are -1.
struct InputTimes {
  Seconds produced = -1;
  Seconds arrived = -1;
};

InputTimes input_of(const Event& op, const detail::EventIndex& index) {
  const bool forward = op.kind == EventKind::Forward;
  const int source = forward ? op.stage - 1 : op.stage + 1;
  const Event* producer = index.find(source, op.kind, op.micro_batch);
  if (producer == nullptr) return {};
  const Event* transfer = forward ? index.find(source, EventKind::SendActivation, op.micro_batch)
                                  : index.find(source, EventKind::SendGradient, op.micro_batch);
  return {producer->end, transfer != nullptr ? transfer->end : producer->end};
}

// Splits the idle gap [from, op.start) before `op` into waiting on a transfer and waiting
// on another stage.
void attribute_gap(Seconds from, const Event& op, const detail::EventIndex& index,
                   StageBubbles& out) {
  const Seconds gap = op.start - from;
  if (gap <= 0) return;
  const InputTimes input = input_of(op, index);
  Seconds transfer = 0;
  if (input.produced >= 0)
    transfer =
        std::clamp(std::min(op.start, input.arrived) - std::max(from, input.produced), 0.0, gap);
  out.wait_transfer += transfer;
  out.wait_stage += gap - transfer;
}

// Walks one stage's events in start order.
struct StageWalk {
  Seconds last_end = 0;  // End of the latest compute so far.
  bool started = false;  // A compute event was seen.
};

void add_event(const Event& e, const detail::EventIndex& index, StageWalk& walk,
               StageBubbles& out) {
  if (e.kind == EventKind::AllReduce) out.allreduce += e.duration();
  if (e.kind == EventKind::Filler) out.filler += e.duration();
  if (e.kind != EventKind::Forward && e.kind != EventKind::Backward) return;
  out.busy += e.duration();
  if (walk.started)
    attribute_gap(walk.last_end, e, index, out);
  else
    out.warmup = e.start;
  walk.started = true;
  walk.last_end = std::max(walk.last_end, e.end);
}

void finish_stage(const StageWalk& walk, Seconds makespan, StageBubbles& out) {
  out.idle = makespan - out.busy;
  out.drain = walk.started ? makespan - walk.last_end : 0;
  if (!walk.started) out.warmup = makespan;
  out.bubble_fraction = makespan > 0 ? out.idle / makespan : 0;
}

}  // namespace

BubbleReport bubbles(const Timeline& timeline) {
  const detail::EventIndex index(timeline);
  std::vector<const Event*> order;
  order.reserve(timeline.events.size());
  for (const Event& e : timeline.events) order.push_back(&e);
  if (!std::is_sorted(timeline.events.begin(), timeline.events.end(), event_less))
    std::sort(order.begin(), order.end(),
              [](const Event* a, const Event* b) { return event_less(*a, *b); });
  BubbleReport report;
  report.makespan = timeline.makespan;
  for (int s = 0; s < timeline.stage_count; ++s) report.stages.push_back({.stage = s});
  std::vector<StageWalk> walks(report.stages.size());
  for (const Event* e : order) add_event(*e, index, walks[e->stage], report.stages[e->stage]);
  for (StageBubbles& stage : report.stages) {
    finish_stage(walks[stage.stage], timeline.makespan, stage);
    report.mean_bubble_fraction += stage.bubble_fraction / timeline.stage_count;
  }
  return report;
}

}  // namespace pe
