#include "pe/fill.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "pe/error.h"
#include "simulate/timeline_index.h"

namespace pe {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// 2 stages, M = 2, GPipe, f = g = 1, no transfers. Stage 0: F0 [0,1] F1 [1,2] B0 [4,5]
// B1 [5,6]; stage 1: F0 [1,2] F1 [2,3] B0 [3,4] B1 [4,5]. Makespan 6. Gaps: stage 0
// [2,4); stage 1 [0,1) and [5,6).
Timeline two_stage_timeline() {
  return simulate(testing::uniform_shape(2, 2, Schedule::GPipe, {1, 1, 0, 0}));
}

WorkItem item(std::string name, Seconds duration, WorkAfter after = WorkAfter::Nothing,
              std::string after_item = "") {
  WorkItem w;
  w.name = std::move(name);
  w.duration = duration;
  w.after = after;
  w.after_item = std::move(after_item);
  return w;
}

const FilledPiece* find_piece(const FillResult& r, int item, int stage, int index) {
  for (const FilledPiece& p : r.pieces)
    if (p.item == item && p.stage == stage && p.index == index) return &p;
  return nullptr;
}

// "curv" (0.5 per micro-batch after its forward, needs 0.525 with the 5% margin):
// stage 0 places m0 at 2 (ready 1) and m1 at 2.525; stage 1's first gap [0,1) ends before
// its forwards, so m0 goes to [5,5.5]; m1 (needs until 6.05 > 6) spills into iteration 1's
// gap [6,7). "sync" (0.4 on stage 0 after all of curv) waits for 6.5 and lands at 8, in
// stage 0's gap of iteration 1.
TEST(Fill, PlacesPiecesGreedilyAndSpillsIntoTheNextIteration) {
  WorkList work;
  work.items = {item("curv", 0.5, WorkAfter::Forward), item("sync", 0.4, WorkAfter::Item, "curv")};
  work.items[1].stages = {0};
  const FillResult r = fill_bubbles(two_stage_timeline(), work);
  ASSERT_EQ(r.pieces.size(), 5u);
  EXPECT_DOUBLE_EQ(find_piece(r, 0, 0, 0)->start, 2);
  EXPECT_DOUBLE_EQ(find_piece(r, 0, 0, 1)->start, 2.525);
  EXPECT_DOUBLE_EQ(find_piece(r, 0, 1, 0)->start, 5);
  EXPECT_DOUBLE_EQ(find_piece(r, 0, 1, 1)->start, 6);
  EXPECT_EQ(find_piece(r, 0, 1, 1)->iteration, 1);
  EXPECT_DOUBLE_EQ(find_piece(r, 1, 0, 0)->start, 8);
  EXPECT_EQ(r.items[0].status, FillStatus::Done);
  EXPECT_EQ(r.items[0].iteration, 1);
  EXPECT_DOUBLE_EQ(r.items[0].finish, 6.5);
  EXPECT_EQ(r.items[1].iteration, 1);
  EXPECT_DOUBLE_EQ(r.items[1].finish, 8.4);
  EXPECT_EQ(r.iterations, 2);
  EXPECT_TRUE(r.complete);
  // Utilization: compute 4 of 6 on both stages; iteration 0 adds 1.0 and 0.5 of filler;
  // over the 2 iterations stage 0 adds 1.4 and stage 1 1.0.
  EXPECT_DOUBLE_EQ(r.stages[0].utilization_before, 4.0 / 6);
  EXPECT_DOUBLE_EQ(r.stages[0].utilization_first, 5.0 / 6);
  EXPECT_DOUBLE_EQ(r.stages[1].utilization_first, 4.5 / 6);
  EXPECT_NEAR(r.stages[0].utilization_mean, (8 + 1.4) / 12, 1e-12);
  EXPECT_NEAR(r.stages[1].utilization_mean, (8 + 1.0) / 12, 1e-12);
}

TEST(Fill, FirstIterationTimelineShowsFillers) {
  WorkList work;
  work.items = {item("curv", 0.5, WorkAfter::Forward)};
  const Timeline base = two_stage_timeline();
  const FillResult r = fill_bubbles(base, work);
  EXPECT_DOUBLE_EQ(r.timeline.makespan, base.makespan);
  EXPECT_TRUE(std::is_sorted(r.timeline.events.begin(), r.timeline.events.end(), event_less));
  std::vector<const Event*> fillers;
  for (const Event& e : r.timeline.events)
    if (e.kind == EventKind::Filler) fillers.push_back(&e);
  ASSERT_EQ(fillers.size(), 3u);  // the fourth piece is in iteration 1
  EXPECT_EQ(fillers[0]->label, "curv");
  EXPECT_EQ(fillers[0]->micro_batch, 0);
  EXPECT_EQ(r.timeline.events.size(), base.events.size() + 3);
}

// Stage 0's widest gap is 2 and stage 1's is 1: a 1.5 piece never fits on stage 1, so
// the item and what waits for it are reported, and the rest is still placed.
TEST(Fill, ReportsWorkThatNeverFits) {
  WorkList work;
  work.items = {item("big", 1.5), item("after-big", 0.1, WorkAfter::Item, "big"),
                item("small", 0.2)};
  const FillResult r = fill_bubbles(two_stage_timeline(), work);
  EXPECT_EQ(r.items[0].status, FillStatus::NeverFits);
  EXPECT_EQ(r.items[1].status, FillStatus::Blocked);
  EXPECT_EQ(r.items[2].status, FillStatus::Done);
  EXPECT_EQ(r.items[0].placed, 0);
  EXPECT_EQ(r.items[0].iteration, -1);
  EXPECT_EQ(r.items[2].placed, 2);
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(to_string(FillStatus::NeverFits), "never fits");
}

TEST(Fill, StopsAfterMaxIterations) {
  WorkList work;
  work.items = {item("curv", 0.5, WorkAfter::Forward), item("sync", 0.4, WorkAfter::Item, "curv")};
  FillOptions options;
  options.max_iterations = 1;
  const FillResult r = fill_bubbles(two_stage_timeline(), work, options);
  EXPECT_EQ(r.items[0].status, FillStatus::Unfinished);
  EXPECT_EQ(r.items[0].placed, 3);
  EXPECT_EQ(r.items[1].status, FillStatus::Unfinished);
  EXPECT_EQ(r.iterations, 1);
}

// The margin decides: 0.95 needs 0.9975 with 5% and fits the gap [0,1) of stage 1;
// 0.96 needs 1.008 and does not.
TEST(Fill, MarginDecidesWhatFits) {
  WorkList work;
  work.items = {item("x", 0.95)};
  work.items[0].stages = {1};
  EXPECT_EQ(fill_bubbles(two_stage_timeline(), work).items[0].status, FillStatus::Done);
  work.items[0].duration = 0.96;
  EXPECT_EQ(fill_bubbles(two_stage_timeline(), work).items[0].status, FillStatus::NeverFits);
  FillOptions no_margin;
  no_margin.margin = 0;
  EXPECT_EQ(fill_bubbles(two_stage_timeline(), work, no_margin).items[0].status, FillStatus::Done);
}

TEST(Fill, SplitsTotalsIntoChunks) {
  WorkList work;
  work.items = {item("inv", 1.2)};
  work.items[0].split_total = true;
  work.items[0].chunks = 3;
  work.items[0].stages = {0};
  const FillResult r = fill_bubbles(two_stage_timeline(), work);
  ASSERT_EQ(r.pieces.size(), 3u);
  for (const FilledPiece& p : r.pieces) EXPECT_NEAR(p.end - p.start, 0.4, 1e-12);
}

TEST(Fill, RejectsInvalidWork) {
  const Timeline t = two_stage_timeline();
  auto rejects = [&](WorkList work, const std::string& expect) {
    EXPECT_THAT([&] { fill_bubbles(t, work); }, ThrowsMessage<InputError>(HasSubstr(expect)));
  };
  rejects({{item("a", 1, WorkAfter::Item, "nope")}}, "unknown item 'nope'");
  rejects({{item("a", 1, WorkAfter::Item, "b"), item("b", 1, WorkAfter::Item, "a")}}, "cycle");
  rejects({{item("a", 1, WorkAfter::Item, "a")}}, "cycle");
  rejects({{item("a", 1), item("a", 2)}}, "used twice");
  rejects({{item("forward", 1)}}, "reserved");
  rejects({{item("", 1)}}, "empty");
  rejects({{item("a", 0)}}, "positive");
  WorkItem far = item("far", 1);
  far.stages = {2};
  far.where = "w.yml:7";
  rejects({{far}}, "w.yml:7: work item 'far': stage 2 is not in [0, 2)");
  WorkItem twice = item("twice", 1);
  twice.stages = {1, 1};
  rejects({{twice}}, "listed twice");
  WorkItem chunks = item("c", 1);
  chunks.chunks = 0;
  rejects({{chunks}}, "chunks");
  WorkItem tiny = item("tiny", 1e-320);  // a subnormal total over a million pieces
  tiny.split_total = true;
  tiny.chunks = 1000000;
  rejects({{tiny}}, "is 0 s a piece");
  FillOptions bad;
  bad.margin = -0.1;
  EXPECT_THROW(fill_bubbles(t, {}, bad), UsageError);
}

TEST(Fill, RejectsALongChainRunningIntoACycle) {
  // w{i} after w{i+1}; the last two wait for each other. Every item runs into the cycle,
  // so the first one is reported.
  const int n = 30000;
  WorkList work;
  for (int i = 0; i < n; ++i)
    work.items.push_back(item("w" + std::to_string(i), 1, WorkAfter::Item,
                              "w" + std::to_string(i + 1 < n ? i + 1 : n - 2)));
  EXPECT_THAT([&] { fill_bubbles(two_stage_timeline(), work); },
              ThrowsMessage<InputError>(HasSubstr("work item 'w0': its 'after' dependencies")));
  work.items.back().after_item = "nope";
  EXPECT_THAT([&] { fill_bubbles(two_stage_timeline(), work); },
              ThrowsMessage<InputError>(HasSubstr("work item 'w29999': after: unknown item")));
}

TEST(Fill, EmptyWorkIsComplete) {
  const FillResult r = fill_bubbles(two_stage_timeline(), WorkList{});
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_DOUBLE_EQ(r.stages[1].utilization_mean, 4.0 / 6);
}

}  // namespace
}  // namespace pe
