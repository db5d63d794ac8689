#include "pe/importers/pipedream_graph.h"

#include <algorithm>
#include <filesystem>

#include "pe/error.h"
#include "pipedream_graph_dag.h"
#include "pipedream_graph_states.h"
#include "pipedream_graph_text.h"
#include "yaml_input.h"

namespace pe {
namespace {

using detail::pipedream::OperatorGraph;

// "resnet50" for ".../resnet50/graph.txt", else the file's stem.
std::string model_name(const std::string& file) {
  const std::filesystem::path path(file);
  const std::string folder = path.parent_path().filename().string();
  if (path.stem() == "graph" && !folder.empty()) return folder;
  const std::string stem = path.stem().string();
  return stem.empty() ? file : stem;
}

}  // namespace

ModelProfile parse_pipedream_graph(const std::string& text, const std::string& file_label,
                                   double profile_batch_size, std::size_t max_cuts) {
  const OperatorGraph graph = detail::pipedream::build_operator_graph(
      detail::pipedream::read_graph_text(text, file_label), file_label);
  ModelProfile model;
  model.name = model_name(file_label);
  model.source = file_label;
  model.profile_batch_size = profile_batch_size;
  model.operator_count = graph.operators.size();
  detail::pipedream::GraphStates states =
      detail::pipedream::graph_states(graph, file_label, max_cuts);
  model.states = std::move(states.states);
  model.later = std::move(states.later);
  model.spine = std::move(states.spine);
  model.cut_limit = states.cut_limit;
  // PipeDream's and HPGO's profiles were taken on V100s (profiles/PROVENANCE.md).
  model.gpu = find_gpu("V100-16GB", file_label);
  validate(model, file_label);
  return model;
}

ModelProfile import_pipedream_graph(const std::string& path, double profile_batch_size,
                                    std::size_t max_cuts) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw InputError(path, "is a directory, expected a graph.txt file");
  return parse_pipedream_graph(detail::yaml_input::read_text(path), path, profile_batch_size,
                               max_cuts);
}

}  // namespace pe
