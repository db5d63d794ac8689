#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "pe/edge.h"
#include "pe/edge_cost.h"
#include "pe/error.h"
#include "pe/importers/pipeedge.h"
#include "pipeedge/edge_fixtures.h"
#include "test_paths.h"

namespace pe {
namespace {

using edge_test::make_model;
using edge_test::make_type;
using edge_test::plain_settings;
using ::testing::HasSubstr;

/// `layers` layers of 1 MiB weights and 0 outputs (no buffers, free transfers).
EdgeModel uniform_model(std::size_t layers) {
  return make_model(std::vector<double>(layers, 1.0), std::vector<std::uint64_t>(layers, 0));
}

std::vector<EdgeHost> hosts_of(std::size_t type, std::size_t count, const std::string& prefix) {
  std::vector<EdgeHost> hosts;
  for (std::size_t k = 0; k < count; ++k) hosts.push_back({prefix + std::to_string(k), type});
  return hosts;
}

TEST(EdgeSchedule, OneHostThatHoldsEverythingRunsOneStage) {
  const EdgeModel model = uniform_model(4);
  const EdgeCluster cluster{{make_type("big", 100, 10, {1, 1, 1, 1})}, hosts_of(0, 1, "h")};
  const EdgeSchedule result = schedule_pipeline(model, cluster, plain_settings());
  ASSERT_EQ(result.stages.size(), 1U);
  EXPECT_EQ(result.stages[0].first_layer, 1U);
  EXPECT_EQ(result.stages[0].last_layer, 4U);
  EXPECT_DOUBLE_EQ(result.bottleneck, 4.0);  // four layers of 1 s
}

TEST(EdgeSchedule, EqualHostsTieBreakToFewestStagesAndLongFirstStage) {
  // 5 layers of 1 s on 4 equal hosts: the least bottleneck is 2 s (ceil(5/4) = 2 needs 3
  // stages: 2+2+1). Fewest stages for 2 s is 3; the first stages take as much as they can.
  const EdgeModel model = uniform_model(5);
  const EdgeCluster cluster{{make_type("t", 100, 100, {1, 1, 1, 1, 1})}, hosts_of(0, 4, "h")};
  const EdgeSchedule result = schedule_pipeline(model, cluster, plain_settings());
  ASSERT_EQ(result.stages.size(), 3U);
  EXPECT_DOUBLE_EQ(result.bottleneck, 2.0);
  EXPECT_EQ(result.stages[0].last_layer, 2U);
  EXPECT_EQ(result.stages[1].last_layer, 4U);
  EXPECT_EQ(result.stages[2].last_layer, 5U);
  for (std::size_t s = 0; s < 3; ++s) EXPECT_EQ(result.stages[s].host, s);
}

TEST(EdgeSchedule, TwoEqualHostsGiveTheLongerFirstStage) {
  // 5 layers of 1 s on 2 equal hosts: the least bottleneck is 3 s with 2 stages, either
  // [1, 3] [4, 5] or [1, 2] [3, 5] (the original's choice); the first stage ends latest.
  const EdgeModel model = uniform_model(5);
  const EdgeCluster cluster{{make_type("t", 100, 100, {1, 1, 1, 1, 1})}, hosts_of(0, 2, "h")};
  const EdgeSchedule result = schedule_pipeline(model, cluster, plain_settings());
  EXPECT_DOUBLE_EQ(result.bottleneck, 3.0);
  ASSERT_EQ(result.stages.size(), 2U);
  EXPECT_EQ(result.stages[0].last_layer, 3U);
  EXPECT_EQ(result.stages[1].first_layer, 4U);
}

TEST(EdgeSchedule, UsesEachTypesOwnData) {
  // One fast host (1 s per layer) and two slow ones (1.5 s), 4 layers. Any slow stage costs
  // >= 1.5 s, so the best bottleneck is 2 s: the fast host runs 2 layers, each slow host 1.
  // Fewest stages for 2 s is 3; the first stage goes to the first host (s0), as long as it
  // can be (1 layer), then s1, then f0.
  const EdgeModel model = uniform_model(4);
  const EdgeCluster cluster{{make_type("slow", 100, 100, {1.5, 1.5, 1.5, 1.5}),
                             make_type("fast", 100, 100, {1, 1, 1, 1})},
                            {{"s0", 0}, {"s1", 0}, {"f0", 1}}};
  const EdgeSchedule result = schedule_pipeline(model, cluster, plain_settings());
  EXPECT_DOUBLE_EQ(result.bottleneck, 2.0);
  ASSERT_EQ(result.stages.size(), 3U);
  EXPECT_EQ(result.stages[0].host, 0U);
  EXPECT_EQ(result.stages[0].last_layer, 1U);
  EXPECT_EQ(result.stages[1].host, 1U);
  EXPECT_EQ(result.stages[1].last_layer, 2U);
  EXPECT_EQ(result.stages[2].host, 2U);
  EXPECT_EQ(result.stages[2].last_layer, 4U);
  const EdgeCostModel cost(model, cluster, plain_settings());
  EXPECT_DOUBLE_EQ(cost.bottleneck(result.stages), result.bottleneck);
}

TEST(EdgeSchedule, CutTimeUsesTheSlowerNic) {
  // Two layers of 0.5 s on either host; the cut carries 4 * 262144 bytes = 1 MiB. With the
  // slower NIC at 8 Mbit/s (1 MiB/s) the cut takes 1 s, no better than one stage (1 s);
  // at 16 Mbit/s it takes 0.5 s and splitting halves the bottleneck.
  const EdgeModel model = make_model({1, 1}, {262144, 0});
  EdgeCluster cluster{
      {make_type("fast", 1000, 100, {0.5, 0.5}), make_type("slow", 8, 100, {0.5, 0.5})},
      {{"f", 0}, {"s", 1}}};
  EdgeSchedule result = schedule_pipeline(model, cluster, plain_settings());
  EXPECT_DOUBLE_EQ(result.bottleneck, 1.0);
  EXPECT_EQ(result.stages.size(), 1U);
  cluster.types[1].bandwidth_mbps = 16;
  result = schedule_pipeline(model, cluster, plain_settings());
  EXPECT_DOUBLE_EQ(result.bottleneck, 0.5);
  EXPECT_EQ(result.stages.size(), 2U);
}

TEST(EdgeSchedule, ZeroBandwidthForbidsCuts) {
  const EdgeModel model = make_model({1, 1}, {10, 10});
  const EdgeCluster cluster{{make_type("t", 0, 1.5, {1, 1})}, hosts_of(0, 2, "h")};
  const EdgeSchedule result = schedule_pipeline(model, cluster, plain_settings());
  EXPECT_TRUE(result.empty());
  EXPECT_THAT(result.infeasible_reason, HasSubstr("bw_Mbps"));
}

TEST(EdgeSchedule, MemoryBindsAndNothingFitsIsAResult) {
  const EdgeModel model = uniform_model(4);
  // 2.5 MiB per host holds 2 layers: 2 hosts are enough, 1 is not.
  EdgeCluster cluster{{make_type("t", 100, 2.5, {1, 1, 1, 1})}, hosts_of(0, 2, "h")};
  EXPECT_EQ(schedule_pipeline(model, cluster, plain_settings()).stages.size(), 2U);
  cluster.hosts.pop_back();
  const EdgeSchedule result = schedule_pipeline(model, cluster, plain_settings());
  EXPECT_TRUE(result.empty());
  EXPECT_FALSE(result.infeasible_reason.empty());
  cluster.types[0].memory_mib = 0.5;
  EXPECT_THAT(schedule_pipeline(model, cluster, plain_settings()).infeasible_reason,
              HasSubstr("layer 1"));
}

TEST(EdgeSchedule, EmptyModelOrNoHostsGiveNoSchedule) {
  const EdgeCluster none{{make_type("t", 1, 1, {})}, {}};
  EXPECT_TRUE(schedule_pipeline(uniform_model(0), none, plain_settings()).empty());
  const EdgeCluster cluster{{make_type("t", 1, 100, {1})}, {}};
  const EdgeSchedule result = schedule_pipeline(uniform_model(1), cluster, plain_settings());
  EXPECT_TRUE(result.empty());
  EXPECT_THAT(result.infeasible_reason, HasSubstr("hosts"));
}

TEST(EdgeSchedule, ManyIdenticalSingleHostTypesMergeIntoOneClass) {
  // 40 single-host types with the same profile: the search treats them as one type of 40
  // hosts, so the table stays small (41 count vectors, not 2^40).
  const EdgeModel model = uniform_model(40);
  EdgeCluster cluster;
  for (std::size_t t = 0; t < 40; ++t) {
    cluster.types.push_back(
        make_type("t" + std::to_string(t), 100, 100, std::vector<double>(40, 1)));
    cluster.hosts.push_back({"h" + std::to_string(t), t});
  }
  const EdgeSchedule result = schedule_pipeline(model, cluster, plain_settings());
  EXPECT_EQ(result.stages.size(), 40U);
  EXPECT_DOUBLE_EQ(result.bottleneck, 1.0);
  EXPECT_LE(result.stats.largest_state_count, 41U);
}

// 12 one-host types, type t taking 1 + t seconds per layer: 2^12 count vectors.
EdgeCluster twelve_speeds() {
  EdgeCluster cluster;
  for (std::size_t t = 0; t < 12; ++t) {
    std::vector<double> times(12, 1.0 + static_cast<double>(t));
    cluster.types.push_back(make_type("t" + std::to_string(t), 100, 100, times));
    cluster.hosts.push_back({"h" + std::to_string(t), t});
  }
  return cluster;
}

TEST(EdgeSchedule, TooLargeSearchThrowsSearchLimitError) {
  const EdgeModel model = uniform_model(12);
  const EdgeCluster cluster = twelve_speeds();
  EdgeSettings settings = plain_settings();
  settings.search_memory_limit = 1024;  // 2^12 vectors of 8 bytes do not fit in 1 KiB
  settings.restrict_on_limit = false;
  EXPECT_THROW(schedule_pipeline(model, cluster, settings), SearchLimitError);
  settings.search_memory_limit = std::size_t{1} << 20;
  const EdgeSchedule exact = schedule_pipeline(model, cluster, settings);
  EXPECT_FALSE(exact.empty());
  EXPECT_TRUE(exact.exact);
  EXPECT_EQ(exact.stats.hosts_left_out, 0U);
}

TEST(EdgeSchedule, OverTheLimitARestrictedPoolGivesAValidScheduleMarkedInexact) {
  // 12 one-host types of different speeds: 2^12 count vectors. Within 1 KiB only 2^5 fit
  // (20 bytes each at most), so the slowest types are left out of the search.
  const EdgeModel model = uniform_model(12);
  const EdgeCluster cluster = twelve_speeds();
  EdgeSettings settings = plain_settings();
  const EdgeSchedule exact = schedule_pipeline(model, cluster, settings);
  settings.search_memory_limit = 1024;
  const EdgeSchedule restricted = schedule_pipeline(model, cluster, settings);
  ASSERT_FALSE(restricted.empty());
  EXPECT_FALSE(restricted.exact);
  EXPECT_GT(restricted.stats.hosts_left_out, 0U);
  EXPECT_LE(restricted.stats.peak_table_bytes, settings.search_memory_limit);
  EXPECT_GE(restricted.bottleneck, exact.bottleneck);
  // Valid: layers 1..12 covered in order, each host at most once.
  std::size_t next = 1;
  std::vector<bool> used(cluster.hosts.size(), false);
  for (const EdgeStage& stage : restricted.stages) {
    EXPECT_EQ(stage.first_layer, next);
    EXPECT_FALSE(used[stage.host]);
    used[stage.host] = true;
    next = stage.last_layer + 1;
  }
  EXPECT_EQ(next, 13U);
}

TEST(EdgeSchedule, ReadmeSetupMatchesTheIntendedAlgorithmsBottleneck) {
  // PipeEdge README set-up, case 02: 4 Minnowboards + 4 RCC-VE-C2000 on ViT-Base, micro-batch 8.
  // The original (index bug) plans the RCC hosts as Minnowboards, really 1.726 s; the
  // intended algorithm, re-costed with each host's true type, reaches 1.549 s.
  const std::string data = std::string(PE_TEST_DATA_DIR) + "/pipeedge/";
  const PipeEdgeInput input =
      load_pipeedge_input({data + "example/models.yml", data + "example/device_types.yml",
                           data + "readme_c2000/devices.yml"},
                          PipeEdgeQuery{});
  const EdgeSchedule result = schedule_pipeline(input.model, input.cluster, EdgeSettings{});
  EXPECT_NEAR(result.bottleneck, 1.549, 0.0005);
  EXPECT_EQ(result.stages.size(), 8U);
  EXPECT_EQ(result.stages.back().last_layer, 48U);
}

TEST(EdgeSchedule, StagesWhoseComputeOverflowsAreNeverChosen) {
  // Each layer takes 1e308 s; two of them add up to +inf, which no bound admits.
  const EdgeModel model = uniform_model(2);
  EdgeCluster cluster{{make_type("t", 100, 100, {1e308, 1e308})}, hosts_of(0, 2, "h")};
  const EdgeSchedule split = schedule_pipeline(model, cluster, plain_settings());
  EXPECT_EQ(split.stages.size(), 2U);
  EXPECT_DOUBLE_EQ(split.bottleneck, 1e308);
  cluster.hosts.pop_back();
  EXPECT_TRUE(schedule_pipeline(model, cluster, plain_settings()).empty());
}

TEST(EdgeSchedule, InconsistentInputIsAUsageError) {
  const EdgeModel model = uniform_model(2);
  EdgeCluster cluster{{make_type("t", 1, 1, {1})}, {{"h", 0}}};
  EXPECT_THROW(schedule_pipeline(model, cluster, plain_settings()), UsageError);
  cluster.types[0].layer_seconds = {1, -1};
  EXPECT_THROW(schedule_pipeline(model, cluster, plain_settings()), UsageError);
  cluster.types[0].layer_seconds = {1, 1};
  cluster.hosts[0].type = 3;
  EXPECT_THROW(schedule_pipeline(model, cluster, plain_settings()), UsageError);
}

}  // namespace
}  // namespace pe
