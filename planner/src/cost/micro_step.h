// The largest micro-step of gradient accumulation that fits a device's memory: used by the
// data-parallel baselines (max_device_batch) and the accumulation plans of the search.
#pragma once

#include "cost/cost_model.h"

namespace pe::detail {

/// The largest per-device sample count s <= `limit` whose activations for the whole model
/// fit beside its weights, gradients and optimizer state (ZeRO-sharded over `reducers`
/// data-parallel devices when TrainingSettings::zero_stage says so):
///   weight_memory + working_memory + activation_memory(whole model, s) <= the smallest
///   device memory (every device holds the whole model),
/// i.e. about (memory - optimizer_scaling x P) / activation bytes per sample, checked
/// against that inequality so that it agrees with evaluate()'s memory check. `limit` when
/// activations take no memory; 0 when not even one sample (or `limit` < 1) fits.
int largest_micro_step(const CostModel& cost, int limit, int reducers = 1);

}  // namespace pe::detail
