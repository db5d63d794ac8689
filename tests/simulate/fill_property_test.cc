// Properties of bubble filling on random plans and random work lists (fixed seeds).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "pe/fill.h"
#include "simulate/timeline_index.h"

namespace pe {
namespace {

PipelineShape random_shape(std::mt19937& rng) {
  std::uniform_real_distribution<double> time(0.2, 2.0), comm(0.0, 0.6);
  PipelineShape shape;
  shape.schedule = rng() % 2 ? Schedule::GPipe : Schedule::OneFOneB;
  shape.micro_batches = 1 + static_cast<int>(rng() % 8);
  const int stages = 1 + static_cast<int>(rng() % 5);
  for (int s = 0; s < stages; ++s)
    shape.stages.push_back({time(rng), time(rng), comm(rng), comm(rng)});
  return shape;
}

WorkList random_work(std::mt19937& rng, int stages) {
  std::uniform_real_distribution<double> length(0.05, 2.5);
  WorkList work;
  const int count = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < count; ++i) {
    WorkItem w;
    w.name = "item" + std::to_string(i);
    w.duration = length(rng);
    const int kind = static_cast<int>(rng() % 4);
    w.after = i == 0 && kind == 3 ? WorkAfter::Nothing : static_cast<WorkAfter>(kind);
    if (w.after == WorkAfter::Item) w.after_item = "item" + std::to_string(rng() % i);
    w.chunks = 1 + static_cast<int>(rng() % 3);
    w.split_total = rng() % 2 == 0;
    for (int s = 0; s < stages; ++s)
      if (rng() % 3 != 0) w.stages.push_back(s);
    work.items.push_back(w);
  }
  return work;
}

struct Interval {
  Seconds start, end;
  std::string what;
};

// Reserved slots of the pieces and compute of every iteration, per stage, must not overlap.
void check_no_overlap(const Timeline& t, const FillResult& r) {
  std::map<int, std::vector<Interval>> by_stage;
  int iterations = std::max(r.iterations, 1);
  for (const Event& e : t.events)
    if (uses_compute(e.kind) && e.duration() > 0)
      for (int k = 0; k < iterations; ++k)
        by_stage[e.stage].push_back({e.start + k * t.makespan, e.end + k * t.makespan, "compute"});
  for (const FilledPiece& p : r.pieces) {
    by_stage[p.stage].push_back(
        {p.start, p.reserved_end, "piece of item " + std::to_string(p.item)});
    // A piece stays inside its iteration.
    EXPECT_GE(p.start, p.iteration * t.makespan - 1e-9);
    EXPECT_LE(p.reserved_end, (p.iteration + 1) * t.makespan + 1e-9);
  }
  for (auto& [stage, list] : by_stage) {
    std::sort(list.begin(), list.end(),
              [](const Interval& a, const Interval& b) { return a.start < b.start; });
    for (std::size_t i = 1; i < list.size(); ++i)
      EXPECT_LE(list[i - 1].end, list[i].start + 1e-9)
          << "stage " << stage << ": " << list[i - 1].what << " overlaps " << list[i].what;
  }
}

void check_dependencies(const Timeline& t, const WorkList& work, const FillResult& r,
                        double margin) {
  testing::TimelineIndex index(t);
  std::map<int, Seconds> item_end;
  for (const FilledPiece& p : r.pieces) item_end[p.item] = std::max(item_end[p.item], p.end);
  for (const FilledPiece& p : r.pieces) {
    const WorkItem& w = work.items[p.item];
    const Seconds length = p.end - p.start;
    EXPECT_NEAR(p.reserved_end - p.start, length * (1 + margin), 1e-9);  // the margin holds
    if (w.after == WorkAfter::Forward) {
      EXPECT_GE(p.start, index.get(p.stage, EventKind::Forward, p.index).end);
    }
    if (w.after == WorkAfter::Backward) {
      EXPECT_GE(p.start, index.get(p.stage, EventKind::Backward, p.index).end);
    }
    if (w.after != WorkAfter::Item) continue;
    int dep = 0;
    while (work.items[dep].name != w.after_item) ++dep;
    ASSERT_EQ(r.items[dep].status, FillStatus::Done) << "placed before its dependency finished";
    EXPECT_GE(p.start, item_end[dep]);
  }
}

void check_counts(const FillResult& r) {
  std::set<std::tuple<int, int, int>> seen;
  std::map<int, int> placed;
  for (const FilledPiece& p : r.pieces) {
    EXPECT_TRUE(seen.insert({p.item, p.stage, p.index}).second) << "piece placed twice";
    ++placed[p.item];
  }
  for (std::size_t i = 0; i < r.items.size(); ++i) {
    EXPECT_EQ(placed[static_cast<int>(i)], r.items[i].placed);
    if (r.items[i].status == FillStatus::Done) {
      EXPECT_EQ(r.items[i].placed, r.items[i].pieces);
    }
  }
}

TEST(FillProperty, RandomPlansAndWorkLists) {
  std::mt19937 rng(424242);
  const double margins[] = {0, 0.05, 0.2};
  int done = 0, spilled = 0, never = 0;
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const Timeline t = simulate(random_shape(rng));
    const WorkList work = random_work(rng, t.stage_count);
    FillOptions options;
    options.margin = margins[round % 3];
    const FillResult r = fill_bubbles(t, work, options);
    check_no_overlap(t, r);
    check_dependencies(t, work, r, options.margin);
    check_counts(r);
    for (const ItemFill& item : r.items) {
      done += item.status == FillStatus::Done;
      never += item.status == FillStatus::NeverFits;
      spilled += item.iteration > 0;
    }
  }
  // The generator exercises every outcome.
  EXPECT_GT(done, 0);
  EXPECT_GT(spilled, 0);
  EXPECT_GT(never, 0);
}

}  // namespace
}  // namespace pe
