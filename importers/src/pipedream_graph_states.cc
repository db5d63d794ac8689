#include "pipedream_graph_states.h"

#include <algorithm>

namespace pe::detail::pipedream {
namespace {

constexpr std::size_t kMaxStateName = 60;

std::string state_name(const NodeLine& node) {
  if (node.description.empty()) return node.id;
  if (node.description.size() <= kMaxStateName) return node.description;
  return node.description.substr(0, kMaxStateName - 3) + "...";
}

void name_after(CutState& state, const NodeLine& closing) {
  state.name = state_name(closing);
  state.operator_id = closing.id;
}

// Prefix sums along `order`, and the bytes of placed operators that still feed an
// unplaced one (each operator's output counts once, however many consumers it has).
std::vector<CutState> prefix_states(const OperatorGraph& g, const std::vector<std::size_t>& order) {
  std::vector<std::size_t> consumers_left(g.operators.size());
  for (std::size_t v = 0; v < consumers_left.size(); ++v)
    consumers_left[v] = boost::out_degree(v, g.graph);
  std::vector<CutState> states;
  states.reserve(order.size());
  CutState sum;
  for (std::size_t v : order) {
    const NodeLine& op = g.operators[v];
    name_after(sum, op);
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

// The states that are the prefixes of `order`, shortest first: a cut of each size holds
// the operators placed so far, and cuts are sorted by size, then by the positions of their
// members latest first, so the prefix of size k is the first cut of size k whose members
// are exactly order[0..k-1].
std::vector<std::uint32_t> prefix_spine(const std::vector<OperatorSet>& cuts,
                                        const std::vector<std::size_t>& order) {
  std::vector<std::uint32_t> spine;
  OperatorSet prefix(cuts.front().size());
  std::size_t next = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    prefix[order[k] / 64] |= std::uint64_t{1} << (order[k] % 64);
    while (cuts[next] != prefix) ++next;
    spine.push_back(static_cast<std::uint32_t>(next));
  }
  return spine;
}

}  // namespace

GraphStates graph_states(const OperatorGraph& graph, const std::string& file,
                         std::size_t max_cuts) {
  GraphStates result;
  result.order = low_crossing_order(graph, file);
  const std::size_t n = result.order.size();
  std::optional<std::vector<OperatorSet>> cuts;
  if (max_cuts >= n) cuts = enumerate_cuts(graph, result.order, max_cuts);
  // n cuts of n operators are the prefixes of the graph's only topological order.
  if (!cuts || cuts->size() == n) {
    result.states = prefix_states(graph, result.order);
    if (!cuts) result.cut_limit = max_cuts;
    return result;
  }
  CutTable table = cut_table(graph, result.order, *cuts);
  for (std::size_t i = 0; i < table.states.size(); ++i)
    name_after(table.states[i], graph.operators[table.closing[i]]);
  result.states = std::move(table.states);
  result.later = std::move(table.later);
  result.spine = prefix_spine(*cuts, result.order);
  result.cuts = std::move(*cuts);
  return result;
}

std::vector<std::size_t> first_end_holding(const GraphStates& states,
                                           const std::vector<std::size_t>& ends) {
  const std::size_t n = states.order.size();
  std::vector<std::size_t> first(n, ends.size());
  if (states.cuts.empty()) {  // state i is the prefix of order up to position i
    std::size_t e = 0;
    for (std::size_t p = 0; p < n; ++p) {
      while (e < ends.size() && ends[e] < p) ++e;
      first[states.order[p]] = e;
    }
    return first;
  }
  for (std::size_t e = ends.size(); e-- > 0;)
    for (std::size_t v = 0; v < n; ++v)
      if (holds(states.cuts[ends[e]], v)) first[v] = e;
  return first;
}

}  // namespace pe::detail::pipedream
