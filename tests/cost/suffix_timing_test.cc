// The timing of a pipeline's suffix (cost/suffix_timing.h) against the event-driven
// simulator: composed stage by stage from the last, it gives the simulated makespan, and every
// suffix's map gives the simulated end of its first stage's backwards from the simulated
// arrivals of the activations.
#include "cost/suffix_timing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "cost/random_pipeline.h"
#include "pe/timeline.h"
#include "random_trials.h"

namespace pe {
namespace {

using detail::kTimedMicroBatches;
using detail::timing_entries;

// A random pipeline of at most kTimedMicroBatches micro-batches.
PipelineShape random_timed_shape(std::mt19937& rng) {
  return testing::random_pipeline(rng, kTimedMicroBatches);
}

// The timings of every suffix of `shape`, suffix b at [b].
std::vector<std::vector<Seconds>> all_suffix_timings(const PipelineShape& shape) {
  const int stages = static_cast<int>(shape.stages.size()), m = shape.micro_batches;
  std::vector<std::vector<Seconds>> timings(stages);
  for (int b = stages; b-- > 0;) {
    timings[b].resize(timing_entries(m));
    detail::prepend_timing(shape.stages[b], shape.stages[b].send,
                           b + 1 < stages ? timings[b + 1].data() : nullptr, m, shape.schedule,
                           stages - b, timings[b].data());
  }
  return timings;
}

// The time of the event of `kind` of micro-batch `micro_batch` on `stage`: its start, or
// with `end` its end.
Seconds timed_event_time(const Timeline& t, int stage, EventKind kind, int micro_batch, bool end) {
  for (const Event& e : t.events)
    if (e.stage == stage && e.kind == kind && e.micro_batch == micro_batch)
      return end ? e.end : e.start;
  ADD_FAILURE() << "no event";
  return 0;
}

// Whether the timing of the whole pipeline is its simulated makespan.
::testing::AssertionResult timed_as_simulated(const PipelineShape& shape) {
  const Seconds makespan = simulated_makespan(shape);
  const Seconds timed =
      detail::timed_makespan(all_suffix_timings(shape).front().data(), shape.micro_batches);
  if (std::abs(timed - makespan) <= makespan * 1e-12) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "timed " << timed << ", simulated " << makespan << ": " << shape.stages.size()
         << " stages, " << shape.micro_batches << " micro-batches, " << to_string(shape.schedule);
}

TEST(SuffixTiming, TheWholePipelinesTimingIsTheSimulatedMakespan) {
  std::mt19937 rng(20261201);
  for (int trial = 0; trial < random_trials(20000); ++trial)
    ASSERT_TRUE(timed_as_simulated(random_timed_shape(rng))) << "trial " << trial;
}

TEST(SuffixTiming, EverySuffixMapsTheArrivalsToItsFirstStagesBackwards) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < random_trials(2000); ++trial) {
    const PipelineShape shape = random_timed_shape(rng);
    const int stages = static_cast<int>(shape.stages.size()), m = shape.micro_batches;
    const Timeline t = simulate(shape);
    const std::vector<std::vector<Seconds>> timings = all_suffix_timings(shape);
    for (int b = 1; b < stages; ++b) {
      std::vector<Seconds> arrival(m);
      for (int j = 0; j < m; ++j)
        arrival[j] = timed_event_time(t, b - 1, EventKind::SendActivation, j, true);
      const std::vector<Seconds>& after = timings[b];
      for (int i = 0; i <= m; ++i) {
        Seconds end = 0;
        for (int j = 0; j < m; ++j) end = std::max(end, arrival[j] + after[i * m + j]);
        // Row m: the end of the suffix's last operation, its all-reduces included (each
        // transfer inside the suffix feeds one; the gradients to stage b - 1 leave it).
        Seconds expected = 0;
        if (i < m) {
          expected = timed_event_time(t, b, EventKind::Backward, i, true);
        } else {
          for (const Event& e : t.events)
            if (e.stage >= b && (e.kind == EventKind::Forward || e.kind == EventKind::Backward ||
                                 e.kind == EventKind::AllReduce))
              expected = std::max(expected, e.end);
        }
        ASSERT_NEAR(end, expected, std::max(expected, 1.0) * 1e-12)
            << "trial " << trial << ", suffix " << b << ", row " << i;
      }
    }
  }
}

// No larger in every entry, no later: a stage in front keeps the order, and with it the
// makespan (what lets a timed pass keep only the undominated suffixes).
TEST(SuffixTiming, AFasterSuffixNeverMakesThePipelineSlower) {
  std::mt19937 rng(11);
  int strictly = 0;
  for (int trial = 0; trial < random_trials(5000); ++trial) {
    PipelineShape slow = random_timed_shape(rng);
    if (slow.stages.size() < 2) continue;
    PipelineShape fast = slow;
    // Shorten some times of the stages after the first.
    for (std::size_t s = 1; s < fast.stages.size(); ++s) {
      StageTimes& t = fast.stages[s];
      for (Seconds* x : {&t.forward, &t.backward, &t.allreduce})
        if (rng() % 2) *x *= std::uniform_real_distribution<>(0, 1)(rng);
      if (s + 1 < fast.stages.size() && rng() % 2) t.send *= 0.5;
    }
    const std::vector<Seconds> a = all_suffix_timings(fast)[1], b = all_suffix_timings(slow)[1];
    ASSERT_TRUE(detail::no_later_than(a.data(), b.data(), slow.micro_batches)) << "trial " << trial;
    const Seconds quick = simulated_makespan(fast), late = simulated_makespan(slow);
    ASSERT_LE(quick, late * (1 + 1e-12)) << "trial " << trial;
    strictly += quick < late;
  }
  EXPECT_GT(strictly, random_trials(5000) / 4);
}

// The widths of relaxed and block passes (up to 10 and 16 micro-batches) time as exactly.
TEST(SuffixTiming, TimingsOfUpToSixteenMicroBatchesAreTheSimulatedMakespan) {
  std::mt19937 rng(20261205);
  int wide = 0;  // pipelines beyond the relaxed passes' 10 micro-batches
  for (int trial = 0; trial < random_trials(2000); ++trial) {
    const PipelineShape shape = testing::random_pipeline(rng, detail::kBlockTimedMicroBatches);
    ASSERT_TRUE(timed_as_simulated(shape)) << "trial " << trial;
    wide += shape.micro_batches > detail::kRelaxedTimedMicroBatches;
  }
  EXPECT_GT(wide, random_trials(2000) / 8);
}

// What the stages in front of suffix b add at least, from their own times (the pipeline DP
// has only their work and devices, whose floors are no larger): their forwards and transfers up
// to b, their backwards and transfers back, and the slowest forward and backward in front or
// the cut's transfer in front of b as the pace of the micro-batches after the first.
detail::InFront front_of(const PipelineShape& shape, int b) {
  detail::InFront front{.micro_batches = shape.micro_batches};
  for (int s = 0; s < b; ++s) {
    const StageTimes& t = shape.stages[s];
    front.arrive += t.forward + t.send, front.back += t.backward + t.send;
    front.forward_pace = std::max(front.forward_pace, t.forward);
    front.backward_pace = std::max(front.backward_pace, t.backward);
  }
  const Seconds cut = shape.stages[b - 1].send;
  front.forward_pace = std::max(front.forward_pace, cut);
  front.backward_pace = std::max(front.backward_pace, cut);
  return front;
}

// The bound the pipeline DP prunes a timed suffix with: never above the simulated makespan of
// the pipeline the suffix ends, and above the round trip in front plus the suffix's latest
// backward, and the suffix's own end, on many pipelines (what the pace of the stages in front
// adds).
TEST(SuffixTiming, TheStagesInFrontPaceTheSuffixNoLaterThanTheSimulation) {
  std::mt19937 rng(20261206);
  int suffixes = 0, paced = 0;
  for (int trial = 0; trial < random_trials(20000); ++trial) {
    const PipelineShape shape = testing::random_pipeline(rng, detail::kRelaxedTimedMicroBatches);
    const int stages = static_cast<int>(shape.stages.size()), m = shape.micro_batches;
    const Seconds makespan = simulated_makespan(shape);
    const std::vector<std::vector<Seconds>> timings = all_suffix_timings(shape);
    for (int b = 1; b < stages; ++b) {
      const detail::InFront front = front_of(shape, b);
      const Seconds* after = timings[b].data();
      const Seconds behind = detail::timed_behind(after, m, front);
      ASSERT_LE(behind, makespan * (1 + 1e-12)) << "trial " << trial << ", suffix " << b;
      const Seconds unpaced = std::max(front.trip() + *std::max_element(after, after + m * m),
                                       detail::timed_makespan(after, m));
      ++suffixes, paced += behind > unpaced * (1 + 1e-9);
    }
  }
  EXPECT_GT(paced, suffixes / 4);
}

TEST(SuffixTiming, OneStageOfOneMicroBatchIsItsForwardBackwardAndAllReduce) {
  std::vector<Seconds> after(timing_entries(1));
  detail::prepend_timing({1, 2, 0, 4}, 0, nullptr, 1, Schedule::OneFOneB, 1, after.data());
  EXPECT_EQ(after[0], 3);  // the backward ends 3 after the input arrives
  EXPECT_EQ(after[1], 7);  // the all-reduce 4 after it
  EXPECT_EQ(detail::timed_makespan(after.data(), 1), 7);
}

}  // namespace
}  // namespace pe
