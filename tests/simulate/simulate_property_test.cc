// Properties of simulated timelines on random shapes (fixed seeds).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "pe/timeline.h"
#include "simulate/timeline_index.h"

namespace pe {
namespace {

using testing::TimelineIndex;

PipelineShape random_shape_with_zeros(std::mt19937& rng) {
  std::uniform_int_distribution<int> stages(1, 7), micro(1, 12), zero(0, 5);
  std::uniform_real_distribution<double> time(0.1, 3.0);
  auto maybe_zero = [&] { return zero(rng) == 0 ? 0.0 : time(rng); };
  PipelineShape shape;
  shape.schedule = rng() % 2 ? Schedule::GPipe : Schedule::OneFOneB;
  shape.micro_batches = micro(rng);
  const int count = stages(rng);
  for (int s = 0; s < count; ++s)
    shape.stages.push_back({maybe_zero(), maybe_zero(), maybe_zero(), maybe_zero()});
  return shape;
}

void expect_after(const Event& later, const Event& earlier) {
  EXPECT_GE(later.start, earlier.end)
      << to_string(later.kind) << " " << later.stage << "/" << later.micro_batch
      << " starts before " << to_string(earlier.kind) << " " << earlier.stage;
}

void check_dependencies(const PipelineShape& shape, const Timeline& t) {
  TimelineIndex index(t);
  EXPECT_EQ(index.duplicates(), 0);
  const int last = static_cast<int>(shape.stages.size()) - 1;
  for (int s = 0; s <= last; ++s) {
    for (int m = 0; m < shape.micro_batches; ++m) {
      const Event& f = index.get(s, EventKind::Forward, m);
      const Event& b = index.get(s, EventKind::Backward, m);
      EXPECT_NEAR(f.duration(), shape.stages[s].forward, 1e-9);
      EXPECT_NEAR(b.duration(), shape.stages[s].backward, 1e-9);
      expect_after(b, f);
      if (s > 0) {
        const Event& act = index.get(s - 1, EventKind::SendActivation, m);
        expect_after(act, index.get(s - 1, EventKind::Forward, m));
        expect_after(f, act);
        const Event& grad = index.get(s, EventKind::SendGradient, m);
        EXPECT_NEAR(grad.duration(), shape.stages[s - 1].send, 1e-9);
        expect_after(grad, b);
        expect_after(index.get(s - 1, EventKind::Backward, m), grad);
      }
      expect_after(index.get(s, EventKind::AllReduce), b);
    }
    EXPECT_EQ(index.find(last, EventKind::SendActivation, 0), nullptr);
  }
}

// Events of one stage and kind set, in start order, must not overlap.
void check_no_overlap(const Timeline& t, bool (*same_resource)(EventKind, EventKind)) {
  for (std::size_t i = 0; i < t.events.size(); ++i)
    for (std::size_t j = i + 1; j < t.events.size() && t.events[j].stage == t.events[i].stage;
         ++j) {
      const Event& a = t.events[i];
      const Event& b = t.events[j];
      if (!same_resource(a.kind, b.kind) || a.duration() == 0 || b.duration() == 0) continue;
      EXPECT_TRUE(b.start >= a.end || a.start >= b.end)
          << "stage " << a.stage << ": " << to_string(a.kind) << " " << a.micro_batch
          << " overlaps " << to_string(b.kind) << " " << b.micro_batch;
    }
}

bool same_resource(EventKind a, EventKind b) {
  const bool compute_a = a == EventKind::Forward || a == EventKind::Backward;
  const bool compute_b = b == EventKind::Forward || b == EventKind::Backward;
  return compute_a ? compute_b : a == b;
}

TEST(SimulateProperty, RandomShapesRespectDependenciesAndResources) {
  std::mt19937 rng(20240611);
  for (int round = 0; round < 150; ++round) {
    const PipelineShape shape = random_shape_with_zeros(rng);
    const Timeline t = simulate(shape);
    SCOPED_TRACE("round " + std::to_string(round));
    const std::size_t S = shape.stages.size(), M = static_cast<std::size_t>(shape.micro_batches);
    EXPECT_EQ(t.events.size(), 2 * S * M + 2 * (S - 1) * M + S);
    EXPECT_TRUE(std::is_sorted(t.events.begin(), t.events.end(), event_less));
    check_dependencies(shape, t);
    check_no_overlap(t, same_resource);
    Seconds latest = 0;
    for (const Event& e : t.events) latest = std::max(latest, e.end);
    EXPECT_DOUBLE_EQ(t.makespan, latest);
    // The search's makespan (no events: only the transfers' start times kept) is the same.
    EXPECT_EQ(simulated_makespan(shape), t.makespan);
  }
}

// With positive durations the compute order on each stage is the schedule's fixed order.
TEST(SimulateProperty, StagesFollowTheScheduleOrder) {
  PipelineShape shape;
  shape.micro_batches = 5;
  shape.stages = {{1, 2, 0.3, 0}, {2, 1, 0.1, 0}, {1.5, 1.5, 0.2, 0}, {0.5, 3, 0, 0}};
  for (Schedule schedule : {Schedule::OneFOneB, Schedule::GPipe}) {
    shape.schedule = schedule;
    const Timeline t = simulate(shape);
    std::vector<std::string> order(shape.stages.size());
    for (const Event& e : t.events)
      if (e.kind == EventKind::Forward || e.kind == EventKind::Backward) {
        order[e.stage] += e.kind == EventKind::Forward ? 'F' : 'B';
        order[e.stage] += std::to_string(e.micro_batch);
      }
    if (schedule == Schedule::GPipe) {
      EXPECT_EQ(order[2], "F0F1F2F3F4B0B1B2B3B4");
    } else {
      EXPECT_EQ(order[0], "F0F1F2F3B0F4B1B2B3B4");  // warm-up min(5, 4 - 0) = 4
      EXPECT_EQ(order[2], "F0F1B0F2B1F3B2F4B3B4");  // warm-up 2
      EXPECT_EQ(order[3], "F0B0F1B1F2B2F3B3F4B4");  // warm-up 1
    }
  }
}

// A large plan still simulates exactly: every stage is busy M (f + g) and the makespan
// follows the equal-stage formula.
TEST(SimulateProperty, LargeUniformPlan) {
  const Timeline t = simulate(testing::uniform_shape(64, 512, Schedule::OneFOneB, {1, 1, 0, 0}));
  EXPECT_DOUBLE_EQ(t.makespan, (512 + 64 - 1) * 2.0);
  EXPECT_EQ(t.events.size(), 2u * 64 * 512 + 2u * 63 * 512 + 64);
}

}  // namespace
}  // namespace pe
