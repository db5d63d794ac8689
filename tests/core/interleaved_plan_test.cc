// Interleaved plans end to end: the layout text, costing a hand-written one, the reports,
// the trace and bubble filling.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pe/error.h"
#include "pe/fill.h"
#include "pe/plan_layout.h"
#include "pe/planner.h"
#include "pe/render.h"
#include "pe/report.h"

namespace pe {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// Sixteen equal layers on four single-GPU machines (search/interleaved_search_test.cc: the
// interleaved schedule wins there).
Planner even_planner(std::vector<Schedule> schedules) {
  std::vector<Layer> layers;
  for (int i = 0; i < 16; ++i) layers.push_back({"l" + std::to_string(i), 0.01, 0.02, 1e6, 1e6});
  Cluster cluster = cluster_from_machine_ends({1, 2, 3, 4});
  cluster.network = {100e9, 100e9, 100e9};
  cluster.device_memory = 16e9;
  SearchOptions options;
  options.schedules = std::move(schedules);
  options.max_stage_width = 1;
  options.max_pipeline_copies = 1;
  return Planner(make_chain_model("even", 4, layers), cluster, TrainingSettings{}, options);
}

Plan best_interleaved() {
  const PointResult point =
      even_planner({Schedule::OneFOneB, Schedule::GPipe, Schedule::Interleaved}).plan(16);
  EXPECT_NE(point.best(), nullptr);
  return *point.best();
}

TEST(InterleavedLayout, ParsesGroupsOfChunks) {
  const PlanLayout layout = parse_plan_layout("0-5,12-17:2;6-11,18-23:2t2r");
  EXPECT_EQ(layout.chunks, 2);
  EXPECT_EQ(layout.schedule, Schedule::Interleaved);
  ASSERT_EQ(layout.stages.size(), 4u);
  const std::size_t firsts[] = {0, 6, 12, 18};
  for (std::size_t j = 0; j < 4; ++j) {
    EXPECT_EQ(layout.stages[j].first_state, firsts[j]);
    EXPECT_EQ(layout.stages[j].width, 2);
    EXPECT_EQ(layout.stages[j].tensor_parallel, j % 2 ? 2 : 1);
    EXPECT_EQ(layout.stages[j].recompute, j % 2 == 1);
  }
  const PlanLayout plain = parse_plan_layout("0-20:15;21-24:1");
  EXPECT_EQ(plain.chunks, 1);
  EXPECT_EQ(plain.schedule, Schedule::OneFOneB);
  EXPECT_THAT([] { parse_plan_layout("0-5,12-17:2;6-23:2"); },
              ThrowsMessage<UsageError>(HasSubstr("stage 1 '6-23:2' lists 1 chunk(s)")));
  EXPECT_THAT([] { parse_plan_layout("0-5,x:2;6-23:2"); },
              ThrowsMessage<UsageError>(HasSubstr("stage 0 is 'x:2'")));
}

TEST(InterleavedLayout, CostingTheSearchsPlanGivesItsNumbers) {
  const Plan found = best_interleaved();
  ASSERT_EQ(found.schedule, Schedule::Interleaved);
  EXPECT_THAT(stages_string(found), HasSubstr(","));
  PlanLayout layout = parse_plan_layout(stages_string(found));
  layout.micro_batches = found.micro_batches;
  const LayoutCost cost = even_planner({Schedule::OneFOneB}).evaluate(layout, found.global_batch);
  EXPECT_TRUE(cost.fits);
  EXPECT_EQ(cost.plan.chunks, found.chunks);
  EXPECT_EQ(stages_string(cost.plan), stages_string(found));
  EXPECT_DOUBLE_EQ(cost.plan.iteration_time, found.iteration_time);
  EXPECT_DOUBLE_EQ(cost.plan.lower_bound, found.lower_bound);
}

TEST(InterleavedLayout, BadLayoutsNameWhatIsWrong) {
  const Planner planner = even_planner({Schedule::OneFOneB});
  PlanLayout layout = parse_plan_layout("0-3,8-11:1;4-7,12-15:1");
  layout.micro_batches = 3;
  EXPECT_THAT([&] { planner.evaluate(layout, 12); },
              ThrowsMessage<UsageError>(HasSubstr("a multiple of the 2 device groups")));
  layout.micro_batches = 4;
  EXPECT_NO_THROW(planner.evaluate(layout, 16));
  layout.schedule = Schedule::OneFOneB;
  EXPECT_THAT([&] { planner.evaluate(layout, 16); },
              ThrowsMessage<UsageError>(HasSubstr("2 chunk(s) per device group under the 1f1b")));
  layout.schedule = Schedule::Interleaved;
  layout.stages[2].width = 2;  // chunk 2 runs on group 0, whose width is 1
  EXPECT_THAT([&] { planner.evaluate(layout, 16); },
              ThrowsMessage<UsageError>(HasSubstr("stage 0 chunk 1 differs from chunk 0")));
}

TEST(InterleavedReports, JsonCsvTraceAndTableShowTheChunks) {
  const Planner planner = even_planner({Schedule::Interleaved});
  const std::vector<PointResult> points{planner.plan(16)};
  const Plan& plan = *points.front().best();
  const nlohmann::json json = nlohmann::json::parse(sweep_json(points, {}));
  const nlohmann::json& p = json.at("points").at(0).at("plans").at(0);
  EXPECT_EQ(p.at("schedule"), "interleaved");
  EXPECT_EQ(p.at("chunks"), plan.chunks);
  EXPECT_EQ(p.at("devices_used"), 4);
  EXPECT_EQ(p.at("stages").size(), plan.stages.size());
  const std::string csv = sweep_csv(points);
  EXPECT_THAT(csv, HasSubstr(",interleaved,\"" + stages_string(plan) + "\","));
  EXPECT_THAT(sweep_table(points, {}), HasSubstr("1f1bx" + std::to_string(plan.chunks) + " "));
  const std::string trace = chrome_trace_json(plan.simulation->timeline, {"t", stage_labels(plan)});
  EXPECT_THAT(trace, HasSubstr("\"F0/1\""));
  EXPECT_THAT(trace, HasSubstr("\"all-reduce/1\""));
  EXPECT_EQ(stage_labels(plan).size(), 4u);
  EXPECT_THAT(stage_labels(plan).front(), HasSubstr("states 0-"));
  EXPECT_THAT(stage_labels(plan).front(), HasSubstr(", 1"));
}

TEST(InterleavedFill, PiecesWaitForTheLastChunk) {
  const Plan plan = best_interleaved();
  WorkList work;
  WorkItem item;
  item.name = "after-forward";
  item.duration = 1e-4;
  item.after = WorkAfter::Forward;
  work.items.push_back(item);
  const FillResult result = fill_bubbles(plan.simulation->timeline, work, {});
  ASSERT_EQ(result.items.size(), 1u);
  EXPECT_EQ(result.items[0].pieces, plan.device_groups() * plan.micro_batches);
  const std::size_t groups = static_cast<std::size_t>(plan.device_groups());
  for (const FilledPiece& piece : result.pieces) {
    if (piece.iteration != 0) continue;
    // Every chunk's forward of the micro-batch on that group has ended.
    for (const Event& e : plan.simulation->timeline.events)
      if (e.kind == EventKind::Forward && e.stage == piece.stage && e.micro_batch == piece.index) {
        EXPECT_GE(piece.start, e.end - 1e-12);
      }
  }
  EXPECT_GT(groups, 1u);
}

}  // namespace
}  // namespace pe
