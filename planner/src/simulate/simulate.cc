// The event-driven pipeline simulator. Each stage runs its operations in a fixed order; an
// operation starts as soon as the stage is free and its inputs have arrived. Stages are
// advanced from a work list: a stage runs until its next operation waits for data, and is
// woken again when a neighbour produces that data, so every operation is handled once.
#include "pe/timeline.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "pe/error.h"

namespace pe {
namespace {

constexpr Seconds kNotYet = -1;  // Arrival time of data not produced yet (times are >= 0).
constexpr long long kMaxPairs = 1LL << 26;

// One operation of a stage's fixed order.
struct Op {
  EventKind kind;
  int micro_batch;
};

// The index-th operation of a stage that warms up with `warmup` forwards. GPipe is the
// special case warmup = M (no alternating phase).
Op op_at(int index, int warmup, int micro_batches) {
  if (index < warmup) return {EventKind::Forward, index};
  if (index < 2 * micro_batches - warmup) {
    const int step = index - warmup;
    if (step % 2 == 0) return {EventKind::Backward, step / 2};
    return {EventKind::Forward, warmup + step / 2};
  }
  return {EventKind::Backward, index - micro_batches};
}

void check_time(double value, std::size_t stage, const char* field) {
  if (std::isfinite(value) && value >= 0) return;
  std::ostringstream seen;
  seen << value;
  throw InputError("pipeline shape", "stage " + std::to_string(stage) + ": " + field + " time " +
                                         seen.str() +
                                         " is not a finite non-negative number of seconds");
}

void check_shape(const PipelineShape& shape) {
  if (shape.stages.empty()) throw InputError("pipeline shape", "needs at least one stage");
  if (shape.micro_batches < 1)
    throw InputError("pipeline shape", "micro_batches must be at least 1, got " +
                                           std::to_string(shape.micro_batches));
  if (static_cast<long long>(shape.stages.size()) * shape.micro_batches > kMaxPairs)
    throw InputError("pipeline shape",
                     "stages x micro_batches exceeds 2^26; too large to "
                     "simulate event by event");
  for (std::size_t s = 0; s < shape.stages.size(); ++s) {
    check_time(shape.stages[s].forward, s, "forward");
    check_time(shape.stages[s].backward, s, "backward");
    check_time(shape.stages[s].send, s, "send");
    check_time(shape.stages[s].allreduce, s, "allreduce");
  }
}

// Order of events of one stage (all labels are empty): event_less without stage and label.
bool same_stage_less(const Event& a, const Event& b) {
  if (a.start != b.start) return a.start < b.start;
  if (a.kind != b.kind) return a.kind < b.kind;
  return a.micro_batch < b.micro_batch;
}

// The four lists of a stage's events, each in start order.
enum class EventList { Compute, Activations, Gradients, AllReduce };

class Simulator {
 public:
  explicit Simulator(const PipelineShape& shape);
  Timeline run();
  // Runs every operation and returns the end of the last one, all-reduces included,
  // without building the events.
  Seconds makespan();

 private:
  std::size_t at(int stage, int micro_batch) const {
    return static_cast<std::size_t>(stage) * static_cast<std::size_t>(micro_batches_) +
           static_cast<std::size_t>(micro_batch);
  }
  const StageTimes& times(int stage) const { return shape_.stages[stage]; }
  bool finished(int stage) const { return next_[stage] == 2 * micro_batches_; }
  Op op(int stage, int index) const { return op_at(index, warmup_[stage], micro_batches_); }
  Seconds inputs_ready(int stage, Op op) const;
  void advance(int stage);
  void run_op(int stage, Op op, Seconds ready);
  void send_activation(int stage, int micro_batch, Seconds ready);
  void send_gradient(int stage, int micro_batch, Seconds ready);
  void wake(int stage);
  Timeline collect() const;
  int list_size(int stage, EventList list) const;
  Event list_event(int stage, EventList list, int index) const;
  void emit_stage(int stage, std::vector<Event>& out) const;

  const PipelineShape& shape_;
  int stage_count_;
  int micro_batches_;
  std::vector<int> warmup_;             // Forwards before the first backward, per stage.
  std::vector<int> next_;               // Index of each stage's next operation.
  std::vector<Seconds> free_at_;        // When each stage's compute is free.
  std::vector<Seconds> forward_link_;   // When each cut's forward link is free.
  std::vector<Seconds> backward_link_;  // When each cut's backward link is free.
  // Start times, kNotYet until known, indexed [stage, micro-batch]; for sends the stage is
  // the sender (activations cross the cut after it, gradients the cut before it).
  std::vector<Seconds> forward_start_;
  std::vector<Seconds> backward_start_;
  std::vector<Seconds> activation_start_;
  std::vector<Seconds> gradient_start_;
  std::vector<Seconds> allreduce_start_;  // Per stage.
  std::vector<int> pending_;              // Stages to advance.
  std::vector<char> queued_;              // Stage is in pending_.
};

Simulator::Simulator(const PipelineShape& shape)
    : shape_(shape),
      stage_count_(static_cast<int>(shape.stages.size())),
      micro_batches_(shape.micro_batches) {
  const auto stages = static_cast<std::size_t>(stage_count_);
  for (int s = 0; s < stage_count_; ++s)
    warmup_.push_back(shape.schedule == Schedule::GPipe
                          ? micro_batches_
                          : std::min(micro_batches_, stage_count_ - s));
  next_.assign(stages, 0);
  free_at_.assign(stages, 0);
  forward_link_.assign(stages, 0);
  backward_link_.assign(stages, 0);
  for (auto* starts : {&forward_start_, &backward_start_, &activation_start_, &gradient_start_})
    starts->assign(at(stage_count_, 0), kNotYet);
  allreduce_start_.assign(stages, kNotYet);
  queued_.assign(stages, 0);
}

Seconds Simulator::inputs_ready(int stage, Op op) const {
  if (op.kind == EventKind::Forward) {
    if (stage == 0) return 0;
    const Seconds sent = activation_start_[at(stage - 1, op.micro_batch)];
    return sent == kNotYet ? kNotYet : sent + times(stage - 1).send;
  }
  if (stage == stage_count_ - 1) return 0;
  const Seconds sent = gradient_start_[at(stage + 1, op.micro_batch)];
  return sent == kNotYet ? kNotYet : sent + times(stage).send;
}

void Simulator::advance(int stage) {
  while (!finished(stage)) {
    const Op next = op(stage, next_[stage]);
    const Seconds ready = inputs_ready(stage, next);
    if (ready == kNotYet) return;
    run_op(stage, next, ready);
  }
}

void Simulator::run_op(int stage, Op op, Seconds ready) {
  const bool forward = op.kind == EventKind::Forward;
  const Seconds start = std::max(free_at_[stage], ready);
  const Seconds end = start + (forward ? times(stage).forward : times(stage).backward);
  (forward ? forward_start_ : backward_start_)[at(stage, op.micro_batch)] = start;
  free_at_[stage] = end;
  ++next_[stage];
  if (forward && stage + 1 < stage_count_) send_activation(stage, op.micro_batch, end);
  if (!forward && stage > 0) send_gradient(stage, op.micro_batch, end);
  if (finished(stage)) allreduce_start_[stage] = end;
}

void Simulator::send_activation(int stage, int micro_batch, Seconds ready) {
  const Seconds start = std::max(ready, forward_link_[stage]);
  forward_link_[stage] = start + times(stage).send;
  activation_start_[at(stage, micro_batch)] = start;
  wake(stage + 1);
}

void Simulator::send_gradient(int stage, int micro_batch, Seconds ready) {
  const int cut = stage - 1;
  const Seconds start = std::max(ready, backward_link_[cut]);
  backward_link_[cut] = start + times(cut).send;
  gradient_start_[at(stage, micro_batch)] = start;
  wake(cut);
}

void Simulator::wake(int stage) {
  if (queued_[stage]) return;
  queued_[stage] = 1;
  pending_.push_back(stage);
}

Seconds Simulator::makespan() {
  for (int s = stage_count_ - 1; s >= 0; --s) wake(s);
  while (!pending_.empty()) {
    const int stage = pending_.back();
    pending_.pop_back();
    queued_[stage] = 0;
    advance(stage);
  }
  // A transfer ends before the operation it feeds starts, so compute and all-reduces end last.
  Seconds end = 0;
  for (int s = 0; s < stage_count_; ++s) {
    if (!finished(s)) throw std::logic_error("simulate: the schedule deadlocked");
    end = std::max({end, free_at_[s], allreduce_start_[s] + times(s).allreduce});
  }
  return end;
}

Timeline Simulator::run() {
  makespan();
  return collect();
}

int Simulator::list_size(int stage, EventList list) const {
  switch (list) {
    case EventList::Compute:
      return 2 * micro_batches_;
    case EventList::Activations:
      return stage + 1 < stage_count_ ? micro_batches_ : 0;
    case EventList::Gradients:
      return stage > 0 ? micro_batches_ : 0;
    case EventList::AllReduce:
      break;
  }
  return 1;
}

Event Simulator::list_event(int stage, EventList list, int index) const {
  switch (list) {
    case EventList::Compute: {
      const Op o = op(stage, index);
      const bool fwd = o.kind == EventKind::Forward;
      const Seconds start = (fwd ? forward_start_ : backward_start_)[at(stage, o.micro_batch)];
      const Seconds length = fwd ? times(stage).forward : times(stage).backward;
      return {stage, o.kind, o.micro_batch, start, start + length, {}};
    }
    case EventList::Activations: {
      const Seconds start = activation_start_[at(stage, index)];
      return {stage, EventKind::SendActivation, index, start, start + times(stage).send, {}};
    }
    case EventList::Gradients: {
      const Seconds start = gradient_start_[at(stage, index)];
      return {stage, EventKind::SendGradient, index, start, start + times(stage - 1).send, {}};
    }
    case EventList::AllReduce:
      break;
  }
  const Seconds start = allreduce_start_[stage];
  return {stage, EventKind::AllReduce, -1, start, start + times(stage).allreduce, {}};
}

// Appends a stage's events to `out`, merging its four lists, each in start order. Ties of
// zero-length events may disagree with event_less; then the stage's range is sorted.
void Simulator::emit_stage(int stage, std::vector<Event>& out) const {
  constexpr int kLists = 4;
  std::array<int, kLists> next{}, size{};
  std::array<Event, kLists> heads;
  for (int k = 0; k < kLists; ++k) {
    size[k] = list_size(stage, static_cast<EventList>(k));
    if (size[k] > 0) heads[k] = list_event(stage, static_cast<EventList>(k), 0);
  }
  const auto first = static_cast<std::ptrdiff_t>(out.size());
  bool sorted = true;
  for (;;) {
    int best = -1;
    for (int k = 0; k < kLists; ++k)
      if (next[k] < size[k] && (best < 0 || same_stage_less(heads[k], heads[best]))) best = k;
    if (best < 0) break;
    if (out.size() > static_cast<std::size_t>(first) && same_stage_less(heads[best], out.back()))
      sorted = false;
    out.push_back(std::move(heads[best]));
    if (++next[best] < size[best])
      heads[best] = list_event(stage, static_cast<EventList>(best), next[best]);
  }
  if (!sorted) std::sort(out.begin() + first, out.end(), same_stage_less);
}

Timeline Simulator::collect() const {
  Timeline timeline;
  timeline.stage_count = stage_count_;
  const auto pairs = at(stage_count_, 0);
  timeline.events.reserve(2 * pairs + 2 * (pairs - static_cast<std::size_t>(micro_batches_)) +
                          static_cast<std::size_t>(stage_count_));
  for (int s = 0; s < stage_count_; ++s) emit_stage(s, timeline.events);
  for (const Event& event : timeline.events)
    timeline.makespan = std::max(timeline.makespan, event.end);
  return timeline;
}

}  // namespace

Timeline simulate(const PipelineShape& shape) {
  check_shape(shape);
  return Simulator(shape).run();
}

Seconds simulated_makespan(const PipelineShape& shape) {
  check_shape(shape);
  return Simulator(shape).makespan();
}

}  // namespace pe
