// The path lower bound (cost/path_bound.h) against the event-driven simulator.
#include "cost/path_bound.h"

#include <gtest/gtest.h>

#include <random>

#include "cost/random_pipeline.h"
#include "pe/timeline.h"
#include "random_trials.h"

namespace pe {
namespace {

// `stages` equal 1F1B stages (f 1, g 2) with transfers of 0.1 between them.
PipelineShape equal_stages(int stages, int micro_batches) {
  PipelineShape shape{std::vector<StageTimes>(stages, {1, 2, 0.1, 0}), micro_batches,
                      Schedule::OneFOneB};
  shape.stages.back().send = 0;
  return shape;
}

// The 1F1B bound of the passes without last_pairs (the first closing passes).
Seconds bound_without_last_pairs(const PipelineShape& shape) {
  return detail::path_lower_bound(shape, {.last_pairs = false, .arrivals = false});
}

// A random pipeline of up to 24 micro-batches.
PipelineShape random_shape(std::mt19937& rng) { return testing::random_pipeline(rng, 24); }

TEST(PathBound, NeverAboveTheSimulationOnRandomPipelines) {
  std::mt19937 rng(2026);
  int tight = 0;
  const int trials = random_trials(20000);
  for (int trial = 0; trial < trials; ++trial) {
    const PipelineShape shape = random_shape(rng);
    const Seconds bound = detail::path_lower_bound(shape);
    const Seconds makespan = simulate(shape).makespan;
    ASSERT_EQ(simulated_makespan(shape), makespan) << "trial " << trial;
    ASSERT_LE(bound, makespan * (1 + 1e-12) + 1e-15)
        << "trial " << trial << ": " << shape.stages.size() << " stages, " << shape.micro_batches
        << " micro-batches, " << to_string(shape.schedule);
    if (bound >= makespan * (1 - 1e-9)) ++tight;
  }
  // The bound is a useful one: it meets the simulation on a good share of random pipelines
  // (about a fifth of these deliberately lopsided ones).
  EXPECT_GT(tight, trials / 8);
}

// GPipe's bound is its simulated time: every stage runs its forwards, then its backwards,
// so the longest chains are a forward wave on one stage or cut, a backward wave on one at
// or after the stage whose all-reduce (or the end) closes it, and round trips between,
// which the terms follow. Checked, not proven: the bound met the simulation on all 133,495
// GPipe pipelines of the 400,000 random ones of docs/timeline.md, and here on 20,000 more.
TEST(PathBound, GPipeBoundMeetsTheSimulationOnRandomPipelines) {
  std::mt19937 rng(20261127);
  for (int trial = 0; trial < 20000; ++trial) {
    PipelineShape shape = random_shape(rng);
    shape.schedule = Schedule::GPipe;
    const Seconds makespan = simulate(shape).makespan;
    ASSERT_NEAR(detail::path_lower_bound(shape), makespan, 1e-9 * makespan + 1e-15)
        << "trial " << trial << ": " << shape.stages.size() << " stages, " << shape.micro_batches
        << " micro-batches";
  }
}

// S equal stages without transfers: (M + S - 1)(f + g) for both schedules, met exactly.
TEST(PathBound, EqualStagesAreTight) {
  for (Schedule schedule : {Schedule::OneFOneB, Schedule::GPipe})
    for (int stages = 1; stages <= 6; ++stages)
      for (int m = 1; m <= 10; ++m) {
        PipelineShape shape{std::vector<StageTimes>(stages, {0.3, 0.7, 0, 0}), m, schedule};
        EXPECT_NEAR(detail::path_lower_bound(shape), (m + stages - 1) * 1.0, 1e-12);
      }
}

// Two stages, the first the bottleneck (f = g = 1), the second half as long: the first
// stage never waits after its warm-up, so 1F1B takes 2M; the bound finds that path (A).
TEST(PathBound, SlowFirstStageUsesItsOwnOperations) {
  for (int m = 2; m <= 8; ++m) {
    PipelineShape shape{{{1, 1, 0, 0}, {0.5, 0.5, 0, 0}}, m, Schedule::OneFOneB};
    EXPECT_NEAR(simulate(shape).makespan, 2.0 * m, 1e-12);
    EXPECT_NEAR(detail::path_lower_bound(shape), 2.0 * m, 1e-12);
  }
}

// A link slower than both stages: M transfers one after another (C).
TEST(PathBound, ASlowLinkBoundsTheIteration) {
  PipelineShape shape{{{0.1, 0.1, 1, 0}, {0.1, 0.1, 0, 0}}, 5, Schedule::OneFOneB};
  const Seconds fill_drain = 0.4 + 2;
  EXPECT_GE(detail::path_lower_bound(shape), fill_drain + 4 * 1 - 1e-12);
  EXPECT_LE(detail::path_lower_bound(shape), simulate(shape).makespan + 1e-12);
}

// 1F1B, a slow link after a stage that all-reduces (VGG-19's convolutions on 48 GPUs in
// front of its fully connected layers on 8, on 8 machines): stage 1 waits for its three
// warm-up forwards, which the link delivers one after another (late), then the link carries
// the four gradients back one after another (L), and only then does stage 0 run its last
// backward and its all-reduce. The bound without those two stayed 18 % below (114.7 ms
// against 139.2 ms for these times).
TEST(PathBound, TheLinkCarriesTheWarmUpAndEveryGradientBeforeTheLastBackward) {
  PipelineShape shape{
      {{4.4, 8.9, 12, 41}, {0.2, 0.5, 2, 27}, {0.15, 0.3, 0.02, 4.8}, {0.01, 0.2, 0, 0}},
      4,
      Schedule::OneFOneB};
  const Seconds third_arrives = 4.4 + 3 * 12;  // at stage 1, which then runs it and a backward
  EXPECT_NEAR(simulate(shape).makespan, third_arrives + 0.2 + 0.5 + 4 * 12 + 8.9 + 41, 1e-9);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-9);
}

// 1F1B, two stages and a link slower than either (VGG-19 at GBS 512 on 256 GPUs: its
// convolutions on 128 GPUs in front of the fully connected layers on 8, 4 micro-batches of
// 128 whose activations cross machines in 12 ms). Stage 0's third forward waits for the
// backward of micro-batch 0, whose gradient came back over the link; that forward's round
// trip ends in the backward of micro-batch 2, and micro-batch 3's gradient follows micro-batch
// 2's over the link (A''): two round trips and one transfer, then stage 0's last backward and
// its all-reduce. Without that path the bound was 4.6 % below (113.1 ms against 118.5).
TEST(PathBound, RoundTripsThenTheLinkCarriesTheGradientsAfterThem) {
  PipelineShape shape{{{1.481, 2.963, 12, 47.626}, {0.305, 0.7, 0, 32.466}}, 4, Schedule::OneFOneB};
  const Seconds round_trip = 1.481 + 12 + 0.305 + 0.7 + 12 + 2.963;
  EXPECT_NEAR(simulate(shape).makespan, 2 * round_trip + 12 + 47.626, 1e-9);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-9);
}

// The same with window cycles in place of the round trips (VGG-19 at GBS 896 on 8 machines of 8
// GPUs, stages of 56, 6, 1 and 1 GPUs, 16 micro-batches of 56, the first cut across machines):
// after the first backward, stage 0's forwards cycle through stages 0 and 1 (two micro-batches
// a cycle), and once the last cycle's backward on stage 1 is done the link carries the
// gradients of the micro-batches after it one after another. Without that path the bound
// was 3.8 % below the simulated time (174.06 ms against 180.92).
TEST(PathBound, WindowCyclesThenTheLinkCarriesTheGradientsAfterThem) {
  PipelineShape shape{{{1.481, 2.963, 5.25, 47.115},
                       {0.141, 0.281, 0.035, 26.134},
                       {0.263, 0.525, 0.009, 0},
                       {0.018, 0.35, 0, 0}},
                      16,
                      Schedule::OneFOneB};
  const Seconds cycle = 1.481 + 5.25 + 0.141 + 0.281 + 5.25 + 2.963;  // stages 0 and 1
  const Seconds makespan = simulate(shape).makespan;
  EXPECT_GT(makespan, 6 * cycle + 3 * 5.25 + 47.115);  // the path with the first round trip
  EXPECT_NEAR(detail::path_lower_bound(shape), makespan, 1e-9);
}

// The all-reduce of the first stage starts after its last backward.
TEST(PathBound, CountsTheAllReduceAfterTheLastBackward) {
  PipelineShape shape{{{1, 1, 0, 5}}, 3, Schedule::OneFOneB};
  EXPECT_NEAR(detail::path_lower_bound(shape), 3 * 2 + 5, 1e-12);
  EXPECT_NEAR(simulate(shape).makespan, 11, 1e-12);
}

// A slow first stage paces the all-reduce of a later one: the later stage's last backward
// comes only after the first stage's last forward (Q) and the last micro-batch's round trip
// (GPipe: and the later stage's M backwards).
TEST(PathBound, AnEarlierStagePacesALaterAllReduce) {
  for (Schedule schedule : {Schedule::OneFOneB, Schedule::GPipe}) {
    PipelineShape shape{{{1, 2, 0, 0}, {0.1, 0.1, 0, 10}}, 4, schedule};
    EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12)
        << to_string(schedule);
  }
}

// Micro-batch 0's gradient reaches stage 0 only after stage 1 has run its warm-up forwards,
// the last of them sent by stage 0 over a slow link.
TEST(PathBound, TheNextStagesWarmUpDelaysTheFirstBackward) {
  PipelineShape shape{{{2, 4, 2, 0.5}, {0.4, 0.8, 0, 0}, {0.1, 0.1, 0, 0}}, 3, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 2 * 2 + 2 + 0.4 + 0.8 + 2 + 3 * 4 + 0.5, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
}

// GPipe: every stage runs its M forwards before its first backward, so the slowest stage's
// M forwards and M backwards lie on one path with the round trip between them.
TEST(PathBound, GPipeStageRunsAllForwardsBeforeItsBackwards) {
  PipelineShape shape{{{1, 2, 0.5, 3}, {0.2, 0.4, 0, 0}}, 8, Schedule::GPipe};
  EXPECT_NEAR(simulate(shape).makespan, 8 * 1 + 0.5 + 0.2 + 0.4 + 0.5 + 8 * 2 + 3, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
}

// GPipe: a stage's last backward waits for the forward wave of the slowest stage and the
// backward wave of the slowest stage after it, so both pace its all-reduce: stage 1's 4
// forwards and 4 backwards come before stage 0's last backward and its all-reduce of 5 (a
// bound without the waves in front of an all-reduce stops at 12.2).
TEST(PathBound, GPipeWavesPaceEveryAllReduce) {
  PipelineShape shape{{{0.1, 0.1, 0, 5}, {1, 2, 0, 0}}, 4, Schedule::GPipe};
  EXPECT_NEAR(simulate(shape).makespan, 0.1 + 4 * 1 + 4 * 2 + 0.1 + 5, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
  // The wave may also lie in front of the stage: a slow forward on stage 0, then stage 1's
  // backwards before its all-reduce.
  PipelineShape front{{{1, 0.1, 0, 0}, {0.1, 2, 0, 5}}, 4, Schedule::GPipe};
  EXPECT_NEAR(detail::path_lower_bound(front), simulate(front).makespan, 1e-12);
}

// 1F1B, three heavy stages joined by slow links in front of a light one: after micro-batch
// 0's round trip, stage 0's chain cycles through the window of the first three stages
// (forward on each, the third's next operation an older backward, back to stage 0, whose
// next is the forward three micro-batches on), each cycle C_3 = 3 (1 + 2) + 2 (1 + 1) = 13,
// slower per micro-batch than a whole round trip (13.02 for four). With M = 12 and k = 4:
// R_0 + R_0 + 2 C_3 + 1 (f + g) = 13.02 + 13.02 + 26 + 3 (R), and micro-batch 0's backward
// comes 0.98 late: stage 2 runs two warm-up forwards, the second one forward of stage 0
// after the first (late = 1 + 3 - R_2). The same cycles can start from stage 0's late first
// backward (Z): three of them, then its last two backwards (2 each): 13.02 + 0.98 + 39 + 4 =
// 57. The last micro-batch's round trip after the two cycles and the pair may also stay on
// stage 2 for the two backwards it runs after its last forward (last_drain: 4 instead of 2 +
// the last stage's 0.02): 13.02 + 0.98 + 26 + 3 + 13.02 + 1.98 = 58, the bound and the
// simulation (57 without last_pairs). Without the window fields, the longest chain is
// stage 1's (Z): from its late first backward, five cycles through stage 2 (f + g + 2 c +
// stage 2's f + g = 8), then its last backward (2): 13.02 + 0.98 + 42 = 56.
TEST(PathBound, OneFOneBCyclesThroughAWindowOfStages) {
  PipelineShape shape{
      {{1, 2, 1, 0}, {1, 2, 1, 0}, {1, 2, 0, 0}, {0.01, 0.01, 0, 0}}, 12, Schedule::OneFOneB};
  EXPECT_GE(detail::path_lower_bound(shape), 13.02 + 0.98 + 13.02 + 26 + 3 - 1e-9);
  EXPECT_NEAR(bound_without_last_pairs(shape), 13.02 + 0.98 + 3 * 13 + 2 * 2, 1e-9);
  EXPECT_NEAR(detail::path_lower_bound(shape), 13.02 + 0.98 + 26 + 3 + 13.02 + 1.98, 1e-9);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-9);
  EXPECT_NEAR(detail::path_lower_bound(shape, {.windows = false}), 13.02 + 0.98 + 5 * 8 + 2, 1e-9);
}

// Equal stages with transfers, more micro-batches than stages: the first stage's backwards
// are paced by round trips (A'), and the micro-batches left over by its own f + g; the
// bound comes within 0.2 % of the simulation (0.9 % below it while the left-over
// micro-batches counted their backwards only).
TEST(PathBound, RoundTripsPaceTheFirstStage) {
  PipelineShape shape{std::vector<StageTimes>(8, {0.6, 1.0, 0.01, 0}), 32, Schedule::OneFOneB};
  shape.stages.back().send = 0;
  const Seconds makespan = simulate(shape).makespan;
  EXPECT_LE(detail::path_lower_bound(shape), makespan + 1e-12);
  EXPECT_GE(detail::path_lower_bound(shape), makespan * 0.998);
}

// The last micro-batch leaves stage 0 only after the slow link has carried the others, and
// only after the round trips that unlock stage 0's last forward: both pace stage 1's
// all-reduce.
TEST(PathBound, LinksAndRoundTripsPaceALaterAllReduce) {
  // The link's four transfers, then the last micro-batch on stage 1, then its all-reduce
  // (the simulation, 9.7, also waits for a round trip between the transfers).
  PipelineShape link{{{0.1, 0.1, 1, 0}, {0.1, 0.1, 0, 5}}, 4, Schedule::OneFOneB};
  EXPECT_NEAR(detail::path_lower_bound(link), 0.1 + 4 * 1 + 0.1 + 0.1 + 5, 1e-12);
  EXPECT_LE(detail::path_lower_bound(link), simulate(link).makespan);
  PipelineShape trips{{{1, 1, 1, 0}, {1, 1, 0, 10}}, 6, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(trips).makespan, 2 * 6 + 2 + 1 + 1 + 1 + 1 + 10, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(trips), simulate(trips).makespan, 1e-12);
}

// Stage 0 of four equal stages with transfers runs its forwards 4 .. 11 through a mix of
// cycles: one round trip through all four stages (4 forwards on, 12.6) and one through a
// window of three (3 forwards on, 9.4), which beats either cycle alone with pairs of f + g
// (3 each) for the rest: 1 + 0.6 + 0.4 more than the pairs, where round trips alone gave
// 0.6 and windows of three alone 0.8. The simulator takes that path: the bound meets it.
TEST(PathBound, MixesRoundTripsAndWindowCycles) {
  const PipelineShape shape = equal_stages(4, 12);
  const Seconds round_trip = 4 * 3 + 6 * 0.1;
  EXPECT_NEAR(detail::path_lower_bound(shape), 2 * round_trip + 7 * 3 + 1.0, 1e-9);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-9);
}

// After micro-batch 0's round trip, stage 0 of seven equal stages moves from its forward 7
// to its last, 13, by one cycle through the window of the six stages in front of the last,
// longer than six pairs (f + g) by the ten transfers inside it (1.0), and the last
// micro-batch's round trip follows. A window of at most five stages (the window fields) and
// a pair gain 0.8. BERT-48's best plan at GBS 320 on 2 x 8 GPUs (8 stages, 160
// micro-batches) takes such a path: 19 round trips and the window of all stages but the last
// once.
TEST(PathBound, MixesRoundTripsWithTheWindowOfAllButTheLastStage) {
  const PipelineShape shape = equal_stages(7, 14);
  const Seconds round_trip = 7 * 3 + 12 * 0.1;
  EXPECT_NEAR(detail::path_lower_bound(shape), 2 * round_trip + 6 * 3 + 1.0, 1e-9);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-9);
  // Without last_pairs (the first closing passes) the tail window stays out.
  EXPECT_NEAR(bound_without_last_pairs(shape), 2 * round_trip + 6 * 3 + 0.8, 1e-9);
}

// Stage 1 of four runs three warm-up forwards; the third leaves stage 0 (1 a forward) at
// 3 and reaches stage 1 at 3.1, long after micro-batch 0's gradient (1.4). Its first
// backward ends at 4.1, its other operations take 3 g + f = 3.1 more, and the last
// gradient passes stage 0: 7.3, the simulated time. The late first backward delayed only
// stage 0's own operations before (5.7).
TEST(PathBound, TheNextStagesLateFirstBackwardDelaysItsOwnOperations) {
  PipelineShape shape{
      {{1, 0.1, 0, 0}, {0.1, 1, 0, 0}, {0.1, 0.1, 0, 0}, {0.1, 0.1, 0, 0}}, 4, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 3.1 + 1 + 3.1 + 0.1, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
}

// Stage 0 of two has no work and a slow link (1 each way); stage 1 takes 1 a micro-batch.
// Stage 0 starts forward m + 2 only after the backward of m: micro-batch 0's round trip (3),
// then those of forwards 2 and 4 (3 each), then forward 6's, in which stage 1 runs forward
// 6, backward 6, forward 7 and backward 7 (one pair more: 1) before the last gradient comes
// back: 13, the simulated time. With stage 0's own pairs (0 each) for the micro-batch left
// the bound stayed at 12 (the last round trip as a cycle of its own, once more).
TEST(PathBound, AChainOfRoundTripsEndsWithTheLastStagesPairs) {
  PipelineShape shape{{{0, 0, 1, 0}, {0.5, 0.5, 0, 0}}, 8, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 3 + 2 * 3 + 3 + 1, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
}

// Stage 1's first backward ends at 9 (its second warm-up forward leaves stage 0 after two
// forwards of 3). It then runs its last forward (2) and its second backward (1), and stage 0
// runs its last two backwards (2 each) after that: 9 + 3 + 4 = 16, the simulated time.
// Stage 0's own backwards from its first (A) and stage 1's operations (its own A) each end
// a path of 15.
TEST(PathBound, AStageHandsItsLaterBackwardsToTheStageInFront) {
  PipelineShape shape{{{3, 2, 0, 0}, {2, 1, 0, 0}, {0, 1, 0, 0}}, 3, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 9 + 2 + 1 + 2 * 2, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
  // The search's first exact passes (no window fields) have it too.
  EXPECT_NEAR(detail::path_lower_bound(shape, {.windows = false}), simulate(shape).makespan, 1e-12);
}

// A stage's own warm-up delays its first backward: stage 2's two forwards (2 each) end at
// 1 + 4 = 5, one later than micro-batch 0's round trip would have its first backward end.
// The gradient passes stage 1 at once, and stage 0 runs its two backwards (2 each): 9, the
// simulated time. Before, the bound followed only the pace of the stage in front of a
// warm-up: 8.
TEST(PathBound, AStagesOwnWarmUpDelaysItsFirstBackward) {
  PipelineShape shape{
      {{0, 2, 0, 0}, {1, 0, 0, 0}, {2, 0, 0, 0}, {1, 0, 0, 0}}, 2, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 1 + 2 * 2 + 2 * 2, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
  // Without the window fields the delay reaches only the stage in front (`delayed` is 0).
  EXPECT_NEAR(detail::path_lower_bound(shape, {.windows = false}), 8, 1e-12);
}

// Stage 0's first backward ends at 11, after its three warm-up forwards (3 each). Its next
// forward (3) goes on to stage 1, which runs it (2) and then its next backward, of
// micro-batch 2 (1); stage 0 then runs its last two backwards (2 each): 21, the simulated
// time. Stage 0's second backward is not on that path. Before, the bound followed that
// cycle only up to a round trip of the last micro-batch (P): 20.
TEST(PathBound, AStagesFirstBackwardIsFollowedByCyclesThroughTheNextStage) {
  PipelineShape shape{{{3, 2, 0, 0}, {2, 1, 0, 0}, {0, 0, 0, 0}}, 4, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 3 * 3 + 2 + 3 + 2 + 1 + 2 * 2, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape, {.windows = false}), simulate(shape).makespan, 1e-12);
}

// After micro-batch 0's round trip (11), stage 0 moves from its forward 3 to its last, 6: a
// cycle through stages 0 and 1 (9, two forwards on), then the last micro-batch's round trip,
// which stays on stage 1 for one pair (its f + g, 4, more than stage 0's 3 or the last
// stage's 0): 11 + 9 + 4 + 11 = 35, the simulated time. With the pairs on stage 0 or the
// last stage only, the bound was 34.
TEST(PathBound, TheLastRoundTripTakesItsPairsOnItsSlowestStage) {
  PipelineShape shape{{{1, 2, 1, 0}, {2, 2, 1, 0}, {0, 0, 0, 0}}, 7, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 11 + 9 + 4 + 11, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
}

// Stage 0 (f + g = 4) runs the pairs: micro-batch 0's round trip (7.3) ends 1.8 late
// (stage 1's second warm-up forward follows stage 0's, 2 + 3.1 - 3.3), then four pairs take
// stage 0 to its last forward, whose round trip stays on stage 1 for the two backwards it runs
// after that forward (3 more than stage 2's round trip, 0.2): 7.3 + 1.8 + 16 + 7.3 + 2.8 =
// 35.2, the simulated time. A round trip that went on to the last stage gave 34.2.
TEST(PathBound, TheLastRoundTripStaysOnALaterStageForItsLastBackwards) {
  PipelineShape shape{{{2, 2, 0, 0}, {0.1, 3, 0, 0}, {0.1, 0.1, 0, 0}}, 8, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 7.3 + 1.8 + 16 + 7.3 + 2.8, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
  EXPECT_NEAR(bound_without_last_pairs(shape), 34.2, 1e-12);
}

// Stage 1's all-reduce (10) follows its last backward, which the cycles through both stages
// reach: micro-batch 0 to stage 1 and back (2 + 0.5 + 2.7 + 0.5), micro-batch 2 to stage 1
// (2 + 0.5 + 2.7), then stage 1's own last forward (2.7; the backwards take no time): 23.6,
// the simulated time. Stage 0's round trips paced only its own all-reduce before: 23.3.
TEST(PathBound, ALaterStagesAllReduceFollowsTheRoundTripsInFront) {
  PipelineShape shape{{{2, 0, 0.5, 0}, {2.7, 0, 0, 10}}, 4, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 5.7 + 5.2 + 2.7 + 10, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
}

// Stage 0's first backward ends at 12. Its next forward (0) starts a cycle through the window
// of stages 0 to 2: the transfers (1 each way), stage 1's forward (2), stage 2's next
// operation, the backward of micro-batch 3 (2), and stage 0's backward of it (2): 10. Then
// stage 0's last two backwards (2 each): 26, the simulated time. With cycles through stages
// 0 and 1 only (P's), the bound was 24.
TEST(PathBound, AFirstBackwardIsFollowedByCyclesThroughAWindow) {
  PipelineShape shape{
      {{0, 2, 1, 0}, {2, 0, 1, 0}, {0, 2, 0, 0}, {0, 0, 0, 0}}, 6, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 12 + 10 + 2 * 2, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape, {.windows = false}), 24, 1e-12);
}

// Stage 0's first backward ends at 11 (stage 1's second warm-up forward follows stage 0's
// second forward, 2 each). Then a pair (stage 0's forward of micro-batch 3 and backward of 1:
// 5), the cycle through stages 0 and 1 (the forward of 4 on both, the backward of 3 on both:
// 9) and stage 0's last backward (3): 28, the simulated time. With the cycles first and the
// pairs after them only, the bound was 27.
TEST(PathBound, PairsComeBeforeTheCyclesAfterAFirstBackward) {
  PipelineShape shape{{{2, 3, 0, 0}, {1, 3, 0, 0}, {1, 0, 0, 0}}, 5, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 11 + 5 + 9 + 3, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
}

// Stage 2's second warm-up forward leaves stage 0 a forward (2) after the first and crosses
// the link (1), so stage 2's first backward ends at 9. Its operations after it (four
// backwards of 3, three forwards of 1) end at 24; the gradient then passes stage 1 (2), the
// link (1) and stage 0 (2): 29, the simulated time. Following the operations of the next
// stage only after its paced first backward (the passes without last_pairs), the bound is 28.
TEST(PathBound, ALaterStageThanTheNextRunsItsOperationsAfterItsPacedFirstBackward) {
  PipelineShape shape{
      {{2, 2, 1, 0}, {0, 2, 0, 0}, {1, 3, 0, 0}, {0, 1, 0, 0}}, 5, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 9 + 15 + 2 + 1 + 2, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
  EXPECT_NEAR(bound_without_last_pairs(shape), 28, 1e-12);
}

// A stage paces the warm-up of every later stage, not only the next one's. Stage 2 of four
// runs two warm-up forwards; the second leaves stage 0 one forward (1) after the first and
// reaches stage 2 at 2.1, then runs (1) and stage 2's first backward (1) follows; the
// gradient passes stage 1 (0.1) and stage 0 runs its four backwards (2 each): 12.2, the
// simulated time. Paced by stage 1 alone (0.1 a forward) the bound stayed at M (f + g) = 12.
TEST(PathBound, AStagePacesTheWarmUpOfLaterStagesThanTheNext) {
  PipelineShape shape{
      {{1, 2, 0, 0}, {0.1, 0.1, 0, 0}, {1, 1, 0, 0}, {0.1, 0.1, 0, 0}}, 4, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 2.1 + 1 + 1 + 0.1 + 4 * 2, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-12);
  // Without the window fields (the search's first exact passes), only the next stage's.
  EXPECT_NEAR(detail::path_lower_bound(shape, {.windows = false}), 12, 1e-12);
}

// Stage 1 is busy for all its M forwards and backwards (B), and stage 0's last backward
// comes after stage 1's, so stage 0's all-reduce starts no earlier: round trip 2.2, then
// 8 - 2 of stage 1's work beyond it, then the all-reduce of 10. Without `paced` and
// `windows` (the greedy passes' bound), stage 0's all-reduce follows only stage 0's own
// terms and no chain of stage 0 stays on stage 1: 14.6.
TEST(PathBound, ALaterStagesWorkPacesAnEarlierAllReduce) {
  PipelineShape shape{{{0.1, 0.1, 0, 10}, {1, 1, 0, 0}}, 4, Schedule::OneFOneB};
  EXPECT_NEAR(detail::path_lower_bound(shape), 2.2 + 6 + 10, 1e-9);
  EXPECT_NEAR(detail::path_lower_bound(shape), simulate(shape).makespan, 1e-9);
  const detail::SuffixBound last =
      detail::prepend_stage(shape.stages[1], 0, nullptr, 4, Schedule::OneFOneB, {.windows = false});
  const detail::SuffixBound unpaced = detail::prepend_stage(
      shape.stages[0], 0, &last, 4, Schedule::OneFOneB, {.windows = false, .paced = false});
  EXPECT_NEAR(detail::bound_of(unpaced), 14.6, 1e-9);
}

// D: a later stage delays micro-batch 2's backward, and an earlier stage runs its backwards
// left after it. Stage 2 (f 3, g 2) ends its first backward at 11 (its warm-up's second
// forward held it 1), then alternates a forward and a backward: micro-batch 2's backward
// ends at 21, D_2(2) = 11 after micro-batch 0's round trip. Its gradient keeps that delay
// to stage 0 (all forwards first, g 3), whose backward of 2 ends at 15 + 11 = 26, then that
// of 3: 29, the simulated time. Without the arrivals the bound is 28.
TEST(PathBound, ADelayedGradientIsFollowedByTheBackwardsLeft) {
  const PipelineShape shape{
      {{1, 3, 1, 0}, {0, 0, 1, 0}, {3, 2, 0, 0}, {2, 0, 0, 0}}, 4, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 29, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), 29, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape, {.arrivals = false}), 28, 1e-12);
}

// F: stage 0 (no work, a link of 1) runs three warm-up forwards, and the forward of
// micro-batch 3 only after micro-batch 0's backward there, which ends at 4.1 (its round trip
// of 3.1, 1 late: stage 1's first backward waits for micro-batch 1 over the link). Micro-batch
// 3 then crosses the link (1) to stage 1 (f 0.1, g 1), which runs its forward and its last
// two backwards (2.1) before its all-reduce (5): 12.2, the simulated time. Without the
// forwards' paths the bound is 11.2.
TEST(PathBound, ALateForwardDelaysALaterStagesLastBackwardsAndAllReduce) {
  const PipelineShape shape{{{0, 0, 1, 0}, {0.1, 1, 0, 5}, {0, 0, 0, 0}}, 4, Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 12.2, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), 12.2, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape, {.forwards = false}), 11.2, 1e-12);
}

// F': stage 0's link (1) carries micro-batches 0, 1 and 2 one after another, so micro-batch 2
// reaches stage 2 (f 0.1, g 1, warm-up 3) at 3; from its forward on, stage 2 runs its six
// forwards left (0.6) and all eight backwards (8), then its all-reduce (5): 16.6, the
// simulated time. Without the forwards' paths the bound is 14.8.
TEST(PathBound, AnEarlierLinkDelaysALaterStagesOperationsAndAllReduce) {
  const PipelineShape shape{
      {{0, 0, 1, 0}, {0, 0, 0, 0}, {0.1, 1, 0, 5}, {0, 0, 0, 0}, {0, 0, 0, 0}},
      8,
      Schedule::OneFOneB};
  EXPECT_NEAR(simulate(shape).makespan, 16.6, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape), 16.6, 1e-12);
  EXPECT_NEAR(detail::path_lower_bound(shape, {.forwards = false}), 14.8, 1e-12);
}

// stage_terms, which the search uses to drop a stage before building its suffix, is never
// above the worst term of the suffix prepend_stage builds, nor, with the stage's all-reduce,
// its all-reduce term; with every set of terms (each off leaves fields at 0). The check is
// not vacuous: the terms are positive on most stages.
TEST(PathBound, AStagesOwnTermsNeverExceedItsSuffixTerms) {
  std::mt19937 rng(20261204);
  const detail::BoundTerms each[] = {{},
                                     {.windows = false},
                                     {.paced = false},
                                     {.windows = false, .paced = false},
                                     {.last_pairs = false, .arrivals = false}};
  int positive = 0;
  const int trials = random_trials(5000);
  for (int trial = 0; trial < trials; ++trial) {
    const PipelineShape shape = random_shape(rng);
    const int stages = static_cast<int>(shape.stages.size());
    for (const detail::BoundTerms& terms : each) {
      detail::SuffixBound suffix;
      for (int b = stages - 1; b >= 0; --b) {
        const StageTimes& t = shape.stages[b];
        const Seconds send = b + 1 < stages ? t.send : 0;
        const detail::SuffixBound* next = b + 1 < stages ? &suffix : nullptr;
        const detail::SuffixBound built =
            detail::prepend_stage(t, send, next, shape.micro_batches, shape.schedule, terms);
        const Seconds own = detail::stage_terms(t, send, built.stages, built.round_trip,
                                                shape.micro_batches, shape.schedule);
        ASSERT_LE(own, built.worst) << "trial " << trial << ", stage " << b;
        ASSERT_LE(own + t.allreduce, built.exposed) << "trial " << trial << ", stage " << b;
        if (own > 0) ++positive;
        suffix = built;
      }
    }
  }
  EXPECT_GT(positive, trials);
}

}  // namespace
}  // namespace pe
