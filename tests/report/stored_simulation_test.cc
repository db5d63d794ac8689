// The text and JSON reports show the simulation stored with a plan (Plan::simulation);
// they do not simulate the plan again.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pe/planner.h"
#include "pe/report.h"

namespace pe {
namespace {

struct StoredSimulation : ::testing::Test {
  Planner planner{
      make_chain_model("m", 1, {{"a", 1e-3, 2e-3, 1e6, 1e6}, {"b", 2e-3, 3e-3, 1e6, 1e6}}),
      cluster_from_machine_ends({2})};
  ReportContext context{&planner.model(), &planner.cluster()};
  PointResult point = planner.plan(8);
};

TEST_F(StoredSimulation, ReportsShowTheStoredBubblesNotAFreshSimulation) {
  ASSERT_NE(point.best(), nullptr);
  Plan& plan = point.plans.front();
  ASSERT_TRUE(plan.simulation);
  const BubbleReport own = plan.simulation->bubbles;
  // Store the simulation of another plan: the same stages with more micro-batches.
  Plan other = plan;
  other.micro_batches += 3;
  simulate_plan(other);
  plan.simulation = other.simulation;
  const BubbleReport& stored = other.simulation->bubbles;
  ASSERT_NE(bubble_text(stored), bubble_text(own));
  ASSERT_NE(bubble_json(stored), bubble_json(own));

  const std::string table = sweep_table({point}, context);
  EXPECT_NE(table.find(bubble_text(stored)), std::string::npos) << table;
  EXPECT_EQ(table.find(bubble_text(own)), std::string::npos) << table;
  const std::string json = sweep_json({point}, context);
  EXPECT_NE(json.find("\"bubbles\": " + bubble_json(stored)), std::string::npos) << json;
  EXPECT_EQ(json.find(bubble_json(own)), std::string::npos) << json;
}

TEST_F(StoredSimulation, APlanNeverSimulatedHasNoBubbles) {
  ASSERT_NE(point.best(), nullptr);
  Plan& plan = point.plans.front();
  plan.simulation = nullptr;
  plan.simulated_time = 0;
  EXPECT_EQ(sweep_table({point}, context).find("bubbles ("), std::string::npos);
  EXPECT_NE(sweep_json({point}, context).find("\"bubbles\": null"), std::string::npos);
  simulate_plan(plan);
  EXPECT_NE(sweep_table({point}, context).find(bubble_text(plan.simulation->bubbles)),
            std::string::npos);
}

}  // namespace
}  // namespace pe
