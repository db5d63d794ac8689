// Transformer model files (pe-plan --model): a decoder's configuration, the GPU its times
// are for and the efficiency it reaches. Bundled files: profiles/transformers/NAME.yml.
//
//   name: llama2-7b                # optional; default: the file's stem
//   source: "where the sizes come from"   # optional
//   layers: 32                     # decoder layers
//   hidden: 4096                   # hidden size (a multiple of heads)
//   heads: 32                      # attention heads
//   kv_heads: 32                   # optional; default heads (fewer: grouped-query attention)
//   ffn: 11008                     # FFN inner size
//   ffn_kind: gated                # gated (SwiGLU, 3 matrices) or plain (GELU, 2)
//   sequence: 4096                 # tokens per sequence (one sample)
//   vocabulary: 32000
//   tied_embeddings: false         # optional; default false
//   activations: bf16              # optional: bf16 (default), fp16 or fp32
//   attention: flash               # optional: flash (default, no s x s scores kept) or standard
//   optimizer: adam-mixed          # optional: adam-mixed (default), adam-fp32, sgd-fp32
//   gpu: A100-80GB                 # a catalogue GPU, or a map: {name, peak_tflops,
//                                  #   memory_gb, memory_bandwidth_gbps (optional)}
//   efficiency: 0.5                # optional: fraction of peak reached, (0, 1]; default 0.5
#pragma once

#include <string>
#include <vector>

#include "pe/transformer.h"

namespace pe {

/// A transformer file, read.
struct TransformerInput {
  TransformerConfig config;
  GpuSpec gpu;
  double efficiency = 0.5;
  std::string source;  ///< The file's `source` text (citation), may be empty.
  std::string path;    ///< The file read.
};

/// Reads a transformer file. Throws InputError naming the file, line and key: unknown or
/// missing keys, non-decimal or non-positive numbers, an unknown GPU, activation type,
/// optimizer or FFN kind, hidden not a multiple of heads, heads not a multiple of
/// kv_heads, or a layer whose weights and optimizer state alone exceed the GPU's memory.
TransformerInput load_transformer_yaml(const std::string& path);

/// The same from text; `file` names it in errors and gives the default name.
TransformerInput parse_transformer_yaml(const std::string& text, const std::string& file);

/// The path of a bundled transformer (profiles/transformers/NAME.yml) or `name_or_path`
/// itself when that is a file. Throws InputError listing the bundled names otherwise.
std::string find_transformer(const std::string& name_or_path);

/// The names of the bundled transformer files, sorted.
std::vector<std::string> bundled_transformers();

}  // namespace pe
