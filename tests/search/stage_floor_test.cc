// The stage floor (search/stage_floor.h) is a proven lower bound: on random chains with
// tensor parallelism, recomputation, ZeRO, mixed GPU types and links either way round, for
// every shape, it is never above the path bound of any plan of the shape (copies their width
// apart), nor with copies at any distance of any plan of the same shape on the cluster's
// first machines (copies no wider); it often binds above the work floor, and copies their
// width apart sometimes raise it (their stages cannot share a machine); and on a graph that
// is not a chain it claims nothing.
#include "search/stage_floor.h"

#include <gtest/gtest.h>

#include <random>

#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "random_trials.h"
#include "search/exhaustive.h"
#include "search/random_instances.h"

namespace pe {
namespace {

TEST(StageFloor, NeverAboveAnyPlansBound) {
  std::mt19937 rng(20261129);
  int shapes = 0, above_work = 0, on_parts = 0, own_above = 0;
  for (int trial = 0; trial < random_trials(100); ++trial) {
    const int devices = trial % 2 ? 8 : 6;
    const testing::Instance in = testing::varied_instance(rng, trial, trial % 3 ? 5 : 7, devices);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    const auto least_first =
        testing::least_bound_on_first_machines(in.model, in.cluster, in.settings, in.global_batch);
    for (const auto& [key, bound] : testing::least_bound_by_shape(cost, in.global_batch)) {
      const auto& [replicas, micro_batch, micro_batches, schedule] = key;
      const detail::PipelineShapeChoice shape{replicas, micro_batch, micro_batches, schedule};
      const int width = devices / replicas;
      const Seconds own = detail::stage_floor(cost, shape, width, width);
      const Seconds floor = detail::stage_floor(cost, shape, width, 1);
      EXPECT_LE(own, bound * (1 + 1e-12)) << "trial " << trial;
      EXPECT_GE(own, floor) << "trial " << trial;
      const auto on_first = least_first.find(key);
      if (on_first != least_first.end()) {
        EXPECT_LE(floor, on_first->second * (1 + 1e-12)) << "trial " << trial << ", first";
        ++on_parts;
      }
      own_above += own > 1.01 * floor;
      const Seconds work = micro_batches * cost.whole_model_time(micro_batch) /
                           (devices / replicas * cost.fastest());
      ++shapes;
      above_work += floor > 1.01 * work;
    }
  }
  EXPECT_GT(shapes, random_trials(300));
  EXPECT_GT(on_parts, random_trials(100));
  EXPECT_GT(above_work, shapes / 4);
  EXPECT_GT(own_above, 0);
}

TEST(StageFloor, ClaimsNothingOffAChain) {
  const ProfileEntry e = find_profile("resnet50");
  const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
  const detail::CostModel cost(model, cluster_from_machine_ends({8, 16}), {});
  ASSERT_FALSE(cost.chain());
  EXPECT_EQ(detail::stage_floor(cost, {2, 4, 8, Schedule::OneFOneB}, 8, 8), 0);
}

}  // namespace
}  // namespace pe
