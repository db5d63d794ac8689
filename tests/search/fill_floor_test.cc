// The fill floor (search/fill_floor.h) bounds the plans of two stages or more and the
// one-stage floor (search/stage_floor.h) the others, so a shape's floor (shape_floor) takes the
// least of them where it is above its other floors. Both are proven lower bounds: on random
// chains with tensor parallelism, recomputation, ZeRO, mixed GPU types and links either way
// round, a shape's floor is never above the path bound of any plan of the shape, nor its
// `anywhere` floor above that of any plan of the same copies, micro-batches and schedule on the
// cluster's first machines, and the fill floor raises many shapes above the work and stage
// floors. (Random graphs that are not chains: tests/search/cut_search_test.cc.) On a bundled
// profile it binds where a stage cannot take a copy's devices.
#include "search/fill_floor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "random_trials.h"
#include "search/floor_cases.h"
#include "search/shape_pass.h"
#include "search/stage_floor.h"

namespace pe {
namespace {

using testing::copies_work_floor;

TEST(FillFloor, ShapeFloorNeverAboveAnyPlansBound) {
  std::mt19937 rng(20261129);  // StageFloor.NeverAboveAnyPlansBound's instances
  int shapes = 0, on_parts = 0, raised = 0;
  testing::for_each_floor_case(rng, random_trials(100), [&](const testing::FloorCase& c) {
    const detail::CostModel& cost = *c.cost;
    const detail::ShapeFloor floor = detail::shape_floor(cost, c.shape, c.width);
    EXPECT_LE(floor.own, c.bound * (1 + 1e-12)) << "trial " << c.trial;
    EXPECT_LE(floor.anywhere, floor.own) << "trial " << c.trial;
    if (c.on_first) {
      EXPECT_LE(floor.anywhere, *c.on_first * (1 + 1e-12)) << "trial " << c.trial << ", first";
      ++on_parts;
    }
    const Seconds others = std::max(copies_work_floor(cost, c.shape, c.width),
                                    detail::stage_floor(cost, c.shape, c.width, c.width));
    const Seconds fill = std::min(detail::fill_floor(cost, c.shape, c.width),
                                  detail::one_stage_floor(cost, c.shape, c.width, c.width));
    ++shapes;
    raised += fill > 1.01 * others;
  });
  EXPECT_GT(shapes, random_trials(300));
  EXPECT_GT(on_parts, random_trials(100));
  EXPECT_GT(raised, shapes / 10);
}

// ResNet-101 (a graph of 410 cuts, not a chain) on `machines` machines of 8 GPUs.
detail::CostModel resnet101_on_machines(int machines) {
  const ProfileEntry e = find_profile("resnet101");
  const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
  std::vector<int> ends;
  for (int m = 1; m <= machines; ++m) ends.push_back(8 * m);
  return detail::CostModel(model, cluster_from_machine_ends(ends), training_settings(e));
}

// ResNet-101 at GBS 512 on 256 GPUs, one copy of 4 micro-batches of 128: a stage of two or
// more takes at most 128 replicas (one sample each), so the two widest stages fill in 4
// micro-batches, and by the time T the pipeline does at most 56 times one GPU's work
// (T 128 (1 - (3/4)^2)), not 64; the one-stage plans all-reduce the whole model across
// machines, which takes longer. 256 copies of one GPU are one-stage plans, which the
// one-stage floor now bounds on a graph too (the stage floor claims nothing off a chain).
TEST(FillFloor, BindsWhereAStageCannotTakeACopysDevices) {
  const detail::CostModel cost = resnet101_on_machines(32);
  ASSERT_FALSE(cost.chain());
  const detail::PipelineShapeChoice four{1, 128, 4, Schedule::OneFOneB};
  const Seconds work = copies_work_floor(cost, four, 256);
  EXPECT_NEAR(detail::fill_floor(cost, four, 256) / work, 64.0 / 56, 1e-9);
  EXPECT_GT(detail::one_stage_floor(cost, four, 256, 256), detail::fill_floor(cost, four, 256));
  EXPECT_NEAR(detail::shape_floor(cost, four, 256).own / work, 64.0 / 56, 1e-9);

  const detail::PipelineShapeChoice data_parallel{256, 2, 1, Schedule::OneFOneB};
  EXPECT_EQ(detail::fill_floor(cost, data_parallel, 1), std::numeric_limits<Seconds>::infinity());
  EXPECT_GT(detail::shape_floor(cost, data_parallel, 1).own,
            1.5 * copies_work_floor(cost, data_parallel, 1));
}

// With many micro-batches a pipeline fills early: one copy of 64 micro-batches of 8 on 16
// GPUs (stages of at most 8 replicas) is within 1 % of its work floor, and with fewer
// micro-batches further above it.
TEST(FillFloor, TendsToTheWorkFloorWithManyMicroBatches) {
  const detail::CostModel cost = resnet101_on_machines(2);
  Seconds last_ratio = 0;
  for (const int micro_batches : {64, 16, 4}) {
    const detail::PipelineShapeChoice shape{1, 512 / micro_batches, micro_batches, Schedule::GPipe};
    const Seconds ratio = detail::fill_floor(cost, shape, 16) / copies_work_floor(cost, shape, 16);
    EXPECT_GT(ratio, 1) << micro_batches;
    if (micro_batches == 64) {
      EXPECT_LT(ratio, 1.01);
    }
    EXPECT_GT(ratio, last_ratio) << micro_batches;
    last_ratio = ratio;
  }
}

}  // namespace
}  // namespace pe
