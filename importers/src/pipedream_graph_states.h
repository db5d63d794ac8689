// The cut states of a graph.txt DAG: every cut of the graph (its downward-closed operator
// sets) while there are at most a given number, else the prefixes of one topological order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pe/model.h"
#include "pipedream_graph_cuts.h"
#include "pipedream_graph_dag.h"

namespace pe::detail::pipedream {

/// A graph's states and which operators each holds.
struct GraphStates {
  /// Named after the operator closing each (its member latest in `order`).
  std::vector<CutState> states;
  /// As ModelProfile::later: empty when the states are nested in index order.
  std::vector<std::vector<std::uint32_t>> later;
  /// As ModelProfile::spine: empty when the states are nested in index order.
  std::vector<std::uint32_t> spine;
  /// The operators of each state when every cut is a state; empty for prefixes of `order`.
  std::vector<OperatorSet> cuts;
  /// The topological order the states are sorted by (low_crossing_order).
  std::vector<std::size_t> order;
  /// ModelProfile::cut_limit: 0 when the states are every cut (or the graph is a chain),
  /// else the limit the graph exceeded (the states are then the prefixes of `order`).
  std::size_t cut_limit = 0;
};

/// The states of `graph` (`file` names it in errors: a cycle throws InputError): every cut
/// when there are at most `max_cuts`, else the prefixes of one order.
GraphStates graph_states(const OperatorGraph& graph, const std::string& file, std::size_t max_cuts);

/// For each operator (vertex), the index of the first state in `ends` whose cut holds it;
/// `ends` are state indices, each cut containing the one before, the last one every
/// operator's (as the last states of a plan's stages).
std::vector<std::size_t> first_end_holding(const GraphStates& states,
                                           const std::vector<std::size_t>& ends);

}  // namespace pe::detail::pipedream
