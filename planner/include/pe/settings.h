// How a model is trained: the knobs that scale a profile to a global batch size.
#pragma once

#include <optional>

#include "pe/units.h"

namespace pe {

/// Largest optimizer_scaling accepted (bytes of training state per byte of weights).
inline constexpr double kMaxOptimizerScaling = 1e6;

/// Training settings shared by the baselines and the hybrid search.
struct TrainingSettings {
  /// Smallest micro-batch a pipeline may use (HPGO's `mbs`). A replica whose share of the
  /// global batch is smaller runs it as one micro-batch.
  int min_micro_batch = 1;
  /// Bytes of weights + gradients + optimizer state per byte of weights (HPGO: 2 for
  /// SGD-momentum CNNs, 3 for Adam-like optimizers); 1 to kMaxOptimizerScaling.
  double optimizer_scaling = 2;
  /// Activation bytes one sample keeps for the whole model, at most kMaxModelBytes. Empty: the
  /// profile's total activation bytes / profile batch size. Stage activations are scaled by the
  /// same factor.
  std::optional<Bytes> activation_bytes_per_sample;
  /// Most GPUs a stage splits its operators over (tensor parallelism), for models that say how
  /// (ModelProfile::tensor_parallel_unit): 0 = the GPUs of the smallest machine, 1 = none.
  /// A split's GPUs always share a machine.
  int max_tensor_parallel = 0;
  /// Share of the ideal t-fold speed-up a t-way split reaches (its compute takes
  /// 1 / (t x efficiency) of the time; its all-reduces are costed on top), in (0, 1].
  double tensor_parallel_efficiency = 1;
  /// Whether stages of a model that can recompute (ModelProfile::recomputable) may do so.
  bool recomputation = true;
  /// ZeRO-style sharding of the training state across a stage's data-parallel GPUs: 0 none,
  /// 1 optimizer state (and master weights), 2 also gradients, 3 also the weights (which
  /// are then gathered before each micro-batch's forward and backward pass).
  int zero_stage = 0;
};

}  // namespace pe
