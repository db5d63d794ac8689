// Hand-written plans (PlanLayout): parsing, the errors that name a stage, and costing that
// agrees with the search's own plans.
#include "pe/plan_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pe/error.h"
#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "pe/planner.h"

namespace pe {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

Planner planner_for(const std::string& profile, const std::vector<int>& machine_ends,
                    SearchOptions options = {}) {
  const ProfileEntry e = find_profile(profile);
  return Planner(import_pipedream_graph(e.path, e.profile_batch_size),
                 cluster_from_machine_ends(machine_ends), training_settings(e), options);
}

std::vector<int> one_to(int n) {
  std::vector<int> ends;
  for (int i = 1; i <= n; ++i) ends.push_back(i);
  return ends;
}

PlanLayout layout_of(const Plan& plan) {
  PlanLayout layout;
  layout.stages = parse_stage_layout(stages_string(plan));
  layout.micro_batches = plan.micro_batches;
  layout.schedule = plan.schedule;
  layout.pipeline_replicas = plan.pipeline_replicas;
  layout.first_device = plan.first_device();
  layout.copy_stride = plan.copy_stride();
  return layout;
}

TEST(PlanLayout, ParsesWhatStagesStringPrints) {
  const std::vector<StageLayout> stages = parse_stage_layout("0-20:15;21-24:1");
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].first_state, 0u);
  EXPECT_EQ(stages[0].last_state, 20u);
  EXPECT_EQ(stages[0].width, 15);
  EXPECT_EQ(stages[1].first_state, 21u);
  EXPECT_EQ(stages[1].last_state, 24u);
  EXPECT_EQ(stages[1].width, 1);
}

TEST(PlanLayout, MalformedStageIsNamed) {
  for (const char* text : {"0-20:15;21-x:1", "0-20:15;21-24", "0-20:15;", "0-20:15;21-24:+1"})
    EXPECT_THAT([&] { parse_stage_layout(text); },
                ThrowsMessage<UsageError>(HasSubstr("stage 1 is '")))
        << text;
  EXPECT_THAT([] { parse_stage_layout("0-24:0"); },
              ThrowsMessage<UsageError>(HasSubstr("stage 0 '0-24:0' has width 0")));
}

// The search's plans, written back as layouts, cost exactly what the search reported.
TEST(PlanLayout, SearchPlansCostTheSameAsLayouts) {
  SearchOptions options;
  options.top = 3;
  struct Case {
    const char* profile;
    std::vector<int> ends;
    int gbs;
  };
  for (const Case& c : {Case{"vgg19", one_to(16), 512}, Case{"vgg19", {8, 16}, 96},
                        Case{"resnet50", {8, 16}, 1000}, Case{"gnmt_16", {4, 8}, 256},
                        Case{"vgg19", {1, 9}, 32}, Case{"resnet18", {4, 8, 11, 14}, 16}}) {
    const Planner planner = planner_for(c.profile, c.ends, options);
    const PointResult point = planner.plan(c.gbs);
    ASSERT_FALSE(point.plans.empty()) << c.profile;
    for (const Plan& plan : point.plans) {
      const LayoutCost cost = planner.evaluate(layout_of(plan), c.gbs);
      SCOPED_TRACE(std::string(c.profile) + " " + stages_string(plan));
      EXPECT_TRUE(cost.fits);
      EXPECT_EQ(cost.memory_note, "");
      EXPECT_EQ(stages_string(cost.plan), stages_string(plan));
      EXPECT_EQ(cost.plan.micro_batch_size, plan.micro_batch_size);
      EXPECT_DOUBLE_EQ(cost.plan.iteration_time, plan.iteration_time);
      EXPECT_DOUBLE_EQ(cost.plan.simulated_time, plan.simulated_time);
      EXPECT_DOUBLE_EQ(cost.plan.speedup, plan.speedup);
      for (std::size_t s = 0; s < plan.stages.size(); ++s)
        EXPECT_EQ(cost.plan.stages[s].devices, plan.stages[s].devices);
    }
  }
}

// Where a plan the search found on a part of the cluster sits, as a layout field (`field`:
// first_device, copy_stride) that the plan reports (`reported`): at the plan's value the
// layout is the plan found; at 0, the default, the same stages sit at `plain` and run
// slower; each of `bad` is refused with a message that starts with `refused` and the value.
struct Placement {
  const char* profile;
  std::vector<int> ends;
  int gbs;
  int PlanLayout::*field;
  int (Plan::*reported)() const;
  int found, plain;
  std::vector<int> bad;
  std::string refused, expected;
};

void expect_placement(const Placement& c) {
  const Planner planner = planner_for(c.profile, c.ends);
  const PointResult point = planner.plan(c.gbs);
  ASSERT_NE(point.best(), nullptr);
  const Plan& best = *point.best();
  ASSERT_EQ((best.*c.reported)(), c.found);
  PlanLayout layout = layout_of(best);
  const LayoutCost there = planner.evaluate(layout, c.gbs);
  EXPECT_EQ((there.plan.*c.reported)(), c.found);
  EXPECT_DOUBLE_EQ(there.plan.simulated_time, best.simulated_time);
  layout.*c.field = 0;
  const LayoutCost plain = planner.evaluate(layout, c.gbs);
  EXPECT_EQ((plain.plan.*c.reported)(), c.plain);
  EXPECT_GT(plain.plan.simulated_time, best.simulated_time * 1.01);
  for (int value : c.bad) {
    layout.*c.field = value;
    EXPECT_THAT([&] { planner.evaluate(layout, c.gbs); },
                ThrowsMessage<UsageError>(
                    HasSubstr(c.refused + " is " + std::to_string(value) + c.expected)));
  }
}

// A plan found on the machines after the first (VGG-19 at GBS 32 on a machine of 1 GPU then
// one of 8 runs on the second alone) is costed where it runs: from its first device, with
// the machines before it idle, as the search costed it; from device 0 it crosses machines.
// Its devices go round past the last one to device 0; copies do so only with a stride.
TEST(PlanLayout, AFirstDevicePlacesThePlanOnTheMachinesFromItAndRound) {
  expect_placement({"vgg19",
                    {1, 9},
                    32,
                    &PlanLayout::first_device,
                    &Plan::first_device,
                    1,
                    0,
                    {2, 9, -1},
                    "PlanLayout::first_device",
                    ", expected the first device of a machine (0, 1; the cluster has 9"});
  const Planner planner = planner_for("vgg19", {1, 9});
  PlanLayout layout{parse_stage_layout("0-20:8;21-24:1"), 1, Schedule::OneFOneB, 1};
  layout.first_device = 1;
  const LayoutCost round = planner.evaluate(layout, 32);
  EXPECT_EQ(round.plan.stages[0].devices, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(round.plan.stages[1].devices, std::vector<int>{0});
  EXPECT_EQ(round.plan.first_device(), 1);
  layout.stages = parse_stage_layout("0-20:9;21-24:1");
  EXPECT_THAT([&] { planner.evaluate(layout, 32); },
              ThrowsMessage<UsageError>(HasSubstr("10 devices, but the cluster has 9")));
  layout.stages = parse_stage_layout("0-20:2;21-24:1");
  layout.pipeline_replicas = 3;
  layout.micro_batches = 1;
  EXPECT_THAT([&] { planner.evaluate(layout, 33); },
              ThrowsMessage<UsageError>(HasSubstr(
                  "copy_stride is 0: the 8 devices from device 1 on over 3 copies, but they "
                  "need 9 (copies that go round")));
  layout.copy_stride = 3;
  const LayoutCost copies = planner.evaluate(layout, 33);
  EXPECT_EQ(copies.plan.stages[0].devices, (std::vector<int>{1, 2, 4, 5, 7, 8}));
  EXPECT_EQ(copies.plan.stages[1].devices, (std::vector<int>{3, 6, 0}));
  EXPECT_EQ(copies.plan.copy_stride(), 3);
}

// ResNet-18 at GBS 8 on machines of 4, 4, 3 and 3 GPUs runs two copies of 4 GPUs on the
// first two machines, 4 devices apart: the layout with that stride is the plan found; without
// it the copies start 7 devices apart (the cluster over the copies), across machines.
TEST(PlanLayout, ACopyStridePlacesTheCopiesAsThePlanFound) {
  expect_placement({"resnet18",
                    {4, 8, 11, 14},
                    8,
                    &PlanLayout::copy_stride,
                    &Plan::copy_stride,
                    4,
                    7,
                    {3, 8, -1},
                    "PlanLayout::copy_stride",
                    ", expected at least a copy's 4 devices and at most 7 (14 devices over 2 "
                    "copies)"});
}

TEST(PlanLayout, NoBetterThanTheSearch) {
  const Planner planner = planner_for("vgg19", one_to(16));
  const PointResult point = planner.plan(512);
  PlanLayout data_parallel{{{0, 24, 16}}, 1, Schedule::OneFOneB, 1};
  PlanLayout halves{{{0, 12, 8}, {13, 24, 8}}, 4, Schedule::GPipe, 1};
  int fitting = 0;
  for (const PlanLayout& layout : {data_parallel, halves}) {
    const LayoutCost cost = planner.evaluate(layout, 512);
    if (!cost.fits) continue;
    ++fitting;
    EXPECT_GE(cost.plan.iteration_time, point.best()->iteration_time * (1 - 1e-12));
  }
  EXPECT_GT(fitting, 0);
}

TEST(PlanLayout, PlanThatDoesNotFitIsAnAnswerWithNumbers) {
  const Planner planner = planner_for("vgg19", one_to(4));
  // One device for the whole model at GBS 4096: far beyond 16 GB of activations.
  const LayoutCost cost = planner.evaluate({{{0, 24, 1}}, 1, Schedule::GPipe, 1}, 4096);
  EXPECT_FALSE(cost.fits);
  EXPECT_THAT(cost.memory_note, HasSubstr("stage 0 needs "));
  EXPECT_THAT(cost.memory_note, HasSubstr("a device has 16 GB"));
  EXPECT_GT(cost.plan.stages[0].peak_memory(), 16e9);
  EXPECT_GT(cost.plan.simulated_time, 0);
}

TEST(PlanLayout, StagesMustCoverTheModelOnceInOrder) {
  const Planner planner = planner_for("vgg19", one_to(16));
  auto error = [&](std::vector<StageLayout> stages) {
    try {
      planner.evaluate({std::move(stages), 4, Schedule::OneFOneB, 1}, 512);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error({{0, 20, 8}, {22, 24, 8}}),
              HasSubstr("stage 1 22-24 starts at state 22, expected 21 (states in between"));
  EXPECT_THAT(error({{0, 20, 8}, {20, 24, 8}}), HasSubstr("(it overlaps the stage before)"));
  EXPECT_THAT(error({{0, 20, 8}, {21, 25, 8}}), HasSubstr("stage 1 21-25 ends past the model's"));
  EXPECT_THAT(error({{0, 20, 8}}), HasSubstr("the last stage ends at state 20, expected"));
  EXPECT_THAT(error({{0, 20, 8}, {21, 19, 8}}), HasSubstr("stage 1 21-19 ends before it starts"));
  EXPECT_THAT(error({}), HasSubstr("PlanLayout::stages is empty"));
  EXPECT_THAT(
      error({{0, 20, 15}, {21, 24, 2}}),
      HasSubstr("needs 17 devices per copy x 1 copies = 17 devices, but the cluster has 16"));
}

TEST(PlanLayout, BatchMustSplitAsWritten) {
  const Planner planner = planner_for("vgg19", one_to(16));
  const std::vector<StageLayout> two{{0, 20, 4}, {21, 24, 4}};
  EXPECT_THAT(
      [&] {
        planner.evaluate({two, 3, Schedule::OneFOneB, 1}, 512);
      },
      ThrowsMessage<UsageError>(HasSubstr("do not split into 3 equal micro-batches")));
  const std::vector<StageLayout> narrow{{0, 20, 2}, {21, 24, 2}};
  EXPECT_THAT(
      [&] {
        planner.evaluate({narrow, 4, Schedule::OneFOneB, 3}, 512);
      },
      ThrowsMessage<UsageError>(HasSubstr("does not split into 3 equal copies")));
  EXPECT_THAT(
      [&] {
        planner.evaluate({two, 513, Schedule::OneFOneB, 1}, 512);
      },
      ThrowsMessage<UsageError>(HasSubstr("leave some empty")));
  // One stage accumulates uneven micro-batches, as the search's one-stage plans do.
  const LayoutCost one = planner.evaluate({{{0, 24, 16}}, 3, Schedule::OneFOneB, 1}, 512);
  EXPECT_EQ(one.plan.micro_batch_size, 171);
  EXPECT_TRUE(one.plan.uneven_micro_batches());
}

// A pipeline's stage splits each micro-batch among its replicas, so it has no more of them
// than a micro-batch has samples (the search's space); a tensor-parallel group is one
// replica, and a one-stage plan accumulates on any width.
TEST(PlanLayout, EveryReplicaOfAStageGetsASample) {
  const Planner planner = planner_for("vgg19", one_to(16));
  const std::vector<StageLayout> wide{{0, 20, 3}, {21, 24, 1}};
  EXPECT_THAT(
      [&] {
        planner.evaluate({wide, 16, Schedule::OneFOneB, 1}, 32);
      },
      ThrowsMessage<UsageError>(
          HasSubstr("stage 0: 3 data-parallel replicas, but a micro-batch has 2 sample")));
  EXPECT_TRUE(planner.evaluate({wide, 8, Schedule::OneFOneB, 1}, 32).fits);
  EXPECT_NO_THROW(planner.evaluate({{{0, 24, 16}}, 32, Schedule::OneFOneB, 1}, 32));
}

}  // namespace
}  // namespace pe
