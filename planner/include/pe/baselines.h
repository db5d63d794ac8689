// Plain data-parallel baselines (HPGO's three columns), as closed-form estimates.
#pragma once

#include "pe/cluster.h"
#include "pe/model.h"
#include "pe/settings.h"
#include "pe/units.h"

namespace pe {

/// Data parallelism over every device of a cluster for one global batch size.
/// Speedups are relative to one device running the whole batch (no memory limit).
struct Baselines {
  Seconds single_device_time = 0;  ///< T: forward + backward of the whole batch, 1 device.
  Seconds allreduce_time = 0;      ///< Ring all-reduce of all gradients over N devices
                                   ///< (a reduce-scatter, half of it, under ZeRO-3).
  int per_device_batch = 0;        ///< ceil(GBS / N).
  int max_device_batch = 0;        ///< Largest batch a device's memory holds (0: none).
  int accumulation_steps = 1;      ///< Gradient-accumulation micro-steps (1: none).
  /// Memory holds the weights and micro-steps of at least ceil(min(floor, GBS) / N) samples
  /// per device (floor = TrainingSettings::min_micro_batch, as for pipeline micro-batches).
  bool fits = false;
  double dp = 0;          ///< No overlap: T / (T_dev + AR).
  double dp_overlap = 0;  ///< All-reduce of each layer overlaps the backward left.
  double dp_p3 = 0;       ///< Also overlaps the next forward, input layers first.
};

/// Ring all-reduce time of `bytes` over `devices` devices at `bandwidth`:
/// 2 (d - 1) / d * bytes / bandwidth; 0 for one device.
Seconds ring_allreduce(Bytes bytes, int devices, BytesPerSecond bandwidth);

/// Largest per-device batch whose activations fit beside the weights, gradients and
/// optimizer state: floor((memory - scaling * P) / activation_per_sample); 0 when none.
/// Under ZeRO (TrainingSettings::zero_stage) the state is sharded over `devices`.
int max_device_batch(const ModelProfile& model, const TrainingSettings& settings,
                     Bytes device_memory, int devices = 1);

/// Computes the three baselines for `global_batch` samples on all devices of `cluster`.
/// Gradient accumulation splits a device's share into micro-steps of at most
/// max_device_batch samples, as even as possible; only the last micro-step's backward can
/// hide communication. Like a pipeline micro-batch, a micro-step of all devices together
/// holds at least min(min_micro_batch, GBS) samples; when memory allows no such split,
/// `fits` is false.
Baselines data_parallel_baselines(const ModelProfile& model, const Cluster& cluster,
                                  const TrainingSettings& settings, int global_batch);

}  // namespace pe
