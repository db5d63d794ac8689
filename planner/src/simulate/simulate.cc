// The event-driven pipeline simulator. Each device group (a stage, or under the interleaved
// schedule the v chunks of one group) runs its operations in a fixed order (scheduled_op); an
// operation starts as soon as the group is free and its inputs have arrived. Groups are
// advanced from a work list: a group runs until its next operation waits for data, and is
// woken again when a neighbour produces that data, so every operation is handled once.
// Per-stage data (start times, times) is indexed by pipeline stage (chunk x p + group).
#include "pe/timeline.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "pe/error.h"

namespace pe {
namespace {

constexpr Seconds kNotYet = -1;  // Arrival time of data not produced yet (times are >= 0).
constexpr long long kMaxPairs = 1LL << 26;

void check_time(double value, std::size_t stage, const char* field) {
  if (std::isfinite(value) && value >= 0) return;
  std::ostringstream seen;
  seen << value;
  throw InputError("pipeline shape", "stage " + std::to_string(stage) + ": " + field + " time " +
                                         seen.str() +
                                         " is not a finite non-negative number of seconds");
}

void check_chunks(const PipelineShape& shape) {
  const int chunks = shape.chunks;
  if (shape.schedule != Schedule::Interleaved) {
    if (chunks != 1)
      throw InputError(
          "pipeline shape",
          "chunks must be 1 unless the schedule is interleaved, got " + std::to_string(chunks));
    return;
  }
  const auto stages = static_cast<int>(shape.stages.size());
  if (chunks < 2 || stages % chunks != 0 || stages / chunks < 2)
    throw InputError("pipeline shape",
                     "the interleaved schedule needs at least 2 chunks on each of "
                     "at least 2 device groups; got " +
                         std::to_string(stages) + " stages in chunks of " + std::to_string(chunks));
  if (shape.micro_batches % (stages / chunks) != 0)
    throw InputError("pipeline shape", "the interleaved schedule needs micro_batches (" +
                                           std::to_string(shape.micro_batches) +
                                           ") to be a multiple of the device groups (" +
                                           std::to_string(stages / chunks) + ")");
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
  check_chunks(shape);
}

// Order of events of one group (all labels are empty): event_less without stage and label.
bool same_stage_less(const Event& a, const Event& b) {
  return std::tie(a.start, a.kind, a.micro_batch, a.chunk) <
         std::tie(b.start, b.kind, b.micro_batch, b.chunk);
}

class Simulator {
 public:
  // `events`: whether run() will collect the events (makespan() alone needs only the
  // transfers' start times, which feed the operations after them).
  Simulator(const PipelineShape& shape, bool events);
  Timeline run();
  // Runs every operation and returns the end of the last one, all-reduces included,
  // without building the events.
  Seconds makespan();

 private:
  std::size_t at(int stage, int micro_batch) const {
    return static_cast<std::size_t>(stage) * static_cast<std::size_t>(micro_batches_) +
           static_cast<std::size_t>(micro_batch);
  }
  // The transfers across the cut behind stage `cut` (between it and the next), per
  // micro-batch: stages - 1 rows.
  std::size_t across(int cut, int micro_batch) const { return at(cut, micro_batch); }
  const StageTimes& times(int stage) const { return shape_.stages[stage]; }
  int group_of(int stage) const { return stage % groups_; }
  int stage_of(int group, const ScheduledOp& op) const { return op.chunk * groups_ + group; }
  int operations() const { return 2 * micro_batches_ * chunks_; }
  bool finished(int group) const { return next_[group] == operations(); }
  ScheduledOp op(int group, int index) const {
    return scheduled_op(shape_.schedule, index, group, groups_, chunks_, micro_batches_);
  }
  Seconds inputs_ready(int stage, const ScheduledOp& op) const;
  void advance(int group);
  void run_op(int group, const ScheduledOp& op, Seconds ready);
  void send_activation(int stage, int micro_batch, Seconds ready);
  void send_gradient(int stage, int micro_batch, Seconds ready);
  void wake(int group);
  Timeline collect() const;
  void emit_group(int group, std::vector<Event>& out) const;

  const PipelineShape& shape_;
  int stage_count_;
  int chunks_;
  int groups_;
  int micro_batches_;
  std::vector<int> next_;               // Index of each group's next operation.
  std::vector<Seconds> free_at_;        // When each group's compute is free.
  std::vector<Seconds> forward_link_;   // When each group's outgoing forward link is free.
  std::vector<Seconds> backward_link_;  // When each group's outgoing backward link is free.
  std::vector<Seconds> reduce_link_;    // When each group's all-reduce link is free.
  // Start times, kNotYet until known: operations indexed [stage, micro-batch] (only where
  // the events are collected), transfers [cut, micro-batch] (across()).
  std::vector<Seconds> forward_start_;
  std::vector<Seconds> backward_start_;
  std::vector<Seconds> activation_start_;
  std::vector<Seconds> gradient_start_;
  std::vector<Seconds> allreduce_start_;  // Per stage.
  std::vector<int> pending_;              // Groups to advance.
  std::vector<char> queued_;              // Group is in pending_.
};

Simulator::Simulator(const PipelineShape& shape, bool events)
    : shape_(shape),
      stage_count_(static_cast<int>(shape.stages.size())),
      chunks_(shape.chunks),
      groups_(shape.devices()),
      micro_batches_(shape.micro_batches) {
  const auto groups = static_cast<std::size_t>(groups_);
  next_.assign(groups, 0);
  free_at_.assign(groups, 0);
  forward_link_.assign(groups, 0);
  backward_link_.assign(groups, 0);
  reduce_link_.assign(groups, 0);
  // (A plan of 2^26 pairs would otherwise fill four such tables, half a gigabyte each.)
  if (events)
    for (auto* starts : {&forward_start_, &backward_start_})
      starts->assign(at(stage_count_, 0), kNotYet);
  for (auto* starts : {&activation_start_, &gradient_start_})
    starts->assign(at(stage_count_ - 1, 0), kNotYet);
  allreduce_start_.assign(static_cast<std::size_t>(stage_count_), kNotYet);
  queued_.assign(groups, 0);
}

Seconds Simulator::inputs_ready(int stage, const ScheduledOp& op) const {
  if (op.forward) {
    if (stage == 0) return 0;
    const Seconds sent = activation_start_[across(stage - 1, op.micro_batch)];
    return sent == kNotYet ? kNotYet : sent + times(stage - 1).send;
  }
  if (stage == stage_count_ - 1) return 0;
  const Seconds sent = gradient_start_[across(stage, op.micro_batch)];
  return sent == kNotYet ? kNotYet : sent + times(stage).send;
}

void Simulator::advance(int group) {
  while (!finished(group)) {
    const ScheduledOp next = op(group, next_[group]);
    const Seconds ready = inputs_ready(stage_of(group, next), next);
    if (ready == kNotYet) return;
    run_op(group, next, ready);
  }
}

void Simulator::run_op(int group, const ScheduledOp& op, Seconds ready) {
  const int stage = stage_of(group, op);
  const Seconds start = std::max(free_at_[group], ready);
  const Seconds end = start + (op.forward ? times(stage).forward : times(stage).backward);
  if (std::vector<Seconds>& starts = op.forward ? forward_start_ : backward_start_; !starts.empty())
    starts[at(stage, op.micro_batch)] = start;
  free_at_[group] = end;
  ++next_[group];
  if (op.forward && stage + 1 < stage_count_) send_activation(stage, op.micro_batch, end);
  if (!op.forward && stage > 0) send_gradient(stage, op.micro_batch, end);
  // A chunk's last backward is of the last micro-batch of its last round (1F1B, GPipe: M-1).
  if (!op.forward && op.micro_batch == micro_batches_ - 1) {
    const Seconds from = std::max(end, reduce_link_[group]);
    allreduce_start_[stage] = from;
    reduce_link_[group] = from + times(stage).allreduce;
  }
}

void Simulator::send_activation(int stage, int micro_batch, Seconds ready) {
  Seconds& link = forward_link_[group_of(stage)];
  const Seconds start = std::max(ready, link);
  link = start + times(stage).send;
  activation_start_[across(stage, micro_batch)] = start;
  wake(group_of(stage + 1));
}

void Simulator::send_gradient(int stage, int micro_batch, Seconds ready) {
  const int cut = stage - 1;
  Seconds& link = backward_link_[group_of(stage)];
  const Seconds start = std::max(ready, link);
  link = start + times(cut).send;
  gradient_start_[across(cut, micro_batch)] = start;
  wake(group_of(cut));
}

void Simulator::wake(int group) {
  if (queued_[group]) return;
  queued_[group] = 1;
  pending_.push_back(group);
}

Seconds Simulator::makespan() {
  for (int g = groups_ - 1; g >= 0; --g) wake(g);
  while (!pending_.empty()) {
    const int group = pending_.back();
    pending_.pop_back();
    queued_[group] = 0;
    advance(group);
  }
  // A transfer ends before the operation it feeds starts, so compute and all-reduces end last.
  Seconds end = 0;
  for (int g = 0; g < groups_; ++g) {
    if (!finished(g)) throw std::logic_error("simulate: the schedule deadlocked");
    end = std::max({end, free_at_[g], reduce_link_[g]});
  }
  return end;
}

Timeline Simulator::run() {
  makespan();
  return collect();
}

// Appends a group's events to `out` in start order: its operations, then the transfers and
// all-reduces they cause, sorted (each list is nearly in order already).
void Simulator::emit_group(int group, std::vector<Event>& out) const {
  const auto first = static_cast<std::ptrdiff_t>(out.size());
  for (int i = 0; i < operations(); ++i) {
    const ScheduledOp o = op(group, i);
    const int s = stage_of(group, o);
    const std::size_t k = at(s, o.micro_batch);
    const StageTimes& t = times(s);
    auto emit = [&](EventKind kind, Seconds start, Seconds duration) {
      out.push_back({group, kind, o.micro_batch, start, start + duration, {}, o.chunk});
    };
    if (o.forward) {
      emit(EventKind::Forward, forward_start_[k], t.forward);
      if (s + 1 < stage_count_)
        emit(EventKind::SendActivation, activation_start_[across(s, o.micro_batch)], t.send);
      continue;
    }
    emit(EventKind::Backward, backward_start_[k], t.backward);
    if (s > 0)
      emit(EventKind::SendGradient, gradient_start_[across(s - 1, o.micro_batch)],
           times(s - 1).send);
  }
  for (int c = 0; c < chunks_; ++c) {
    const int s = c * groups_ + group;
    out.push_back({group,
                   EventKind::AllReduce,
                   -1,
                   allreduce_start_[s],
                   allreduce_start_[s] + times(s).allreduce,
                   {},
                   c});
  }
  if (!std::is_sorted(out.begin() + first, out.end(), same_stage_less))
    std::sort(out.begin() + first, out.end(), same_stage_less);
}

Timeline Simulator::collect() const {
  Timeline timeline;
  timeline.stage_count = groups_;
  const auto pairs = at(stage_count_, 0);
  timeline.events.reserve(4 * pairs + static_cast<std::size_t>(stage_count_));
  for (int g = 0; g < groups_; ++g) emit_group(g, timeline.events);
  for (const Event& event : timeline.events)
    timeline.makespan = std::max(timeline.makespan, event.end);
  return timeline;
}

}  // namespace

Timeline simulate(const PipelineShape& shape) {
  check_shape(shape);
  return Simulator(shape, true).run();
}

Seconds simulated_makespan(const PipelineShape& shape) {
  check_shape(shape);
  return Simulator(shape, false).makespan();
}

}  // namespace pe
