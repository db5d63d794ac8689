#include "pe/importers/transformer_yaml.h"

#include <algorithm>
#include <filesystem>

#include "pe/importers/profile_catalog.h"
#include "yaml_input.h"

namespace pe {
namespace {

namespace fs = std::filesystem;
using namespace detail::yaml_input;

constexpr long long kMaxSize = 1LL << 30;  // layers, sizes, tokens: up to 2^30

int size(const YAML::Node& map, const char* key, const std::string& file, bool required,
         int fallback = 0) {
  const YAML::Node node = child(map, key, file, required);
  if (!node) return fallback;
  return static_cast<int>(count_in(node, file, key, 1, kMaxSize, key));
}

// One of `choices` (the first is the default when the key is absent).
std::string choice(const YAML::Node& map, const char* key, const std::string& file,
                   const std::vector<std::string>& choices) {
  const YAML::Node node = child(map, key, file, false);
  if (!node) return choices.front();
  const std::string value = text(node, file, key);
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return value;
  throw InputError(where(file, node, key), "'" + value + "' is not one of: " + comma_list(choices));
}

// The optimizer presets' names, the first (the default) first.
std::vector<std::string> optimizer_names() {
  std::vector<std::string> names;
  for (const OptimizerPreset& p : optimizer_presets()) names.push_back(p.name);
  return names;
}

TransformerConfig read_config(const YAML::Node& doc, const std::string& file) {
  TransformerConfig c;
  c.name = fs::path(file).stem().string();
  if (const YAML::Node n = child(doc, "name", file, false)) c.name = text(n, file, "name");
  c.layers = size(doc, "layers", file, true);
  c.hidden = size(doc, "hidden", file, true);
  c.heads = size(doc, "heads", file, true);
  c.kv_heads = size(doc, "kv_heads", file, false, c.heads);
  c.ffn = size(doc, "ffn", file, true);
  c.gated_ffn = choice(doc, "ffn_kind", file, {"plain", "gated"}) == "gated";
  c.sequence = size(doc, "sequence", file, true);
  c.vocabulary = size(doc, "vocabulary", file, true);
  c.tied_embeddings = choice(doc, "tied_embeddings", file, {"false", "true"}) == "true";
  c.activation_bytes = choice(doc, "activations", file, {"bf16", "fp16", "fp32"}) == "fp32" ? 4 : 2;
  c.optimizer = choice(doc, "optimizer", file, optimizer_names());
  c.flash_attention = choice(doc, "attention", file, {"flash", "standard"}) == "flash";
  // The rules between keys (divisibility), at the line of the key that breaks them (of the
  // document for a key left at its default).
  validate(c, [&](const std::string& key) {
    const YAML::Node node = child(doc, key, file, false);
    return where(file, node ? node : doc, key);
  });
  return c;
}

// Throws when one layer's weights, gradients and optimizer state exceed the GPU's memory.
void check_fits(const TransformerInput& in, const YAML::Node& gpu_node, const std::string& file) {
  const double scaling = transformer_optimizer_scaling(in.config);
  const ModelProfile model = transformer_model(in.config, in.gpu, in.efficiency);
  for (std::size_t i = 0; i < model.size(); ++i) {
    const Bytes bytes = model.parameters(i, i) * scaling;
    if (bytes > in.gpu.memory)
      throw InputError(where(file, gpu_node, "gpu"),
                       model.states[i].name + " alone needs " + std::to_string(bytes / kGB) +
                           " GB for its weights, gradients and optimizer state, but " +
                           in.gpu.name + " has " + std::to_string(in.gpu.memory / kGB) + " GB");
  }
}

}  // namespace

TransformerInput parse_transformer_yaml(const std::string& text_in, const std::string& file) {
  const YAML::Node doc = parse(text_in, file);
  if (!doc.IsMap()) throw InputError(file, "expected a map of transformer settings");
  only_keys(doc,
            {"name", "source", "layers", "hidden", "heads", "kv_heads", "ffn", "ffn_kind",
             "sequence", "vocabulary", "tied_embeddings", "activations", "attention", "optimizer",
             "gpu", "efficiency"},
            file, "a transformer file");
  TransformerInput in;
  in.path = file;
  in.config = read_config(doc, file);
  if (const YAML::Node n = child(doc, "source", file, false)) in.source = text(n, file, "source");
  const YAML::Node gpu = child(doc, "gpu", file, true);
  in.gpu = read_gpu(gpu, file);
  if (const YAML::Node e = child(doc, "efficiency", file, false)) {
    in.efficiency = non_negative(e, file, "efficiency", true);
    if (in.efficiency > 1)
      throw InputError(where(file, e, "efficiency"),
                       "expected a fraction of the peak in (0, 1], got '" + e.Scalar() + "'");
  }
  check_fits(in, gpu, file);
  return in;
}

TransformerInput load_transformer_yaml(const std::string& path) {
  return parse_transformer_yaml(read_text(path), path);
}

std::vector<std::string> bundled_transformers() {
  std::vector<std::string> names;
  const fs::path folder = fs::path(profiles_directory()) / "transformers";
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error))
    if (entry.path().extension() == ".yml") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string find_transformer(const std::string& name_or_path) {
  const fs::path bundled =
      fs::path(profiles_directory()) / "transformers" / (name_or_path + ".yml");
  std::error_code error;
  if (fs::is_regular_file(bundled, error)) return bundled.string();
  if (fs::exists(name_or_path, error) && !fs::is_directory(name_or_path, error))
    return name_or_path;
  throw InputError(name_or_path,
                   "no such file and no bundled transformer of that name, "
                   "expected a transformer YAML file or one of: " +
                       comma_list(bundled_transformers()));
}

}  // namespace pe
