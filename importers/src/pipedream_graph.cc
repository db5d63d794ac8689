#include "pe/importers/pipedream_graph.h"

#include <algorithm>
#include <filesystem>

#include "pe/error.h"
#include "pipedream_graph_dag.h"
#include "pipedream_graph_text.h"
#include "yaml_input.h"

namespace pe {
namespace {

using detail::pipedream::OperatorGraph;

constexpr std::size_t kMaxStateName = 60;

std::string state_name(const detail::pipedream::NodeLine& node) {
  if (node.description.empty()) return node.id;
  if (node.description.size() <= kMaxStateName) return node.description;
  return node.description.substr(0, kMaxStateName - 3) + "...";
}

// "resnet50" for ".../resnet50/graph.txt", else the file's stem.
std::string model_name(const std::string& file) {
  const std::filesystem::path path(file);
  const std::string folder = path.parent_path().filename().string();
  if (path.stem() == "graph" && !folder.empty()) return folder;
  const std::string stem = path.stem().string();
  return stem.empty() ? file : stem;
}

// Prefix sums along `order`, and the bytes of placed operators that still feed an
// unplaced one (each operator's output counts once, however many consumers it has).
std::vector<CutState> cut_states(const OperatorGraph& g, const std::vector<std::size_t>& order) {
  std::vector<std::size_t> consumers_left(g.operators.size());
  for (std::size_t v = 0; v < consumers_left.size(); ++v)
    consumers_left[v] = boost::out_degree(v, g.graph);
  std::vector<CutState> states;
  states.reserve(order.size());
  CutState sum;
  for (std::size_t v : order) {
    const detail::pipedream::NodeLine& op = g.operators[v];
    sum.name = state_name(op);
    sum.operator_id = op.id;
    sum.forward += op.forward;
    sum.backward += op.backward;
    sum.activation += op.activation;
    sum.parameters += op.parameters;
    if (consumers_left[v] > 0) sum.crossing += op.activation;
    for (auto [e, end] = boost::in_edges(v, g.graph); e != end; ++e) {
      const std::size_t u = boost::source(*e, g.graph);
      if (--consumers_left[u] == 0) sum.crossing -= g.operators[u].activation;
    }
    sum.crossing = std::max(0.0, sum.crossing);  // rounding of the running difference
    states.push_back(sum);
  }
  states.back().crossing = 0;
  return states;
}

}  // namespace

ModelProfile parse_pipedream_graph(const std::string& text, const std::string& file_label,
                                   double profile_batch_size) {
  const OperatorGraph graph = detail::pipedream::build_operator_graph(
      detail::pipedream::read_graph_text(text, file_label), file_label);
  ModelProfile model;
  model.name = model_name(file_label);
  model.source = file_label;
  model.profile_batch_size = profile_batch_size;
  model.operator_count = graph.operators.size();
  model.states = cut_states(graph, detail::pipedream::low_crossing_order(graph, file_label));
  validate(model, file_label);
  return model;
}

ModelProfile import_pipedream_graph(const std::string& path, double profile_batch_size) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw InputError(path, "is a directory, expected a graph.txt file");
  return parse_pipedream_graph(detail::yaml_input::read_text(path), path, profile_batch_size);
}

}  // namespace pe
