#include "pe/baselines.h"

#include <gtest/gtest.h>

namespace pe {
namespace {

// Two layers at profile batch 1: l0 (f 1, b 2, 10 GB weights), l1 (f 1, b 1, 40 GB);
// two GPUs on one machine with 10 GB/s, so all-reduce costs 0.1 ns per byte: 1 s and 4 s.
struct HandModel : ::testing::Test {
  ModelProfile model = make_chain_model("hand", 1, {{"l0", 1, 2, 1, 10e9}, {"l1", 1, 1, 1, 40e9}});
  Cluster cluster = [] {
    Cluster c = cluster_from_machine_ends({2});
    c.network.intra = 10e9;
    c.device_memory = 1e12;
    return c;
  }();
};

TEST_F(HandModel, NoOverlapAddsTheWholeAllReduce) {
  Baselines b = data_parallel_baselines(model, cluster, {}, 2);
  EXPECT_DOUBLE_EQ(b.single_device_time, 10);  // (1 + 2 + 1 + 1) x 2 samples
  EXPECT_DOUBLE_EQ(b.allreduce_time, 5);
  EXPECT_EQ(b.per_device_batch, 1);
  EXPECT_DOUBLE_EQ(b.dp, 10.0 / (5 + 5));
}

TEST_F(HandModel, NormalOverlapHidesAllReduceBehindTheRemainingBackward) {
  // l1's gradients are ready at 1 s and reduce until 5 s; l0's are ready at 3 s and
  // reduce until 6 s: 3 s after the backward ends.
  Baselines b = data_parallel_baselines(model, cluster, {}, 2);
  EXPECT_DOUBLE_EQ(b.dp_overlap, 10.0 / (5 + 3));
}

TEST_F(HandModel, P3LetsInputLayersGoFirstAndOverlapsTheNextForward) {
  // l0 preempts l1 at 3 s and is done at 4 s; l1 finishes at 6 s. The next forward starts
  // at 3 s: l0 waits until 4 s (runs 4-5), l1 waits until 6 s (runs 6-7): 2 s late.
  Baselines b = data_parallel_baselines(model, cluster, {}, 2);
  EXPECT_DOUBLE_EQ(b.dp_p3, 10.0 / (5 + 2));
}

TEST_F(HandModel, OrderingHoldsAndIsBoundedByDeviceCount) {
  for (int gbs : {1, 2, 3, 8, 64}) {
    Baselines b = data_parallel_baselines(model, cluster, {}, gbs);
    EXPECT_LE(b.dp, b.dp_overlap);
    EXPECT_LE(b.dp_overlap, b.dp_p3);
    EXPECT_LE(b.dp_p3, 2.0 + 1e-12);
  }
}

TEST_F(HandModel, GradientAccumulationWhenTheShareDoesNotFit) {
  // Weights x 2 = 100 GB; each sample keeps 2 bytes of activations (sum over layers).
  cluster.device_memory = 100e9 + 3;  // one sample fits, two do not
  Baselines b = data_parallel_baselines(model, cluster, {}, 4);
  EXPECT_EQ(b.max_device_batch, 1);
  EXPECT_EQ(b.per_device_batch, 2);
  EXPECT_EQ(b.accumulation_steps, 2);
  EXPECT_TRUE(b.fits);
  EXPECT_DOUBLE_EQ(b.dp, 20.0 / (10 + 5));  // compute is unchanged by accumulation
}

TEST(Baselines, RingAllReduce) {
  EXPECT_DOUBLE_EQ(ring_allreduce(1e9, 1, 1e9), 0);
  EXPECT_DOUBLE_EQ(ring_allreduce(1e9, 2, 1e9), 1);
  EXPECT_DOUBLE_EQ(ring_allreduce(1e9, 16, 3e9), 2.0 * 15 / 16 / 3);
}

TEST(Baselines, NothingFitsWhenWeightsExceedMemory) {
  ModelProfile m = make_chain_model("m", 1, {{"a", 1, 1, 1, 10e9}});
  EXPECT_EQ(max_device_batch(m, {}, 16e9), 0);
  EXPECT_FALSE(data_parallel_baselines(m, cluster_from_machine_ends({4}), {}, 8).fits);
}

TEST(Baselines, MicroStepsKeepTheMicroBatchFloor) {
  // Room for exactly one sample per device: GBS 16 on 4 devices accumulates 4 steps of 1,
  // i.e. micro-steps of 4 samples over all devices.
  ModelProfile m = make_chain_model("m", 1, {{"a", 1, 1, 1e9, 1e9}});
  Cluster cluster = cluster_from_machine_ends({4});
  TrainingSettings settings;
  const Bytes weights = settings.optimizer_scaling * 1e9;
  cluster.device_memory = weights + 1.5e9;
  ASSERT_EQ(max_device_batch(m, settings, cluster.device_memory), 1);
  settings.min_micro_batch = 4;
  const Baselines at_floor = data_parallel_baselines(m, cluster, settings, 16);
  EXPECT_TRUE(at_floor.fits);
  EXPECT_EQ(at_floor.accumulation_steps, 4);
  settings.min_micro_batch = 5;  // 5 samples over 4 devices: 2 on some device per step
  EXPECT_FALSE(data_parallel_baselines(m, cluster, settings, 16).fits);
  // A floor above the batch counts as the batch: GBS 2 needs one sample per device.
  settings.min_micro_batch = 64;
  EXPECT_TRUE(data_parallel_baselines(m, cluster, settings, 2).fits);
}

}  // namespace
}  // namespace pe
