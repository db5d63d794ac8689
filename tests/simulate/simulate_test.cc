#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "pe/error.h"
#include "pe/timeline.h"
#include "simulate/timeline_index.h"

namespace pe {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::TimelineIndex;
using testing::uniform_shape;

struct Span {
  Seconds start;
  Seconds end;
};

void expect_span(const Event& e, Span expected) {
  EXPECT_DOUBLE_EQ(e.start, expected.start) << to_string(e.kind) << " " << e.micro_batch;
  EXPECT_DOUBLE_EQ(e.end, expected.end) << to_string(e.kind) << " " << e.micro_batch;
}

// Two stages, f = 1, g = 2, no transfers. 1F1B order: stage 0 F0 F1 B0 B1, stage 1
// F0 B0 F1 B1. Stage 1 runs F0 [1,2] and B0 [2,4]; F1 waits for the stage: [4,5], B1
// [5,7]; stage 0 gets gradient 0 at 4 (B0 [4,6]) and gradient 1 at 7 (B1 [7,9]).
TEST(Simulate, TwoStagesTwoMicroBatchesOneFOneB) {
  Timeline t = simulate(uniform_shape(2, 2, Schedule::OneFOneB, {1, 2, 0, 0}));
  TimelineIndex index(t);
  expect_span(index.get(0, EventKind::Forward, 0), {0, 1});
  expect_span(index.get(0, EventKind::Forward, 1), {1, 2});
  expect_span(index.get(1, EventKind::Forward, 0), {1, 2});
  expect_span(index.get(1, EventKind::Backward, 0), {2, 4});
  expect_span(index.get(1, EventKind::Forward, 1), {4, 5});
  expect_span(index.get(1, EventKind::Backward, 1), {5, 7});
  expect_span(index.get(0, EventKind::Backward, 0), {4, 6});
  expect_span(index.get(0, EventKind::Backward, 1), {7, 9});
  EXPECT_DOUBLE_EQ(t.makespan, 9);
  EXPECT_EQ(t.stage_count, 2);
}

// As above with M = 3: stage 0 runs F0 F1 B0 F2 B1 B2. F2 on stage 0 follows B0 [4,6]:
// [6,7]; stage 1's F2 waits for it: [7,8], B2 [8,10]; stage 0's B1 gets its gradient at 7
// (stage 1's B1 ends at 7): [7,9]; B2 at 10: [10,12].
TEST(Simulate, TwoStagesThreeMicroBatchesOneFOneB) {
  Timeline t = simulate(uniform_shape(2, 3, Schedule::OneFOneB, {1, 2, 0, 0}));
  TimelineIndex index(t);
  expect_span(index.get(0, EventKind::Backward, 0), {4, 6});
  expect_span(index.get(0, EventKind::Forward, 2), {6, 7});
  expect_span(index.get(1, EventKind::Forward, 2), {7, 8});
  expect_span(index.get(1, EventKind::Backward, 2), {8, 10});
  expect_span(index.get(0, EventKind::Backward, 1), {7, 9});
  expect_span(index.get(0, EventKind::Backward, 2), {10, 12});
  EXPECT_DOUBLE_EQ(t.makespan, 12);
}

// f = 1, g = 2, transfers 0.5 each way, all-reduce 1 on stage 0 and 0.25 on stage 1.
// Activations: [1,1.5], [2,2.5]. Stage 1: F0 [1.5,2.5], B0 [2.5,4.5], F1 [4.5,5.5],
// B1 [5.5,7.5], all-reduce [7.5,7.75]. Gradients: [4.5,5], [7.5,8]. Stage 0: B0 [5,7],
// B1 [8,10], all-reduce [10,11].
TEST(Simulate, TransfersAndAllReduceOneFOneB) {
  PipelineShape shape = uniform_shape(2, 2, Schedule::OneFOneB, {1, 2, 0.5, 1});
  shape.stages[1].allreduce = 0.25;
  Timeline t = simulate(shape);
  TimelineIndex index(t);
  expect_span(index.get(0, EventKind::SendActivation, 0), {1, 1.5});
  expect_span(index.get(0, EventKind::SendActivation, 1), {2, 2.5});
  expect_span(index.get(1, EventKind::Forward, 0), {1.5, 2.5});
  expect_span(index.get(1, EventKind::Forward, 1), {4.5, 5.5});
  expect_span(index.get(1, EventKind::SendGradient, 0), {4.5, 5});
  expect_span(index.get(1, EventKind::SendGradient, 1), {7.5, 8});
  expect_span(index.get(1, EventKind::AllReduce), {7.5, 7.75});
  expect_span(index.get(0, EventKind::Backward, 0), {5, 7});
  expect_span(index.get(0, EventKind::Backward, 1), {8, 10});
  expect_span(index.get(0, EventKind::AllReduce), {10, 11});
  EXPECT_DOUBLE_EQ(t.makespan, 11);
}

// GPipe with the same times: stage 1 runs F0 [1.5,2.5], F1 [2.5,3.5], B0 [3.5,5.5],
// B1 [5.5,7.5]; gradients [5.5,6] and [7.5,8]; stage 0: B0 [6,8], B1 [8,10], AR [10,11].
TEST(Simulate, TransfersAndAllReduceGPipe) {
  PipelineShape shape = uniform_shape(2, 2, Schedule::GPipe, {1, 2, 0.5, 1});
  shape.stages[1].allreduce = 0.25;
  Timeline t = simulate(shape);
  TimelineIndex index(t);
  expect_span(index.get(1, EventKind::Forward, 1), {2.5, 3.5});
  expect_span(index.get(1, EventKind::Backward, 0), {3.5, 5.5});
  expect_span(index.get(1, EventKind::SendGradient, 0), {5.5, 6});
  expect_span(index.get(0, EventKind::Backward, 0), {6, 8});
  expect_span(index.get(0, EventKind::Backward, 1), {8, 10});
  expect_span(index.get(0, EventKind::AllReduce), {10, 11});
  EXPECT_DOUBLE_EQ(t.makespan, 11);
}

// GPipe with M = 3, f = 1, g = 2, no transfers: stage 1's forwards end at 4, its
// backwards run [4,6], [6,8], [8,10]; stage 0 follows each: [6,8], [8,10], [10,12].
TEST(Simulate, TwoStagesThreeMicroBatchesGPipe) {
  Timeline t = simulate(uniform_shape(2, 3, Schedule::GPipe, {1, 2, 0, 0}));
  TimelineIndex index(t);
  expect_span(index.get(1, EventKind::Forward, 2), {3, 4});
  expect_span(index.get(1, EventKind::Backward, 0), {4, 6});
  expect_span(index.get(0, EventKind::Backward, 0), {6, 8});
  expect_span(index.get(0, EventKind::Backward, 2), {10, 12});
  EXPECT_DOUBLE_EQ(t.makespan, 12);
}

// A slow link queues: activations of micro-batch 1 are ready at 2 but the link is busy
// with micro-batch 0 until 4, so they cross [4,7]; gradients likewise [9,12], [12,15].
TEST(Simulate, LinkIsFirstComeFirstServed) {
  Timeline t = simulate(uniform_shape(2, 2, Schedule::GPipe, {1, 1, 3, 0}));
  TimelineIndex index(t);
  expect_span(index.get(0, EventKind::SendActivation, 0), {1, 4});
  expect_span(index.get(0, EventKind::SendActivation, 1), {4, 7});
  expect_span(index.get(1, EventKind::Forward, 1), {7, 8});
  expect_span(index.get(1, EventKind::SendGradient, 1), {12, 15});
  expect_span(index.get(0, EventKind::Backward, 1), {15, 16});
  expect_span(index.get(0, EventKind::AllReduce), {16, 16});
  EXPECT_DOUBLE_EQ(t.makespan, 16);
}

// S equal stages with f + g = t and no communication. GPipe: the last forward leaves
// stage S-1 at (M + S - 1) f and the last backward needs (M + S - 1) g more. 1F1B: the
// same M + S - 1 slots of t (the classic bubble formula of GPipe and DAPPLE).
TEST(Simulate, EqualStagesTakeMPlusSMinusOneSlots) {
  for (Schedule schedule : {Schedule::OneFOneB, Schedule::GPipe})
    for (int stages = 1; stages <= 6; ++stages)
      for (int micro = 1; micro <= 9; ++micro) {
        Timeline t = simulate(uniform_shape(stages, micro, schedule, {1, 2, 0, 0}));
        EXPECT_DOUBLE_EQ(t.makespan, (micro + stages - 1) * 3.0)
            << to_string(schedule) << " S=" << stages << " M=" << micro;
      }
}

TEST(Simulate, OneStageRunsItsMicroBatchesBackToBack) {
  Timeline t = simulate(uniform_shape(1, 4, Schedule::OneFOneB, {1, 2, 7, 0.5}));
  TimelineIndex index(t);
  expect_span(index.get(0, EventKind::Backward, 0), {1, 3});
  expect_span(index.get(0, EventKind::Forward, 1), {3, 4});
  expect_span(index.get(0, EventKind::AllReduce), {12, 12.5});
  EXPECT_EQ(index.find(0, EventKind::SendActivation, 0), nullptr);
  EXPECT_DOUBLE_EQ(t.makespan, 12.5);
}

TEST(Simulate, ZeroDurationsAreKept) {
  Timeline t = simulate(uniform_shape(3, 2, Schedule::OneFOneB, {0, 0, 0, 0}));
  // 2*S*M compute + 2*(S-1)*M transfers + S all-reduces.
  EXPECT_EQ(t.events.size(), 2u * 3 * 2 + 2u * 2 * 2 + 3);
  EXPECT_DOUBLE_EQ(t.makespan, 0);
  EXPECT_TRUE(std::is_sorted(t.events.begin(), t.events.end(), event_less));
}

TEST(Simulate, RejectsMeaninglessShapes) {
  PipelineShape empty;
  EXPECT_THROW(simulate(empty), InputError);
  PipelineShape no_micro = uniform_shape(2, 0, Schedule::GPipe, {1, 1, 0, 0});
  EXPECT_THROW(simulate(no_micro), InputError);
  for (double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    PipelineShape shape = uniform_shape(3, 2, Schedule::GPipe, {1, 1, 0, 0});
    shape.stages[1].backward = bad;
    EXPECT_THAT([&] { simulate(shape); }, ThrowsMessage<InputError>(HasSubstr("stage 1: backward")))
        << "backward " << bad;
  }
  PipelineShape huge = uniform_shape(1 << 14, 1 << 13, Schedule::GPipe, {1, 1, 0, 0});
  EXPECT_THROW(simulate(huge), InputError);
}

TEST(Simulate, EventKindNames) {
  EXPECT_EQ(to_string(EventKind::SendGradient), "send-gradient");
  EXPECT_EQ(to_string(EventKind::Filler), "filler");
  EXPECT_TRUE(uses_compute(EventKind::Filler));
  EXPECT_FALSE(uses_compute(EventKind::AllReduce));
}

}  // namespace
}  // namespace pe
