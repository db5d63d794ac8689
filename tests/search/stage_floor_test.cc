// The stage floor (search/stage_floor.h) is a proven lower bound: on random chains with
// tensor parallelism, recomputation, ZeRO, mixed GPU types and links either way round, for
// every shape, it is never above the path bound of any plan of the shape (copies their width
// apart), nor with copies at any distance of any plan of the same shape on the cluster's
// first machines (copies no wider); it often binds above the work floor, and copies their
// width apart sometimes raise it (their stages cannot share a machine); and on a graph that
// is not a chain it claims something only where the graph has a spine (CutSearch's tests
// check it there).
#include "search/stage_floor.h"

#include <gtest/gtest.h>

#include <random>

#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "random_trials.h"
#include "search/floor_cases.h"

namespace pe {
namespace {

TEST(StageFloor, NeverAboveAnyPlansBound) {
  std::mt19937 rng(20261129);
  int shapes = 0, above_work = 0, on_parts = 0, own_above = 0;
  testing::for_each_floor_case(rng, random_trials(100), [&](const testing::FloorCase& c) {
    const detail::CostModel& cost = *c.cost;
    const Seconds own = detail::stage_floor(cost, c.shape, c.width, c.width);
    const Seconds floor = detail::stage_floor(cost, c.shape, c.width, 1);
    EXPECT_LE(own, c.bound * (1 + 1e-12)) << "trial " << c.trial;
    EXPECT_GE(own, floor) << "trial " << c.trial;
    if (c.on_first) {
      EXPECT_LE(floor, *c.on_first * (1 + 1e-12)) << "trial " << c.trial << ", first";
      ++on_parts;
    }
    own_above += own > 1.01 * floor;
    const Seconds work = testing::copies_work_floor(cost, c.shape, c.width);
    ++shapes;
    above_work += floor > 1.01 * work;
  });
  EXPECT_GT(shapes, random_trials(300));
  EXPECT_GT(on_parts, random_trials(100));
  EXPECT_GT(above_work, shapes / 4);
  EXPECT_GT(own_above, 0);
}

TEST(StageFloor, OnAGraphClaimsSomethingOnlyWithASpine) {
  const ProfileEntry e = find_profile("resnet50");
  ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
  const Cluster cluster = cluster_from_machine_ends({8, 16});
  const detail::PipelineShapeChoice shape{2, 4, 8, Schedule::OneFOneB};
  const detail::CostModel cost(model, cluster, {});
  ASSERT_FALSE(cost.chain());
  ASSERT_FALSE(cost.spine().empty());
  EXPECT_GT(detail::stage_floor(cost, shape, 8, 8), 0);
  model.spine.clear();
  EXPECT_EQ(detail::stage_floor(detail::CostModel(model, cluster, {}), shape, 8, 8), 0);
}

}  // namespace
}  // namespace pe
