// Suffix dynamic program over (first state of the suffix, first free device offset).
// A cell keeps, for each (k, head), the suffix plans not dominated in the fields of their
// SuffixBound (cost/path_bound.h):
//   y     = round_trip, the fill_drain of the suffix,
//   e     = worst, the largest path term of a stage, cut or pair of the suffix,
//   y + x = round_trip + exposed, the all-reduce term,
//   y + D = round_trip + drain, what follows an earlier stage's Q in the all-reduce term,
//   and head_work, after_x, forward_wave, backward_wave (each schedule uses two of them),
//   and the window cycles (1F1B: window, kWindows of them, 0 past the suffix's end),
//   delayed, after, max_pair, tail, last_drain and paced_after (1F1B: how late the warm-ups
//   of later stages make the first backward, how long after it the last backward can end,
//   the largest f + g of a stage, the cycle of the window of all stages but the last, how
//   much a later stage's last backwards lengthen the last round trip, and the later stages'
//   operations after their paced first backwards; path_bound.h),
//   k     = stages in the suffix, capped at M (in 1F1B memory, warm-up and the terms depend
//           on it; in GPipe nothing does, so there every k competes in one group: on
//           NASNet-A large's shape of 2 copies, 56 micro-batches of 2 at GBS 224 on 2 x 8
//           GPUs, the exact pass took 68 M steps instead of 106 M),
//   head  = the suffix's first stage sits on one machine in every copy (needed to know
//           whether the cut in front of it stays inside a machine; where no cut can, as on
//           single-GPU machines, or that link is as fast, exact passes leave it out of the
//           group: simplified GNMT-32's shape of 2 micro-batches of 64 at GBS 128 on 16
//           single-GPU machines took 1.19 G steps instead of 1.41 G), and its
//           tensor-parallel degree (the cut in front of it splits over as many links).
// Entry A dominates B (same group: k, head) when every one of these is no larger for A:
// prepending a stage (prepend_stage) adds a constant to y and maps the others through
// maxima of terms that grow with them (x through max(T, x - d); a warm-up's late, which
// falls as y grows, enters only sums with y: y + max(0, W - y) grows with both), so the
// order is kept all the way to the full plan, whose bound y + max(e, x) grows with y, e and
// y + x. Keeping only undominated entries is therefore exact.
// A timed pass (DpQuery::timed) compares entries by their suffix's simulated times instead
// (cost/suffix_timing.h: a max-plus map that prepending a stage composes, order-preserving
// too), kept in Timings beside the cells; its fields then only prune.
#include "search/pipeline_dp.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "cost/evaluate.h"
#include "cost/layout.h"
#include "cost/path_bound.h"
#include "cost/stage_samples.h"
#include "cost/stage_variants.h"
#include "cost/suffix_timing.h"

namespace pe::detail {
namespace {

constexpr double kSlack = 1e-12;  // relative tolerance so that ties survive the bound
constexpr Seconds kInfinite = std::numeric_limits<Seconds>::infinity();
// Comparisons of two entries that count as one step: a comparison costs about a
// nanosecond, a stage tried or an entry extended ten to thirty.
constexpr std::uint64_t kComparisonsPerStep = 8;
// A row of cells is filled in parallel (Dp::fill_row) when the last one took at least this
// many steps (about a millisecond). Below it the tasks cost more than they save where the
// shapes' passes already keep the threads busy: with 10,000 the default sweeps of every
// bundled profile on 2 x 8 GPUs took 6 % longer on two threads, with this 3 %, against 25 to
// 30 % less on one point of VGG-19 on 256 GPUs or GNMT-16 on 64 (bench/README.md, "Rows of
// cells in parallel").
constexpr std::uint64_t kParallelRow = 1 << 16;
// Its cells add their steps to the row's every this many steps, and stop once the row's pass
// the pass's limit.
constexpr std::uint64_t kSharedSteps = 1 << 16;

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

// The keys of a cell's kept entries of one group, field by field, so that a candidate is
// checked against a block of them at once (compiled to vector compares).
struct Keys {
  static constexpr std::size_t kBlock = 16;
  std::array<std::vector<float>, kKeys> sums;  // sums[f][i]: sum f of key i
  std::size_t size() const { return sums[0].size(); }
  void clear() {
    for (std::vector<float>& v : sums) v.clear();
  }
  void push_back(const Key& k) {
    for (int f = 0; f < kKeys; ++f) sums[f].push_back(k[f]);
  }
  bool no_worse_than(std::size_t i, const Key& k) const {
    int all = 1;
    for (int f = 0; f < kKeys; ++f) all &= sums[f][i] <= k[f];
    return all != 0;
  }
  // Whether some key of [j, j + n) is no larger than `k` in every sum.
  bool any_no_worse_than(std::size_t j, std::size_t n, const Key& k) const {
    int any = 0;
    for (std::size_t i = j; i < j + n; ++i) any |= no_worse_than(i, k);
    return any != 0;
  }
};
Keys& key_scratch() {
  thread_local Keys keys;
  return keys;
}

// Keeps the undominated candidates, in a deterministic order: within a group, sorted by y,
// a candidate is dropped when a kept one is no worse in every field. The kept entry that
// dropped the candidate before is tried first, then the others whose keys allow it, found a
// block of keys at a time. Returns the comparisons (search effort): each candidate counts
// every kept entry of its group, as when each was compared field by field (on simplified
// GNMT-32's shape of one copy, 2 micro-batches of 64 at GBS 128 on 16 single-GPU machines,
// hundreds of kept entries a cell, its exact pass took 34 s that way, 1.41 G steps; with the
// keys and extend()'s briefs, 11 s for the same steps). Counting only the comparisons made
// lets more exact passes finish within the effort, but each step then takes longer: BERT-48
// at GBS 512 on 256 GPUs took 1.0 s instead of 0.6, for the same plan.
// In a timed pass (DpQuery::timed) the candidates' timings are `timed`, the cell's `kept`,
// and entries are compared by their timings.
std::uint64_t keep_undominated(std::vector<Entry>& candidates, const Timings& timed,
                               std::vector<Entry>& cell, Timings& kept) {
  // A total order, so the result does not depend on how candidates arrived: the group, (in
  // a timed pass the sum of the timing's entries,) the fields, then the plan, compared one at
  // a time (most pairs differ in the first ones). Sorted through their indices: entries are
  // large.
  thread_local std::vector<std::uint32_t> order;
  thread_local std::vector<Seconds> sums;
  order.resize(candidates.size());
  std::iota(order.begin(), order.end(), std::uint32_t{0});
  sums.clear();
  if (timed.m > 0)
    for (const Entry& e : candidates) sums.push_back(timed.sum(e));
  auto less = [&](std::uint32_t l, std::uint32_t r) {
    const Entry &a = candidates[l], &b = candidates[r];
    if (a.group() != b.group()) return a.group() < b.group();
    for (int i = 0; i < Entry::kFields; ++i) {
      const Seconds x = a.field(i), y = b.field(i);
      if (x != y) return x < y;
    }
    return std::make_tuple(a.k(), !a.head, a.last, a.width, a.child, a.variant.recompute) <
           std::make_tuple(b.k(), !b.head, b.last, b.width, b.child, b.variant.recompute);
  };
  if (sums.empty()) {
    std::sort(order.begin(), order.end(), less);
  } else {
    std::sort(order.begin(), order.end(), [&](std::uint32_t l, std::uint32_t r) {
      const Entry &a = candidates[l], &b = candidates[r];
      if (a.group() != b.group() || sums[l] == sums[r]) return less(l, r);
      return sums[l] < sums[r];
    });
  }
  std::size_t group = cell.size();
  std::size_t hint = cell.size();  // the kept entry that dominated the last candidate
  std::uint64_t comparisons = candidates.size();
  Keys& keys = key_scratch();
  keys.clear();
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Entry& c = candidates[order[i]];
    if (i > 0 && c.group() != candidates[order[i - 1]].group())
      group = hint = cell.size(), keys.clear();
    const Key key = timed.key(c);
    comparisons += keys.size();
    auto beats = [&](std::size_t at) { return kept.no_worse(cell[at], timed, c); };
    bool dominated = hint < cell.size() && beats(hint);
    for (std::size_t j = 0; j < keys.size() && !dominated; j += Keys::kBlock) {
      const std::size_t n = std::min(Keys::kBlock, keys.size() - j);
      if (!keys.any_no_worse_than(j, n, key)) continue;
      for (std::size_t at = j; at < j + n && !dominated; ++at)
        if (group + at != hint && keys.no_worse_than(at, key) && beats(group + at))
          dominated = true, hint = group + at;
    }
    if (dominated) continue;
    keys.push_back(key);
    cell.push_back(c);
    kept.take(cell.back(), timed);
  }
  candidates.clear();
  return comparisons;
}

// The relaxed pass's cell: one entry per (k, head) with each field the least of the group's
// (DpQuery::relaxed), or with `bucket` one per group and round trip bucket (y / bucket
// rounded down; DpQuery::buckets). Prepending a stage maps y, y + e, y + x and the other
// fields through terms that never fall when one of them falls (the B term M (f + g) - R_b
// lowers e as y grows, but y + e is then M (f + g)), and the plan's bound y + max(e, x) grows
// with y, y + e and y + x: the least fields give a bound no larger than any entry's. The
// entry keeps the first stage and next entry of its candidate of least bound (the same group:
// the same transfer and terms), whose plan it then returns (DpQuery::relaxed). Returns the
// steps. `keys` is scratch space.
// With `by_worst` (DpQuery::worst_buckets) a bucket is a pair under 1F1B: y's bucket and that
// of y + e; beyond kRelaxedTimedMicroBatches (`halves`: M / 2, else 0) a triple with that of
// M / 2 x the head's f + g (head_work), which the cycles of the stage in front take. Under
// GPipe (`waves`: M - 1, else 0) a pair of `waves` x the forward wave and `waves` x the
// backward wave. Any grouping keeps the bound valid.
// In a relaxed timed pass (DpQuery::timed) the entry's timing (in `kept_timings`, from the
// candidates' `timed`) is the least of each entry of the group's, and a bucket is a pair of
// the suffix's end (timed_makespan) and of the mean of its timing's entries, whatever
// `by_worst` says: suffixes of one round trip and worst term can differ in their timings.
// The key is (k, head, t, bucket, arrival) packed into two words, in that order: k and t are
// positive ints, a bucket is below `buckets` (offer() keeps no round trip above the bound) and
// is capped at 2^31 anyway (a pair's halves at 2^15 and 2^16, a triple's thirds at 2^9, 2^13
// and 2^10, y's and the head's buckets at most kCoarseBuckets a bound wide; a cap would only
// merge buckets: a looser, still valid bound), and arrivals are below 2^32 (as many
// candidates would take a terabyte).
struct LeastKey {
  std::uint64_t group = 0, rest = 0;
  std::uint64_t bucket() const { return rest >> 32; }
  std::size_t index() const { return static_cast<std::uint32_t>(rest); }
  bool operator<(const LeastKey& o) const {
    return group != o.group ? group < o.group : rest < o.rest;
  }
};
// How a relaxed pass's cells group their candidates (DpQuery::buckets, worst_buckets): a
// bucket's width (0: one entry a group), whether by worst term, GPipe's waves (M - 1, else 0),
// and the widths of the coarser buckets of a 1F1B triple's y and head (bound / kCoarseBuckets
// where there are more buckets) with the head's factor (M / 2; 0: pairs). Up to
// kRelaxedTimedMicroBatches, where relaxed timed passes bound the simulated time after the
// refining passes, pairs: the triple's entries took the steps those needed (ResNet-101 at GBS
// 512 on 1,024 GPUs went from exact to 16.6 %).
struct Bucketing {
  Seconds width = 0;
  bool by_worst = false;
  double waves = 0;
  Seconds coarse_width = 0;
  double halves = 0;
};
constexpr int kCoarseBuckets = 256;
LeastKey least_key(const Entry& e, const Bucketing& by, std::size_t arrival, const Timings& timed) {
  auto index = [](Seconds y, double cap, Seconds width) {
    return std::min(std::floor(y / width), cap);
  };
  const Seconds w = by.width, c = by.coarse_width;
  // A pair of buckets of width w: the first capped at 2^15, the second at 2^16 - 1.
  auto pair = [&](Seconds first, Seconds second) {
    return index(first, 0x1p15, w) * 0x1p16 + index(second, 0x1p16 - 1, w);
  };
  // A 1F1B triple: y's and the head's buckets of width c, y + e's of width w.
  auto triple = [&](Seconds y, Seconds y_e, Seconds head) {
    return (index(y, 0x1p9 - 1, c) * 0x1p13 + index(y_e, 0x1p13 - 1, w)) * 0x1p10 +
           index(head, 0x1p10 - 1, c);
  };
  const SuffixBound& f = e.bound;
  const double b =
      w <= 0          ? 0
      : e.timed()     ? pair(timed_makespan(timed.of(e), timed.m), timed.sum(e) / timed.n())
      : !by.by_worst  ? index(f.round_trip, 0x1p31, w)
      : by.waves > 0  ? pair(by.waves * f.forward_wave, by.waves * f.backward_wave)
      : by.halves > 0 ? triple(f.round_trip, f.round_trip + f.worst, by.halves * f.head_work)
                      : pair(f.round_trip, f.round_trip + f.worst);
  return {static_cast<std::uint64_t>(e.k()) << 32 | std::uint64_t{!e.head} << 31 |
              static_cast<std::uint32_t>(e.t()),
          static_cast<std::uint64_t>(b) << 32 | arrival};
}
std::uint64_t keep_least(std::vector<Entry>& candidates, const Timings& timed,
                         std::vector<Entry>& cell, Timings& kept_timings, const Bucketing& by,
                         std::vector<LeastKey>& keys) {
  // Sorted by key through their indices (entries are large), ties in arrival order.
  keys.clear();
  for (std::size_t i = 0; i < candidates.size(); ++i)
    keys.push_back(least_key(candidates[i], by, i, timed));
  std::sort(keys.begin(), keys.end());
  Seconds kept = 0;  // the bound of the plan the last entry kept stands for
  for (std::size_t j = 0; j < keys.size(); ++j) {
    const Entry& c = candidates[keys[j].index()];
    if (j == 0 || keys[j].group != keys[j - 1].group || keys[j].bucket() != keys[j - 1].bucket()) {
      cell.push_back(c);
      kept_timings.take(cell.back(), timed);
      kept = timed.rank(c);
      continue;
    }
    kept_timings.lower_last(timed, c);
    if (const Seconds own = timed.rank(c); own < kept) {
      Entry& e = cell.back();
      e.last = c.last, e.width = c.width, e.child = c.child, e.variant = c.variant;
      e.next_row = c.next_row;
      kept = own;
    }
    SuffixBound& least = cell.back().bound;
    const Seconds total = std::min(least.round_trip + least.exposed, c.total());
    const Seconds drained = std::min(least.round_trip + least.drain, c.drained());
    least.round_trip = std::min(least.round_trip, c.bound.round_trip);
    least.exposed = total - least.round_trip;
    least.drain = drained - least.round_trip;
    least.worst = std::min(least.worst, c.bound.worst);
    least.head_work = std::min(least.head_work, c.bound.head_work);
    least.after_x = std::min(least.after_x, c.bound.after_x);
    least.forward_wave = std::min(least.forward_wave, c.bound.forward_wave);
    least.backward_wave = std::min(least.backward_wave, c.bound.backward_wave);
    least.delayed = std::min(least.delayed, c.bound.delayed);
    for (int i = 0; i < kWindows; ++i)
      least.window[i] = std::min(least.window[i], c.bound.window[i]);
    least.after = std::min(least.after, c.bound.after);
    least.max_pair = std::min(least.max_pair, c.bound.max_pair);
    least.tail = std::min(least.tail, c.bound.tail);
    least.last_drain = std::min(least.last_drain, c.bound.last_drain);
    for (int i = 0; i < kWindows; ++i)
      least.paced_after[i] = std::min(least.paced_after[i], c.bound.paced_after[i]);
    for (int i = 0; i < kArrivals; ++i)
      least.arrival[i] = std::min(least.arrival[i], c.bound.arrival[i]);
    for (int i = 0; i < kFed; ++i) {
      least.fed[i] = std::min(least.fed[i], c.bound.fed[i]);
      least.led[i] = std::min(least.led[i], c.bound.led[i]);
    }
  }
  const std::uint64_t steps = candidates.size();
  candidates.clear();
  return steps;
}

// The greedy pass's cell (DpQuery::greedy): per (head, t), the candidate of least bound_of,
// ties broken by the plan; then sorted by (k, head, t, y) as extend() expects. Returns the
// steps.
std::uint64_t keep_greedy(std::vector<Entry>& candidates, std::vector<Entry>& cell) {
  auto key = [](const Entry& e) {
    return std::make_tuple(!e.head, e.t(), bound_of(e.bound), e.bound.round_trip, e.k(), e.last,
                           e.width, e.child, e.variant.recompute);
  };
  std::sort(candidates.begin(), candidates.end(),
            [&](const Entry& a, const Entry& b) { return key(a) < key(b); });
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (i == 0 || candidates[i].head != candidates[i - 1].head ||
        candidates[i].t() != candidates[i - 1].t())
      cell.push_back(candidates[i]);
  std::sort(cell.begin(), cell.end(), [](const Entry& a, const Entry& b) {
    return std::make_tuple(a.group(), a.bound.round_trip) <
           std::make_tuple(b.group(), b.bound.round_trip);
  });
  const std::uint64_t steps = candidates.size();
  candidates.clear();
  return steps;
}

// One stage being placed: states [first, last] on devices [offset, offset + width) (in a
// class pass, DpQuery::device_class, on classes [offset, offset + width) of devices).
struct Stage {
  std::size_t first = 0, last = 0;
  int offset = 0, width = 0;
  int start = 0;  // the device it starts on (in a class pass the last its class allows)
  StageTimes times;
  Bytes weights = 0, activations = 0;  // per device: weights + working, per micro-batch
  bool head = false;                   // the stage sits on one machine in every copy
  bool cut_compact = false;            // it and the next device share a machine in every copy
  StageVariant variant;
  Bytes memory = 0;  // of its smallest GPU
  // A recomputing stage: the memory of the same stage without recomputation (which is
  // faster, so preferred wherever it fits).
  Bytes plain_weights = 0, plain_activations = 0;
  // The least first state of the stages it stands for (prefix_bound), and the row of the cell
  // after it (rows_ when it is the last stage); in a block pass (DpQuery::state_block) the
  // least bytes of their cuts, and whether it stands for stages inside one block (no work).
  std::size_t from = 0, next = 0;
  Bytes cut = 0;
  bool inside = false;
};

class Dp {
 public:
  Dp(const CostModel& cost, const DpQuery& q)
      : cost_(cost),
        q_(q),
        layout_(cost.layout(q.replicas, q.replica_width)),
        n_(cost.states()),
        b_(q.relaxed && cost.chain() && q.device_class <= 1 && q.granule <= 1 && q.free_widths <= 0
               ? std::max(1, q.state_block)
               : 1),
        rows_(n_),
        w_(q.replica_width),
        g_(std::max(1, q.granule)),
        c_(std::max(1, q.device_class)),
        period_(q.free_widths > 0 && c_ == 1 && g_ == 1 ? q.free_widths : 0),
        slots_(period_ > 0 ? std::min(w_, period_) : (w_ + c_ - 1) / c_),
        intra_allreduce_(cost.cluster().network.intra >= cost.cluster().network.inter_allreduce),
        intra_transfer_(cost.cluster().network.intra >= cost.cluster().network.inter_p2p),
        compact_cuts_(cost.largest_machine() > 1 &&
                      cost.cluster().network.intra != cost.cluster().network.inter_p2p),
        largest_machine_(cost.largest_machine()),
        timed_(q.timed && !q.greedy && c_ == 1 && period_ == 0 &&
               (!q.relaxed ? timeable(q.micro_batches, q.schedule)
                : b_ > 1   ? block_timeable(q.micro_batches, q.schedule)
                           : relaxed_timeable(q.micro_batches, q.schedule))),
        bound_(q.bound * (1 + kSlack)) {
    main_.limit = q.step_limit;
    blank_.m = timed_ ? q.micro_batches : 0;
    terms_.paced = terms_.paced && !q.greedy;  // a greedy pass ranks without it
    if (q.relaxed && q.buckets > 1 && std::isfinite(q.bound))
      bucketing_ = {q.bound / q.buckets, q.worst_buckets,
                    q.schedule == Schedule::GPipe ? q.micro_batches - 1.0 : 0.0,
                    q.bound / std::min(q.buckets, kCoarseBuckets),
                    q.micro_batches > kRelaxedTimedMicroBatches ? q.micro_batches / 2.0 : 0.0};
    if (b_ > 1) rows_ = blocks();
    floor_sends();
  }

  DpResult run() {
    const std::uint64_t cells =
        static_cast<std::uint64_t>(rows_) * static_cast<std::uint64_t>(slots_);
    if (!main_.spend(cells)) return {{}, main_.steps, true};
    cells_.resize(rows_ * static_cast<std::size_t>(slots_));
    briefs_.resize(cells_.size());
    if (timed_) timings_.assign(cells_.size(), blank_);
    if (b_ > 1) {
      if (!main_.spend(n_)) return {{}, main_.steps, true};
      inside_cut_.assign(rows_, kInfinite);
      for (std::size_t a = 0; a < rows_; ++a)
        for (std::size_t j = first_of(a); j < last_of(a); ++j)
          inside_cut_[a] = std::min(inside_cut_[a], cost_.crossing(j, q_.micro_batch));
    }
    // A block pass's stages inside a block lead to a later cell of the same block.
    for (std::size_t a = rows_; a-- > 0 && !main_.stopped;) {
      if (q_.memory_limit > 0) main_.room = (q_.memory_limit - held_) / candidate_bytes_;
      main_.most = 0;
      fill_row(a);
      peak_ = std::max(peak_, held_ + main_.most);
      if (!main_.out_of_memory && !main_.stopped) held_ += row_bytes(a);
      if (main_.out_of_memory || (q_.memory_limit > 0 && held_ > q_.memory_limit))
        return out_of_memory();
      peak_ = std::max(peak_, held_);
    }
    if (main_.stopped) return {{}, main_.steps, true};
    // A class or free-width pass's entries stand for many plans at once, not one; a block
    // pass's plans are one of those of each entry (spec_from).
    DpResult result{q_.plans <= 0 || c_ > 1 || period_ > 0 ? std::vector<DpPlan>{} : best(),
                    main_.steps, false};
    result.bytes = peak_;
    for (const Entry& e : cell(0, 0))
      result.least_bound = std::min(result.least_bound, timings(0).rank(e));
    if (q_.enumerate > 0 && result.least_bound >= q_.enumerate_from &&
        result.least_bound <= q_.enumerate_bound)
      enumerate(result);
    return result;
  }

 private:
  // The bytes row a's cells hold (entries, briefs and timings, by capacity).
  std::uint64_t row_bytes(std::size_t a) const {
    std::uint64_t bytes = 0;
    for (int o = 0; o < slots_; ++o) {
      const std::size_t i = index(a, o);
      bytes += cells_[i].capacity() * sizeof(Entry) + briefs_[i].capacity() * sizeof(Brief) +
               (timed_ ? timings_[i].at.capacity() * sizeof(Seconds) : 0);
    }
    return bytes;
  }
  // A pass stopped at its memory limit: every step it was allowed counts as spent.
  DpResult out_of_memory() {
    DpResult result{{}, q_.step_limit, true};
    result.out_of_memory = true;
    return result;
  }
  std::vector<Entry>& cell(std::size_t a, int o) { return cells_[index(a, o)]; }
  // The timings of cell i: in a pass that is not timed, blank_ (never written: its entries
  // have none), so that its cells cost nothing more.
  Timings& timings(std::size_t i) { return timed_ ? timings_[i] : blank_; }
  const Timings& timings(std::size_t i) const { return timed_ ? timings_[i] : blank_; }
  const std::vector<Entry>& cell(std::size_t a, int o) const { return cells_[index(a, o)]; }
  std::size_t index(std::size_t a, int o) const {
    return a * static_cast<std::size_t>(slots_) + static_cast<std::size_t>(o);
  }
  // The cell (of the next row) after stage s: where its devices end (in a free-width pass,
  // the position of that device; slots_ or more: the copy has none left).
  int cell_after(const Stage& s) const {
    return period_ > 0 ? (s.offset + s.width) % period_ : s.offset + s.width;
  }

  // The states of row a: state a, or in a block pass (DpQuery::state_block) block a.
  std::size_t first_of(std::size_t a) const { return b_ > 1 ? starts_[a] : a; }
  std::size_t last_of(std::size_t a) const { return b_ > 1 ? starts_[a + 1] - 1 : a; }
  // Cuts the states into blocks of about equal work (DpQuery::state_block: n / b_ of them),
  // each of at least one state and at most 2 b_ (starts_); returns how many.
  std::size_t blocks() {
    const std::size_t target =
        (n_ + static_cast<std::size_t>(b_) - 1) / static_cast<std::size_t>(b_);
    const Seconds total = work(0, n_ - 1);
    starts_.assign(1, 0);
    for (std::size_t i = 1; i < n_; ++i) {
      const Seconds done = work(0, i - 1);
      const bool full =
          done >= total * static_cast<double>(starts_.size()) / static_cast<double>(target);
      if (full || i - starts_.back() >= 2 * static_cast<std::size_t>(b_)) starts_.push_back(i);
    }
    starts_.push_back(n_);
    return starts_.size() - 1;
  }

  // The devices [first, second] a stage of row a in cell o may start on: device o (in a
  // class pass, one of class o; in a free-width pass, o or a later device of the copy);
  // device 0 for state 0 and no other state (in a block pass, any device for the first
  // block, whose later states may start a stage).
  std::pair<int, int> starts(std::size_t a, int o) const {
    if (a == 0 && b_ == 1) return o == 0 ? std::pair{0, 0} : std::pair{1, 0};
    if (period_ > 0) return {std::max(1, o), w_ - 1};
    return {a == 0 ? o * c_ : std::max(1, o * c_), std::min(o * c_ + c_ - 1, w_ - 1)};
  }

  // The work of states [first, last] for one micro-batch on the fastest GPU.
  Seconds work(std::size_t first, std::size_t last) const {
    return (cost_.forward(first, last, q_.micro_batch) +
            cost_.backward(first, last, q_.micro_batch)) /
           cost_.fastest();
  }

  // Most devices one pipeline stage on `devices` can use: a stage of width r takes at least
  // 1/r of its one-device time.
  int parallelism(int devices) const {
    return capped(max_stage_width(false, q_.micro_batch, devices, cost_.max_tensor_parallel()));
  }
  // A width within the query's max_stage_width (none when it is 0).
  int capped(int width) const {
    return q_.max_stage_width > 0 ? std::min(width, q_.max_stage_width) : width;
  }

  // The stage_samples of a stage of r data-parallel replicas; a copy's share is b x M (the
  // shapes searched here divide it evenly).
  StageSamples samples_on(bool one_stage, int r) const {
    return stage_samples(one_stage, q_.micro_batch * q_.micro_batches, q_.micro_batch,
                         q_.micro_batches, r);
  }

  // What the stages before state a on devices [0, o) add at least (InFront): each stage's f
  // and g are at least its work over its width, no width exceeds parallelism(o), and the last
  // of them sends its activations across the cut in front of a and gets the gradients back
  // (send_floor).
  InFront in_front(std::size_t a, int o) const {
    InFront front{.micro_batches = q_.micro_batches};
    if (a == 0) return front;
    const double fastest = cost_.fastest(), b = q_.micro_batch;
    const Seconds forward = cost_.forward(0, a - 1, b) / fastest;
    const Seconds backward = cost_.backward(0, a - 1, b) / fastest;
    const Seconds send = send_floor(a, o);
    const int widest = parallelism(o);
    front.arrive = forward / widest + send, front.back = backward / widest + send;
    // The cut's link carries one micro-batch after another each way (path_bound.h: C, L).
    front.forward_pace = std::max(forward / std::max(o, 1), send);
    front.backward_pace = std::max(backward / std::max(o, 1), send);
    return front;
  }
  // The least round trip of the stages before state a on devices [0, o) (InFront::trip).
  Seconds prefix_bound(std::size_t a, int o) const { return in_front(a, o).trip(); }
  // The path bound's terms of the slowest of the stages that hold states [first, last] on
  // `devices` devices (InFront::pace).
  Seconds pace(std::size_t first, std::size_t last, int devices) const {
    const double b = q_.micro_batch;
    const Seconds most = std::max(cost_.forward(first, last, b), cost_.backward(first, last, b));
    return (q_.micro_batches - 1) * most / (cost_.fastest() * std::max(devices, 1));
  }
  // The least transfer across the cut in front of state a from device o - 1 to device o of a
  // copy (send()): the bytes split the most ways tensor parallelism may split them, over the
  // link between the two devices. In a block pass, a is a block's first state, and the cut
  // the least of the block's. 0 in a class or free-width pass, whose cells stand for stages
  // that start on other devices, and in a coarse pass (floor_sends).
  Seconds send_floor(std::size_t a, int o) const {
    if (cut_floor_.empty() || o == 0) return 0;
    const std::size_t o1 = static_cast<std::size_t>(o);
    return compact_cut_[o1 - 1] ? cut_floor_[a].intra : cut_floor_[a].inter;
  }
  // Fills cut_floor_ and compact_cut_ (send_floor) but in a class or free-width pass, and
  // but in a coarse one (DpQuery::granule; greedy passes too), whose plans are candidates
  // only: with it there, ResNet-50 at GBS 512 on 4,096 GPUs took 6.7 s instead of 1.4 s for
  // the same answer (not found why).
  void floor_sends() {
    if (c_ > 1 || period_ > 0 || g_ > 1) return;
    const double split = std::max(1, cost_.max_tensor_parallel());
    cut_floor_.assign(n_, {});
    for (std::size_t a = 1; a < n_; ++a) {
      const Bytes bytes = cost_.crossing(a - 1, q_.micro_batch) / split;
      const Seconds inter = cost_.transfer(bytes, false);
      cut_floor_[a] = {std::min(inter, cost_.transfer(bytes, true)), inter};
    }
    for (std::size_t a = 0; b_ > 1 && a < rows_; ++a)
      for (std::size_t j = first_of(a) + 1; j <= last_of(a); ++j) {
        CutFloor& least = cut_floor_[first_of(a)];
        least.intra = std::min(least.intra, cut_floor_[j].intra);
        least.inter = std::min(least.inter, cut_floor_[j].inter);
      }
    compact_cut_.assign(static_cast<std::size_t>(w_), 0);
    for (int o = 0; o + 1 < w_; ++o)
      compact_cut_[static_cast<std::size_t>(o)] = layout_.compact(o, 2);
  }

  // A stage's M forwards and backwards all lie on one path (path_bound.h, B), so no
  // stage of a plan within the bound does more than bound / M per micro-batch.
  bool busy_within_bound(Seconds per_micro_batch) const {
    return q_.micro_batches * per_micro_batch <= bound_;
  }

  // Necessary conditions for a cell to be part of a plan: the states before a fit devices
  // [0, o) and the rest fit [o, W) within the bound (r devices do a stage's work at best r
  // times faster, so some stage does at least the work over the devices), and the smallest
  // fill_drain this split allows is within the bound.
  // In a class pass, for some device of the class: the prefix's terms on its last device,
  // the suffix's on its first.
  // In a block pass, for some state of the block: the prefix's on its first, the suffix's
  // on its last.
  bool viable(std::size_t a, int o) const {
    const auto [first, last] = starts(a, o);
    if (first > last || !reachable(a, first)) return false;
    const double b = q_.micro_batch;
    const std::size_t from = first_of(a), to = last_of(a);
    const Seconds prefix = from ? work(0, from - 1) : 0;
    const Seconds suffix =
        (cost_.forward(to, n_ - 1, b) + cost_.backward(to, n_ - 1, b)) / cost_.fastest();
    if ((last > 0 && !busy_within_bound(prefix / last)) ||
        !busy_within_bound(suffix / (w_ - first)))
      return false;
    // From state 0 a one-stage plan may use all `rest` devices (fill()).
    const int widest =
        capped(max_stage_width(a == 0, q_.micro_batch, w_ - first, cost_.max_tensor_parallel()));
    // The slowest stage in front or behind adds its pace to the round trip (InFront::pace).
    const Seconds paced =
        std::max(from > 0 ? pace(0, from - 1, last) : 0, pace(to, n_ - 1, w_ - first));
    return prefix_bound(from, last) + suffix / widest + paced <= bound_;
  }

  // Whether a plan can reach device `first` at row a: the stages in front of a stage that starts
  // at state j are at most j (one state or more each), none wider than parallelism(), so no plan
  // puts its stage further into the copy, and such a cell is led to only by the stages of other
  // such cells, filled for nothing. (One copy of 128 micro-batches of 4 on 1,024 GPUs: stages of
  // up to 4 GPUs, so GNMT-16's 77 states reach 308 of the 1,024 devices.) A plain or block pass
  // (a stage may start at any state of the block); a class or free-width pass's cells stand for
  // other devices too.
  bool reachable(std::size_t a, int first) const {
    return c_ > 1 || period_ > 0 ||
           static_cast<long long>(first) <=
               static_cast<long long>(last_of(a)) * static_cast<long long>(parallelism(w_));
  }

  bool fits(const Stage& s, int stages_from_here) const {
    return fits(s.weights, s.activations, s.memory, stages_from_here);
  }
  bool fits(Bytes weights, Bytes activations, Bytes memory, int stages_from_here) const {
    const int kept = in_flight(q_.schedule, 0, stages_from_here, q_.micro_batches);
    return weights + kept * activations <= memory;
  }
  // A recomputing stage is slower than the same stage without recomputation, so it only
  // counts where that one does not fit.
  bool needless(const Stage& s, int stages_from_here) const {
    return s.variant.recompute &&
           fits(s.plain_weights, s.plain_activations, s.memory, stages_from_here);
  }
  // Whether a stage with this many stages from it on is refused on memory alone: it does
  // not fit, or it recomputes where it need not.
  bool refused(const Stage& s, int stages_from_here) const {
    return !fits(s, stages_from_here) || needless(s, stages_from_here);
  }

  // One variant of the stages from a state on a set of devices, as their last state grows.
  struct Trial {
    StageVariant variant;
    CostModel::Place place;
    StageSamples samples;
    CostModel::ExposedScan exposed;
    int reducers = 1;
    bool ar_intra = false;    // its data-parallel GPUs all share one machine
    bool live = true;         // a chain: no shorter stage broke the bound or memory
    int memory_reducers = 1;  // reducers for its weight memory (a class pass: the most)
    // A block pass: the largest origin over the first block's states, and the largest reach
    // so far over the stage's states up to `reached` (ExposedScan::reach).
    Seconds origin = 0, reach = 0;
    std::size_t reached = 0;
  };
  // What filling cells changes: scratch space, reused, and the steps spent against a limit.
  // The cells of a row are filled in parallel, each with the Work of its thread (fill_row).
  struct Work {
    std::vector<Entry> candidates;
    std::vector<Trial> trials;           // trials()' answer
    std::vector<StageVariant> variants;  // its variants
    std::vector<LeastKey> keys;          // keep_least's scratch
    Timings timings;                     // the candidates' (a timed pass)
    std::uint64_t limit = 0, steps = 0;  // steps allowed and spent
    bool stopped = false;
    // The candidates a cell may have (of what DpQuery::memory_limit leaves the rows filled
    // before), and whether one had more (the work then stops too).
    std::size_t room = std::numeric_limits<std::size_t>::max();
    bool out_of_memory = false;
    std::uint64_t most = 0;  // the most bytes a cell's candidates took (since the row began)
    // A cell of a row filled in parallel: the steps of all the row's cells, to which it adds
    // its own every kSharedSteps; it stops once they pass its limit (fill_row).
    std::atomic<std::uint64_t>* row = nullptr;
    std::uint64_t shared = 0;  // its steps added to *row
    // Counts work against the limit; false (and the work stops) once it is used up.
    bool spend(std::uint64_t n) {
      if (stopped || n > limit - steps) return !(stopped = true);
      steps += n;
      return !row || steps - shared < kSharedSteps || share();
    }
    bool share() {
      const std::uint64_t all = row->fetch_add(steps - shared) + (steps - shared);
      shared = steps;
      return !(stopped = all > limit);
    }
  };
  // The entries of cell (a, o).
  void fill(Work& w, std::size_t a, int o) {
    w.timings.m = blank_.m;
    stages_from(w, a, o);
    w.most = std::max<std::uint64_t>(w.most, w.candidates.size() * candidate_bytes_);
    w.spend(q_.greedy ? keep_greedy(w.candidates, cell(a, o))
            : q_.relaxed
                ? keep_least(w.candidates, w.timings, cell(a, o), timings(index(a, o)), bucketing_,
                             w.keys)
                : keep_undominated(w.candidates, w.timings, cell(a, o), timings(index(a, o))) /
                      kComparisonsPerStep);
    w.timings.clear();
    std::vector<Brief>& briefs = briefs_[index(a, o)];
    for (const Entry& e : cell(a, o))
      briefs.push_back({e.bound.round_trip, e.bound.worst, e.bound.exposed, e.k(), e.t(), e.head});
  }
  // Tries every stage from state a on cell o (each goes to extend()). A one-stage plan (a =
  // 0, which the loop of widen() stops short of) may be wider than a pipeline stage
  // (max_stage_width).
  void stages_from(Work& w, std::size_t a, int o) {
    if (a == 0 && starts(a, o).first == 0)
      for (int r = 1; r <= capped(max_stage_width(true, q_.micro_batch, w_)); ++r)
        offer_whole_model(w, r);
    if (c_ > 1) {
      // Classes o + d while their narrowest stage has devices to use.
      const int first = starts(a, o).first;
      for (int d = 0; class_widths(a, o, d).first <= parallelism(w_ - first) && !w.stopped; ++d)
        widen_classes(w, a, o, d);
    } else {
      for (int r = 1; r <= parallelism(w_ - o); ++r)
        if ((r % g_ == 0 || a > 0) &&
            !(q_.greedy && r % g_ == 0 && !std::has_single_bit(static_cast<unsigned>(r / g_))))
          widen(w, a, o, r);
    }
  }

  void fill_row(std::size_t a);
  std::vector<Trial>& trials(Work& w, std::size_t a, int o, int r, bool one_stage);
  std::pair<int, int> class_widths(std::size_t a, int o, int d) const;
  std::vector<Trial>& class_trials(Work& w, std::size_t a, int narrowest, int widest,
                                   bool one_stage, bool head);
  bool split(int first, int last) const;
  void widen(Work& w, std::size_t a, int o, int r);
  void widen_classes(Work& w, std::size_t a, int o, int d);
  void grow(Work& w, Stage& s, std::vector<Trial>& variants);
  void grow_blocks(Work& w, Stage& s, std::vector<Trial>& variants);
  bool try_variants(Work& w, Stage& s, std::vector<Trial>& variants, std::uint64_t& unfollowed);
  Seconds block_exposed(const Stage& s, Trial& trial) const;
  bool try_stage(Work& w, Stage& s, Trial& trial);
  void offer_whole_model(Work& w, int r);
  Entry prepend(const Stage& s, const Entry* next, Seconds send, int index, const Timings& after,
                Timings& to) const;
  void extend(Work& w, const Stage& s, const InFront& front);
  bool offer(Work& w, const Entry& entry, const InFront& front);
  std::vector<DpPlan> best();
  std::optional<PipelineSpec> spec_from(std::size_t pick) const;
  Seconds send(const Stage& s, const Entry& next) const;
  Seconds completion(const Stage& s) const;
  bool explore(Work& w, std::size_t a, int o);
  PipelineSpec plan_ending(const Stage& s) const;
  void sign(const Stage& s);
  bool first_visit(Work& w, std::size_t a, int o);
  void enumerate(DpResult& result);

  const CostModel& cost_;
  const DpQuery& q_;
  Layout layout_;
  std::size_t n_;
  int b_;             // DpQuery::state_block (1 but in a relaxed pass on a chain, devices 1)
  std::size_t rows_;  // rows of cells: states, or blocks of b_ states
  int w_;
  int g_;       // DpQuery::granule
  int c_;       // DpQuery::device_class
  int period_;  // DpQuery::free_widths (0: not a free-width pass)
  int slots_;   // cells a state: W / c (a free-width pass: positions, at most the period)
  // Whether the links inside a machine are no slower than those across machines, for
  // all-reduces and for transfers (a class pass takes the faster).
  bool intra_allreduce_, intra_transfer_;
  // Some cut may stay inside a machine, at another speed than across machines: only then
  // does a suffix's head change the transfer in front of it.
  bool compact_cuts_;
  int largest_machine_;  // GPUs of the largest machine
  std::vector<std::vector<Entry>> cells_;
  // Per cell, what extend() checks of each entry before it builds the entry in front (most
  // end there), kept apart from the entries, which are eight times as large.
  struct Brief {
    Seconds round_trip, worst, exposed;
    int k, t;
    bool head;
  };
  std::vector<std::vector<Brief>> briefs_;
  BoundTerms terms_ = q_.terms;  // DpQuery::terms, `paced` off in a greedy pass
  bool timed_;                   // DpQuery::timed, where it applies
  // DpQuery::max_stages where it applies, else more than any suffix counts.
  static constexpr int kAnyCount = std::numeric_limits<int>::max();
  int most_stages_ =
      q_.max_stages > 0 && q_.max_stages < q_.micro_batches ? q_.max_stages : kAnyCount;
  // The cells' timings (only in a timed pass: timings()), and an empty one of this pass
  // (m = M where it is timed, else 0).
  std::vector<Timings> timings_;
  Timings blank_;
  Seconds bound_;
  Bucketing bucketing_;              // DpQuery::buckets and worst_buckets (width 0: none)
  std::vector<Bytes> inside_cut_;    // a block pass: per block, its least cut but its last
  std::vector<std::size_t> starts_;  // a block pass: block a's states [starts_[a], starts_[a + 1])
  // But in a class, free-width or coarse pass (floor_sends): per state, the least transfer across
  // the cut in front of it (in a block pass, at a block's first state, the block's least), where
  // the two devices may share a machine and where they do not; per device but the last,
  // whether it and the next may share one.
  struct CutFloor {
    Seconds intra = 0, inter = 0;
  };
  std::vector<CutFloor> cut_floor_;
  std::vector<char> compact_cut_;
  // The pass's steps in all (its limit: DpQuery::step_limit), and the enumeration's scratch.
  Work main_;
  // fill_row's scratch, one a thread, made for the first row filled in parallel (most passes
  // have none: they would pay for it, about 2 % of a sweep on one thread).
  std::unique_ptr<tbb::enumerable_thread_specific<Work>> works_;
  std::uint64_t row_steps_ = 0;  // the steps of the last row filled
  std::uint64_t held_ = 0;       // bytes of the rows filled (row_bytes)
  std::uint64_t peak_ = 0;       // DpResult::bytes so far
  // A candidate's bytes (its entry and timing), as DpQuery::memory_limit counts them.
  std::size_t candidate_bytes_ =
      sizeof(Entry) +
      (timed_ ? static_cast<std::size_t>(timing_entries(q_.micro_batches)) * sizeof(Seconds) : 0);
  // The threads that may run.
  int threads_ = static_cast<int>(
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
  // An enumerating pass (DpQuery::enumerate) once the cells are filled: the stages in front
  // of the one being tried, the stages extend() found can complete within the bound (each
  // with its least completion), and the plans found.
  bool enumerating_ = false;
  struct Child {
    Stage stage;
    Seconds least = 0;
  };
  std::vector<Stage> prefix_;
  std::vector<Child> children_;
  std::vector<DpPlan> found_;
  // Where it stopped: the least completion of the stages it did not follow (explore()).
  Seconds frontier_ = kInfinite;
  std::vector<double> signature_;          // of prefix_ (sign())
  std::set<std::vector<double>> visited_;  // first_visit()'s cells and signatures
};

// Every variant of the stages from state a on devices [o, o + r) of each copy.
// (The answer is reused by the next call.)
std::vector<Dp::Trial>& Dp::trials(Work& w, std::size_t a, int o, int r, bool one_stage) {
  const bool ar_intra = layout_.all_replicas_compact(o, r);
  const int most = one_stage ? r : q_.micro_batch;  // data-parallel replicas of the stage
  const CostModel::Place place = cost_.place(layout_, o, r);
  stage_variants(cost_, layout_, o, r, most, w.variants);
  w.trials.clear();
  for (const StageVariant& v : w.variants) {
    const int replicas = r / v.tensor_parallel;
    const StageSamples samples = samples_on(one_stage, replicas);
    const int reducers = replicas * q_.replicas;
    w.trials.push_back({v, place, samples,
                        CostModel::ExposedScan(cost_, first_of(a), samples.timed, reducers,
                                               ar_intra, v, place.speed),
                        reducers, ar_intra, true, reducers});
  }
  return w.trials;
}

// Fills the viable cells of row a: in parallel, each with the Work of its thread, where more
// than one thread may run and the row before took at least kParallelRow steps; otherwise, and
// always in a block pass (whose stages inside a block lead to a later cell of the same row),
// one after another. Steps count as if the cells were filled one after another by offset: a cell
// that would have run out with what the cells before it left is filled again with that, and
// the pass stops there with the steps it would have taken, whatever the threads.
void Dp::fill_row(std::size_t a) {
  const std::uint64_t before = main_.steps;
  if (b_ > 1 || slots_ < 2 * g_ || row_steps_ < kParallelRow || threads_ < 2) {
    for (int i = 0; i < slots_; i += g_) {
      const int o = b_ > 1 ? slots_ - 1 - i : i;
      if (viable(a, o)) fill(main_, a, o);
    }
    row_steps_ = main_.steps - before;
    return;
  }
  if (!works_) works_ = std::make_unique<tbb::enumerable_thread_specific<Work>>();
  std::vector<int> offsets;
  for (int o = 0; o < slots_; o += g_)
    if (viable(a, o)) offsets.push_back(o);
  struct Tally {
    std::uint64_t steps = 0;
    bool stopped = false;
    std::uint64_t most = 0;  // Work::most
  };
  std::vector<Tally> tallies(offsets.size(), {0, true});  // a cell not filled: stopped
  const std::uint64_t room = main_.limit - main_.steps;
  std::atomic<std::uint64_t> row{0};
  auto fill_with = [&](std::uint64_t limit, int o, std::atomic<std::uint64_t>* shared) -> Work& {
    Work& w = works_->local();
    w.limit = limit, w.steps = 0, w.stopped = false, w.row = shared, w.shared = 0;
    w.room = main_.room, w.out_of_memory = false, w.most = 0;
    fill(w, a, o);
    if (shared) shared->fetch_add(w.steps - w.shared);
    return w;
  };
  // Each thread takes the next cell in order until the row's steps pass the pass's limit: the
  // cells filled are those before it, but for the few the threads had begun. Isolated: a
  // thread waiting for the row's cells takes none of the search's other tasks (a whole pass
  // of another shape), which would hold this pass up until it ends.
  std::atomic<std::size_t> next{0};
  const int tasks = std::min(threads_, static_cast<int>(offsets.size()));
  tbb::this_task_arena::isolate([&] {
    tbb::parallel_for(0, tasks, [&](int) {
      for (std::size_t j; row.load() <= room && (j = next++) < offsets.size();) {
        const Work& w = fill_with(room, offsets[j], &row);
        tallies[j] = {w.steps, w.stopped, w.most};
      }
    });
  });
  // One after another: a cell that stopped (by itself or with the row) or was not filled, or
  // took more than the cells before it left, is filled again with what they left.
  for (std::size_t j = 0; j < offsets.size() && !main_.stopped; ++j) {
    const Tally& t = tallies[j];
    if (!t.stopped && t.steps <= main_.limit - main_.steps) {
      main_.steps += t.steps;
      main_.most = std::max(main_.most, t.most);
      continue;
    }
    cell(a, offsets[j]).clear();
    briefs_[index(a, offsets[j])].clear();
    timings(index(a, offsets[j])).clear();
    const Work& w = fill_with(main_.limit - main_.steps, offsets[j], nullptr);
    main_.steps += w.steps;
    main_.stopped = w.stopped;
    main_.out_of_memory = w.out_of_memory;
    main_.most = std::max(main_.most, w.most);
  }
  row_steps_ = main_.steps - before;
}

// Whether devices `first` and `last` of a copy sit on different machines, as far as a class
// pass can tell: only where it has one copy, which starts on device 0 (on the cluster's first
// machines too); copies of a shape's class bound may start anywhere (DpQuery::narrowest_copy).
bool Dp::split(int first, int last) const {
  return q_.replicas == 1 && layout_.machine(0, first) != layout_.machine(0, last);
}

// The widths [first, second] of the stages from state a that start in class o and end
// before a device of class o + d (DpQuery::device_class); empty when first > second.
std::pair<int, int> Dp::class_widths(std::size_t a, int o, int d) const {
  const auto [first, last] = starts(a, o);
  const int end = (o + d) * c_;  // the first device of class o + d
  const int widest = std::min(end + c_ - 1, w_) - first;
  return {std::max(1, end - last),
          q_.max_stage_width > 0 ? std::min(widest, q_.max_stage_width) : widest};
}

// Every variant of the stages from state a of `narrowest` to `widest` devices (a class pass,
// DpQuery::device_class), each with the least times and memory of its widths:
// compute and memory on the widest with the fastest GPUs and the largest memory, the
// all-reduce and weight gathers on the narrowest, exposed behind the slowest GPUs' backward
// of the narrowest's samples, inside a machine where the narrowest's devices of every copy
// (DpQuery::narrowest_copy apart) fit the largest machine, the stages may sit on one (`head`)
// and that link is the faster. (The answer is reused by the next call.)
std::vector<Dp::Trial>& Dp::class_trials(Work& w, std::size_t a, int narrowest, int widest,
                                         bool one_stage, bool head) {
  w.trials.clear();
  const CostModel::Place place{cost_.fastest(), cost_.largest_memory(), ""};
  for (int t = 1; t <= cost_.max_tensor_parallel() && t <= widest; ++t) {
    // Widths that t divides, with at most b data-parallel replicas of t GPUs (any number in
    // a one-stage plan).
    const int lo = (narrowest + t - 1) / t,
              hi = one_stage ? widest / t : std::min(widest / t, q_.micro_batch);
    if (lo > hi || !cost_.tensor_parallel_allowed(t)) continue;
    for (const bool recompute : {false, true}) {
      if (recompute && !cost_.recomputable()) continue;
      const StageVariant v{t, recompute};
      const int reducers = lo * q_.replicas;
      const int stride = std::max(q_.narrowest_copy, lo * t);  // between copies' stages
      const bool intra =
          intra_allreduce_ && head && (q_.replicas - 1) * stride + lo * t <= largest_machine_;
      w.trials.push_back(
          {v, place, samples_on(one_stage, hi),
           CostModel::ExposedScan(cost_, first_of(a), samples_on(one_stage, lo).timed, reducers,
                                  intra, v, cost_.slowest()),
           reducers, intra, true, hi * q_.replicas});
    }
  }
  return w.trials;
}

// Every stage [a, e] on devices [o, o + r), in each variant: in a chain for growing e until
// no variant fits (stages only grow with e); otherwise for every e whose cut contains state
// a - 1's. A coarse pass's stage narrower than its granule can only be the last, [a, n - 1].
// (In a free-width pass, o is a position inside a machine: the stage stands for those on
// every later device of that position, which run as it does.)
void Dp::widen(Work& w, std::size_t a, int o, int r) {
  // Under DpQuery::max_stages, a stage after the first with a suffix behind it makes a plan of
  // at least three stages.
  const bool last_only = r % g_ != 0 || (a > 0 && b_ == 1 && most_stages_ < 3);
  if (last_only && !cost_.stage(a, n_ - 1)) return;
  std::vector<Trial>& variants = trials(w, a, o, r, false);
  const int start = starts(a, o).second;  // a free-width pass: the last device it may start on
  Stage s{
      a,  a, o, r, start, {}, 0, 0, layout_.compact(o, r), o + r < w_ && layout_.compact(o, r + 1),
      {}, 0, 0, 0};
  if (last_only) {
    s.last = n_ - 1, s.from = a, s.next = rows_;
    for (Trial& trial : variants)
      if (w.spend(1)) try_stage(w, s, trial);
    return;
  }
  grow(w, s, variants);
}

// Every stage from state a that starts in class o and ends before a device of class o + d
// (DpQuery::device_class), in each variant with its widths' least times. It sits on one
// machine where the narrowest fits the largest, and its cut stays inside one where the
// narrowest and the next device do and that link is the faster. From d = 1 on, each holds
// the devices from the cell's last start to the one before class o + d, and with its cut the
// next one: where those cross a machine's end (split), no stage of them sits on one machine.
void Dp::widen_classes(Work& w, std::size_t a, int o, int d) {
  const auto [narrowest, widest] = class_widths(a, o, d);
  if (narrowest > widest) return;
  const int last = starts(a, o).second, end = (o + d) * c_;
  const bool head = narrowest <= largest_machine_ && (d == 0 || !split(last, end - 1));
  const bool cut = intra_transfer_ && narrowest + 1 <= largest_machine_ &&
                   (d == 0 || end >= w_ || !split(last, end));
  std::vector<Trial>& variants = class_trials(w, a, narrowest, widest, false, head);
  Stage s{a, a, o, d, last, {}, 0, 0, head, cut, {}, 0, 0, 0};
  grow(w, s, variants);
}

// Stage s in each live variant (its states, cells and devices set); false when no variant
// was offered, which on a chain ends the longer stages of the variants that failed. A stage
// that no suffix can follow is offered nothing, so it is not costed: most stages are such on
// wide copies (GNMT-32 on 16 single-GPU machines: 87 % of them; its sweep took half the time
// without them). Checking one costs about a comparison, and counts as one. It does not end a
// chain, since whether it breaks the bound or memory is not known: the next stage that can
// be followed, costed, may end it (`unfollowed` counts them).
bool Dp::try_variants(Work& w, Stage& s, std::vector<Trial>& variants, std::uint64_t& unfollowed) {
  const int next = cell_after(s);
  if (s.next < rows_ && (next >= slots_ || cell(s.next, next).empty()))
    return ++unfollowed % kComparisonsPerStep != 0 || w.spend(1);
  bool any = false;
  for (Trial& trial : variants) {
    if (!trial.live || !w.spend(1)) continue;
    const bool offered = try_stage(w, s, trial);
    any |= offered;
    trial.live = offered || !cost_.chain();
  }
  return any;
}

// Stage s (its first state or block, cells and devices set) for each last state, in each
// variant.
void Dp::grow(Work& w, Stage& s, std::vector<Trial>& variants) {
  if (b_ > 1) return grow_blocks(w, s, variants);
  const std::size_t a = s.first;
  const bool chain = cost_.chain();
  std::uint64_t unfollowed = 0;
  s.from = a;
  auto try_all = [&] {
    s.next = s.last + 1;
    return try_variants(w, s, variants, unfollowed);
  };
  const std::size_t end = a == 0 ? n_ - 1 : n_;  // the whole model is offer_whole_model's
  if (chain) {
    for (s.last = a; s.last < end && !w.stopped; ++s.last)
      if (!try_all()) break;
    return;
  }
  if (a == 0) {
    for (s.last = 0; s.last < end && !w.stopped; ++s.last) try_all();
    return;
  }
  for (const std::uint32_t last : cost_.later(a - 1)) {
    if (w.stopped) return;
    s.last = last;
    try_all();
  }
}

// A block pass's stages from block a = s.first (DpQuery::state_block): those inside block a
// before its last state, which stand for no work; then for each block c from a on, those
// ending in c before its last state (the next starts in c: they hold states from a's last
// to c's first) and those ending at its last (the next starts in c + 1: to c's last). On a
// chain (the only graphs it cuts into blocks) the states they hold only grow, so a variant
// that breaks the bound or memory ends.
void Dp::grow_blocks(Work& w, Stage& s, std::vector<Trial>& variants) {
  const std::size_t a = s.first, from = first_of(a), to = last_of(a);
  for (Trial& trial : variants) {
    trial.origin = -kInfinite;
    for (std::size_t i = from; i <= to; ++i)
      trial.origin = std::max(trial.origin, trial.exposed.origin(i));
    trial.reach = trial.exposed.reach(to), trial.reached = to;
  }
  std::uint64_t unfollowed = 0;
  s.from = from, s.first = s.last = to;
  if (to > from) {
    s.inside = true, s.next = a, s.cut = inside_cut_[a];
    try_variants(w, s, variants, unfollowed);
    s.inside = false;
  }
  for (std::size_t c = a; c < rows_ && !w.stopped; ++c) {
    const std::size_t first = first_of(c), last = last_of(c);
    if (c > a && last > first) {
      s.last = first, s.next = c, s.cut = inside_cut_[c];
      if (!try_variants(w, s, variants, unfollowed)) return;
    }
    s.last = last, s.next = c + 1;
    s.cut = c + 1 < rows_ ? cost_.crossing(last, q_.micro_batch) : 0;
    if (!try_variants(w, s, variants, unfollowed)) return;
  }
}

// The all-reduce a block pass's stage s leaves exposed at least (DpQuery::state_block): the
// largest reach over the states it holds minus the largest origin of a first state it stands
// for (CostModel::ExposedScan::reach), which grow_blocks keeps as s.last grows.
Seconds Dp::block_exposed(const Stage& s, Trial& trial) const {
  for (; trial.reached < s.last; ++trial.reached)
    trial.reach = std::max(trial.reach, trial.exposed.reach(trial.reached + 1));
  return std::max(0.0, trial.reach - trial.origin);
}

// Offers stage s (its first, last, offset and width set) in the trial's variant to
// extend(); false when it breaks the bound or memory, which in a chain every longer stage
// from s.first does too. A block pass's stage inside a block has no work, memory or
// all-reduce.
bool Dp::try_stage(Work& w, Stage& s, Trial& trial) {
  const StageVariant& v = s.variant = trial.variant;
  const InFront front = in_front(s.from, s.start);
  if (s.inside) {
    s.memory = trial.place.memory;
    s.times = {};
    s.weights = s.activations = s.plain_weights = s.plain_activations = 0;
    extend(w, s, front);
    return true;
  }
  const double timed = trial.samples.timed, kept = trial.samples.memory;
  const Seconds gather = cost_.weight_gather(s.first, s.last, v, trial.reducers, trial.ar_intra);
  const double speed = trial.place.speed;
  s.memory = trial.place.memory;
  s.times.forward = cost_.forward(s.first, s.last, timed, v, gather, speed);
  s.times.backward = cost_.backward(s.first, s.last, timed, v, gather, speed);
  const Seconds compute = s.times.forward + s.times.backward;
  if (!busy_within_bound(compute) || front.trip() + compute + front.pace() > bound_) return false;
  s.weights = cost_.weight_memory(s.first, s.last, v, trial.memory_reducers) +
              cost_.working_memory(s.first, s.last, kept, v);
  s.activations = cost_.activation_memory(s.first, s.last, kept, v);
  if (!fits(s, 1)) return false;
  if (v.recompute) {
    const StageVariant plain{v.tensor_parallel, false};
    s.plain_weights = cost_.weight_memory(s.first, s.last, plain, trial.memory_reducers) +
                      cost_.working_memory(s.first, s.last, kept, plain);
    s.plain_activations = cost_.activation_memory(s.first, s.last, kept, plain);
  }
  s.times.allreduce = b_ > 1 ? block_exposed(s, trial) : trial.exposed.extend_to(s.last);
  extend(w, s, front);
  return true;
}

// A stage of every state on r devices is a one-stage plan, with its compute and memory
// from stage_samples, as evaluate() has it (in a class pass, wherever its devices sit).
void Dp::offer_whole_model(Work& w, int r) {
  if (!w.spend(n_)) return;
  const std::size_t last = n_ - 1;
  Stage s{0,  last, 0, r, 0, {}, 0, 0, layout_.compact(0, r), r < w_ && layout_.compact(0, r + 1),
          {}, 0,    0, 0};
  s.next = rows_;
  if (c_ > 1) s.head = r <= largest_machine_ && !split(0, r - 1);
  for (Trial& trial : c_ > 1 ? class_trials(w, 0, r, r, true, s.head) : trials(w, 0, 0, r, true))
    try_stage(w, s, trial);
}

// The entry for stage s in front of a suffix entry (`next` null: s is the last stage),
// with `send` the transfer across the cut between them.
// In a timed pass its timing goes to the end of `to`, from next's in `after`.
Entry Dp::prepend(const Stage& s, const Entry* next, Seconds send, int index, const Timings& after,
                  Timings& to) const {
  Entry e{prepend_stage(s.times, send, next ? &next->bound : nullptr, q_.micro_batches, q_.schedule,
                        terms_),
          s.head,
          s.last,
          s.width,
          index,
          s.variant};
  // (Under DpQuery::max_stages a GPipe suffix of fewer stages can be followed by more, so
  // suffixes compete only with those of their own count there too.)
  const bool any_count = q_.schedule == Schedule::GPipe && most_stages_ == kAnyCount;
  e.staged = any_count ? 0 : e.k();
  e.next_row = static_cast<std::uint32_t>(s.next);
  e.sited = e.head && compact_cuts_;
  if (timed_) {
    std::array<Seconds, timing_entries(kBlockTimedMicroBatches)>
        timing;  // `after` and `to` may be one
    prepend_timing(s.times, send, next ? after.of(*next) : nullptr, q_.micro_batches, q_.schedule,
                   e.k(), timing.data());
    e.timing = static_cast<std::uint32_t>(to.size());
    std::copy_n(timing.begin(), to.n(), to.add());
  }
  return e;
}

// Puts stage s in front of every entry of the cell that follows it; `front` is what the stages
// in front of s add at least (in_front).
void Dp::extend(Work& w, const Stage& s, const InFront& front) {
  if (enumerating_) {
    // Each entry tried costs a prepend per stage, and in a timed pass the composition of its
    // timing too, as when the cells were filled: counted as one step, an enumeration of
    // ResNet-101's graph at GBS 64 on 8 machines of 8 GPUs (8 copies of 8 micro-batches of 1,
    // a relaxed timed pass of 256 buckets) took 280 s for 388 M steps, about 7 times as long a
    // step as its pass's (13 s for 129 M).
    const std::size_t entries = s.last + 1 == n_ ? 1 : cell(s.last + 1, s.offset + s.width).size();
    const std::uint64_t prepend = timed_ ? 1 + timing_steps(q_.micro_batches) : 1;
    if (!w.spend(entries * (prefix_.size() + 1) * prepend)) return;
    const Seconds least = completion(s);
    if (least <= bound_) children_.push_back({s, least});
    return;
  }
  if (s.next == rows_) {
    if (!refused(s, 1)) offer(w, prepend(s, nullptr, 0, -1, blank_, w.timings), front);
    return;
  }
  const int to = cell_after(s);
  if (to >= slots_) return;
  const std::vector<Entry>& next = cell(s.next, to);
  if (!w.spend(next.size())) return;
  const Bytes crossing = b_ > 1 ? s.cut : cost_.crossing(s.last, q_.micro_batch);
  const std::vector<Brief>& briefs = briefs_[index(s.next, to)];
  // The next cell is sorted by (k, head, y): an entry no better than the last one offered
  // from its group is dominated by it (kept as its index among the candidates: entries are
  // large).
  const std::size_t none = std::numeric_limits<std::size_t>::max();
  std::size_t last = none;
  for (std::size_t i = 0; i < next.size(); ++i) {
    const Brief& after = briefs[i];
    // Refused before the bound is built: a stage beyond DpQuery::max_stages (counting one in
    // front of a stage after the first), one that does not
    // fit memory (or needs no recomputation) with this many stages from it on, or whose round
    // trip and the next entry's worst term (which prepending never lowers) break the bound.
    if (after.k + (s.first > 0) >= most_stages_ ||
        refused(s, std::min(after.k + 1, q_.micro_batches)))
      continue;
    const int split = std::min(s.variant.tensor_parallel, after.t);
    const Seconds c = cost_.transfer(crossing / split, after.head && s.cut_compact);
    const Seconds round_trip = s.times.forward + s.times.backward + 2 * c + after.round_trip;
    const Seconds before = front.trip();
    if (before + round_trip + std::max(after.worst, front.pace()) > bound_) continue;
    // Nor can its all-reduce term fit (offer() would drop it): stage b's all-reduce follows
    // the next stages' worst term (when paced) and their all-reduce term (prepend_stage).
    const Seconds ar = s.times.allreduce;
    if ((terms_.paced && round_trip + (after.worst + ar) > bound_) ||
        round_trip + (after.exposed - (s.times.backward + c)) > bound_)
      continue;
    // A timed pass's suffix also composes its timing, which costs about a step more (a few
    // micro-batches: kTimedMicroBatches) or more than one (timing_steps).
    if (timed_ && !w.spend(timing_steps(q_.micro_batches))) return;
    // Nor can the stage's own terms (stage_terms), which its worst and all-reduce terms
    // take whatever the suffix (the next entry's worst passed above): offer() would drop the
    // entry, whose bound costs far more to build (ResNet-101 at GBS 512 on 256 GPUs: 222 M
    // suffixes built, 83 M of them dropped there; now 161 M and 24 M).
    const Seconds own = stage_terms(s.times, c, std::min(after.k + 1, q_.micro_batches), round_trip,
                                    q_.micro_batches, q_.schedule);
    if (before + round_trip + own > bound_ || round_trip + (own + ar) > bound_) continue;
    Entry e = prepend(s, &next[i], c, static_cast<int>(i), timings(index(s.next, to)), w.timings);
    if (last != none && w.candidates[last].group() == e.group() &&
        w.timings.no_worse(w.candidates[last], w.timings, e)) {
      if (e.timed()) w.timings.drop_last();
      continue;
    }
    if (offer(w, e, front)) last = w.candidates.size() - 1;
  }
}

// Keeps a candidate (whose stage extend() found fits memory) whose plans can still end
// within the bound: the stages in front add at least their round trip to y and their pace
// beside e (InFront), and never lower e or y + x (nor, in a timed pass, the suffix's end:
// Timings::rank, Timings::behind). A timed candidate's timing is the last of the work's, and
// goes with it when it is dropped.
bool Dp::offer(Work& w, const Entry& entry, const InFront& front) {
  const SuffixBound& b = entry.bound;
  if (front.trip() + b.round_trip + std::max(b.worst, front.pace()) > bound_ ||
      entry.total() > bound_ ||
      (entry.timed() &&
       (w.timings.rank(entry) > bound_ || w.timings.behind(entry, front) > bound_))) {
    if (entry.timed()) w.timings.drop_last();
    return false;
  }
  w.candidates.push_back(entry);
  if (w.candidates.size() > w.room) w.stopped = w.out_of_memory = true;  // as spend() stops
  return true;
}

// The complete plans of the first cell, least bound first (ties in the cell's order).
std::vector<DpPlan> Dp::best() {
  const std::vector<Entry>& root = cell(0, 0);
  std::vector<std::size_t> order(root.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return timings(0).rank(root[a]) < timings(0).rank(root[b]);
  });
  std::vector<DpPlan> plans;
  for (std::size_t i = 0; i < order.size() && static_cast<int>(i) < q_.plans; ++i)
    if (std::optional<PipelineSpec> spec = spec_from(order[i]))
      plans.push_back({std::move(*spec), timings(0).rank(root[order[i]])});
  return plans;
}

// The plan of the first cell's entry `pick`: each stage ends where its entry's does. In a block
// pass (DpQuery::state_block), one plan the entry stands for: where the next stage starts in the
// block a stage ends in, the stage ends in the middle of what that block has left; none where
// that leaves the next stage no state of the block.
std::optional<PipelineSpec> Dp::spec_from(std::size_t pick) const {
  PipelineSpec spec{q_.replicas,      q_.replica_width, q_.micro_batch,
                    q_.micro_batches, q_.schedule,      {}};
  std::size_t a = 0, first = 0;
  int o = 0, index = static_cast<int>(pick);
  while (index >= 0) {
    const Entry& e = cell(a, o)[index];
    std::size_t last = e.last;
    if (e.next_row < rows_ && first_of(e.next_row) <= e.last) {  // the next starts in its block
      last = (std::max(first, first_of(e.next_row)) + last_of(e.next_row)) / 2;
      if (last == last_of(e.next_row)) return std::nullopt;
    }
    spec.stages.push_back({first, last, o, e.width, e.variant});
    first = last + 1, a = e.next_row, o += e.width, index = e.child;
  }
  return spec;
}

// The transfer across the cut between stage s and the suffix entry behind it.
Seconds Dp::send(const Stage& s, const Entry& next) const {
  const int split = std::min(s.variant.tensor_parallel, next.t());
  return cost_.transfer(cost_.crossing(s.last, q_.micro_batch) / split, next.head && s.cut_compact);
}

// The least bound of the plans that start with prefix_ and then stage s: s is the last
// stage, or goes in front of an entry of the cell after it (which holds every suffix that
// can complete within the bound, or one no worse in every field), and prefix_ in front of
// that. Infinity when none fits memory (or DpQuery::max_stages).
Seconds Dp::completion(const Stage& s) const {
  Timings scratch = blank_;  // the timings of the entries built here
  auto with_prefix = [&](Entry e) {
    for (std::size_t i = prefix_.size(); i-- > 0;)
      e = prepend(prefix_[i], &e, send(prefix_[i], e), 0, scratch, scratch);
    return scratch.rank(e);
  };
  const int through = static_cast<int>(prefix_.size()) + 1;  // stages up to s
  if (through > most_stages_) return kInfinite;
  if (s.last + 1 == n_)
    return refused(s, 1) ? kInfinite : with_prefix(prepend(s, nullptr, 0, -1, blank_, scratch));
  const std::size_t at = index(s.last + 1, s.offset + s.width);
  Seconds least = kInfinite;
  for (const Entry& next : cells_[at]) {
    if (through + next.k() > most_stages_ || refused(s, std::min(next.k() + 1, q_.micro_batches)))
      continue;
    least = std::min(least, with_prefix(prepend(s, &next, send(s, next), 0, timings(at), scratch)));
  }
  return least;
}

// Depth first from state a on cell o, behind prefix_: every stage that can complete within
// the bound is followed to each plan it completes to (found_), least completion first. Where
// it stops, the least completion of the stages it did not follow bounds the plans it did not
// reach (frontier_); false where it stopped before its stages were all known, so that its
// caller bounds them by the stage that led here.
bool Dp::explore(Work& w, std::size_t a, int o) {
  children_.clear();
  stages_from(w, a, o);
  if (w.stopped) return false;
  std::vector<Child> children = std::move(children_);
  std::stable_sort(children.begin(), children.end(),
                   [](const Child& x, const Child& y) { return x.least < y.least; });
  auto unreached = [&](std::size_t from) {
    if (from < children.size()) frontier_ = std::min(frontier_, children[from].least);
    return true;
  };
  for (std::size_t i = 0; i < children.size(); ++i) {
    const auto& [s, least] = children[i];
    if (!w.spend(prefix_.size() + 1)) return unreached(i);
    const std::size_t mark = signature_.size();
    sign(s);
    // A stage whose run of stages reached its next cell before adds no plan the simulator
    // can tell apart (one that ran out of steps there was not followed).
    bool followed = true;
    if (first_visit(w, s.last + 1, s.offset + s.width)) {
      if (s.last + 1 < n_) {
        prefix_.push_back(s);
        followed = explore(w, s.last + 1, s.offset + s.width);
        prefix_.pop_back();
      } else {
        found_.push_back({plan_ending(s), least});  // s ends the plan: its only completion
        if (found_.size() > static_cast<std::size_t>(q_.enumerate_plans)) w.stopped = true;
      }
    } else {
      followed = !w.stopped;
    }
    signature_.resize(mark);
    if (w.stopped) return unreached(followed ? i + 1 : i);
  }
  return true;
}

// The plan of prefix_ and then s, its last stage.
PipelineSpec Dp::plan_ending(const Stage& s) const {
  PipelineSpec spec{q_.replicas,      q_.replica_width, q_.micro_batch,
                    q_.micro_batches, q_.schedule,      {}};
  for (const Stage& t : prefix_)
    spec.stages.push_back({t.first, t.last, t.offset, t.width, t.variant});
  spec.stages.push_back({s.first, s.last, s.offset, s.width, s.variant});
  return spec;
}

// Appends what stage s gives the plans through it: its times, the bytes and links of the cut
// behind it, its variant, width and memory. Two runs of stages of equal signatures reach the
// same cell with the same completions, each the same plan to the simulator (its stage times,
// pe::PipelineShape) and to memory: states of no work, weights or activations whose cuts
// carry the same bytes (an identity, a reshape) may go to either side of a cut.
void Dp::sign(const Stage& s) {
  const double crossing = s.last + 1 < n_ ? cost_.crossing(s.last, q_.micro_batch) : 0;
  signature_.insert(signature_.end(),
                    {s.times.forward, s.times.backward, s.times.allreduce, crossing,
                     static_cast<double>(s.variant.tensor_parallel),
                     static_cast<double>(s.variant.recompute), static_cast<double>(s.width),
                     static_cast<double>(s.head), static_cast<double>(s.cut_compact), s.weights,
                     s.activations, s.memory, s.plain_weights, s.plain_activations});
}

// Whether the stages signed so far (signature_) reach cell (a, o) for the first time; a
// plan ends at (n, o). Counts a step.
bool Dp::first_visit(Work& w, std::size_t a, int o) {
  if (!w.spend(1)) return false;
  std::vector<double> key{static_cast<double>(a), static_cast<double>(o)};
  key.insert(key.end(), signature_.begin(), signature_.end());
  return visited_.insert(std::move(key)).second;
}

// DpQuery::enumerate, once the cells are filled: when it finishes within its steps and
// plans, the result's plans are the ones it found and those of the pass beyond its bound.
void Dp::enumerate(DpResult& result) {
  const auto factor = static_cast<std::uint64_t>(q_.enumerate);
  const std::uint64_t steps = main_.steps;
  const std::uint64_t room = std::max(q_.step_limit, q_.enumerate_step_limit) - steps;
  main_.limit = steps + (steps > room / factor ? room : steps * factor);
  // The cells hold the suffixes that can complete within the pass's bound, no more.
  const Seconds within = std::min(q_.enumerate_bound, q_.bound);
  bound_ = within * (1 + kSlack);
  enumerating_ = true;
  const bool known = explore(main_, 0, 0);
  result.enumeration_steps = main_.steps - result.steps;
  result.steps = main_.steps;
  if (main_.stopped) {
    // The first plans it found join the pass's: where many plans share the least bound
    // (stages with slack whose cuts may move), they are others of them. Every other plan is
    // one it did not reach (frontier_), one found after those, or beyond the bound.
    Seconds unlisted = known ? std::min(frontier_, within) : result.least_bound;
    const auto listed = std::min(found_.size(), static_cast<std::size_t>(q_.plans));
    for (std::size_t i = listed; i < found_.size(); ++i)
      unlisted = std::min(unlisted, found_[i].lower_bound);
    result.unlisted_bound = std::max(result.least_bound, unlisted);
    found_.resize(listed);
    result.plans.insert(result.plans.end(), found_.begin(), found_.end());
    return;
  }
  // The pass's own plans beyond the bound stay too (ties in the same order).
  for (DpPlan& plan : result.plans)
    if (plan.lower_bound > bound_) found_.push_back(std::move(plan));
  std::stable_sort(found_.begin(), found_.end(),
                   [](const DpPlan& a, const DpPlan& b) { return a.lower_bound < b.lower_bound; });
  result.plans = std::move(found_);
  result.enumerated = true;
  result.unlisted_bound = within;  // every plan within it is listed, or a twin of one
}

}  // namespace

DpResult best_pipeline(const CostModel& cost, const DpQuery& query) {
  if (cost.states() == 0 || query.replica_width < 1) return {};
  return Dp(cost, query).run();
}

}  // namespace pe::detail
