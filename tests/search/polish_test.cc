// Local improvement of seeds (search/polish.h): only ever better, always a valid plan, and
// it finds the better boundary, width or number of stages next to a poor one.
#include "search/polish.h"

#include <gtest/gtest.h>

#include <random>

#include "cost/evaluate.h"
#include "pe/timeline.h"
#include "random_instances.h"
#include "random_trials.h"

namespace pe {
namespace {

using detail::CostedPlan;
using detail::CostModel;
using detail::PipelineSpec;

// Two equal stages of a random chain, one device each, one micro-batch per device pair.
PipelineSpec halves(const CostModel& cost, int devices, int micro_batch, int micro_batches) {
  const std::size_t n = cost.states();
  const std::size_t mid = n / 2 - 1;
  return {1,
          devices,
          micro_batch,
          micro_batches,
          Schedule::OneFOneB,
          {{0, mid, 0, devices / 2, {}}, {mid + 1, n - 1, devices / 2, devices / 2, {}}}};
}

TEST(Polish, OnlyBetterAndAlwaysAValidPlanOfTheModel) {
  std::mt19937 rng(17);
  int improved = 0, tried = 0;
  for (int trial = 0; trial < random_trials(200); ++trial) {
    testing::Instance in = testing::random_instance(rng, 12, 8);
    in.cluster.device_memory = 1e12;  // memory is not what this test is about
    const CostModel cost(in.model, in.cluster, in.settings);
    if (cost.states() < 4) continue;
    const int devices = in.cluster.device_count();
    const PipelineSpec start = halves(cost, devices, 4, 4);
    detail::Evaluation first = detail::evaluate(cost, start, 16);
    ASSERT_TRUE(first.fits);
    const Seconds before = simulated_makespan(first.plan.shape());
    std::int64_t pairs = 1 << 20;
    std::optional<CostedPlan> polished = detail::polish(cost, start, 16, 0, pairs);
    ++tried;
    if (!polished) continue;  // no move improved the start
    ++improved;
    EXPECT_LT(polished->plan.iteration_time, before) << "trial " << trial;
    // The plan is its spec's: the same stages, and the time the simulator gives it.
    detail::Evaluation again = detail::evaluate(cost, polished->spec, 16);
    ASSERT_TRUE(again.fits);
    EXPECT_DOUBLE_EQ(simulated_makespan(again.plan.shape()), polished->plan.iteration_time);
    std::size_t next = 0;
    int width = 0;
    for (const detail::StageSpec& s : polished->spec.stages) {
      EXPECT_EQ(s.first, next);
      EXPECT_EQ(s.offset, width);
      next = s.last + 1, width += s.width;
    }
    EXPECT_EQ(next, cost.states());
    EXPECT_LE(width, devices);
    // Deterministic.
    std::int64_t same_pairs = 1 << 20;
    EXPECT_EQ(stages_string(detail::polish(cost, start, 16, 0, same_pairs)->plan),
              stages_string(polished->plan));
  }
  EXPECT_GT(tried, random_trials(100));
  EXPECT_GT(improved, tried / 4);  // halves are rarely the best cut
}

// A chain whose middle cut crosses a huge activation: moving the boundary past it wins.
TEST(Polish, MovesABoundaryOffAHeavyCut) {
  std::vector<Layer> layers;
  for (int i = 0; i < 8; ++i) layers.push_back({"l" + std::to_string(i), 0.01, 0.02, 1e6, 1e6});
  layers[3].activation = 4e9;  // the cut after layer 3 sends 4 GB
  const ModelProfile model = make_chain_model("heavy", 1, layers);
  Cluster cluster = cluster_from_machine_ends({1, 2});
  cluster.device_memory = 1e12;
  const CostModel cost(model, cluster, {});
  const PipelineSpec start = halves(cost, 2, 1, 4);
  ASSERT_EQ(start.stages[0].last, 3u);
  std::int64_t pairs = 1 << 20;
  std::optional<CostedPlan> polished = detail::polish(cost, start, 4, 0, pairs);
  ASSERT_TRUE(polished);
  EXPECT_NE(polished->spec.stages.front().last, 3u);
  EXPECT_LT(polished->plan.iteration_time,
            simulated_makespan(detail::evaluate(cost, start, 4).plan.shape()));
}

// Polishes `start` (micro-batches of 2, so that a stage of 2 devices can split one) on a
// chain of eight layers of 0.03 s a sample, with the given output and weight bytes each, on
// 4 single-GPU machines (every cut and every all-reduce crosses a slow link); checks that
// the plan got faster and returns its number of stages (0 when polishing found nothing).
std::size_t polished_stages(Bytes activation, Bytes parameters, const PipelineSpec& start) {
  std::vector<Layer> layers;
  for (int i = 0; i < 8; ++i)
    layers.push_back({"l" + std::to_string(i), 0.01, 0.02, activation, parameters});
  const ModelProfile model = make_chain_model("heavy", 1, layers);
  Cluster cluster = cluster_from_machine_ends({1, 2, 3, 4});
  cluster.device_memory = 1e12;
  const CostModel cost(model, cluster, {});
  std::int64_t pairs = 1 << 20;
  std::optional<CostedPlan> polished = detail::polish(cost, start, 8, 0, pairs);
  if (!polished) return 0;
  EXPECT_LT(polished->plan.iteration_time,
            simulated_makespan(detail::evaluate(cost, start, 8).plan.shape()));
  return polished->spec.stages.size();
}

// Layers with large weights: two stages of two devices all-reduce their weights across
// machines, four stages of one device do not, and no boundary or device move can give a
// stage of one device to each half.
TEST(Polish, SplitsStagesWhoseAllReduceCostsMoreThanAPipeline) {
  const PipelineSpec halves{1, 4, 2, 4, Schedule::OneFOneB, {{0, 3, 0, 2, {}}, {4, 7, 2, 2, {}}}};
  EXPECT_GT(polished_stages(1e5, 4e8, halves), 2u);
}

// Every cut sends 4 GB and the weights are small: fewer stages win, which only a merge can
// give.
TEST(Polish, MergesStagesWhenEveryCutIsExpensive) {
  const PipelineSpec quarters{
      1,
      4,
      2,
      4,
      Schedule::OneFOneB,
      {{0, 1, 0, 1, {}}, {2, 3, 1, 1, {}}, {4, 5, 2, 1, {}}, {6, 7, 3, 1, {}}}};
  const std::size_t stages = polished_stages(4e9, 1e3, quarters);
  EXPECT_GT(stages, 0u);
  EXPECT_LT(stages, 4u);
}

TEST(Polish, StopsWhenItsBudgetIsSpent) {
  std::mt19937 rng(3);
  testing::Instance in = testing::random_instance(rng, 12, 8);
  in.cluster.device_memory = 1e12;
  const CostModel cost(in.model, in.cluster, in.settings);
  std::int64_t pairs = 0;  // not even the start can be simulated
  EXPECT_FALSE(detail::polish(cost, halves(cost, in.cluster.device_count(), 4, 4), 16, 0, pairs));
}

}  // namespace
}  // namespace pe
