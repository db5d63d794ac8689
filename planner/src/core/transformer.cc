#include "pe/transformer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

#include "pe/error.h"

namespace pe {
namespace {

void positive(int value, const std::string& where, const char* key) {
  if (value <= 0)
    throw InputError(
        where, std::string(key) + " must be a positive whole number, got " + std::to_string(value));
}

// "a, b, c": the `name`s of `items`, for error messages.
template <typename Items>
std::string names_of(const Items& items) {
  std::string list;
  for (const auto& item : items) list += (list.empty() ? "" : ", ") + item.name;
  return list;
}

const OptimizerPreset& preset(const std::string& name, const std::string& where) {
  for (const OptimizerPreset& p : optimizer_presets())
    if (p.name == name) return p;
  throw InputError(where,
                   "optimizer '" + name + "' is unknown; known: " + names_of(optimizer_presets()));
}

int kv_heads(const TransformerConfig& c) { return c.kv_heads > 0 ? c.kv_heads : c.heads; }

TransformerLayer decoder_layer(const TransformerConfig& c, int index) {
  const double s = c.sequence, h = c.hidden, a = c.heads, f = c.ffn, d = c.activation_bytes;
  const double r = static_cast<double>(kv_heads(c)) / a;
  const double matrices = c.gated_ffn ? 3 : 2;
  TransformerLayer layer;
  layer.name = "layer " + std::to_string(index);
  layer.forward_flops =
      2 * s * (2 * h * h + 2 * h * h * r) + 4 * s * s * h + matrices * 2 * s * h * f;
  layer.parameter_count = 2 * h * h + 2 * h * h * r + matrices * h * f + 2 * h;
  const double attention =
      c.flash_attention ? d * (3 * s * h + 2 * s * h * r) + 4 * a * s + s * h
                        : d * (3 * s * h + 2 * s * h * r + 2 * a * s * s) + a * s * s + s * h;
  const double ffn = d * (s * h + (c.gated_ffn ? 4 : 2) * s * f) + s * h;
  layer.activation = attention + ffn + 2 * d * s * h;
  layer.recomputed_activation = d * s * h;
  layer.output = d * s * h;
  layer.tensor_parallel = d * s * h;
  layer.tensor_parallel_forward = 2;
  return layer;
}

}  // namespace

const std::vector<OptimizerPreset>& optimizer_presets() {
  static const std::vector<OptimizerPreset> presets{
      {"adam-mixed", 16, 2}, {"adam-fp32", 16, 4}, {"sgd-fp32", 12, 4}};
  return presets;
}

void validate(const TransformerConfig& c,
              const std::function<std::string(const std::string& key)>& where_of) {
  positive(c.layers, where_of("layers"), "layers");
  positive(c.hidden, where_of("hidden"), "hidden");
  positive(c.heads, where_of("heads"), "heads");
  positive(c.ffn, where_of("ffn"), "ffn");
  positive(c.sequence, where_of("sequence"), "sequence");
  positive(c.vocabulary, where_of("vocabulary"), "vocabulary");
  if (c.kv_heads < 0) positive(c.kv_heads, where_of("kv_heads"), "kv_heads");
  if (c.hidden % c.heads != 0)
    throw InputError(where_of("heads"), "hidden " + std::to_string(c.hidden) +
                                            " is not a multiple of heads " +
                                            std::to_string(c.heads));
  if (c.heads % kv_heads(c) != 0)
    throw InputError(where_of("kv_heads"), "heads " + std::to_string(c.heads) +
                                               " is not a multiple of kv_heads " +
                                               std::to_string(kv_heads(c)));
  if (c.activation_bytes != 2 && c.activation_bytes != 4)
    throw InputError(where_of("activations"),
                     "activation bytes must be 2 (bf16, fp16) or 4 (fp32), got " +
                         std::to_string(c.activation_bytes));
  preset(c.optimizer, where_of("optimizer"));
}

void validate(const TransformerConfig& c, const std::string& where) {
  validate(c, [&where](const std::string&) { return where; });
}

std::vector<TransformerLayer> transformer_layers(const TransformerConfig& c) {
  const double s = c.sequence, h = c.hidden, v = c.vocabulary, d = c.activation_bytes;
  std::vector<TransformerLayer> layers;
  TransformerLayer embedding;
  embedding.name = "embedding";
  embedding.parameter_count = v * h;
  embedding.output = d * s * h;
  embedding.tensor_parallel = d * s * h;  // the vocabulary-parallel lookup's partial sums
  embedding.tensor_parallel_forward = 1;
  embedding.recomputed_activation = 0;
  layers.push_back(embedding);
  for (int i = 1; i <= c.layers; ++i) layers.push_back(decoder_layer(c, i));
  TransformerLayer head;
  head.name = "head";
  head.forward_flops = 2 * s * h * v;
  head.parameter_count = (c.tied_embeddings ? 0 : v * h) + h;
  // The final norm's and the LM head's inputs, and fp32 logits for the loss.
  head.activation = 2 * d * s * h + 4 * s * v;
  head.recomputed_activation = d * s * h;
  head.tensor_parallel = d * s * h;  // gathering the sequence-parallel input of the LM head
  head.tensor_parallel_forward = 1;
  layers.push_back(head);
  return layers;
}

ModelProfile transformer_model(const TransformerConfig& c, const GpuSpec& gpu, double efficiency) {
  validate(c, c.name);
  if (!(efficiency > 0 && efficiency <= 1))
    throw InputError(c.name, "efficiency must be in (0, 1], got " + std::to_string(efficiency));
  if (!(gpu.peak_flops > 0))
    throw InputError(c.name, "GPU '" + gpu.name + "' needs a positive peak FLOP/s");
  const double flops_per_second = gpu.peak_flops * efficiency;
  const int weight_bytes = preset(c.optimizer, c.name).weight_bytes;
  ModelProfile model;
  model.name = c.name;
  model.source = "transformer configuration";
  model.profile_batch_size = 1;
  CutState sum;
  for (const TransformerLayer& layer : transformer_layers(c)) {
    sum.name = layer.name;
    sum.forward += layer.forward_flops / flops_per_second;
    sum.backward += 2 * layer.forward_flops / flops_per_second;
    sum.activation += layer.activation;
    sum.parameters += layer.parameter_count * weight_bytes;
    sum.crossing = layer.output;
    sum.recomputed_activation += layer.recomputed_activation;
    sum.tensor_parallel += layer.tensor_parallel_forward * layer.tensor_parallel;
    model.states.push_back(sum);
  }
  model.states.back().crossing = 0;
  model.operator_count = model.states.size();
  model.tensor_parallel_unit = std::gcd(c.heads, kv_heads(c));
  model.recomputable = true;
  model.gpu = gpu;
  model.training_flops_per_sample = transformer_training_flops(c);
  validate(model, c.name);
  return model;
}

double transformer_optimizer_scaling(const TransformerConfig& c) {
  const OptimizerPreset& p = preset(c.optimizer, c.name);
  return p.bytes_per_parameter / p.weight_bytes;
}

double transformer_training_flops(const TransformerConfig& c) {
  double forward = 0;
  for (const TransformerLayer& layer : transformer_layers(c)) forward += layer.forward_flops;
  return 3 * forward;
}

}  // namespace pe
