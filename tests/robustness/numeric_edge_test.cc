// Numeric safety of heterogeneous (PipeEdge) schedules: zero bandwidth, zero-time layers,
// byte counts beyond 2^53, the largest micro-batch and buffer counts, NaN and infinity,
// one layer, more hosts than layers, and a 10,000-layer model.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

#include "pe/edge.h"
#include "pe/edge_cost.h"
#include "pe/error.h"
#include "robustness/robustness_checks.h"

namespace pe {
namespace {

using ::testing::HasSubstr;

using robustness::expect_error_naming;

EdgeModel model_of(std::size_t layers, double weights_mib, std::uint64_t outputs) {
  EdgeModel model{"m", std::vector<double>(layers, weights_mib), 1000,
                  std::vector<std::uint64_t>(layers, outputs)};
  return model;
}

EdgeDeviceType type_of(const std::string& name, double bandwidth_mbps, double memory_mib,
                       std::size_t layers, Seconds per_layer) {
  return {name, bandwidth_mbps, memory_mib, std::vector<Seconds>(layers, per_layer)};
}

// `hosts` hosts of each type, named TYPE-K, types in order.
EdgeCluster cluster_of(std::vector<EdgeDeviceType> types, std::size_t hosts) {
  EdgeCluster cluster{std::move(types), {}};
  for (std::size_t t = 0; t < cluster.types.size(); ++t)
    for (std::size_t k = 0; k < hosts; ++k)
      cluster.hosts.push_back({cluster.types[t].name + "-" + std::to_string(k), t});
  return cluster;
}

void expect_contiguous(const EdgeSchedule& schedule, std::size_t layers) {
  ASSERT_FALSE(schedule.empty()) << schedule.infeasible_reason;
  std::size_t next = 1;
  for (const EdgeStage& stage : schedule.stages) {
    EXPECT_EQ(stage.first_layer, next);
    next = stage.last_layer + 1;
  }
  EXPECT_EQ(next, layers + 1);
  EXPECT_TRUE(std::isfinite(schedule.bottleneck)) << schedule.bottleneck;
}

TEST(NumericEdge, ZeroBandwidthHostsRunTheWholeModelWhenItFits) {
  const EdgeModel model = model_of(4, 10, 1000);
  const EdgeCluster cluster = cluster_of({type_of("A", 0, 1024, 4, 0.1)}, 3);
  const EdgeSchedule schedule = schedule_pipeline(model, cluster, {});
  expect_contiguous(schedule, 4);
  EXPECT_EQ(schedule.stages.size(), 1u);
  EXPECT_NEAR(schedule.bottleneck, 0.4, 1e-12);  // four layers of 0.1 s, no transfer
}

TEST(NumericEdge, ZeroBandwidthHostsCannotBeCutSoNothingFitsWhenMemoryForcesACut) {
  // 4 layers of 10 MiB need 40 MiB plus buffers; a host has 30 MiB, so a cut is needed,
  // and no cut can cross a 0 Mbit/s link.
  const EdgeModel model = model_of(4, 10, 1000);
  const EdgeCluster cluster = cluster_of({type_of("A", 0, 30, 4, 0.1)}, 3);
  const EdgeSchedule schedule = schedule_pipeline(model, cluster, {});
  EXPECT_TRUE(schedule.empty());
  EXPECT_THAT(schedule.infeasible_reason, HasSubstr("bw_Mbps > 0"));
}

TEST(NumericEdge, ZeroTimeLayersGiveAZeroBottleneckOnOneStage) {
  const EdgeModel model = model_of(5, 1, 1000);
  const EdgeCluster cluster = cluster_of({type_of("A", 100, 1024, 5, 0.0)}, 2);
  const EdgeSchedule schedule = schedule_pipeline(model, cluster, {});
  expect_contiguous(schedule, 5);
  EXPECT_EQ(schedule.stages.size(), 1u);  // fewest stages among equal bottlenecks
  EXPECT_EQ(schedule.bottleneck, 0.0);
}

TEST(NumericEdge, ByteCountsBeyondTwoToTheFiftyThreeStayExactPowersOfTwo) {
  // 2^62 elements x 4 bytes x micro-batch 8 = 2^67 bytes, a power of two, exact in a double.
  EdgeModel model = model_of(3, 1, 1000);
  model.parameters_out[0] = std::uint64_t{1} << 62;
  const EdgeCluster cluster = cluster_of({type_of("A", 1000, 1024, 3, 0.1)}, 3);
  const EdgeCostModel cost(model, cluster, {});
  EXPECT_EQ(cost.output_bytes(1), std::ldexp(1.0, 67));
  const EdgeSchedule schedule = schedule_pipeline(model, cluster, {});
  expect_contiguous(schedule, 3);
  EXPECT_GT(schedule.stages.front().last_layer, 1u) << "must not cut after the huge output";
}

TEST(NumericEdge, LargestMicroBatchAndBufferCountsMeanNothingFitsNotAnOverflow) {
  const EdgeModel model = model_of(3, 1, 1000);
  const EdgeCluster cluster = cluster_of({type_of("A", 1000, 1024, 3, 0.1)}, 3);
  EdgeSettings settings;
  settings.micro_batch = settings.buffers_in = settings.buffers_out = 0xffffffffu;
  const EdgeSchedule schedule = schedule_pipeline(model, cluster, settings);
  EXPECT_TRUE(schedule.empty());
  EXPECT_FALSE(schedule.infeasible_reason.empty());
}

TEST(NumericEdge, NanInfinityAndNegativeNumbersAreUsageErrors) {
  const double bad_values[] = {std::numeric_limits<double>::quiet_NaN(),
                               std::numeric_limits<double>::infinity(), -1.0};
  for (double bad : bad_values) {
    EdgeModel model = model_of(3, 1, 1000);
    EdgeCluster cluster = cluster_of({type_of("A", 1000, 1024, 3, 0.1)}, 2);
    model.weights_mib[1] = bad;
    EXPECT_THROW(schedule_pipeline(model, cluster, {}), UsageError) << "mem_MB " << bad;
    model.weights_mib[1] = 1;
    cluster.types[0].layer_seconds[2] = bad;
    EXPECT_THROW(schedule_pipeline(model, cluster, {}), UsageError) << "time_s " << bad;
    cluster.types[0].layer_seconds[2] = 0.1;
    cluster.types[0].bandwidth_mbps = bad;
    EXPECT_THROW(schedule_pipeline(model, cluster, {}), UsageError) << "bw_Mbps " << bad;
  }
}

TEST(NumericEdge, OneLayerOnManyHostsTakesTheFastestHost) {
  const EdgeModel model = model_of(1, 1, 1000);
  const EdgeCluster cluster =
      cluster_of({type_of("slow", 100, 1024, 1, 0.5), type_of("fast", 100, 1024, 1, 0.2)}, 3);
  const EdgeSchedule schedule = schedule_pipeline(model, cluster, {});
  expect_contiguous(schedule, 1);
  ASSERT_EQ(schedule.stages.size(), 1u);
  EXPECT_EQ(cluster.hosts[schedule.stages[0].host].name, "fast-0");
  EXPECT_DOUBLE_EQ(schedule.bottleneck, 0.2);
}

// The least bottleneck of schedule_long_model's instance, found independently of the
// search: every layer takes the same time on a type, so a stage's compute depends only on
// its length (summed left to right like EdgeCostModel), and with two hosts of each type a
// bound T is reachable iff 2 * (most A layers within T) + 2 * (most B layers within T)
// covers the model. Cuts (3200 bytes) take far less than any stage, and memory holds
// stages of up to 4000 layers (checked on the schedule found).
Seconds least_bottleneck(std::size_t layers, Seconds a_layer, Seconds b_layer) {
  std::vector<Seconds> a(layers + 1, 0.0), b(layers + 1, 0.0);
  for (std::size_t k = 1; k <= layers; ++k) {
    a[k] = a[k - 1] + a_layer;
    b[k] = b[k - 1] + b_layer;
  }
  std::vector<Seconds> bounds(a.begin() + 1, a.end());
  bounds.insert(bounds.end(), b.begin() + 1, b.end());
  std::sort(bounds.begin(), bounds.end());
  for (Seconds bound : bounds) {
    const auto most = [&](const std::vector<Seconds>& sums) {
      return static_cast<std::size_t>(std::upper_bound(sums.begin(), sums.end(), bound) -
                                      sums.begin()) -
             1;
    };
    if (2 * most(a) + 2 * most(b) >= layers) return bound;
  }
  return std::numeric_limits<double>::infinity();
}

// Schedules `layers` layers of 1 MiB on two hosts of each of two types (4 GiB each, so
// any host holds the whole model), checks that the schedule is valid and optimal, and
// prints the time it took.
void schedule_long_model(std::size_t layers) {
  const EdgeModel model = model_of(layers, 1, 100);
  const EdgeCluster cluster = cluster_of(
      {type_of("A", 1000, 4096, layers, 1e-3), type_of("B", 100, 4096, layers, 2e-3)}, 2);
  const auto start = std::chrono::steady_clock::now();
  const EdgeSchedule schedule = schedule_pipeline(model, cluster, {});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  expect_contiguous(schedule, layers);
  const EdgeCostModel cost(model, cluster, {});
  for (const EdgeStage& stage : schedule.stages) {
    EXPECT_LE(stage.last_layer - stage.first_layer + 1, 4000u);
    EXPECT_TRUE(cost.fits(cluster.hosts[stage.host].type, stage.first_layer, stage.last_layer));
  }
  EXPECT_EQ(schedule.bottleneck, cost.bottleneck(schedule.stages));
  EXPECT_EQ(schedule.bottleneck, least_bottleneck(layers, 1e-3, 2e-3));
  EXPECT_EQ(schedule.stages.size(), 4u);  // fewer hosts cannot reach the least bottleneck
  std::printf("[ timing   ] %zu-layer edge model, 4 hosts: %.3f s\n", layers, seconds);
}

TEST(NumericEdge, TwoThousandLayersScheduleInSeconds) { schedule_long_model(2000); }

// Was about 19 s and 550 MB when the search listed and sorted every stage's compute time
// (L^2 / 2 per type) and rebuilt a per-stage table for every bound; it now keeps O(L)
// facts per type and resumes the stage sums between bounds (docs/sched-pipeline.md).
// Timing is measured in bench/bm_edge.cc (BM_EdgeSchedule_Layers10000Hosts4Types2), not
// asserted here.
TEST(NumericEdge, TenThousandLayersScheduleInSeconds) { schedule_long_model(10000); }

}  // namespace
}  // namespace pe
