// A plan is simulated once, when it is made (Plan::simulation), or by simulate_plan().
#include <gtest/gtest.h>

#include "pe/bubbles.h"
#include "pe/plan.h"
#include "pe/planner.h"
#include "pe/timeline.h"

namespace pe {
namespace {

void expect_same_timeline(const Timeline& a, const Timeline& b) {
  EXPECT_EQ(a.stage_count, b.stage_count);
  EXPECT_EQ(a.makespan, b.makespan);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    const Event& x = a.events[i];
    const Event& y = b.events[i];
    EXPECT_TRUE(x.stage == y.stage && x.kind == y.kind && x.micro_batch == y.micro_batch &&
                x.start == y.start && x.end == y.end && x.label == y.label)
        << "event " << i;
  }
}

// Two stages of 1 s forward and 1 s backward, no transfers: (M + S - 1) x 2 s.
Plan hand_plan(int micro_batches) {
  Plan plan;
  plan.micro_batches = micro_batches;
  for (int s = 0; s < 2; ++s) {
    PlanStage stage;
    stage.times.forward = 1;
    stage.times.backward = 1;
    plan.stages.push_back(stage);
  }
  return plan;
}

TEST(PlanSimulation, SimulatePlanStoresTheTimelineItsBubblesAndTheMakespan) {
  Plan plan = hand_plan(3);
  EXPECT_FALSE(plan.simulation);
  simulate_plan(plan);
  ASSERT_TRUE(plan.simulation);
  EXPECT_DOUBLE_EQ(plan.simulated_time, 8);
  EXPECT_EQ(plan.simulation->timeline.makespan, plan.simulated_time);
  expect_same_timeline(plan.simulation->timeline, simulate(plan.shape()));
  EXPECT_EQ(plan.simulation->bubbles.makespan, 8);
  ASSERT_EQ(plan.simulation->bubbles.stages.size(), 2u);
  EXPECT_DOUBLE_EQ(plan.simulation->bubbles.stages[0].busy, 6);
  EXPECT_DOUBLE_EQ(plan.simulation->bubbles.stages[1].idle, 2);
}

TEST(PlanSimulation, SimulatingAgainAfterAChangeReplacesItAndLeavesCopiesAlone) {
  Plan plan = hand_plan(3);
  simulate_plan(plan);
  const Plan copy = plan;
  EXPECT_EQ(copy.simulation, plan.simulation);  // copies share one simulation
  plan.micro_batches = 5;
  simulate_plan(plan);
  EXPECT_DOUBLE_EQ(plan.simulated_time, 12);
  EXPECT_EQ(plan.simulation->bubbles.makespan, 12);
  EXPECT_DOUBLE_EQ(copy.simulated_time, 8);
  EXPECT_EQ(copy.simulation->timeline.makespan, 8);
}

TEST(PlanSimulation, PlannerSimulatesEveryPlanItReturns) {
  SearchOptions options;
  options.top = 3;
  const Planner planner(
      make_chain_model(
          "m", 1,
          {{"a", 1e-3, 2e-3, 1e6, 1e6}, {"b", 2e-3, 3e-3, 1e6, 1e6}, {"c", 1e-3, 1e-3, 1e6, 1e6}}),
      cluster_from_machine_ends({2, 4}), {}, options);
  const PointResult point = planner.plan(16);
  ASSERT_GE(point.plans.size(), 2u);
  for (const Plan& plan : point.plans) {
    ASSERT_TRUE(plan.simulation) << stages_string(plan);
    const Timeline timeline = simulate(plan.shape());
    expect_same_timeline(plan.simulation->timeline, timeline);
    EXPECT_EQ(plan.simulated_time, timeline.makespan);
    const BubbleReport idle = bubbles(timeline);
    EXPECT_EQ(plan.simulation->bubbles.makespan, idle.makespan);
    EXPECT_EQ(plan.simulation->bubbles.mean_bubble_fraction, idle.mean_bubble_fraction);
    ASSERT_EQ(plan.simulation->bubbles.stages.size(), idle.stages.size());
    for (std::size_t s = 0; s < idle.stages.size(); ++s) {
      EXPECT_EQ(plan.simulation->bubbles.stages[s].idle, idle.stages[s].idle);
      EXPECT_EQ(plan.simulation->bubbles.stages[s].wait_transfer, idle.stages[s].wait_transfer);
    }
  }
}

}  // namespace
}  // namespace pe
