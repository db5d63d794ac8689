// Numeric safety of batch sizes: GBS below the device count, GBS not divisible by the
// micro-batch, the largest GBS, and batch-size lists whose arithmetic could overflow.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>

#include "pe/error.h"
#include "pe/planner.h"
#include "robustness/robustness_checks.h"

namespace pe {
namespace {

using robustness::expect_sound_plan;

ModelProfile four_layers() {
  return make_chain_model("m", 8,
                          {{"a", 1e-3, 2e-3, 4e6, 1e6},
                           {"b", 2e-3, 4e-3, 2e6, 8e6},
                           {"c", 1e-3, 1e-3, 1e6, 0},
                           {"d", 4e-3, 8e-3, 1e5, 3e7}});
}

// A micro-batch of b samples can keep at most b devices of a stage busy, and at most GBS
// samples are in flight, so no plan beats min(devices, GBS).
TEST(NumericBatch, GbsBelowTheDeviceCountUsesAtMostOneDevicePerSample) {
  const Cluster cluster = cluster_from_machine_ends({8, 16});
  const Planner planner(four_layers(), cluster);
  for (int gbs = 1; gbs < 16; ++gbs) {
    const PointResult point = planner.plan(gbs);
    ASSERT_NE(point.best(), nullptr) << "gbs " << gbs << ": " << point.no_plan_reason;
    const Plan& plan = *point.best();
    expect_sound_plan(plan, planner.model(), cluster);
    for (const PlanStage& stage : plan.stages) EXPECT_LE(stage.width, plan.micro_batch_size);
    EXPECT_LE(plan.speedup, std::min(16, gbs) * (1 + 1e-9)) << "gbs " << gbs;
  }
}

// GBS = micro-batch size x micro-batches x replicas exactly, and the micro-batch is at
// least the minimum unless a replica's share of the batch is smaller.
TEST(NumericBatch, GbsNotDivisibleByTheMinimumMicroBatchStillSplitsExactly) {
  const Cluster cluster = cluster_from_machine_ends({4, 8});
  for (int min_micro_batch : {1, 2, 4, 5}) {
    TrainingSettings settings;
    settings.min_micro_batch = min_micro_batch;
    const Planner planner(four_layers(), cluster, settings);
    for (int gbs : {1, 3, 7, 9, 13, 33, 35, 97}) {
      const PointResult point = planner.plan(gbs);
      ASSERT_NE(point.best(), nullptr) << "gbs " << gbs << ": " << point.no_plan_reason;
      const Plan& plan = *point.best();
      expect_sound_plan(plan, planner.model(), cluster);
      EXPECT_GE(plan.micro_batch_size, std::min(min_micro_batch, gbs / plan.pipeline_replicas))
          << "gbs " << gbs << ", min micro-batch " << min_micro_batch;
    }
  }
}

// One GPU: the search tries every micro-batch size up to the GBS (about 4 s at 2^30 today;
// more GPUs repeat that per replica count).
TEST(NumericBatch, LargestGlobalBatchPlansWithoutOverflow) {
  const Cluster cluster = cluster_from_machine_ends({1});
  const Planner planner(four_layers(), cluster);
  const int largest = 1 << 30;
  const auto start = std::chrono::steady_clock::now();
  const PointResult point = planner.plan(largest);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_NE(point.best(), nullptr) << point.no_plan_reason;
  expect_sound_plan(*point.best(), planner.model(), cluster);
  EXPECT_GT(point.baselines.single_device_time, 0);
  EXPECT_EQ(point.baselines.per_device_batch, largest);
  EXPECT_NEAR(point.best()->speedup, 1.0, 1e-9);  // one device runs the whole batch
  std::printf("[ timing   ] GBS 2^30, 1 GPU: %.3f s\n", seconds);
}

TEST(NumericBatch, BatchSizeListsRejectValuesBeyondTwoToTheThirty) {
  EXPECT_EQ(parse_batch_sizes("1073741824"), std::vector<int>{1 << 30});
  EXPECT_THROW(parse_batch_sizes("1073741825"), UsageError);
  EXPECT_THROW(parse_batch_sizes("9223372036854775808"), UsageError);
  EXPECT_THROW(parse_batch_sizes("1:1073741824:1"), UsageError);  // 2^30 points
  // FIRST, then multiples of STEP: the next multiple (2^31 - 2) is beyond LAST.
  EXPECT_EQ(parse_batch_sizes("1:1073741824:1073741823"), (std::vector<int>{1, 1073741823}));
}

TEST(NumericBatch, NonPositiveGlobalBatchIsAUsageError) {
  const Planner planner(four_layers(), cluster_from_machine_ends({2}));
  for (int gbs : {0, -1, std::numeric_limits<int>::min()})
    EXPECT_THROW(planner.plan(gbs), UsageError) << gbs;
}

}  // namespace
}  // namespace pe
