// The interleaved 1F1B schedule: its operation order, the simulator's timelines of it, its
// memory and its lower bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <tuple>

#include "cost/path_bound.h"
#include "pe/error.h"
#include "pe/timeline.h"
#include "random_trials.h"

namespace pe {
namespace {

PipelineShape uniform(int groups, int chunks, int micro_batches, StageTimes times) {
  PipelineShape shape;
  shape.schedule = chunks > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
  shape.chunks = chunks;
  shape.micro_batches = micro_batches;
  shape.stages.assign(static_cast<std::size_t>(groups * chunks), times);
  shape.stages.back().send = 0;
  return shape;
}

TEST(InterleavedOrder, EveryOperationOnceAndEachBackwardAfterItsForward) {
  for (int p : {2, 3, 4})
    for (int v : {2, 3})
      for (int m = p; m <= 3 * p; m += p)
        for (int d = 0; d < p; ++d) {
          std::map<std::tuple<bool, int, int>, int> at;
          for (int i = 0; i < 2 * m * v; ++i) {
            const ScheduledOp op = scheduled_op(Schedule::Interleaved, i, d, p, v, m);
            ASSERT_GE(op.micro_batch, 0);
            ASSERT_LT(op.micro_batch, m);
            ASSERT_GE(op.chunk, 0);
            ASSERT_LT(op.chunk, v);
            EXPECT_TRUE(
                at.emplace(std::make_tuple(op.forward, op.chunk, op.micro_batch), i).second);
          }
          for (int c = 0; c < v; ++c)
            for (int b = 0; b < m; ++b)
              EXPECT_LT((at[{true, c, b}]), (at[{false, c, b}])) << p << " " << v << " " << d;
        }
}

TEST(InterleavedOrder, FollowsMegatronsRounds) {
  // p = 2, v = 2, M = 4, group 0: warm-up 2 (p - 1) + (v - 1) p + 1 = 5 forwards
  // (chunk 0: micro-batches 0, 1; chunk 1: 0, 1; chunk 0: 2), then backward, forward, ...
  const std::vector<std::tuple<bool, int, int>> expected = {
      {true, 0, 0},  {true, 0, 1},  {true, 1, 0},  {true, 1, 1},  {true, 0, 2}, {false, 1, 0},
      {true, 0, 3},  {false, 1, 1}, {true, 1, 2},  {false, 0, 0}, {true, 1, 3}, {false, 0, 1},
      {false, 1, 2}, {false, 1, 3}, {false, 0, 2}, {false, 0, 3}};
  for (int i = 0; i < 16; ++i) {
    const ScheduledOp op = scheduled_op(Schedule::Interleaved, i, 0, 2, 2, 4);
    EXPECT_EQ(std::make_tuple(op.forward, op.chunk, op.micro_batch), expected[i]) << i;
  }
}

TEST(InterleavedOrder, OneChunkIsTheClassicOrder) {
  // 1F1B, group 1 of 4, M = 5: min(M, p - d) = 3 warm-up forwards, then backward, forward.
  const std::string one_f_one_b = "F0F1F2B0F3B1F4B2B3B4";
  const std::string gpipe = "F0F1F2F3F4B0B1B2B3B4";
  for (Schedule s : {Schedule::OneFOneB, Schedule::GPipe}) {
    std::string order;
    for (int i = 0; i < 10; ++i) {
      const ScheduledOp op = scheduled_op(s, i, 1, 4, 1, 5);
      EXPECT_EQ(op.chunk, 0);
      order += (op.forward ? "F" : "B") + std::to_string(op.micro_batch);
    }
    EXPECT_EQ(order, s == Schedule::GPipe ? gpipe : one_f_one_b);
  }
}

TEST(InterleavedSimulation, BubbleShrinksByTheChunkCount) {
  // Chunk f = 1, g = 2, no transfers: each group works M v (f + g), and the pipeline fills
  // and drains in (p - 1) (f + g) instead of (p - 1) v (f + g) (Narayanan et al., SC'21).
  const PipelineShape shape = uniform(4, 2, 8, {1, 2, 0, 0});
  EXPECT_DOUBLE_EQ(simulated_makespan(shape), 8 * 2 * 3 + 3 * 3);
  EXPECT_DOUBLE_EQ(detail::path_lower_bound(shape), 8 * 2 * 3 + 3 * 3);
  // The same model in 4 stages of twice the work under 1F1B: (M + p - 1) (2f + 2g).
  EXPECT_DOUBLE_EQ(simulated_makespan(uniform(4, 1, 8, {2, 4, 0, 0})), (8 + 3) * 6);
}

TEST(InterleavedSimulation, TimelineRowsAreDeviceGroupsAndChunksAreLabelled) {
  PipelineShape shape = uniform(3, 2, 6, {1, 2, 0.5, 0.25});
  const Timeline t = simulate(shape);
  EXPECT_EQ(t.stage_count, 3);
  EXPECT_DOUBLE_EQ(t.makespan, simulated_makespan(shape));
  std::map<std::tuple<int, int, int>, const Event*> forward, backward;
  for (const Event& e : t.events) {
    if (e.kind == EventKind::Forward) forward[{e.stage, e.chunk, e.micro_batch}] = &e;
    if (e.kind == EventKind::Backward) backward[{e.stage, e.chunk, e.micro_batch}] = &e;
  }
  EXPECT_EQ(forward.size(), 3u * 2 * 6);
  EXPECT_EQ(backward.size(), 3u * 2 * 6);
  // Stage j = chunk x 3 + group: the forward of stage j + 1 waits for stage j's and its send.
  for (int j = 0; j + 1 < 6; ++j)
    for (int m = 0; m < 6; ++m) {
      const Event* a = forward[{j % 3, j / 3, m}];
      const Event* b = forward[{(j + 1) % 3, (j + 1) / 3, m}];
      EXPECT_GE(b->start, a->end + 0.5 - 1e-12);
    }
  // Compute on one group never overlaps, and events are in canonical order.
  EXPECT_TRUE(std::is_sorted(t.events.begin(), t.events.end(), event_less));
  for (std::size_t i = 1; i < t.events.size(); ++i) {
    const Event& a = t.events[i - 1];
    if (!uses_compute(a.kind)) continue;
    for (std::size_t k = i; k < t.events.size() && t.events[k].stage == a.stage; ++k)
      if (uses_compute(t.events[k].kind)) {
        EXPECT_GE(t.events[k].start, a.end - 1e-12);
        break;
      }
  }
}

TEST(InterleavedSimulation, LowerBoundNeverAboveTheSimulation) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> time(0.0, 3.0);
  for (int trial = 0; trial < random_trials(3000); ++trial) {
    const int p = 2 + static_cast<int>(rng() % 4), v = 2 + static_cast<int>(rng() % 3);
    PipelineShape shape;
    shape.schedule = Schedule::Interleaved;
    shape.chunks = v;
    shape.micro_batches = p * (1 + static_cast<int>(rng() % 3));
    for (int j = 0; j < p * v; ++j)
      shape.stages.push_back({time(rng), time(rng), time(rng) / 3, time(rng)});
    const Seconds simulated = simulated_makespan(shape);
    EXPECT_LE(detail::path_lower_bound(shape), simulated * (1 + 1e-12)) << trial;
    EXPECT_DOUBLE_EQ(simulate(shape).makespan, simulated);
  }
}

TEST(InterleavedMemory, MoreChunkActivationsInFlightThanOneFOneBsStages) {
  // p = 4, v = 2, M = 8: group 0 warms up with 2 x 3 + 4 + 1 = 11 chunk micro-batches, each
  // half a stage's activations: 5.5 stages' worth, against 1F1B's 4 (min(M, p)).
  EXPECT_DOUBLE_EQ(interleaved_activations(0, 4, 8, {0.5, 0.5}), 5.5);
  // The last group warms up with (v - 1) p + 1 = 5.
  EXPECT_DOUBLE_EQ(interleaved_activations(3, 4, 8, {0.5, 0.5}), 2.5);
  // Chunks of unequal size: group 1 of 2, M = 2 warms up with 3 forwards (chunk 0 twice,
  // chunk 1 once), then frees chunk 1's before its second forward: at most 1 + 1 + 10.
  EXPECT_DOUBLE_EQ(interleaved_activations(1, 2, 2, {1, 10}), 1 + 1 + 10);
}

TEST(InterleavedSimulation, BadShapesAreClearErrors) {
  PipelineShape shape = uniform(2, 2, 3, {1, 1, 0, 0});
  EXPECT_THROW(simulate(shape), InputError);  // M = 3 is not a multiple of p = 2
  shape.micro_batches = 4;
  EXPECT_NO_THROW(simulate(shape));
  shape.chunks = 1;
  EXPECT_THROW(simulate(shape), InputError);  // interleaved needs 2 chunks or more
  shape.chunks = 2;
  shape.schedule = Schedule::OneFOneB;
  EXPECT_THROW(simulate(shape), InputError);  // chunks only with interleaving
  shape = uniform(1, 2, 4, {1, 1, 0, 0});
  EXPECT_THROW(simulate(shape), InputError);  // one group
}

}  // namespace
}  // namespace pe
