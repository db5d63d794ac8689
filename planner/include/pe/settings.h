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
};

}  // namespace pe
