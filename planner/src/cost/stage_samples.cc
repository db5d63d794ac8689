#include "cost/stage_samples.h"

#include <algorithm>

namespace pe::detail {
namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace

StageSamples stage_samples(bool one_stage, int share, int micro_batch, int micro_batches,
                           int width) {
  const double per_micro_batch = ceil_div(micro_batch, width);
  if (!one_stage) return {per_micro_batch, per_micro_batch};
  return {static_cast<double>(ceil_div(share, width)) / micro_batches, per_micro_batch};
}

int max_stage_width(bool one_stage, int micro_batch, int devices, int tensor_parallel) {
  if (one_stage) return devices;
  return static_cast<int>(
      std::min<long long>(devices, static_cast<long long>(micro_batch) * tensor_parallel));
}

}  // namespace pe::detail
