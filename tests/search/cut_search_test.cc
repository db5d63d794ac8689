// The search over the cuts of a DAG (states that are not a chain) against exhaustive
// enumeration of every chain of nested cuts.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>

#include "pe/error.h"
#include "pe/model.h"
#include "pipedream_graph_cuts.h"
#include "search/exhaustive.h"
#include "search/hybrid_search.h"
#include "search/random_instances.h"

namespace pe {
namespace {

using detail::pipedream::OperatorGraph;

// A random DAG of n operators (edges from lower to higher numbers) with random values.
OperatorGraph random_graph(std::mt19937& rng, std::size_t n) {
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<>(lo, hi)(rng);
  };
  OperatorGraph g;
  g.operators.resize(n);
  g.graph = detail::pipedream::Digraph(n);
  for (std::size_t u = 0; u < n; ++u) {
    detail::pipedream::NodeLine& op = g.operators[u];
    op.id = "n" + std::to_string(u);
    op.forward = uniform(0.001, 0.1), op.backward = uniform(0.001, 0.2);
    op.activation = uniform(1e6, 1e8);
    op.parameters = uniform(0, 1) < 0.2 ? 0 : uniform(1e6, 4e8);
    for (std::size_t v = u + 1; v < n; ++v)
      if (uniform(0, 1) < 0.35) boost::add_edge(u, v, g.graph);
  }
  return g;
}

// The model whose states are every cut of g.
ModelProfile cut_model(const OperatorGraph& g) {
  std::vector<std::size_t> order(g.operators.size());
  for (std::size_t v = 0; v < order.size(); ++v) order[v] = v;
  const auto cuts = detail::pipedream::enumerate_cuts(g, order);
  detail::pipedream::CutTable table = detail::pipedream::cut_table(g, order, *cuts);
  ModelProfile model;
  model.name = "dag";
  model.profile_batch_size = 8;
  model.operator_count = g.operators.size();
  for (std::size_t i = 0; i < table.states.size(); ++i)
    table.states[i].name = g.operators[table.closing[i]].id;
  model.states = table.states;
  bool chain = true;  // each cut inside every later one
  for (std::size_t i = 0; i < table.later.size(); ++i)
    chain = chain && table.later[i].size() + 1 + i == table.later.size();
  if (!chain) model.later = table.later;
  validate(model, "dag");
  return model;
}

TEST(CutSearch, MatchesExhaustiveEnumerationOfNestedCutsOnRandomDags) {
  std::mt19937 rng(14);
  int feasible = 0, multi_stage = 0, branching = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const int devices = trial % 2 ? 4 : 3;
    testing::Instance in = testing::random_instance(rng, 1, devices);
    in.model = cut_model(random_graph(rng, 2 + trial % 5));
    in.cluster.device_memory = in.model.whole().parameters * 2 * 0.8 + 1e9;
    branching += !in.model.chain();
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    const testing::OracleCheck check = testing::search_and_oracle(cost, in.global_batch, trial);
    if (!testing::expect_search_meets_oracle(check, trial)) continue;
    ++feasible;
    multi_stage += check.found()->stages.size() > 1;
    for (const PlanStage& s : check.found()->stages)
      EXPECT_TRUE(cost.stage(s.first_state, s.last_state)) << "trial " << trial;
  }
  EXPECT_GT(branching, 60);
  EXPECT_GT(feasible, 60);
  EXPECT_GT(multi_stage, 10);
}

TEST(CutSearch, NestedFollowsLaterOrIndexOrderForChains) {
  ModelProfile chain = make_chain_model("c", 1, {{"a", 1, 1, 1, 1}, {"b", 1, 1, 1, 1}});
  EXPECT_TRUE(chain.nested(0, 1));
  EXPECT_FALSE(chain.nested(1, 0));
  ModelProfile dag;
  dag.states = {{"a", 1, 1, 1, 1, 1, ""}, {"b", 1, 1, 1, 1, 1, ""}, {"ab", 2, 2, 2, 2, 0, ""}};
  dag.later = {{2}, {2}, {}};
  EXPECT_NO_THROW(validate(dag, "dag"));
  EXPECT_TRUE(dag.nested(0, 2));
  EXPECT_FALSE(dag.nested(0, 1));
  dag.later = {{1, 2}, {2}, {}};
  dag.states[1].forward = 0.5;  // smaller than a state it contains
  EXPECT_THROW(validate(dag, "dag"), InputError);
  dag.later = {{2}, {}, {}};  // state 1 not inside the whole model
  EXPECT_THROW(validate(dag, "dag"), InputError);
}

}  // namespace
}  // namespace pe
