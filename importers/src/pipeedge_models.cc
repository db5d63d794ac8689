// models.yml: MODEL -> {layers, mem_MB, parameters_in, parameters_out}.
#include "pe/importers/pipeedge.h"

#include <algorithm>

#include "pe/error.h"
#include "pipeedge_yaml.h"
#include "yaml_input.h"

namespace pe {
namespace {

using namespace detail::pipeedge_yaml;
using detail::yaml_input::where;

/// Names of the models in the file, for the "not found" message.
std::string model_names(const YAML::Node& root) {
  std::string names;
  for (const auto& item : root) {
    if (!names.empty()) names += ", ";
    names += item.first.IsScalar() ? item.first.Scalar() : describe(item.first);
  }
  return names.empty() ? "none" : names;
}

/// Checks parameters_out against the layer count and repeats a short list cyclically.
std::vector<std::uint64_t> expand_outputs(std::vector<std::uint64_t> outputs, std::uint64_t layers,
                                          const YAML::Node& node, const std::string& file,
                                          const std::string& path,
                                          std::vector<std::string>& warnings) {
  const std::string seen =
      std::to_string(outputs.size()) + " values for " + std::to_string(layers) + " layers";
  if (outputs.size() > layers)
    throw InputError(where(file, node, path), seen + "; expected at most one per layer");
  if (outputs.empty() && layers > 0)
    throw InputError(where(file, node, path), seen + "; expected at least one value");
  if (outputs.size() < layers) {
    warnings.push_back(
        escape_controls(where(file, node, path) + ": " + seen + "; repeating the list cyclically"));
    const std::size_t block = outputs.size();
    for (std::size_t k = block; k < layers; ++k) outputs.push_back(outputs[k % block]);
  }
  return outputs;
}

// Per-layer weights in MiB. PipeEdge's profiler writes each as the difference of two RSS
// readings, so a layer without weights can come out slightly negative; PipeEdge reads such a
// value as it is. It is read as 0 here, with a warning naming file, line and key.
std::vector<double> layer_memory(const YAML::Node& node, const std::string& file,
                                 const std::string& path, std::vector<std::string>& warnings) {
  if (!node.IsSequence())
    throw InputError(where(file, node, path), "expected a list of numbers, got " + describe(node));
  std::vector<double> values;
  values.reserve(node.size());
  for (std::size_t k = 0; k < node.size(); ++k) {
    const std::string key = path + "[" + std::to_string(k) + "]";
    const double value = detail::yaml_input::number(node[k], file, key);
    if (value < 0)
      warnings.push_back(
          escape_controls(where(file, node[k], key) + ": " + node[k].Scalar() +
                          " MiB is negative (a difference of two memory readings); read as 0"));
    values.push_back(std::max(value, 0.0));
  }
  return values;
}

EdgeModel read_model(const YAML::Node& entry, const std::string& file, const std::string& name,
                     std::vector<std::string>& warnings) {
  require_map(entry, file, name, "with layers, mem_MB, parameters_in and parameters_out");
  reject_duplicate_keys(entry, file, name);
  warn_unknown_keys(entry, {"layers", "mem_MB", "parameters_in", "parameters_out"}, file, name,
                    warnings);
  const std::uint64_t layers =
      non_negative_integer(required(entry, "layers", file, name), file, name + ".layers");
  EdgeModel model;
  model.name = name;
  const YAML::Node memory = required(entry, "mem_MB", file, name);
  model.weights_mib = layer_memory(memory, file, name + ".mem_MB", warnings);
  model.parameters_in = non_negative_integer(required(entry, "parameters_in", file, name), file,
                                             name + ".parameters_in");
  const YAML::Node outputs = required(entry, "parameters_out", file, name);
  std::vector<std::uint64_t> values = count_list(outputs, file, name + ".parameters_out");
  if (model.weights_mib.size() != layers)
    throw InputError(where(file, memory, name + ".mem_MB"),
                     std::to_string(model.weights_mib.size()) + " values for " +
                         std::to_string(layers) + " layers; expected one per layer");
  model.parameters_out =
      expand_outputs(std::move(values), layers, outputs, file, name + ".parameters_out", warnings);
  return model;
}

}  // namespace

EdgeModel parse_pipeedge_model(const std::string& text, const std::string& file,
                               const std::string& model_name, std::vector<std::string>& warnings) {
  const YAML::Node root = detail::yaml_input::parse(text, file);
  require_map(root, file, "", "from model name to model");
  reject_duplicate_keys(root, file, "");
  const YAML::Node entry = root[model_name];
  if (!entry)
    throw InputError(
        file, "model '" + model_name + "' not found; the file defines: " + model_names(root));
  return read_model(entry, file, model_name, warnings);
}

}  // namespace pe
