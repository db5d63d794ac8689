// What an exact pass's cell keeps (keep_undominated, search/dp_cell.h), against a plain
// reference written from its contract: within a group, in order of the fields and then the
// plan, a candidate is kept unless a kept one is no worse in every field; the comparisons it
// reports are each candidate's one plus every kept entry of its group. Drawn with few field
// values, so that candidates often dominate each other and many are twins (the same bound
// behind different plans), as stages with no work make them in a block pass.
#include "search/dp_cell.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "random_trials.h"

namespace pe::detail::dp {
namespace {

auto plan_of(const Entry& e) {
  return std::make_tuple(e.k(), !e.head, e.last, e.width, e.child, e.variant.recompute);
}

std::vector<Seconds> fields_of(const Entry& e) {
  std::vector<Seconds> fields;
  for (int i = 0; i < Entry::kFields; ++i) fields.push_back(e.field(i));
  return fields;
}

bool no_worse(const Entry& a, const Entry& b) {
  for (int i = 0; i < Entry::kFields; ++i)
    if (a.field(i) > b.field(i)) return false;
  return true;
}

// The contract, without keys, hints or twins: returns the comparisons.
std::uint64_t reference(std::vector<Entry> candidates, std::vector<Entry>& kept) {
  std::sort(candidates.begin(), candidates.end(), [](const Entry& a, const Entry& b) {
    return std::make_tuple(a.group(), fields_of(a), plan_of(a)) <
           std::make_tuple(b.group(), fields_of(b), plan_of(b));
  });
  std::uint64_t comparisons = candidates.size();
  std::size_t group = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Entry& c = candidates[i];
    if (i > 0 && c.group() != candidates[i - 1].group()) group = kept.size();
    comparisons += kept.size() - group;
    bool dominated = false;
    for (std::size_t j = group; j < kept.size() && !dominated; ++j)
      dominated = no_worse(kept[j], c);
    if (!dominated) kept.push_back(c);
  }
  return comparisons;
}

// A random bound of few values (0, 1 or 2 ms in each field, the stage count 1 to 3).
SuffixBound random_bound(std::mt19937& rng) {
  std::uniform_int_distribution<int> value(0, 2), stages(1, 3);
  auto draw = [&] { return 1e-3 * value(rng); };
  SuffixBound b;
  b.round_trip = draw(), b.worst = draw(), b.exposed = draw(), b.drain = draw();
  b.head_work = draw(), b.after = draw(), b.delayed = draw(), b.last_drain = draw();
  for (Seconds& w : b.window) w = draw();
  for (Seconds& a : b.arrival) a = draw();
  b.fed[0] = draw();
  b.stages = stages(rng);
  return b;
}

TEST(DpCell, KeepUndominatedKeepsWhatTheContractKeepsTwinsIncluded) {
  std::mt19937 rng(2026);
  const Timings untimed;
  int twins_seen = 0;
  for (int trial = 0; trial < random_trials(400); ++trial) {
    // Distinct bounds, each behind one to four plans (its twins).
    std::vector<Entry> candidates;
    const int bounds = 1 + static_cast<int>(rng() % 40);
    for (int b = 0; b < bounds; ++b) {
      const SuffixBound bound = random_bound(rng);
      const bool head = rng() % 2 == 0;
      const int plans = 1 + static_cast<int>(rng() % 4);
      twins_seen += plans - 1;
      for (int p = 0; p < plans; ++p) {
        // Some in the other group (a cut in front that may not stay inside a machine).
        Entry e{bound,
                rng() % 4 == 0 ? !head : head,
                rng() % 8,
                1 + static_cast<int>(rng() % 4),
                static_cast<int>(rng() % 16),
                StageVariant{}};
        e.staged = e.k(), e.sited = e.head;
        candidates.push_back(e);
      }
    }
    // A zero of the other sign: the same fields in other bits, no twin by its bits (`tail`
    // is never drawn, so 0 in every candidate).
    if (trial % 3 == 0) {
      Entry e = candidates.front();
      e.bound.tail = -0.0;
      e.child += 100;
      candidates.push_back(e);
    }
    std::vector<Entry> expected;
    const std::uint64_t expected_comparisons = reference(candidates, expected);
    for (int order = 0; order < 3; ++order) {
      std::shuffle(candidates.begin(), candidates.end(), rng);
      std::vector<Entry> input = candidates, cell;
      Timings kept;
      const std::uint64_t comparisons = keep_undominated(input, untimed, cell, kept);
      EXPECT_EQ(comparisons, expected_comparisons) << "trial " << trial;
      ASSERT_EQ(cell.size(), expected.size()) << "trial " << trial;
      for (std::size_t i = 0; i < cell.size(); ++i) {
        EXPECT_EQ(plan_of(cell[i]), plan_of(expected[i])) << "trial " << trial << ", entry " << i;
        EXPECT_EQ(fields_of(cell[i]), fields_of(expected[i])) << "trial " << trial;
      }
      EXPECT_TRUE(input.empty());
    }
  }
  EXPECT_GT(twins_seen, 0);
}

}  // namespace
}  // namespace pe::detail::dp
