// The operator DAG of a PipeDream graph (Boost.Graph) and the topological order whose
// prefixes are the model's cut states.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "pipedream_graph_text.h"

namespace pe::detail::pipedream {

/// Edge property: the line of the first edge line that declared the edge.
struct EdgeInfo {
  long line = 0;
};

/// Directed graph of operators. `setS` out-edge lists collapse exact duplicate edges and
/// iterate in target order, so every traversal is deterministic.
using Digraph = boost::adjacency_list<boost::setS, boost::vecS, boost::bidirectionalS,
                                      boost::no_property, EdgeInfo>;

/// The operators left after clean-up. Vertex i of `graph` is `operators[i]`; vertices are
/// numbered in file order.
struct OperatorGraph {
  std::vector<NodeLine> operators;
  Digraph graph;
};

/// Resolves edge ids and removes model inputs (sources whose description starts with
/// `Input`) and tracing artefacts (sinks whose description starts with `__getitem__`)
/// with their edges. Throws InputError for a file without node lines, a duplicate node id
/// (at its second line), an edge naming an undefined node (at the edge's line), a
/// graph with no operators left, or operators not all connected by edges (at the line of
/// the first operator, in file order, that the first one does not reach).
OperatorGraph build_operator_graph(const GraphText& text, const std::string& file);

/// A topological order of all operators: Kahn's algorithm that takes, among the ready
/// operators, the one leaving the fewest bytes crossing the new prefix (ties: the lower
/// vertex, i.e. the earlier line). Throws InputError naming the nodes of a cycle and the
/// line of one of its edges. O((n + e) log n).
std::vector<std::size_t> low_crossing_order(const OperatorGraph& graph, const std::string& file);

}  // namespace pe::detail::pipedream
