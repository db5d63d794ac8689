#include "pipedream_graph_cuts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "random_trials.h"
#include "test_paths.h"
#include "yaml_input.h"

namespace pe::detail::pipedream {
namespace {

// A random DAG on n operators: edges only from lower to higher vertex numbers, each with
// probability `density` (possibly disconnected, which the enumeration does not mind).
OperatorGraph random_dag(std::size_t n, double density, std::mt19937& rng) {
  OperatorGraph g;
  g.operators.resize(n);
  g.graph = Digraph(n);
  std::bernoulli_distribution coin(density);
  for (std::size_t u = 0; u < n; ++u)
    for (std::size_t v = u + 1; v < n; ++v)
      if (coin(rng)) boost::add_edge(u, v, g.graph);
  return g;
}

bool downward_closed(const OperatorGraph& g, unsigned mask) {
  for (auto [e, end] = boost::edges(g.graph); e != end; ++e)
    if ((mask >> boost::target(*e, g.graph) & 1) && !(mask >> boost::source(*e, g.graph) & 1))
      return false;
  return true;
}

unsigned as_mask(const OperatorSet& set) { return static_cast<unsigned>(set[0]); }

// A topological order that is not the vertex order: Kahn's algorithm taking the highest
// ready vertex.
std::vector<std::size_t> reverse_ready_order(const OperatorGraph& g) {
  const std::size_t n = g.operators.size();
  std::vector<std::size_t> in(n), order;
  for (std::size_t v = 0; v < n; ++v) in[v] = boost::in_degree(v, g.graph);
  std::set<std::size_t> ready;
  for (std::size_t v = 0; v < n; ++v)
    if (in[v] == 0) ready.insert(v);
  while (!ready.empty()) {
    const std::size_t v = *ready.rbegin();
    ready.erase(v);
    order.push_back(v);
    for (auto [e, end] = boost::out_edges(v, g.graph); e != end; ++e)
      if (--in[boost::target(*e, g.graph)] == 0) ready.insert(boost::target(*e, g.graph));
  }
  return order;
}

TEST(PipedreamGraphCuts, AreExactlyTheDownwardClosedSetsOnRandomDags) {
  std::mt19937 rng(14);
  for (int trial = 0; trial < random_trials(300); ++trial) {
    const std::size_t n = 1 + trial % 10;
    const OperatorGraph g = random_dag(n, (trial % 4 + 1) * 0.15, rng);
    const std::vector<std::size_t> order = reverse_ready_order(g);
    const auto cuts = enumerate_cuts(g, order, 1u << n);
    ASSERT_TRUE(cuts.has_value());
    std::set<unsigned> expected, found;
    for (unsigned mask = 1; mask < (1u << n); ++mask)
      if (downward_closed(g, mask)) expected.insert(mask);
    for (const OperatorSet& cut : *cuts) found.insert(as_mask(cut));
    EXPECT_EQ(found, expected) << "trial " << trial;
    EXPECT_EQ(cuts->size(), expected.size()) << "trial " << trial << ": a cut twice";
    EXPECT_EQ(as_mask(cuts->back()), (1u << n) - 1) << "the whole graph comes last";
    for (std::size_t a = 0; a < cuts->size(); ++a)
      for (std::size_t b = 0; b < a; ++b)
        EXPECT_FALSE(contained((*cuts)[a], (*cuts)[b]))
            << "trial " << trial << ": cut " << a << " inside the earlier cut " << b;
  }
}

// Random operator values: distinct powers of two, so that sums identify their operators.
void number_operators(OperatorGraph& g) {
  for (std::size_t v = 0; v < g.operators.size(); ++v) {
    NodeLine& op = g.operators[v];
    op.forward = 1 << v, op.backward = 2 << v, op.activation = 3 << v, op.parameters = 5 << v;
  }
}

TEST(PipedreamGraphCuts, TableSumsCrossingAndContainmentMatchBruteForce) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < random_trials(200); ++trial) {
    const std::size_t n = 1 + trial % 9;
    OperatorGraph g = random_dag(n, (trial % 3 + 1) * 0.2, rng);
    number_operators(g);
    const std::vector<std::size_t> order = reverse_ready_order(g);
    const std::vector<OperatorSet> cuts = *enumerate_cuts(g, order, 1u << n);
    const CutTable table = cut_table(g, order, cuts);
    ASSERT_EQ(table.states.size(), cuts.size());
    for (std::size_t i = 0; i < cuts.size(); ++i) {
      const unsigned mask = as_mask(cuts[i]);
      double crossing = 0;
      for (auto [e, end] = boost::edges(g.graph); e != end; ++e) {
        const std::size_t u = boost::source(*e, g.graph), v = boost::target(*e, g.graph);
        if ((mask >> u & 1) && !(mask >> v & 1)) crossing += 3 << u;
      }
      double once = 0;  // each operator's output counts once, however many consumers
      for (std::size_t u = 0; u < n; ++u)
        if (mask >> u & 1)
          for (auto [e, end] = boost::out_edges(u, g.graph); e != end; ++e)
            if (!(mask >> boost::target(*e, g.graph) & 1)) {
              once += 3 << u;
              break;
            }
      const CutState& s = table.states[i];
      EXPECT_EQ(s.forward, mask) << "trial " << trial << " cut " << i;
      EXPECT_EQ(s.backward, 2.0 * mask);
      EXPECT_EQ(s.activation, 3.0 * mask);
      EXPECT_EQ(s.parameters, 5.0 * mask);
      EXPECT_EQ(s.crossing, once);
      EXPECT_LE(s.crossing, crossing);
      EXPECT_TRUE(mask >> table.closing[i] & 1);
      const auto closing_at =
          std::find(order.begin(), order.end(), table.closing[i]) - order.begin();
      for (std::size_t p = 0; p < n; ++p) {
        if (mask >> order[p] & 1) {
          EXPECT_LE(p, closing_at);
        }
      }
      std::vector<std::uint32_t> later;
      for (std::size_t j = i + 1; j < cuts.size(); ++j)
        if ((mask & ~as_mask(cuts[j])) == 0) later.push_back(static_cast<std::uint32_t>(j));
      EXPECT_EQ(table.later[i], later) << "trial " << trial << " cut " << i;
    }
  }
}

TEST(PipedreamGraphCuts, ChainHasOneCutPerOperatorInOrder) {
  std::mt19937 rng(1);
  const OperatorGraph g = random_dag(6, 0, rng);
  OperatorGraph chain = g;
  for (std::size_t v = 0; v + 1 < 6; ++v) boost::add_edge(v, v + 1, chain.graph);
  const auto cuts = enumerate_cuts(chain, {0, 1, 2, 3, 4, 5});
  ASSERT_TRUE(cuts.has_value());
  ASSERT_EQ(cuts->size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(as_mask((*cuts)[i]), (2u << i) - 1);
}

TEST(PipedreamGraphCuts, EmptyPastTheLimit) {
  std::mt19937 rng(1);
  const OperatorGraph g = random_dag(5, 0, rng);  // no edges: every subset is a cut
  EXPECT_FALSE(enumerate_cuts(g, {0, 1, 2, 3, 4}, 30).has_value());
  const auto all = enumerate_cuts(g, {0, 1, 2, 3, 4}, 31);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 31u);
}

TEST(PipedreamGraphCuts, ContainedAndCount) {
  const OperatorSet a{0b0101, 0}, b{0b0111, 1};
  EXPECT_TRUE(contained(a, b));
  EXPECT_FALSE(contained(b, a));
  EXPECT_TRUE(contained(a, a));
  EXPECT_EQ(count(b), 4u);
}

// The number of cuts of a bundled profile, or 0 past `limit`.
std::size_t bundled_cuts(const std::string& name, std::size_t limit) {
  const std::string file = std::string(PE_TEST_PROFILES_DIR) + "/pipedream/" + name + "/graph.txt";
  const OperatorGraph g =
      build_operator_graph(read_graph_text(yaml_input::read_text(file), file), file);
  const auto cuts = enumerate_cuts(g, low_crossing_order(g, file), limit);
  return cuts ? cuts->size() : 0;
}

// ResNet-50 has as many cuts as HPGO's antichain DAG has states (240); GNMT's LSTM layers
// multiply them (PipeDream's antichain DAG keeps 99 of gnmt's and 1,495 of gnmt_16's).
TEST(PipedreamGraphCuts, BundledProfiles) {
  EXPECT_EQ(bundled_cuts("vgg19", kMaxCuts), 25u);
  EXPECT_EQ(bundled_cuts("resnet50", kMaxCuts), 240u);
  EXPECT_EQ(bundled_cuts("gnmt", kMaxCuts), 561u);
  EXPECT_EQ(bundled_cuts("gnmt_32_simplified", kMaxCuts), 159u);
  EXPECT_EQ(bundled_cuts("gnmt_16", 20000), 16885u);
  EXPECT_EQ(bundled_cuts("gnmt_16", kMaxCuts), 0u);
  EXPECT_EQ(bundled_cuts("inception_v3", kMaxCuts), 0u);
}

}  // namespace
}  // namespace pe::detail::pipedream
