// A sweep's points share their plans (search/sweep_plans.h): the best plan of one batch size,
// rescaled to another's micro-batches (rescaled_plan), is a candidate there.
#include "search/sweep_plans.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "pe/plan_layout.h"
#include "pe/timeline.h"
#include "random_instances.h"
#include "random_trials.h"
#include "robustness/robustness_checks.h"
#include "search/final_plan.h"
#include "search/hybrid_search.h"

namespace pe {
namespace {

// On random chains, a plan rescaled to its own batch size is the plan itself (the same
// simulated time); to twice the batch it has twice the micro-batches on the same stages and
// devices, and its time is its simulation's; to a batch its copies and micro-batch size do not
// divide, none. Its time matches Planner::evaluate of the same layout where that places it the
// same way (one copy).
TEST(RescaledPlan, TheSameStagesWithTheBatchsMicroBatches) {
  std::mt19937 rng(2026120401);
  int rescaled = 0;
  for (int trial = 0; trial < random_trials(60); ++trial) {
    const testing::Instance in = testing::random_instance(rng, 12, 8);
    SearchOptions options;
    options.effort = 20000;
    const Planner planner(in.model, in.cluster, in.settings, options);
    const PointResult point = planner.plan(in.global_batch);
    const Plan* plan = point.best();
    if (!plan || plan->stages.size() < 2 || plan->chunks > 1) continue;
    SCOPED_TRACE("trial " + std::to_string(trial));
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    const detail::PartCostModel part = detail::part_cost_of(in.model, in.settings);
    const std::optional<Plan> same =
        detail::rescaled_plan(cost, part, *plan, in.global_batch, options);
    ASSERT_TRUE(same);
    EXPECT_DOUBLE_EQ(same->iteration_time, plan->iteration_time);
    const int twice = 2 * in.global_batch;
    const std::optional<Plan> doubled = detail::rescaled_plan(cost, part, *plan, twice, options);
    const int share = plan->pipeline_replicas * plan->micro_batch_size;
    EXPECT_FALSE(detail::rescaled_plan(cost, part, *plan, twice + 1, options) &&
                 (twice + 1) % share != 0);
    if (!doubled) continue;  // more micro-batches in flight may not fit memory
    ++rescaled;
    robustness::expect_sound_plan(*doubled, in.model, in.cluster);
    EXPECT_EQ(doubled->micro_batches, 2 * plan->micro_batches);
    EXPECT_EQ(doubled->micro_batch_size, plan->micro_batch_size);
    ASSERT_EQ(doubled->stages.size(), plan->stages.size());
    for (std::size_t s = 0; s < plan->stages.size(); ++s) {
      EXPECT_EQ(doubled->stages[s].last_state, plan->stages[s].last_state);
      EXPECT_EQ(doubled->stages[s].devices, plan->stages[s].devices);
    }
    EXPECT_DOUBLE_EQ(simulated_makespan(doubled->shape()), doubled->iteration_time);
    if (plan->pipeline_replicas == 1) {
      PlanLayout layout{{}, doubled->micro_batches, plan->schedule, 1};
      for (const PlanStage& s : plan->stages)
        layout.stages.push_back(
            {s.first_state, s.last_state, s.width, s.tensor_parallel, s.recompute});
      EXPECT_DOUBLE_EQ(planner.evaluate(layout, twice).plan.iteration_time,
                       doubled->iteration_time);
    }
  }
  EXPECT_GT(rescaled, random_trials(60) / 4);
}

// A plan on the machines after the first (VGG-19 at GBS 32 on a machine of 1 GPU then one of
// 8 runs on the second alone) rescaled to another batch size stays on those machines: the
// same devices, costed there as Planner::evaluate costs its layout from that first device
// (before, it was laid out again from device 0, across both machines).
TEST(RescaledPlan, APlanOnLaterMachinesStaysOnThem) {
  const ProfileEntry e = find_profile("vgg19");
  const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
  const Cluster cluster = cluster_from_machine_ends({1, 9});
  const TrainingSettings settings = training_settings(e);
  const Planner planner(model, cluster, settings);
  const PointResult point = planner.plan(32);
  ASSERT_NE(point.best(), nullptr);
  const Plan& plan = *point.best();
  ASSERT_EQ(plan.first_device(), 1);
  ASSERT_GE(plan.stages.size(), 2u);
  const detail::CostModel cost(model, cluster, settings);
  const detail::PartCostModel part = detail::part_cost_of(model, settings);
  for (int gbs : {64, 128}) {
    SCOPED_TRACE("GBS " + std::to_string(gbs));
    const std::optional<Plan> there = detail::rescaled_plan(cost, part, plan, gbs, {});
    ASSERT_TRUE(there);
    for (std::size_t s = 0; s < plan.stages.size(); ++s)
      EXPECT_EQ(there->stages[s].devices, plan.stages[s].devices);
    PlanLayout layout{parse_stage_layout(stages_string(plan)), there->micro_batches, plan.schedule,
                      1};
    layout.first_device = 1;
    EXPECT_DOUBLE_EQ(planner.evaluate(layout, gbs).plan.iteration_time, there->iteration_time);
  }
}

// On random chains searched with little effort, a sweep's point is never slower than the
// point planned alone, keeps its lower bound (so its gap only shrinks), and no other point's
// plan rescaled to it beats it by more than the simplicity margin; on some points another's
// plan is the faster one.
TEST(SweepPlans, NoOtherPointsPlanBeatsAPointsAnswer) {
  std::mt19937 rng(2026120402);
  int shared = 0;
  // At least the first four (the sanitizer run's fraction would be two): the third is the
  // first whose sweep takes another point's plan.
  const int trials = std::max(4, random_trials(24));
  for (int trial = 0; trial < trials; ++trial) {
    const testing::Instance in = testing::random_instance(rng, 16, 8, true);
    SearchOptions options;
    options.effort = 3000;
    const Planner planner(in.model, in.cluster, in.settings, options);
    const std::vector<int> batches = {8, 16, 24, 32, 48, 64};
    const std::vector<PointResult> points = planner.sweep(batches);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    const detail::PartCostModel part = detail::part_cost_of(in.model, in.settings);
    for (std::size_t i = 0; i < batches.size(); ++i) {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", GBS " + std::to_string(batches[i]));
      const PointResult alone = planner.plan(batches[i]);
      ASSERT_EQ(points[i].plans.empty(), alone.plans.empty());
      if (alone.plans.empty()) continue;
      const Seconds time = points[i].best()->iteration_time;
      EXPECT_LE(time, alone.best()->iteration_time);
      EXPECT_EQ(points[i].lower_bound, alone.lower_bound);
      EXPECT_LE(points[i].gap(), alone.gap());
      EXPECT_DOUBLE_EQ(simulated_makespan(points[i].best()->shape()), time);
      robustness::expect_sound_plan(*points[i].best(), in.model, in.cluster);
      shared += time < alone.best()->iteration_time;
      if (points[i].exact) continue;
      for (std::size_t j = 0; j < batches.size(); ++j) {
        if (j == i || points[j].plans.empty()) continue;
        const std::optional<Plan> other =
            detail::rescaled_plan(cost, part, *points[j].best(), batches[i], options);
        if (other) {
          EXPECT_GE(other->iteration_time, time * (1 - detail::kSimpler) * (1 - 1e-12));
        }
      }
    }
  }
  EXPECT_GT(shared, 0);
}

}  // namespace
}  // namespace pe
