#include "search/fill_floor.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pe::detail {

Seconds fill_floor(const CostModel& cost, const PipelineShapeChoice& shape, int width) {
  if (width < 2) return std::numeric_limits<Seconds>::infinity();
  if (shape.schedule == Schedule::Interleaved) return 0;  // chunks loop: not this bound
  const int b = shape.micro_batch;
  const double efficiency = cost.settings().tensor_parallel_efficiency;
  // c: the fastest a stage of at most width - 1 devices runs a micro-batch, over one GPU (at
  // least 1: t = 1 is always allowed).
  double c = 0;
  for (int t = 1; t <= cost.max_tensor_parallel() && t < width; ++t) {
    if (!cost.tensor_parallel_allowed(t)) continue;
    const int replicas = std::min((width - 1) / t, b);
    const int samples = (b + replicas - 1) / replicas;
    c = std::max(c, static_cast<double>(b) / samples * (t == 1 ? 1.0 : t * efficiency));
  }
  const double budget = width * std::max(1.0, efficiency);
  const double m = shape.micro_batches;
  const double full = std::floor(budget / c);
  const double left = budget - full * c;
  const double q_n = std::pow(1 - 1 / m, full);
  const double capacity = c * (1 - q_n) + left * q_n / m;
  return cost.whole_model_time(b) / (cost.fastest() * capacity);
}

}  // namespace pe::detail
