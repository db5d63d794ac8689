#include "pe/schedule.h"

#include <algorithm>

namespace pe {

std::string to_string(Schedule schedule) {
  switch (schedule) {
    case Schedule::GPipe:
      return "gpipe";
    case Schedule::Interleaved:
      return "interleaved";
    case Schedule::OneFOneB:
      break;
  }
  return "1f1b";
}

int in_flight(Schedule schedule, int stage, int stage_count, int micro_batches) {
  if (schedule == Schedule::GPipe) return micro_batches;
  return std::min(micro_batches, stage_count - stage);
}

namespace {

// Forwards before the first backward of group `device`.
int warmup(Schedule schedule, int device, int devices, int chunks, int micro_batches) {
  const int total = micro_batches * chunks;
  if (schedule == Schedule::GPipe) return total;
  if (schedule == Schedule::OneFOneB) return std::min(total, devices - device);
  return std::min(total, 2 * (devices - device - 1) + (chunks - 1) * devices + 1);
}

// The k-th forward (or backward) of a group: micro-batches in groups of p, each group
// through the chunks in order (backwards: in reverse). Identity when chunks == 1.
ScheduledOp kth(bool forward, int k, int devices, int chunks) {
  if (chunks == 1) return {forward, k, 0};  // spares the divisions the simulator's loop repeats
  const int round = devices * chunks;
  const int chunk = (k % round) / devices;
  return {forward, (k / round) * devices + k % devices, forward ? chunk : chunks - 1 - chunk};
}

}  // namespace

ScheduledOp scheduled_op(Schedule schedule, int index, int device, int devices, int chunks,
                         int micro_batches) {
  const int total = micro_batches * chunks;
  const int w = warmup(schedule, device, devices, chunks, micro_batches);
  if (index < w) return kth(true, index, devices, chunks);
  if (index < 2 * total - w) {
    const int step = index - w;
    if (step % 2 == 0) return kth(false, step / 2, devices, chunks);
    return kth(true, w + step / 2, devices, chunks);
  }
  return kth(false, index - total, devices, chunks);
}

double interleaved_activations(int device, int devices, int micro_batches,
                               const std::vector<double>& chunk_bytes) {
  const int chunks = static_cast<int>(chunk_bytes.size());
  double held = 0, peak = 0;
  for (int i = 0; i < 2 * micro_batches * chunks; ++i) {
    const ScheduledOp op =
        scheduled_op(Schedule::Interleaved, i, device, devices, chunks, micro_batches);
    held += op.forward ? chunk_bytes[op.chunk] : -chunk_bytes[op.chunk];
    peak = std::max(peak, held);
  }
  return peak;
}

}  // namespace pe
