// Rules a library user shares with pe-plan: the bandwidths one inter-machine number sets,
// and how stages are labelled.
#include <gtest/gtest.h>

#include "pe/cluster.h"
#include "pe/plan.h"

namespace pe {
namespace {

TEST(InterMachineBandwidth, OneNumberSetsAllReduceAndPointToPoint) {
  Network network;
  set_inter_machine_bandwidth(network, 7 * kGB);
  EXPECT_DOUBLE_EQ(network.inter_allreduce, 7 * kGB);
  EXPECT_DOUBLE_EQ(network.inter_p2p, 7 * kGB);
  EXPECT_DOUBLE_EQ(network.intra, Network{}.intra);
}

TEST(InterMachineBandwidth, AGivenPointToPointBandwidthIsKept) {
  Network network;
  set_inter_machine_bandwidth(network, 7 * kGB, 2 * kGB);
  EXPECT_DOUBLE_EQ(network.inter_allreduce, 7 * kGB);
  EXPECT_DOUBLE_EQ(network.inter_p2p, 2 * kGB);
}

TEST(StageLabels, NameEachStageItsStatesAndDevices) {
  Plan plan;
  plan.stages.resize(2);
  plan.stages[0].last_state = 4;
  plan.stages[1].first_state = 5;
  plan.stages[1].last_state = 9;
  plan.stages[1].width = 3;
  EXPECT_EQ(stage_labels(plan), (std::vector<std::string>{"stage 0 (states 0-4, 1 GPU)",
                                                          "stage 1 (states 5-9, 3 GPUs)"}));
  EXPECT_TRUE(stage_labels(Plan{}).empty());
}

}  // namespace
}  // namespace pe
