#include "pe/edge_cost.h"

#include <gtest/gtest.h>

#include <cmath>

#include "pipeedge/edge_fixtures.h"

namespace pe {
namespace {

using edge_test::make_model;
using edge_test::make_type;

constexpr double kMiB = 1024.0 * 1024.0;

// Model: weights 1 and 2 MiB, 10 elements in, 100 and 1000 out; micro-batch 2, 2 input and
// 3 output buffers, 4-byte elements. So in(1) = 4*10*2 = 80, out(1) = 800, out(2) = 8000.
struct CostFixture {
  EdgeModel model = make_model({1.0, 2.0}, {100, 1000}, 10);
  EdgeCluster cluster{{make_type("fast", 8, 4, {0.5, 0.25}), make_type("slow", 2, 1, {1.0, 3.0})},
                      {{"a", 0}, {"b", 1}}};
  EdgeSettings settings = [] {
    EdgeSettings s;
    s.micro_batch = 2;
    s.buffers_in = 2;
    s.buffers_out = 3;
    return s;
  }();
  EdgeCostModel cost() const { return EdgeCostModel(model, cluster, settings); }
};

TEST(PipeEdgeCost, ByteCountsScaleWithMicroBatchAndElementSize) {
  CostFixture f;
  EXPECT_DOUBLE_EQ(f.cost().input_bytes(1), 80);
  EXPECT_DOUBLE_EQ(f.cost().output_bytes(1), 800);
  EXPECT_DOUBLE_EQ(f.cost().input_bytes(2), 800);
  EXPECT_DOUBLE_EQ(f.cost().output_bytes(2), 8000);
}

TEST(PipeEdgeCost, FirstStageHasNoQueuedInputs) {
  CostFixture f;
  // Layer 1 alone: no queue, out*Bo + in + out = 2400 + 80 + 800.
  EXPECT_DOUBLE_EQ(f.cost().buffer_bytes(1, 1), 3280);
  EXPECT_DOUBLE_EQ(f.cost().memory_need(1, 1), 1 * kMiB + 3280);
  // Layer 2 alone: in*Bi + out*Bo + in + out = 1600 + 24000 + 800 + 8000.
  EXPECT_DOUBLE_EQ(f.cost().memory_need(2, 2), 2 * kMiB + 34400);
  // Both layers: 0 + 24000 + 80 + 8000.
  EXPECT_DOUBLE_EQ(f.cost().memory_need(1, 2), 3 * kMiB + 32080);
}

TEST(PipeEdgeCost, FitIsStrict) {
  CostFixture f;
  // 3280 / 2^20 is exact in binary, so this capacity equals the need of layer 1 exactly.
  f.cluster.types[1].memory_mib = (1 * kMiB + 3280) / kMiB;
  EXPECT_FALSE(f.cost().fits(1, 1, 1));
  f.cluster.types[1].memory_mib = std::nextafter(f.cluster.types[1].memory_mib, 10.0);
  EXPECT_TRUE(f.cost().fits(1, 1, 1));
  EXPECT_FALSE(f.cost().fits(1, 1, 2));
}

TEST(PipeEdgeCost, ComputeSumsTheTypesOwnTimes) {
  CostFixture f;
  EXPECT_DOUBLE_EQ(f.cost().compute(0, 1, 2), 0.75);
  EXPECT_DOUBLE_EQ(f.cost().compute(1, 1, 2), 4.0);
  EXPECT_DOUBLE_EQ(f.cost().compute(1, 2, 2), 3.0);
}

TEST(PipeEdgeCost, TransferUsesTheSlowerNic) {
  CostFixture f;
  // 2 Mbit/s = 2 * 2^20 / 8 bytes/s = 262144 bytes/s; 800 bytes take 800 / 262144 s.
  EXPECT_DOUBLE_EQ(f.cost().transfer(1, 0, 1), 800.0 / 262144.0);
  EXPECT_DOUBLE_EQ(f.cost().transfer(1, 1, 0), 800.0 / 262144.0);
  EXPECT_DOUBLE_EQ(f.cost().transfer(1, 0, 0), 800.0 / 1048576.0);
}

TEST(PipeEdgeCost, ZeroBandwidthAndZeroBytes) {
  CostFixture f;
  EXPECT_TRUE(std::isinf(f.cost().transfer(1, 0.0)));
  f.model.parameters_out[0] = 0;
  EXPECT_EQ(f.cost().transfer(1, 0.0), 0.0);
}

TEST(PipeEdgeCost, BottleneckIsTheWorstStageOrCut) {
  CostFixture f;
  std::vector<EdgeStage> stages{{0, 1, 1, 0, 0, 0}, {1, 2, 2, 0, 0, 0}};
  // fast runs layer 1 in 0.5 s, slow runs layer 2 in 3 s, the cut takes 800/262144 s.
  EXPECT_DOUBLE_EQ(f.cost().bottleneck(stages), 3.0);
  f.cost().describe(stages);
  EXPECT_DOUBLE_EQ(stages[0].compute, 0.5);
  EXPECT_DOUBLE_EQ(stages[0].transfer_out, 800.0 / 262144.0);
  EXPECT_DOUBLE_EQ(stages[1].transfer_out, 0.0);
  EXPECT_DOUBLE_EQ(stages[1].memory, f.cost().memory_need(2, 2));
}

}  // namespace
}  // namespace pe
