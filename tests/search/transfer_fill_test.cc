// The transfer fill (search/transfer_fill.h) never rules out a time that a plan of two stages
// or more makes: on random chains with tensor parallelism, recomputation, ZeRO, mixed GPU types
// and links either way round (all-reduces and transfers), its check at the least path bound of a
// shape's plans of two stages or more never says Impossible, and between the shape's floor and that
// bound it often does. (Random graphs that are not chains: tests/search/cut_search_test.cc.) On a
// bundled profile it binds where the cuts carry large micro-batches across machines.
#include "search/transfer_fill.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "random_trials.h"
#include "search/random_instances.h"
#include "search/shape_pass.h"
#include "search/stage_floor.h"
#include "search/transfer_fill_cases.h"

namespace pe {
namespace {

constexpr std::uint64_t kAnySteps = std::numeric_limits<std::uint64_t>::max();

TEST(TransferFill, NeverRulesOutATimeAPipelineMakes) {
  std::mt19937 rng(20261205);
  int shapes = 0, ruled_out = 0;
  for (int trial = 0; trial < random_trials(150); ++trial) {
    const int devices = trial % 2 ? 8 : 6;
    testing::Instance in = testing::varied_instance(rng, trial, trial % 3 ? 5 : 7, devices);
    // Transfers inside a machine slower than across machines, every fourth trial.
    if (trial % 4 == 3) std::swap(in.cluster.network.intra, in.cluster.network.inter_p2p);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    testing::expect_fill_never_rules_out_a_pipeline(cost, in.global_batch, devices, trial, shapes,
                                                    ruled_out);
  }
  EXPECT_GT(shapes, random_trials(300));
  EXPECT_GT(ruled_out, shapes / 20);
}

// The check stops at its step limit, and counts the steps it took (GNMT-16 on 2 x 8 GPUs).
TEST(TransferFill, StopsAtItsStepLimit) {
  const ProfileEntry e = find_profile("gnmt_16");
  const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
  const detail::CostModel cost(model, cluster_from_machine_ends({8, 16}), training_settings(e));
  const detail::PipelineShapeChoice shape{1, 4, 8, Schedule::OneFOneB};
  std::uint64_t all = 0, few = 0;
  ASSERT_EQ(detail::transfer_fill_check(cost, shape, 16, 16, 1, kAnySteps, all),
            detail::FillCheck::Possible);
  EXPECT_EQ(detail::transfer_fill_check(cost, shape, 16, 16, 1, all / 2, few),
            detail::FillCheck::Stopped);
  EXPECT_GT(few, all / 2);
  EXPECT_LE(few, all);
}

// NASNet-A large (1,250 states) at GBS 512 on 128 machines of 8 GPUs, one copy of 8
// micro-batches of 64: a stage takes at most 64 replicas, so the copy's 1,024 devices make at
// least 16 stages, whose cuts carry 64 samples' activations, across machines where a stage is a
// machine wide. The shape's floors (work, fill, stage) allow 23 ms; no plan of two stages or
// more makes twice that (the best plan of any shape takes 67 ms), and one-stage plans
// all-reduce the whole model across 1,024 GPUs.
TEST(TransferFill, BindsWhereCutsCarryLargeMicroBatchesAcrossMachines) {
  const ProfileEntry e = find_profile("nasnetalarge");
  const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
  std::vector<int> ends;
  for (int m = 1; m <= 128; ++m) ends.push_back(8 * m);
  const detail::CostModel cost(model, cluster_from_machine_ends(ends), training_settings(e));
  const detail::PipelineShapeChoice shape{1, 64, 8, Schedule::OneFOneB};
  const Seconds floor = detail::shape_floor(cost, shape, 1024).own;
  EXPECT_EQ(testing::fill_check_at(cost, shape, 1024, 2 * floor), detail::FillCheck::Impossible);
  EXPECT_EQ(testing::fill_check_at(cost, shape, 1024, 20 * floor), detail::FillCheck::Possible);
  EXPECT_GT(detail::one_stage_floor(cost, shape, 1024, 1024), 4 * floor);
}

}  // namespace
}  // namespace pe
