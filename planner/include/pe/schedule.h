// Pipeline schedules and the per-stage times an event simulation needs.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "pe/units.h"

namespace pe {

/// How micro-batches flow through the stages.
enum class Schedule {
  OneFOneB,  ///< DAPPLE / PipeDream-flush "early backward": stage s warms up with
             ///< min(M, S - s) forwards, then alternates one backward, one forward.
  GPipe,     ///< All forwards, then all backwards; keeps every micro-batch in flight.
  /// Megatron-LM's interleaved 1F1B (Narayanan et al., SC'21, section 2.2): the model is cut
  /// into p x v chunks and device group d runs chunks d, d + p, ..., d + (v - 1) p (its v
  /// "virtual stages"). The pipeline's fill and drain shrink v-fold, at the price of v times
  /// the transfers and more activations in flight. Needs M to be a multiple of p.
  Interleaved,
};

/// "1f1b", "gpipe" or "interleaved".
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
  /// One per stage, in pipeline order. Interleaved: one per chunk (virtual stage), p x v of
  /// them; chunk j runs on device group j % p.
  std::vector<StageTimes> stages;
  int micro_batches = 1;                   ///< Micro-batches per iteration (M >= 1).
  Schedule schedule = Schedule::OneFOneB;  ///< Order of the stages' operations.
  int chunks = 1;  ///< Chunks per device group (v): >= 2 when interleaved, else 1.
  /// Device groups (p): stages.size() / chunks.
  int devices() const { return chunks > 0 ? static_cast<int>(stages.size()) / chunks : 0; }
};

/// Micro-batches whose activations stage `stage` (0-based) of `stage_count` keeps at once
/// (1F1B and GPipe; interleaved_activations() for the interleaved schedule).
int in_flight(Schedule schedule, int stage, int stage_count, int micro_batches);

/// One operation of a device group's fixed order: a forward or backward of one micro-batch
/// on one of its chunks (chunk c of group d is stage c x p + d of the pipeline).
struct ScheduledOp {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;
};

namespace schedule_detail {

// Forwards before the first backward of group `device`.
inline int warmup(Schedule schedule, int device, int devices, int chunks, int micro_batches) {
  const int total = micro_batches * chunks;
  if (schedule == Schedule::GPipe) return total;
  if (schedule == Schedule::OneFOneB) return std::min(total, devices - device);
  return std::min(total, 2 * (devices - device - 1) + (chunks - 1) * devices + 1);
}

// The k-th forward (or backward) of a group: micro-batches in groups of p, each group
// through the chunks in order (backwards: in reverse). Identity when chunks == 1.
inline ScheduledOp kth(bool forward, int k, int devices, int chunks) {
  if (chunks == 1) return {forward, k, 0};  // spares the divisions the simulator's loop repeats
  const int round = devices * chunks;
  const int chunk = (k % round) / devices;
  return {forward, (k / round) * devices + k % devices, forward ? chunk : chunks - 1 - chunk};
}

}  // namespace schedule_detail

/// The index-th of the 2 x M x v operations of device group `device` of `devices`
/// (0 <= index < 2 M v). 1F1B (v = 1) warms up with min(M, p - d) forwards, then alternates
/// backward (oldest) and forward (next); GPipe runs M forwards, then M backwards.
/// Interleaved (Megatron-LM's order): forwards k = 0, 1, ... visit micro-batches in groups of
/// p, each group through chunks 0..v-1 (forward k: chunk (k mod pv) / p, micro-batch
/// (k / pv) p + k mod p), backwards the same groups through chunks v-1..0; warm-up
/// min(Mv, 2 (p - d - 1) + (v - 1) p + 1) forwards, then alternating as 1F1B.
/// `micro_batches` must be a multiple of `devices` when chunks > 1.
/// (Inline: the simulator asks it for every operation it runs.)
inline ScheduledOp scheduled_op(Schedule schedule, int index, int device, int devices, int chunks,
                                int micro_batches) {
  using schedule_detail::kth;
  const int total = micro_batches * chunks;
  const int w = schedule_detail::warmup(schedule, device, devices, chunks, micro_batches);
  if (index < w) return kth(true, index, devices, chunks);
  if (index < 2 * total - w) {
    const int step = index - w;
    if (step % 2 == 0) return kth(false, step / 2, devices, chunks);
    return kth(true, w + step / 2, devices, chunks);
  }
  return kth(false, index - total, devices, chunks);
}

/// The most activation bytes a device of group `device` keeps at once under the
/// interleaved schedule, where one micro-batch of chunk c keeps chunk_bytes[c] (v entries).
/// Walks the group's order: a forward adds its chunk's bytes, the backward frees them.
double interleaved_activations(int device, int devices, int micro_batches,
                               const std::vector<double>& chunk_bytes);

}  // namespace pe
