// The cuts of an operator DAG: its downward-closed sets of operators (everything that runs
// before a pipeline cut), as PipeDream and HPGO enumerate them, bounded in number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "pe/model.h"
#include "pipedream_graph_dag.h"

namespace pe::detail::pipedream {

/// Largest number of non-empty cuts enumerated; a graph with more is planned on the
/// prefixes of one topological order instead.
inline constexpr std::size_t kMaxCuts = 2000;

/// A set of operators as a bitset over vertex numbers (64 per word).
using OperatorSet = std::vector<std::uint64_t>;

/// True when operator `v` is in `set`.
bool holds(const OperatorSet& set, std::size_t v);

/// True when every operator of `a` is in `b`.
bool contained(const OperatorSet& a, const OperatorSet& b);

/// Number of operators in `set`.
std::size_t count(const OperatorSet& set);

/// Every non-empty downward-closed set of operators (a set that holds each predecessor of
/// its members), sorted by size, then by the positions of their members in `order`
/// compared lexicographically from the last placed; a cut contained in another comes first.
/// The whole graph is the last cut. `order` is a topological order of `graph` (e.g.
/// low_crossing_order). Empty when there are more than `limit` cuts. Each cut is generated
/// once (from the cut without its member latest in `order`), so the time is
/// O(cuts x (n + e)) and stops as soon as the limit is passed.
std::optional<std::vector<OperatorSet>> enumerate_cuts(const OperatorGraph& graph,
                                                       const std::vector<std::size_t>& order,
                                                       std::size_t limit = kMaxCuts);

/// What the planner needs of a list of cuts sorted as enumerate_cuts sorts them.
struct CutTable {
  /// Per cut: sums of forward, backward, activation and parameters over its operators, and
  /// the bytes crossing it (the activations of its operators with a consumer outside it,
  /// each once). Names are left empty.
  std::vector<CutState> states;
  /// Per cut, the operator that closes it: its member latest in `order`.
  std::vector<std::size_t> closing;
  /// Per cut i, ascending, the cuts j > i that strictly contain it.
  std::vector<std::vector<std::uint32_t>> later;
};

/// The CutTable of `cuts` (at most a few thousand: the containment is tested pairwise).
CutTable cut_table(const OperatorGraph& graph, const std::vector<std::size_t>& order,
                   const std::vector<OperatorSet>& cuts);

}  // namespace pe::detail::pipedream
