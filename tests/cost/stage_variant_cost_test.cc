// The cost of a stage variant (tensor parallelism, recomputation, ZeRO) by hand.
#include <gtest/gtest.h>

#include "cost/cost_model.h"
#include "cost/layout.h"
#include "cost/stage_variants.h"

namespace pe {
namespace {

using detail::CostModel;
using detail::StageVariant;

// Two layers at profile batch 1: forward 1 and 2 s, backward 2 and 4 s, activations 100 and
// 200 B (10 and 20 B with recomputation), parameters 1000 and 2000 B, tensor-parallel bytes
// 50 and 100 B per forward pass.
ModelProfile splittable(int unit) {
  ModelProfile m = make_chain_model("two", 1, {{"a", 1, 2, 100, 1000}, {"b", 2, 4, 200, 2000}});
  m.states[0].recomputed_activation = 10;
  m.states[1].recomputed_activation = 30;
  m.states[0].tensor_parallel = 50;
  m.states[1].tensor_parallel = 150;
  m.tensor_parallel_unit = unit;
  m.recomputable = true;
  return m;
}

Cluster one_machine(int gpus) {
  Cluster c = cluster_from_machine_ends({gpus});
  c.network.intra = 100;  // bytes per second, so the all-reduces are easy to count
  return c;
}

TrainingSettings settings(int zero) {
  TrainingSettings s;
  s.optimizer_scaling = 8;  // weights 1, gradients 1, optimizer state 6 per weight byte
  s.tensor_parallel_efficiency = 0.5;
  s.zero_stage = zero;
  return s;
}

TEST(StageVariantCost, TensorParallelTimesByHand) {
  const CostModel cost(splittable(4), one_machine(4), settings(0));
  const StageVariant split{2, false}, recomputed{2, true};
  // 2 samples: compute 3 x 2 / (2 x 0.5) = 6 s; the all-reduce of 150 x 2 B over 2 GPUs
  // moves 2 x 1/2 x 300 B at 100 B/s = 3 s.
  EXPECT_DOUBLE_EQ(cost.forward(0, 1, 2, split, 0), 6 + 3);
  EXPECT_DOUBLE_EQ(cost.forward(0, 1, 2, split, 0.25), 6 + 3 + 0.25);
  // Backward 6 x 2 / 1 = 12 s + 3 s; recomputation runs the forward (9 s) again.
  EXPECT_DOUBLE_EQ(cost.backward(0, 1, 2, split, 0), 12 + 3);
  EXPECT_DOUBLE_EQ(cost.backward(0, 1, 2, recomputed, 0), 12 + 3 + 9);
  // Not split: the plain profile times, no all-reduce.
  EXPECT_DOUBLE_EQ(cost.forward(1, 1, 2, StageVariant{}, 0), 4);
  EXPECT_DOUBLE_EQ(cost.backward(1, 1, 2, StageVariant{1, true}, 0), 8 + 4);
}

TEST(StageVariantCost, MemoryByHand) {
  const StageVariant split{2, false}, recomputed{2, true};
  const CostModel none(splittable(4), one_machine(4), settings(0));
  // 3000 B of weights over 2 GPUs, 8 bytes of state per weight byte.
  EXPECT_DOUBLE_EQ(none.weight_memory(0, 1, split, 3), 8 * 1500);
  // Activations of 2 samples / 2 GPUs; recomputed: only the layers' inputs.
  EXPECT_DOUBLE_EQ(none.activation_memory(0, 1, 2, split), 300);
  EXPECT_DOUBLE_EQ(none.activation_memory(0, 1, 2, recomputed), 30);
  EXPECT_DOUBLE_EQ(none.activation_memory(1, 1, 2, recomputed), 20);
  // Recomputing holds the largest layer's activations (200 B x 2 samples / 2) while it works.
  EXPECT_DOUBLE_EQ(none.working_memory(0, 1, 2, split), 0);
  EXPECT_DOUBLE_EQ(none.working_memory(0, 1, 2, recomputed), 200);
  EXPECT_DOUBLE_EQ(none.working_memory(0, 0, 2, recomputed), 100);
  // ZeRO over 3 data-parallel GPUs: 1 shards the optimizer state, 2 also the gradients,
  // 3 everything.
  EXPECT_DOUBLE_EQ(
      CostModel(splittable(4), one_machine(4), settings(1)).weight_memory(0, 1, split, 3),
      (1 + 1 + 6.0 / 3) * 1500);
  EXPECT_DOUBLE_EQ(
      CostModel(splittable(4), one_machine(4), settings(2)).weight_memory(0, 1, split, 3),
      (1 + 7.0 / 3) * 1500);
  const CostModel zero3(splittable(4), one_machine(4), settings(3));
  EXPECT_DOUBLE_EQ(zero3.weight_memory(0, 1, split, 3), 8.0 / 3 * 1500);
  // ZeRO-3 gathers the largest layer's weights (2000 B / 2) while it works.
  EXPECT_DOUBLE_EQ(zero3.working_memory(0, 1, 2, recomputed), (400 + 2000) / 2.0);
}

TEST(StageVariantCost, ShardedCommunicationByHand) {
  const StageVariant split{2, false};
  // The all-reduce of 1500 B over 3 GPUs: 2 x 2/3 x 1500 / 100 = 20 s.
  const CostModel none(splittable(4), one_machine(4), settings(0));
  EXPECT_DOUBLE_EQ(none.gradient_sync(0, 1, split, 3, true), 20);
  EXPECT_DOUBLE_EQ(none.weight_gather(0, 1, split, 3, true), 0);
  // ZeRO-3: a reduce-scatter (half) at the end, an all-gather (half) per pass.
  const CostModel zero3(splittable(4), one_machine(4), settings(3));
  EXPECT_DOUBLE_EQ(zero3.gradient_sync(0, 1, split, 3, true), 10);
  EXPECT_DOUBLE_EQ(zero3.weight_gather(0, 1, split, 3, true), 10);
}

TEST(StageVariantCost, DegreesDivideTheUnitAndStayInAMachine) {
  const CostModel cost(splittable(4), one_machine(8), settings(0));
  EXPECT_EQ(cost.max_tensor_parallel(), 4);  // the model's unit caps the machine's 8
  EXPECT_TRUE(cost.tensor_parallel_allowed(2));
  EXPECT_FALSE(cost.tensor_parallel_allowed(3));
  EXPECT_FALSE(cost.tensor_parallel_allowed(8));
  TrainingSettings capped = settings(0);
  capped.max_tensor_parallel = 2;
  EXPECT_EQ(CostModel(splittable(4), one_machine(8), capped).max_tensor_parallel(), 2);
  capped.recomputation = false;
  EXPECT_FALSE(CostModel(splittable(4), one_machine(8), capped).recomputable());
  EXPECT_EQ(CostModel(splittable(0), one_machine(8), settings(0)).max_tensor_parallel(), 1);

  // Two machines of 2 GPUs: a 2-way group on devices 1 and 2 would span both.
  Cluster two = cluster_from_machine_ends({2, 4});
  const CostModel split(splittable(4), two, settings(0));
  const detail::Layout layout(two, 1, 4);
  auto degrees = [&](int offset, int width, int most) {
    std::vector<std::pair<int, bool>> out;
    for (const StageVariant& v : detail::stage_variants(split, layout, offset, width, most))
      out.emplace_back(v.tensor_parallel, v.recompute);
    return out;
  };
  using V = std::vector<std::pair<int, bool>>;
  EXPECT_EQ(degrees(0, 2, 2), (V{{1, false}, {1, true}, {2, false}, {2, true}}));
  EXPECT_EQ(degrees(1, 2, 2), (V{{1, false}, {1, true}}));
  EXPECT_EQ(degrees(0, 4, 2), (V{{2, false}, {2, true}}));  // 4 replicas exceed 2
  EXPECT_EQ(degrees(0, 3, 3), (V{{1, false}, {1, true}}));  // 2 does not divide 3
}

}  // namespace
}  // namespace pe
