#include "pipedream_graph_dag.h"

#include <boost/range/iterator_range.hpp>
#include <map>
#include <string_view>

#include "pe/error.h"

namespace pe::detail::pipedream {
namespace {

struct ResolvedEdge {
  std::size_t source;
  std::size_t target;
  long line;
};

std::map<std::string, std::size_t> index_nodes(const GraphText& text, const std::string& file) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < text.nodes.size(); ++i) {
    const NodeLine& node = text.nodes[i];
    const auto [it, fresh] = index.emplace(node.id, i);
    if (!fresh)
      throw InputError(location(file, node.line), "duplicate node id '" + node.id +
                                                      "' (first defined on line " +
                                                      std::to_string(text.nodes[it->second].line) +
                                                      "), expected each id once");
  }
  return index;
}

std::size_t resolve(const std::map<std::string, std::size_t>& index, const std::string& id,
                    const std::string& file, long line) {
  const auto it = index.find(id);
  if (it == index.end())
    throw InputError(location(file, line),
                     "edge names unknown node '" + id + "', expected the id of a node line");
  return it->second;
}

std::vector<ResolvedEdge> resolve_edges(const GraphText& text, const std::string& file) {
  const std::map<std::string, std::size_t> index = index_nodes(text, file);
  std::vector<ResolvedEdge> edges;
  edges.reserve(text.edges.size());
  for (const EdgeLine& e : text.edges)
    edges.push_back(
        {resolve(index, e.source, file, e.line), resolve(index, e.target, file, e.line), e.line});
  return edges;
}

// Which nodes survive clean-up: not an `Input` source, not a `__getitem__` sink.
std::vector<bool> kept_nodes(const GraphText& text, const std::vector<ResolvedEdge>& edges) {
  std::vector<bool> has_in(text.nodes.size()), has_out(text.nodes.size());
  for (const ResolvedEdge& e : edges) {
    has_out[e.source] = true;
    has_in[e.target] = true;
  }
  std::vector<bool> kept(text.nodes.size());
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const std::string_view description = text.nodes[i].description;
    const bool input = !has_in[i] && description.starts_with("Input");
    const bool artefact = !has_out[i] && description.starts_with("__getitem__");
    kept[i] = !input && !artefact;
  }
  return kept;
}

// Throws unless every operator is linked to the first one by edges (in either direction):
// a part that is not would run without inputs from, or outputs to, the rest, and the cut
// costs between them would be silently free. Usually a missing edge line.
void check_connected(const OperatorGraph& result, const std::string& file) {
  const Digraph& g = result.graph;
  std::vector<bool> reached(boost::num_vertices(g));
  std::vector<std::size_t> todo{0};
  reached[0] = true;
  auto visit = [&](std::size_t v) {
    if (!reached[v]) reached[v] = true, todo.push_back(v);
  };
  while (!todo.empty()) {
    const std::size_t v = todo.back();
    todo.pop_back();
    for (const auto e : boost::make_iterator_range(boost::out_edges(v, g)))
      visit(boost::target(e, g));
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g)))
      visit(boost::source(e, g));
  }
  for (std::size_t v = 0; v < reached.size(); ++v)
    if (!reached[v]) {
      const NodeLine& node = result.operators[v];
      const NodeLine& first = result.operators[0];
      throw InputError(location(file, node.line),
                       "node '" + node.id + "' is not connected to node '" + first.id + "' (line " +
                           std::to_string(first.line) +
                           ") by any edge, expected one connected graph (an edge line missing?)");
    }
}

}  // namespace

OperatorGraph build_operator_graph(const GraphText& text, const std::string& file) {
  if (text.nodes.empty())
    throw InputError(file, "no node lines, expected 'ID -- DESCRIPTION -- METADATA' lines");
  const std::vector<ResolvedEdge> edges = resolve_edges(text, file);
  const std::vector<bool> kept = kept_nodes(text, edges);
  OperatorGraph result;
  std::vector<std::size_t> vertex(text.nodes.size());
  for (std::size_t i = 0; i < text.nodes.size(); ++i) {
    if (!kept[i]) continue;
    vertex[i] = result.operators.size();
    result.operators.push_back(text.nodes[i]);
  }
  if (result.operators.empty())
    throw InputError(file,
                     "no operators left after removing Input sources and __getitem__ "
                     "sinks, expected at least one operator");
  result.graph = Digraph(result.operators.size());
  for (const ResolvedEdge& e : edges)
    if (kept[e.source] && kept[e.target])
      boost::add_edge(vertex[e.source], vertex[e.target], EdgeInfo{e.line}, result.graph);
  check_connected(result, file);
  return result;
}

}  // namespace pe::detail::pipedream
