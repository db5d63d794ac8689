// The graph.txt importer on large and odd inputs: the greedy order against a direct
// reference on random DAGs, wide graphs, long cycles, repeated edges, a byte order mark
// and control characters in ids.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "importers/graph_text.h"
#include "pe/error.h"
#include "pe/importers/pipedream_graph.h"

namespace pe {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using ::testing::ThrowsMessage;

std::string sized_node(const std::string& id, long activation = 3) {
  return id + " -- op " + id + " -- forward_compute_time=1, backward_compute_time=2, " +
         "activation_size=" + std::to_string(activation) + ", parameter_size=4\n";
}

using testing::graph_edge;
using testing::state_names;

// A random connected DAG: vertex v > 0 gets 1 to 3 predecessors among the earlier ones.
struct RandomDag {
  std::vector<long> activation;
  std::vector<std::vector<int>> successors;
};

RandomDag random_dag(int n, unsigned seed) {
  std::mt19937 random(seed);
  RandomDag dag{std::vector<long>(n), std::vector<std::vector<int>>(n)};
  for (int v = 0; v < n; ++v) {
    dag.activation[v] = std::uniform_int_distribution<long>(0, 5)(random) * 1000;
    const int preds = v == 0 ? 0 : std::uniform_int_distribution<int>(1, 3)(random);
    for (int k = 0; k < preds; ++k) {
      const int u = std::uniform_int_distribution<int>(0, v - 1)(random);
      auto& out = dag.successors[u];
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
  }
  return dag;
}

std::string graph_text(const RandomDag& dag) {
  std::string text;
  for (std::size_t v = 0; v < dag.activation.size(); ++v)
    text += sized_node("n" + std::to_string(v), dag.activation[v]);
  for (std::size_t u = 0; u < dag.successors.size(); ++u)
    for (int v : dag.successors[u])
      text += graph_edge("n" + std::to_string(u), "n" + std::to_string(v));
  return text;
}

// The documented rule, computed directly: among the ready operators, the one with the
// smallest change in crossing bytes (its output if it feeds anything, minus the outputs of
// predecessors whose last consumer it is), ties to the earlier line. Quadratic.
std::vector<std::string> reference_order(const RandomDag& dag) {
  const std::size_t n = dag.activation.size();
  std::vector<std::vector<int>> preds(n);
  for (std::size_t u = 0; u < n; ++u)
    for (int v : dag.successors[u]) preds[v].push_back(static_cast<int>(u));
  std::vector<int> in_left(n), out_left(n);
  std::vector<bool> placed(n);
  for (std::size_t v = 0; v < n; ++v) {
    in_left[v] = static_cast<int>(preds[v].size());
    out_left[v] = static_cast<int>(dag.successors[v].size());
  }
  std::vector<std::string> order;
  for (std::size_t step = 0; step < n; ++step) {
    long best_change = 0;
    int best = -1;
    for (std::size_t v = 0; v < n; ++v) {
      if (placed[v] || in_left[v] > 0) continue;
      long change = out_left[v] > 0 ? dag.activation[v] : 0;
      for (int u : preds[v])
        if (out_left[u] == 1) change -= dag.activation[u];
      if (best < 0 || change < best_change) best = static_cast<int>(v), best_change = change;
    }
    placed[best] = true;
    order.push_back("op n" + std::to_string(best));
    for (int u : preds[best]) --out_left[u];
    for (int w : dag.successors[best]) --in_left[w];
  }
  return order;
}

TEST(PipedreamGraphScale, OrderFollowsTheRuleOnRandomDags) {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    const RandomDag dag = random_dag(60, seed);
    EXPECT_EQ(state_names(parse_pipedream_graph(graph_text(dag), "random.txt", 1)),
              reference_order(dag))
        << "seed " << seed;
  }
}

// s feeds n branches b_i; each b_i feeds its own d_i and the join j, and the d_i and j feed
// t. The b_i are cheapest, then the d_i; j's output is huge, so j waits while every d_i is
// placed, and its change falls with each one (the case that re-offers j once per branch).
std::string wide_graph(int branches) {
  std::string text = sized_node("s", 1000);
  for (int i = 0; i < branches; ++i)
    text += sized_node("b" + std::to_string(i), 10) + sized_node("d" + std::to_string(i), 50);
  text += sized_node("j", 1000000000000) + sized_node("t", 1);
  for (int i = 0; i < branches; ++i) {
    const std::string b = "b" + std::to_string(i), d = "d" + std::to_string(i);
    text += graph_edge("s", b) + graph_edge(b, d) + graph_edge(b, "j") + graph_edge(d, "t");
  }
  return text + graph_edge("j", "t");
}

TEST(PipedreamGraphScale, WideGraphOfManyBranches) {
  const ModelProfile model = parse_pipedream_graph(wide_graph(20000), "wide.txt", 1);
  ASSERT_EQ(model.size(), 40003u);
  EXPECT_EQ(model.states[0].name, "op s");
  EXPECT_EQ(model.states[1].name, "op b0");
  EXPECT_EQ(model.states[20000].name, "op b19999");
  EXPECT_EQ(model.states[20001].name, "op d0");
  EXPECT_EQ(model.states[40000].name, "op d19999");
  EXPECT_EQ(model.states[40001].name, "op j");
  EXPECT_EQ(model.states[40002].name, "op t");
  // All b_i open at once: 20000 x 10 bytes cross the cut after the last b.
  EXPECT_EQ(model.states[20000].crossing, 200000);
}

TEST(PipedreamGraphScale, LongCycleIsNamedByItsFirstNodesAndLength) {
  const int n = 100000;
  std::string text;
  for (int i = 0; i < n; ++i) text += sized_node("n" + std::to_string(i));
  for (int i = 0; i < n; ++i)
    text += graph_edge("n" + std::to_string(i), "n" + std::to_string((i + 1) % n));
  std::string message;
  try {
    parse_pipedream_graph(text, "cycle.txt", 1);
  } catch (const InputError& e) {
    message = e.what();
  }
  EXPECT_THAT(message,
              AllOf(StartsWith("cycle.txt:200000:"), HasSubstr("cycle n1 -> n2 -> "),
                    HasSubstr("n10 -> ... (100000 nodes in all)"), Not(HasSubstr("n11 "))));
  EXPECT_LT(message.size(), 300u);
}

TEST(PipedreamGraphScale, ShortCycleIsNamedInFull) {
  EXPECT_THAT(
      [] {
        parse_pipedream_graph(
            sized_node("a") + sized_node("b") + graph_edge("a", "b") + graph_edge("b", "a"),
            "c.txt", 1);
      },
      ThrowsMessage<InputError>(HasSubstr("cycle b -> a -> b, expected a DAG")));
}

TEST(PipedreamGraphScale, RepeatedEdgeLinesCountOnceAtTheirFirstLine) {
  std::string text = sized_node("a") + sized_node("b") + sized_node("c") + graph_edge("a", "b") +
                     graph_edge("b", "c");
  const ModelProfile once = parse_pipedream_graph(text, "g.txt", 1);
  for (int i = 0; i < 1000; ++i) text += graph_edge("a", "b");
  const ModelProfile repeated = parse_pipedream_graph(text, "g.txt", 1);
  EXPECT_EQ(state_names(repeated), state_names(once));
  ASSERT_EQ(repeated.size(), once.size());
  for (std::size_t i = 0; i < once.size(); ++i)
    EXPECT_EQ(repeated.states[i].crossing, once.states[i].crossing);
  // The cycle b -> c -> b is reported at its edges' latest first line (5), not a repeat's (6, 7).
  text = sized_node("b") + sized_node("c") + graph_edge("b", "c") + graph_edge("b", "c") +
         graph_edge("c", "b") + graph_edge("b", "c") + graph_edge("c", "b");
  EXPECT_THAT([&] { parse_pipedream_graph(text, "g.txt", 1); },
              ThrowsMessage<InputError>(StartsWith("g.txt:5:")));
}

TEST(PipedreamGraphScale, ByteOrderMarkIsSkipped) {
  const std::string text = sized_node("a") + sized_node("b") + graph_edge("a", "b");
  EXPECT_EQ(state_names(parse_pipedream_graph("\xEF\xBB\xBF" + text, "bom.txt", 1)),
            state_names(parse_pipedream_graph(text, "bom.txt", 1)));
  // Lines are still counted from the first one.
  EXPECT_THAT(
      [] { parse_pipedream_graph("\xEF\xBB\xBF" + sized_node("a") + "junk\n", "bom.txt", 1); },
      ThrowsMessage<InputError>(StartsWith("bom.txt:2:")));
}

TEST(PipedreamGraphScale, ControlCharactersInIdsAreEscaped) {
  const std::string id = "a\x1b[2J\x07";
  std::string message;
  try {
    parse_pipedream_graph(sized_node(id) + sized_node(id), "ctl.txt", 1);
  } catch (const InputError& e) {
    message = e.what();
  }
  EXPECT_THAT(message, HasSubstr("duplicate node id 'a\\x1b[2J\\x07'"));
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
  EXPECT_EQ(message.find('\x07'), std::string::npos);
}

}  // namespace
}  // namespace pe
