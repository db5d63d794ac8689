#include "cost/path_bound.h"

#include <algorithm>

namespace pe::detail {
namespace {

// The terms of stage b that end at its last backward: A, A', T (1F1B), G, B and Q.
Seconds before_last_backward(const StageTimes& t, const SuffixBound& s, int micro_batches,
                             Schedule schedule) {
  const double m = micro_batches;
  const int k = s.stages;
  const int warmup = schedule == Schedule::GPipe ? micro_batches : std::min(micro_batches, k);
  Seconds before = std::max({m * (t.forward + t.backward) - s.round_trip,        // B
                             (m - 1) * t.backward,                               // G
                             (m - 1) * t.forward + (m - warmup) * t.backward});  // Q
  if (schedule == Schedule::GPipe) return before;
  before = std::max(before, (m - 1) * t.backward + (m - warmup) * t.forward);  // A
  if (k < micro_batches) {                                                     // A'
    const int trips = (micro_batches - 1) / k;
    before = std::max(before, trips * s.round_trip + (micro_batches - 1 - trips * k) * t.backward);
  } else {  // T
    before = std::max(before, (m - 1) * (t.forward + t.backward) + s.after_x);
  }
  return before;
}

// The terms that do not end at stage b's last backward: C, P (1F1B) and W (GPipe).
Seconds other_terms(const StageTimes& t, Seconds send, const SuffixBound* next,
                    const SuffixBound& s, int micro_batches, Schedule schedule) {
  const double m = micro_batches;
  Seconds term = (m - 1) * send;  // C
  if (schedule == Schedule::GPipe)
    return std::max(term, (m - 1) * (s.forward_wave + s.backward_wave));
  const int k = s.stages;
  if (next && k >= 2 && k < micro_batches) {  // P
    const int cycles = (micro_batches + 1 - k) / 2;
    term = std::max(
        term, (k - 2) * t.forward + cycles * (t.forward + t.backward + 2 * send + next->head_work));
  }
  return term;
}

}  // namespace

SuffixBound prepend_stage(const StageTimes& t, Seconds send, const SuffixBound* next,
                          int micro_batches, Schedule schedule) {
  SuffixBound s;
  s.stages = next ? std::min(next->stages + 1, micro_batches) : 1;
  s.round_trip = t.forward + t.backward + 2 * send + (next ? next->round_trip : 0);
  if (schedule == Schedule::GPipe) {
    s.forward_wave = std::max({t.forward, send, next ? next->forward_wave : 0});
    s.backward_wave = std::max({t.backward, send, next ? next->backward_wave : 0});
  } else {
    s.head_work = t.forward + t.backward;
    // Stage b is x = S - M when it is the first with M stages from it to the end.
    const bool is_x = s.stages == micro_batches && (!next || next->stages < micro_batches);
    if (is_x)
      s.after_x = t.forward + t.backward - s.round_trip;  // minus what lies beyond x
    else if (s.stages == micro_batches)
      s.after_x = next->after_x;
  }
  const Seconds before = before_last_backward(t, s, micro_batches, schedule);
  s.worst = std::max(
      {before, other_terms(t, send, next, s, micro_batches, schedule), next ? next->worst : 0});
  s.exposed = before + t.allreduce;
  if (next) s.exposed = std::max(s.exposed, next->exposed - t.backward - send);
  return s;
}

Seconds path_lower_bound(const PipelineShape& shape) {
  const int stages = static_cast<int>(shape.stages.size());
  SuffixBound suffix;
  for (int b = stages - 1; b >= 0; --b) {
    const StageTimes& t = shape.stages[b];
    suffix = prepend_stage(t, b + 1 < stages ? t.send : 0, b + 1 < stages ? &suffix : nullptr,
                           shape.micro_batches, shape.schedule);
  }
  return bound_of(suffix);
}

}  // namespace pe::detail
