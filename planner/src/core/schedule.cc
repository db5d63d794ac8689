#include "pe/schedule.h"

#include <algorithm>

namespace pe {

std::string to_string(Schedule schedule) { return schedule == Schedule::GPipe ? "gpipe" : "1f1b"; }

int in_flight(Schedule schedule, int stage, int stage_count, int micro_batches) {
  if (schedule == Schedule::GPipe) return micro_batches;
  return std::min(micro_batches, stage_count - stage);
}

}  // namespace pe
