// The largest micro-step that fits, by hand and by trying every step.
#include "cost/micro_step.h"

#include <gtest/gtest.h>

namespace pe::detail {
namespace {

// One layer at profile batch 1: 1 GB of activations per sample, 0.5 GB of parameters,
// so 1 GB of weights, gradients and optimizer state at the default scaling of 2.
ModelProfile one_layer(Bytes activation = 1e9) {
  return make_chain_model("one", 1, {{"l0", 1, 1, activation, 0.5e9}});
}

CostModel cost_with(Bytes memory, const ModelProfile& model = one_layer(),
                    TrainingSettings settings = {}) {
  Cluster cluster = cluster_from_machine_ends({1});
  cluster.device_memory = memory;
  return CostModel(model, cluster, settings);
}

TEST(LargestMicroStep, FillsTheMemoryLeftBesideTheWeights) {
  EXPECT_EQ(largest_micro_step(cost_with(7.5e9), 100), 6);  // (7.5 - 1) / 1
  EXPECT_EQ(largest_micro_step(cost_with(7e9), 100), 6);    // exactly full
  EXPECT_EQ(largest_micro_step(cost_with(2e9), 100), 1);
}

TEST(LargestMicroStep, StopsAtTheLimit) {
  EXPECT_EQ(largest_micro_step(cost_with(7.5e9), 4), 4);
  EXPECT_EQ(largest_micro_step(cost_with(7.5e9), 1), 1);
}

TEST(LargestMicroStep, ZeroWhenNotOneSampleFits) {
  EXPECT_EQ(largest_micro_step(cost_with(1.5e9), 100), 0);
  EXPECT_EQ(largest_micro_step(cost_with(0.5e9), 100), 0);  // not even the weights
}

TEST(LargestMicroStep, TheLimitWhenActivationsTakeNoMemory) {
  EXPECT_EQ(largest_micro_step(cost_with(1.5e9, one_layer(0)), 1000), 1000);
}

TEST(LargestMicroStep, FollowsTheActivationOverrideAndOptimizerScaling) {
  TrainingSettings settings;
  settings.optimizer_scaling = 4;  // 2 GB of weights
  settings.activation_bytes_per_sample = 0.5e9;
  EXPECT_EQ(largest_micro_step(cost_with(7.5e9, one_layer(), settings), 100), 11);
}

// Memory sizes at and around whole samples, where rounding could put the closed form off
// the inequality: the answer is the largest step that passes it, found by trying each.
TEST(LargestMicroStep, IsTheLargestStepThatPassesTheMemoryCheck) {
  TrainingSettings settings;
  settings.activation_bytes_per_sample = 0.1e9;  // not exact in binary
  for (int tenths = 10; tenths <= 40; ++tenths)
    for (Bytes nudge : {-1.0, 0.0, 1.0}) {
      const CostModel cost = cost_with(tenths * 0.1e9 + nudge, one_layer(), settings);
      int expected = 0;
      for (int s = 1; s <= 25; ++s)
        if (cost.weight_memory(0, 0, {}, 1) + cost.activation_memory(0, 0, s) <=
            cost.cluster().device_memory)
          expected = s;
      EXPECT_EQ(largest_micro_step(cost, 25), expected) << tenths << " " << nudge;
    }
}

}  // namespace
}  // namespace pe::detail
