// Decoder-only transformers (GPT, LLaMA) built from their configuration: per-layer FLOPs,
// parameter, activation and boundary bytes, and their times on a GPU.
//
// Formulas, per sequence of s tokens (hidden h, a heads, kv heads k, r = k / a, FFN size f,
// vocabulary V, d bytes per weight and activation element):
// - Forward FLOPs of a layer: 2s(2h^2 + 2h^2 r) for the Q, O and K, V projections,
//   4s^2 h for QK^T and the attention over V, and 2shf per FFN matrix (2 plain, 3 gated).
//   For GPT (r = 1, f = 4h) that is 24sh^2 + 4s^2 h, the count of Narayanan et al.,
//   "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM"
//   (SC'21), section 5.1. The LM head adds 2shV. Backward is twice the forward (ibid.).
// - Activation bytes kept for the backward of a layer: d(3sh + 2shr + 2as^2) + as^2 + sh
//   for attention (inputs of the projections, Q, K, V, softmax and dropout outputs, and
//   one-byte dropout masks), d(sh + 2sf) + sh (plain) or d(sh + 4sf) + sh (gated) for the
//   FFN, and 2dsh for the two norms. For d = 2, r = 1, f = 4h this is 34sh + 5as^2, the
//   count of Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
//   Models" (MLSys'23), section 4.1. Fused (flash) attention keeps no s x s matrices: the
//   attention part is d(3sh + 2shr) + 4as + sh (fp32 softmax statistics instead of the
//   scores; Dao et al., "FlashAttention", NeurIPS'22). With full
//   recomputation a layer keeps its input, dsh.
// - Parameters of a layer: 2h^2 + 2h^2 r + (2 or 3)hf + 2h (biases left out); the
//   embedding and an untied LM head hold Vh each.
// - Tensor parallelism over t GPUs (Megatron-style, Shoeybi et al., "Megatron-LM", 2019)
//   all-reduces the layer's sh-element output twice in the forward pass and twice in the
//   backward pass; with sequence parallelism (Korthikanti et al., section 4.2.2) each is a
//   reduce-scatter and an all-gather of the same volume, and every activation is split t
//   ways. The vocabulary-parallel embedding and LM head each add one such collective per
//   pass. A model may be split t ways for t dividing both the heads and the key/value heads.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pe/gpu.h"
#include "pe/model.h"
#include "pe/units.h"

namespace pe {

/// Bytes per parameter held on a device for each optimizer preset (weights, gradients,
/// master weights and optimizer state).
struct OptimizerPreset {
  std::string name;            ///< "adam-mixed", "adam-fp32" or "sgd-fp32".
  double bytes_per_parameter;  ///< e.g. 16 = 2 + 2 + 4 + 4 + 4 for mixed-precision Adam.
  int weight_bytes;            ///< Bytes of the weights and gradients that are all-reduced.
};

/// The presets, the default first: adam-mixed (bf16/fp16 weights and gradients, fp32 master
/// weights, Adam's two moments: 16 bytes), adam-fp32 (16 bytes), sgd-fp32 (weights, gradients,
/// momentum: 12).
const std::vector<OptimizerPreset>& optimizer_presets();

/// A decoder-only transformer. Sizes are counts; `sequence` tokens make one sample.
struct TransformerConfig {
  std::string name;
  int layers = 0;                ///< Decoder layers.
  int hidden = 0;                ///< Hidden size h.
  int heads = 0;                 ///< Attention heads a (h must be a multiple).
  int kv_heads = 0;              ///< Key/value heads k (a must be a multiple); 0 = a (no grouping).
  int ffn = 0;                   ///< FFN inner size f.
  bool gated_ffn = false;        ///< Three FFN matrices (SwiGLU, LLaMA) instead of two (GPT).
  int sequence = 0;              ///< Tokens per sequence s.
  int vocabulary = 0;            ///< Vocabulary size V.
  bool tied_embeddings = false;  ///< The LM head reuses the embedding's weights.
  int activation_bytes = 2;      ///< Bytes per activation element d (2 or 4).
  bool flash_attention = true;   ///< Fused attention: no s x s scores kept for the backward.
  std::string optimizer = "adam-mixed";  ///< One of optimizer_presets().
};

/// What one layer costs, per sequence.
struct TransformerLayer {
  std::string name;
  double forward_flops = 0;
  double parameter_count = 0;       ///< Parameters (a count, not bytes).
  Bytes activation = 0;             ///< Bytes kept for the backward pass.
  Bytes recomputed_activation = 0;  ///< The same with full recomputation.
  Bytes output = 0;                 ///< Bytes of the layer's output (what a pipeline cut sends).
  Bytes tensor_parallel = 0;        ///< Bytes of each tensor-parallel all-reduce.
  /// All-reduces of that size in the forward pass (as many in the backward): 2 per decoder
  /// layer, 1 for the vocabulary-parallel embedding and LM head.
  int tensor_parallel_forward = 0;
};

/// Throws InputError at `where_of(key)` for the key a rule concerns: non-positive sizes,
/// hidden not a multiple of heads (key "heads"), heads not a multiple of kv_heads,
/// activation bytes other than 2 or 4 ("activations"), an unknown optimizer.
void validate(const TransformerConfig& config,
              const std::function<std::string(const std::string& key)>& where_of);
/// The same, every error naming `where`.
void validate(const TransformerConfig& config, const std::string& where);

/// The layers in order: "embedding", "layer 1" .. "layer L", "head" (final norm, LM head
/// and loss).
std::vector<TransformerLayer> transformer_layers(const TransformerConfig& config);

/// The planner's model: one state per layer, one sequence per sample (profile batch 1),
/// times = FLOPs / (gpu.peak_flops x efficiency), parameters in bytes of the optimizer's
/// weight type; stages may recompute and split t ways for t dividing gcd(heads, kv_heads)
/// (ModelProfile::tensor_parallel_unit). Throws InputError as validate() does and for an
/// efficiency outside (0, 1].
ModelProfile transformer_model(const TransformerConfig& config, const GpuSpec& gpu,
                               double efficiency);

/// The optimizer scaling of TrainingSettings for `config`: device bytes per parameter over
/// the bytes of a weight, so that parameters x scaling is the memory of weights, gradients
/// and optimizer state.
double transformer_optimizer_scaling(const TransformerConfig& config);

/// Forward + backward FLOPs of one sequence through the whole model (no recomputation).
double transformer_training_flops(const TransformerConfig& config);

}  // namespace pe
