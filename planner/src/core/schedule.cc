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
