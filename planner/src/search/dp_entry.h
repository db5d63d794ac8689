// A cell's entry of the pipeline dynamic program (pipeline_dp.cc): a suffix plan's bound
// fields (cost/path_bound.h's SuffixBound), its first stage and the entry behind it, and in a
// timed pass its simulated times (Timings).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <tuple>
#include <vector>

#include "cost/path_bound.h"
#include "cost/stage_variants.h"
#include "cost/suffix_timing.h"

namespace pe::detail::dp {

constexpr Seconds kInfinite = std::numeric_limits<Seconds>::infinity();

// An entry's fields 1 to 7 (all but y of the first eight) and the sum of those after them,
// in single precision: each no larger for an entry no worse than another (rounding to
// nearest and adding in one order keep order), a compact first check of dominance (y needs
// none: keep_undominated compares entries in order of y).
constexpr int kKeys = 8;
using Key = std::array<float, kKeys>;

struct Entry {
  SuffixBound bound;
  bool head = false;
  std::size_t last = 0;  // last state of this entry's first stage
  int width = 0;         // its width
  int child = -1;        // entry index in the next cell, -1 for the final stage
  StageVariant variant;  // how its first stage runs
  // The stage count and head its group goes by (an exact pass's, Dp::prepend): k in 1F1B, 0
  // in GPipe (but under DpQuery::max_stages), where neither the bound's terms nor a stage's memory
  // (all M micro-batches in flight) depend on it; head where a cut in front of it may stay inside a
  // machine.
  int staged = 0;
  bool sited = false;
  // A timed pass's entry (DpQuery::timed): the index of its suffix's simulated times among
  // the Timings of the vector it is in, by which entries are compared and the plans ranked;
  // its `bound` then only prunes.
  static constexpr std::uint32_t kUntimed = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t timing = kUntimed;
  // The row of the cell after its first stage (Stage::next): the state after its last, but in a
  // block pass, where a stage may end inside a block and the next start in it.
  std::uint32_t next_row = 0;

  int k() const { return bound.stages; }
  int t() const { return variant.tensor_parallel; }
  // The group an entry competes in: entries of different groups give the stages in front
  // different terms.
  auto group() const { return std::make_tuple(staged, !sited, t()); }
  bool timed() const { return timing != kUntimed; }
  Seconds total() const { return bound.round_trip + bound.exposed; }
  Seconds drained() const { return bound.round_trip + bound.drain; }
  // The fields that only raise a bound, in a fixed order (the sort key after the group).
  static constexpr int kFields = 13 + 2 * kWindows + kArrivals + 2 * kFed;
  // Inlined into keep_undominated's sort, which takes much of a pass (as a call, 40 % more
  // time on NASNet-A large at GBS 512 on 1,024 GPUs).
  [[gnu::always_inline]] Seconds field(int i) const {
    const SuffixBound& b = bound;
    switch (i) {
      case 0:
        return b.round_trip;
      case 1:
        return b.worst;
      case 2:
        return total();
      case 3:
        return drained();
      case 4:
        return b.head_work;
      case 5:
        return b.after_x;
      case 6:
        return b.forward_wave;
      case 7:
        return b.backward_wave;
      case 8:
        return b.delayed;
      case 9:
        return b.after;
      case 10:
        return b.max_pair;
      case 11:
        return b.tail;
      case 12:
        return b.last_drain;
      default:
        if (i < 13 + kWindows) return b.window[i - 13];
        if (i < 13 + 2 * kWindows) return b.paced_after[i - 13 - kWindows];
        if (i < 13 + 2 * kWindows + kArrivals) return b.arrival[i - 13 - 2 * kWindows];
        if (i < 13 + 2 * kWindows + kArrivals + kFed)
          return b.fed[i - 13 - 2 * kWindows - kArrivals];
        return b.led[i - 13 - 2 * kWindows - kArrivals - kFed];
    }
  }
  Key key() const {
    Key key;
    for (int i = 1; i < kKeys; ++i) key[i - 1] = static_cast<float>(field(i));
    // The fields after the first eight, in field()'s order, read directly (this runs for
    // every candidate kept).
    const SuffixBound& b = bound;
    Seconds rest = b.delayed + b.after + b.max_pair + b.tail + b.last_drain;
    for (const Seconds* part : {b.window, b.paced_after})
      for (int i = 0; i < kWindows; ++i) rest += part[i];
    for (const Seconds x : b.arrival) rest += x;
    for (const Seconds x : b.fed) rest += x;
    for (const Seconds x : b.led) rest += x;
    key[kKeys - 1] = static_cast<float>(rest);
    return key;
  }
  // No larger in the first n fields (DpQuery::merged_fields; at most kFields).
  bool no_worse_in_first(const Entry& o, int n) const {
    for (int i = 0; i < std::min(n, kFields); ++i)
      if (field(i) > o.field(i)) return false;
    return true;
  }
  // Lowers each field from the n-th on to o's where less: with 0 every field (a relaxed
  // pass's entry takes in each suffix of its group and bucket so, keep_least); an entry no
  // worse in the first n fields takes in o so (DpQuery::merged_fields). The all-reduce and
  // drain terms are kept as their sums with y (total, drained), which are the fields.
  void lower_to(const Entry& o, int n) {
    SuffixBound& a = bound;
    const SuffixBound& b = o.bound;
    const Seconds least_total = std::min(total(), o.total());
    const Seconds least_drained = std::min(drained(), o.drained());
    if (n <= 0) a.round_trip = std::min(a.round_trip, b.round_trip);
    if (n <= 1) a.worst = std::min(a.worst, b.worst);
    if (n <= 2) a.exposed = least_total - a.round_trip;
    if (n <= 3) a.drain = least_drained - a.round_trip;
    if (n <= 4) a.head_work = std::min(a.head_work, b.head_work);
    if (n <= 5) a.after_x = std::min(a.after_x, b.after_x);
    if (n <= 6) a.forward_wave = std::min(a.forward_wave, b.forward_wave);
    if (n <= 7) a.backward_wave = std::min(a.backward_wave, b.backward_wave);
    a.delayed = std::min(a.delayed, b.delayed);
    a.after = std::min(a.after, b.after);
    a.max_pair = std::min(a.max_pair, b.max_pair);
    a.tail = std::min(a.tail, b.tail);
    a.last_drain = std::min(a.last_drain, b.last_drain);
    for (int i = 0; i < kWindows; ++i) {
      a.window[i] = std::min(a.window[i], b.window[i]);
      a.paced_after[i] = std::min(a.paced_after[i], b.paced_after[i]);
    }
    for (int i = 0; i < kArrivals; ++i) a.arrival[i] = std::min(a.arrival[i], b.arrival[i]);
    for (int i = 0; i < kFed; ++i) {
      a.fed[i] = std::min(a.fed[i], b.fed[i]);
      a.led[i] = std::min(a.led[i], b.led[i]);
    }
  }
  bool no_worse_than(const Entry& o) const {
    const SuffixBound &a = bound, &b = o.bound;
    return a.round_trip <= b.round_trip && a.worst <= b.worst && total() <= o.total() &&
           drained() <= o.drained() && a.head_work <= b.head_work && a.after_x <= b.after_x &&
           a.forward_wave <= b.forward_wave && a.backward_wave <= b.backward_wave &&
           a.delayed <= b.delayed && a.after <= b.after && a.max_pair <= b.max_pair &&
           a.tail <= b.tail && a.last_drain <= b.last_drain &&
           std::equal(a.window, a.window + kWindows, b.window, std::less_equal<>()) &&
           std::equal(a.paced_after, a.paced_after + kWindows, b.paced_after,
                      std::less_equal<>()) &&
           std::equal(a.arrival, a.arrival + kArrivals, b.arrival, std::less_equal<>()) &&
           std::equal(a.fed, a.fed + kFed, b.fed, std::less_equal<>()) &&
           std::equal(a.led, a.led + kFed, b.led, std::less_equal<>());
  }
};

// The simulated times of the suffixes of a vector of entries of a timed pass
// (DpQuery::timed), timing_entries(M) each, in the order they were made (Entry::timing).
struct Timings {
  int m = 0;  // micro-batches; 0 where the pass is not timed
  std::vector<Seconds> at;

  int n() const { return timing_entries(m); }
  const Seconds* of(const Entry& e) const {
    return e.timed() ? at.data() + static_cast<std::size_t>(e.timing) * n() : nullptr;
  }
  std::size_t size() const { return m > 0 ? at.size() / n() : 0; }
  // Room for one more; returns where it goes (valid until the next add).
  Seconds* add() {
    at.resize(at.size() + n());
    return at.data() + at.size() - n();
  }
  void drop_last() { at.resize(at.size() - n()); }
  // Copies e's timing from `from` to the end of these; e then indexes it here.
  void take(Entry& e, const Timings& from) {
    if (!e.timed()) return;
    const Seconds* t = from.of(e);
    e.timing = static_cast<std::uint32_t>(size());
    at.insert(at.end(), t, t + n());
  }
  void clear() { at.clear(); }
  // A relaxed timed pass: lowers each entry of the last timing to e's (of `from`) where less.
  void lower_last(const Timings& from, const Entry& e) {
    if (!e.timed()) return;
    const Seconds* t = from.of(e);
    Seconds* last = at.data() + at.size() - n();
    for (int i = 0; i < n(); ++i) last[i] = std::min(last[i], t[i]);
  }

  // The number a plan of entry e (of the first cell) is ranked by: its simulated makespan
  // where timed, else its path bound. For a later cell's entry, a lower bound on that of
  // every plan it ends.
  Seconds rank(const Entry& e) const {
    return e.timed() ? std::max(timed_makespan(of(e), m), bound_of(e.bound)) : bound_of(e.bound);
  }
  // A lower bound on the simulated time of every plan timed entry e ends behind the stages
  // `front` stands for (timed_behind).
  Seconds behind(const Entry& e, const InFront& front) const {
    return timed_behind(of(e), m, front);
  }
  bool no_worse(const Entry& a, const Timings& of_b, const Entry& b) const {
    return a.timed() ? no_later_than(of(a), of_b.of(b), m) : a.no_worse_than(b);
  }
  // A timed entry's key: the sums of its timing's entries in kKeys runs (an entry of no
  // path, -infinity, counts as 0: the others are at least 0), no larger for an entry no worse.
  Key key(const Entry& e) const {
    if (!e.timed()) return e.key();
    Key key{};
    const Seconds* t = of(e);
    for (int i = 0; i < n(); ++i)
      key[static_cast<std::size_t>(i * kKeys / n())] += static_cast<float>(std::max(t[i], 0.0));
    return key;
  }
  // The sort key of a timed entry before its fields: no larger for an entry no worse.
  Seconds sum(const Entry& e) const {
    Seconds total = 0;
    if (const Seconds* t = of(e))
      for (int i = 0; i < n(); ++i) total += std::max(t[i], 0.0);
    return total;
  }
};

}  // namespace pe::detail::dp
