// The one-stage rule, computed by hand.
#include "cost/stage_samples.h"

#include <gtest/gtest.h>

namespace pe::detail {
namespace {

TEST(StageSamples, PipelineStageTimesAndKeepsItsPartOfEachMicroBatch) {
  // 10 samples over 4 devices: 3 on the busiest.
  const StageSamples s = stage_samples(false, 40, 10, 4, 4);
  EXPECT_DOUBLE_EQ(s.timed, 3);
  EXPECT_DOUBLE_EQ(s.memory, 3);
}

TEST(StageSamples, OneStageTimesItsShareOfTheIterationSpreadOverTheMicroSteps) {
  // A copy's share of 1009 on 16 devices: 64 samples on the busiest, in 11 micro-steps of
  // at most 92 / 16 -> 6 samples. The compute is 64 / 11 samples a micro-step, not 6.
  const StageSamples s = stage_samples(true, 1009, 92, 11, 16);
  EXPECT_DOUBLE_EQ(s.timed, 64.0 / 11);
  EXPECT_DOUBLE_EQ(s.memory, 6);
}

TEST(StageSamples, OneStageWiderThanTheMicroBatchStillHoldsASample) {
  // 3 micro-batches of 2 samples on 4 devices: 6 samples, 2 on the busiest over the
  // iteration (2 / 3 per micro-step), and a micro-step keeps one sample per device.
  const StageSamples s = stage_samples(true, 6, 2, 3, 4);
  EXPECT_DOUBLE_EQ(s.timed, 2.0 / 3);
  EXPECT_DOUBLE_EQ(s.memory, 1);
  // The same as a pipeline stage: ceil(2 / 4) = 1 sample, timed and kept.
  EXPECT_DOUBLE_EQ(stage_samples(false, 6, 2, 3, 4).timed, 1);
}

TEST(StageSamples, OneStageOfOneMicroBatchIsAPipelineStage) {
  const StageSamples one = stage_samples(true, 7, 7, 1, 2);
  const StageSamples pipe = stage_samples(false, 7, 7, 1, 2);
  EXPECT_DOUBLE_EQ(one.timed, 4);
  EXPECT_DOUBLE_EQ(one.timed, pipe.timed);
  EXPECT_DOUBLE_EQ(one.memory, pipe.memory);
}

TEST(MaxStageWidth, OneStageTakesEveryDevicePipelineStagesStopAtTheMicroBatch) {
  EXPECT_EQ(max_stage_width(true, 2, 8), 8);
  EXPECT_EQ(max_stage_width(false, 2, 8), 2);
  EXPECT_EQ(max_stage_width(false, 16, 8), 8);
  EXPECT_EQ(max_stage_width(true, 16, 8), 8);
}

}  // namespace
}  // namespace pe::detail
