#include "pe/bubbles.h"

#include <gtest/gtest.h>

#include <random>

#include "pe/error.h"
#include "simulate/timeline_index.h"

namespace pe {
namespace {

using testing::uniform_shape;

// S equal stages, no communication: the iteration is M + S - 1 slots of t = f + g and
// every stage computes M of them, so each idles (S - 1) slots.
TEST(Bubbles, EqualStagesMatchTheClassicFraction) {
  for (Schedule schedule : {Schedule::OneFOneB, Schedule::GPipe})
    for (int stages = 1; stages <= 6; ++stages)
      for (int micro = 1; micro <= 8; ++micro) {
        BubbleReport r = bubbles(simulate(uniform_shape(stages, micro, schedule, {1, 2, 0, 0})));
        const double expected = (stages - 1.0) / (micro + stages - 1.0);
        ASSERT_EQ(r.stages.size(), static_cast<std::size_t>(stages));
        for (const StageBubbles& b : r.stages) {
          EXPECT_NEAR(b.bubble_fraction, expected, 1e-12)
              << to_string(schedule) << " S=" << stages << " M=" << micro << " s=" << b.stage;
          EXPECT_DOUBLE_EQ(b.busy, micro * 3.0);
        }
        EXPECT_NEAR(r.mean_bubble_fraction, expected, 1e-12);
      }
}

// The 1F1B case of Simulate.TransfersAndAllReduceOneFOneB (makespan 11). Stage 0 runs
// F0 [0,1], F1 [1,2], B0 [5,7], B1 [8,10], all-reduce [10,11]. Before B0 it waits [2,5):
// stage 1's B0 ends at 4.5 (2.5 waiting on the stage), its gradient lands at 5 (0.5 on the
// link); before B1 it waits [7,8): B1 of stage 1 ends 7.5, the gradient lands at 8.
// Stage 1 starts at 1.5 (warm-up), never waits, and drains from 7.5 to 11.
TEST(Bubbles, AttributesWaitsToStagesAndTransfers) {
  PipelineShape shape = uniform_shape(2, 2, Schedule::OneFOneB, {1, 2, 0.5, 1});
  shape.stages[1].allreduce = 0.25;
  BubbleReport r = bubbles(simulate(shape));
  const StageBubbles& first = r.stages[0];
  EXPECT_DOUBLE_EQ(first.busy, 6);
  EXPECT_DOUBLE_EQ(first.warmup, 0);
  EXPECT_DOUBLE_EQ(first.wait_stage, 2.5 + 0.5);
  EXPECT_DOUBLE_EQ(first.wait_transfer, 0.5 + 0.5);
  EXPECT_DOUBLE_EQ(first.drain, 1);
  EXPECT_DOUBLE_EQ(first.allreduce, 1);
  const StageBubbles& second = r.stages[1];
  EXPECT_DOUBLE_EQ(second.warmup, 1.5);
  EXPECT_DOUBLE_EQ(second.wait_stage + second.wait_transfer, 0);
  EXPECT_DOUBLE_EQ(second.drain, 11 - 7.5);
  EXPECT_DOUBLE_EQ(second.allreduce, 0.25);
  EXPECT_DOUBLE_EQ(second.idle, 5);
  EXPECT_DOUBLE_EQ(second.bubble_fraction, 5.0 / 11);
}

TEST(Bubbles, PartsAddUpToTheMakespanOnRandomShapes) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> time(0.0, 2.0);
  for (int round = 0; round < 60; ++round) {
    PipelineShape shape;
    shape.schedule = round % 2 ? Schedule::GPipe : Schedule::OneFOneB;
    shape.micro_batches = 1 + round % 9;
    for (int s = 0; s < 1 + round % 5; ++s)
      shape.stages.push_back({time(rng), time(rng), time(rng), time(rng)});
    BubbleReport r = bubbles(simulate(shape));
    for (const StageBubbles& b : r.stages) {
      EXPECT_NEAR(b.busy + b.warmup + b.wait_stage + b.wait_transfer + b.drain, r.makespan, 1e-9)
          << "round " << round << " stage " << b.stage;
      EXPECT_GE(b.wait_stage, 0);
      EXPECT_GE(b.wait_transfer, 0);
      EXPECT_GE(b.drain, b.allreduce - 1e-12);
    }
  }
}

TEST(Bubbles, CountsFillerSeparately) {
  Timeline t = simulate(uniform_shape(2, 1, Schedule::GPipe, {1, 1, 0, 0}));
  t.events.push_back({0, EventKind::Filler, -1, 1, 2.5, "curvature"});
  BubbleReport r = bubbles(t);  // events no longer sorted: bubbles sorts its own view
  EXPECT_DOUBLE_EQ(r.stages[0].filler, 1.5);
  EXPECT_DOUBLE_EQ(r.stages[0].busy, 2);
  EXPECT_DOUBLE_EQ(r.stages[0].idle, 2);
}

TEST(Bubbles, RejectsBrokenTimelines) {
  Timeline t;
  t.stage_count = 1;
  t.makespan = 1;
  t.events.push_back({1, EventKind::Forward, 0, 0, 1, {}});
  EXPECT_THROW(bubbles(t), InputError);
  t.events[0] = {0, EventKind::Forward, -2, 0, 1, {}};
  EXPECT_THROW(bubbles(t), InputError);
  t.events[0] = {0, EventKind::Forward, 0, 1, 0, {}};
  EXPECT_THROW(bubbles(t), InputError);
  t.events[0] = {0, EventKind::Forward, 0, 0, std::nan(""), {}};
  EXPECT_THROW(bubbles(t), InputError);
}

TEST(Bubbles, EmptyTimelineHasNoStages) {
  BubbleReport r = bubbles(Timeline{});
  EXPECT_TRUE(r.stages.empty());
  EXPECT_DOUBLE_EQ(r.mean_bubble_fraction, 0);
}

}  // namespace
}  // namespace pe
