// Runs of machines from where their kind changes (search/machine_runs.h), and the answer over
// two searches' plans.
#include "search/machine_runs.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "pe/gpu.h"

namespace pe::detail {
namespace {

Cluster sized(const std::vector<int>& gpus) {
  Cluster cluster;
  cluster.machine_gpus = gpus;
  return cluster;
}

TEST(MachineRuns, StartWhereTheKindChangesUnlessTheClusterRepeatsFromThere) {
  EXPECT_TRUE(machine_runs(sized({8, 8, 8})).empty());
  EXPECT_EQ(machine_runs(sized({1, 8})), std::vector<int>{1});
  EXPECT_EQ(machine_runs(sized({1, 8, 8, 4})), (std::vector<int>{1, 3}));
  // From machine 2 on, and round, the machines are the cluster's again, and from machine 3
  // those from machine 1: the same searches.
  EXPECT_EQ(machine_runs(sized({1, 8, 1, 8})), (std::vector<int>{1}));
  // From machine 3 on and round, three machines of 8 in a row, which no run from the first
  // machine or from machine 2 holds.
  EXPECT_EQ(machine_runs(sized({8, 8, 4, 8})), (std::vector<int>{2, 3}));
}

TEST(MachineRuns, GpuTypesAndMemoryMakeAKind) {
  Cluster cluster = sized({8, 8, 8});
  cluster.machine_gpu.assign(3, GpuSpec{});
  EXPECT_TRUE(machine_runs(cluster).empty());
  cluster.machine_gpu[2] = find_gpu("H100-80GB", "test");
  EXPECT_EQ(machine_runs(cluster), std::vector<int>{2});
  GpuSpec more = cluster.machine_gpu[2];
  more.memory *= 2;
  cluster.machine_gpu[1] = more;
  EXPECT_EQ(machine_runs(cluster), (std::vector<int>{1, 2}));
}

TEST(MachineRuns, AtMostSoManyChangesAreSearched) {
  std::vector<int> alternating;
  for (int m = 0; m < 4 * kMaxMachineRuns; ++m) alternating.push_back(m % 2 == 0 ? 1 : 2 + m);
  const std::vector<int> firsts = machine_runs(sized(alternating));
  ASSERT_EQ(static_cast<int>(firsts.size()), kMaxMachineRuns);
  EXPECT_EQ(firsts.front(), 1);
  EXPECT_EQ(firsts.back(), kMaxMachineRuns);
}

TEST(MachineRuns, APlanOfTheLastMachinesMovesByTheDevicesBeforeThemAndGoesRound) {
  Cluster cluster = sized({1, 2, 4});
  cluster.machine_gpu = {GpuSpec{}, GpuSpec{}, find_gpu("A100-40GB", "test")};
  const Cluster last = rotated(cluster, 2);
  EXPECT_EQ(last.machine_gpus, (std::vector<int>{4, 1, 2}));
  ASSERT_EQ(last.machine_gpu.size(), 3u);
  EXPECT_EQ(last.machine_gpu.front().name, "A100-40GB");
  EXPECT_EQ(last.network.intra, cluster.network.intra);
  Plan plan;
  plan.stages.resize(3);
  plan.stages[0].devices = {0, 1, 2};
  plan.stages[1].devices = {3};
  plan.stages[2].devices = {4, 5};
  move_to_machine(plan, cluster, 2);
  EXPECT_EQ(plan.stages[0].devices, (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(plan.stages[1].devices, std::vector<int>{6});
  EXPECT_EQ(plan.stages[2].devices, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.cluster_devices, 7);
  // Two copies of 3 devices, 4 apart from device 3 on: the second starts at device 0.
  Plan copies;
  copies.pipeline_replicas = 2;
  copies.stages.resize(1);
  copies.stages[0].width = 3;
  copies.stages[0].devices = {0, 1, 2, 4, 5, 6};
  move_to_machine(copies, cluster, 2);
  EXPECT_EQ(copies.stages[0].devices, (std::vector<int>{3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(copies.first_device(), 3);
  EXPECT_EQ(copies.copy_stride(), 4);
}

Plan timed_plan(Seconds time, int copies, int width) {
  Plan plan;
  plan.global_batch = 8 * copies;
  plan.pipeline_replicas = copies;
  plan.micro_batch_size = 8;
  plan.iteration_time = plan.simulated_time = time;
  PlanStage stage;
  stage.last_state = 3;
  stage.width = width;
  plan.stages = {stage};
  return plan;
}

SearchResult result_of(std::vector<Plan> plans, Seconds bound, bool exact) {
  SearchResult r;
  r.plans = std::move(plans);
  r.lower_bound = bound;
  r.exact = exact;
  for (const Plan& p : r.plans) r.fastest = std::min(r.fastest, p.iteration_time);
  return r;
}

TEST(MachineRuns, TheAnswerHoldsTheBestOfBothAndTheLesserBound) {
  // The first search: exact at 3 s; the second: 1 s, open down to 0.9 s.
  const SearchResult m = merged(result_of({timed_plan(3, 1, 4), timed_plan(4, 2, 2)}, 3, true),
                                result_of({timed_plan(1, 1, 2)}, 0.9, false), 2);
  ASSERT_EQ(m.plans.size(), 2u);
  EXPECT_EQ(m.plans[0].iteration_time, 1);
  EXPECT_EQ(m.plans[1].iteration_time, 4);  // one plan a shape: one copy's 3 s goes
  EXPECT_DOUBLE_EQ(m.lower_bound, 0.9);
  EXPECT_FALSE(m.exact);
  EXPECT_EQ(m.fastest, 1);
  // Both exact: the faster plan's bound holds over both.
  const SearchResult e = merged(result_of({timed_plan(3, 1, 4)}, 3, true),
                                result_of({timed_plan(1, 1, 2)}, 1, true), 1);
  ASSERT_EQ(e.plans.size(), 1u);
  EXPECT_TRUE(e.exact);
  EXPECT_DOUBLE_EQ(e.lower_bound, 1);
  // A search that proved nothing fits bounds nothing; one that did not prove it keeps its
  // bound.
  const SearchResult none =
      merged(result_of({}, 0, true), result_of({timed_plan(2, 1, 1)}, 2, true), 1);
  EXPECT_TRUE(none.exact);
  EXPECT_DOUBLE_EQ(none.lower_bound, 2);
  const SearchResult open =
      merged(result_of({}, 1.5, false), result_of({timed_plan(2, 1, 1)}, 2, true), 1);
  EXPECT_FALSE(open.exact);
  EXPECT_DOUBLE_EQ(open.lower_bound, 1.5);
  // Ties within kSimpler go to the simpler plan: fewer devices.
  const SearchResult tie = merged(result_of({timed_plan(1, 1, 4)}, 1, true),
                                  result_of({timed_plan(1 + kSimpler / 2, 1, 2)}, 1, true), 1);
  ASSERT_EQ(tie.plans.size(), 1u);
  EXPECT_EQ(tie.plans[0].stages[0].width, 2);
}

}  // namespace
}  // namespace pe::detail
