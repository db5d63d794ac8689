#include "pipedream_graph_cuts.h"

#include <algorithm>
#include <bit>
#include <utility>

namespace pe::detail::pipedream {
namespace {

void add(OperatorSet& set, std::size_t v) { set[v / 64] |= std::uint64_t{1} << (v % 64); }

bool predecessors_in(const OperatorGraph& g, std::size_t v, const OperatorSet& set) {
  for (auto [e, end] = boost::in_edges(v, g.graph); e != end; ++e)
    if (!holds(set, boost::source(*e, g.graph))) return false;
  return true;
}

// The positions in `order` of a cut's members, latest first: the sort key of cuts.
std::vector<std::size_t> positions(const OperatorSet& set, const std::vector<std::size_t>& at) {
  std::vector<std::size_t> result;
  for (std::size_t v = 0; v < at.size(); ++v)
    if (holds(set, v)) result.push_back(at[v]);
  std::sort(result.rbegin(), result.rend());
  return result;
}

void sort_cuts(std::vector<OperatorSet>& cuts, const std::vector<std::size_t>& order) {
  std::vector<std::size_t> at(order.size());
  for (std::size_t p = 0; p < order.size(); ++p) at[order[p]] = p;
  std::vector<std::pair<std::vector<std::size_t>, std::size_t>> keys;
  for (std::size_t i = 0; i < cuts.size(); ++i) keys.emplace_back(positions(cuts[i], at), i);
  std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) {
    if (a.first.size() != b.first.size()) return a.first.size() < b.first.size();
    return a.first < b.first;
  });
  std::vector<OperatorSet> sorted;
  sorted.reserve(cuts.size());
  for (const auto& key : keys) sorted.push_back(std::move(cuts[key.second]));
  cuts = std::move(sorted);
}

}  // namespace

bool holds(const OperatorSet& set, std::size_t v) { return (set[v / 64] >> (v % 64)) & 1; }

bool contained(const OperatorSet& a, const OperatorSet& b) {
  for (std::size_t w = 0; w < a.size(); ++w)
    if ((a[w] & ~b[w]) != 0) return false;
  return true;
}

std::size_t count(const OperatorSet& set) {
  std::size_t n = 0;
  for (std::uint64_t word : set) n += static_cast<std::size_t>(std::popcount(word));
  return n;
}

std::optional<std::vector<OperatorSet>> enumerate_cuts(const OperatorGraph& graph,
                                                       const std::vector<std::size_t>& order,
                                                       std::size_t limit) {
  const std::size_t n = order.size();
  // A cut and the position in `order` after which its children add their new member.
  std::vector<std::pair<OperatorSet, std::size_t>> todo{{OperatorSet((n + 63) / 64), 0}};
  std::vector<OperatorSet> cuts;
  while (!todo.empty()) {
    auto [cut, from] = std::move(todo.back());
    todo.pop_back();
    for (std::size_t p = from; p < n; ++p) {
      if (!predecessors_in(graph, order[p], cut)) continue;
      if (cuts.size() == limit) return std::nullopt;
      OperatorSet child = cut;
      add(child, order[p]);
      cuts.push_back(child);
      todo.emplace_back(std::move(child), p + 1);
    }
  }
  sort_cuts(cuts, order);
  return cuts;
}

namespace {

// Whether operator v has a consumer outside `cut`.
bool feeds_outside(const OperatorGraph& g, std::size_t v, const OperatorSet& cut) {
  for (auto [e, end] = boost::out_edges(v, g.graph); e != end; ++e)
    if (!holds(cut, boost::target(*e, g.graph))) return true;
  return false;
}

CutState sums(const OperatorGraph& g, const OperatorSet& cut) {
  CutState s;
  for (std::size_t v = 0; v < g.operators.size(); ++v) {
    if (!holds(cut, v)) continue;
    const NodeLine& op = g.operators[v];
    s.forward += op.forward;
    s.backward += op.backward;
    s.activation += op.activation;
    s.parameters += op.parameters;
    if (feeds_outside(g, v, cut)) s.crossing += op.activation;
  }
  return s;
}

}  // namespace

CutTable cut_table(const OperatorGraph& graph, const std::vector<std::size_t>& order,
                   const std::vector<OperatorSet>& cuts) {
  CutTable table;
  for (const OperatorSet& cut : cuts) {
    table.states.push_back(sums(graph, cut));
    std::size_t p = order.size();
    while (p > 0 && !holds(cut, order[p - 1])) --p;
    table.closing.push_back(p > 0 ? order[p - 1] : 0);
  }
  table.later.resize(cuts.size());
  for (std::size_t i = 0; i < cuts.size(); ++i)
    for (std::size_t j = i + 1; j < cuts.size(); ++j)
      if (contained(cuts[i], cuts[j])) table.later[i].push_back(static_cast<std::uint32_t>(j));
  return table;
}

}  // namespace pe::detail::pipedream
