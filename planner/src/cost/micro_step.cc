#include "cost/micro_step.h"

#include <algorithm>
#include <cmath>

namespace pe::detail {

int largest_micro_step(const CostModel& cost, int limit, int reducers) {
  const std::size_t last = cost.states() - 1;
  const Bytes weights = cost.weight_memory(0, last, StageVariant{}, reducers) +
                        cost.working_memory(0, last, 1, StageVariant{});
  const Bytes memory = cost.smallest_memory();  // every device holds the whole model
  auto fits = [&](int samples) {
    return weights + cost.activation_memory(0, last, samples) <= memory;
  };
  if (limit < 1 || !fits(1)) return 0;
  const Bytes per_sample = cost.activation_memory(0, last, 1);
  if (per_sample <= 0) return limit;
  // The closed form, then a step or two where rounding puts it off the inequality.
  int step = static_cast<int>(
      std::clamp(std::floor((memory - weights) / per_sample), 1.0, static_cast<double>(limit)));
  while (step > 1 && !fits(step)) --step;
  while (step < limit && fits(step + 1)) ++step;
  return step;
}

}  // namespace pe::detail
