// What the pipeline dynamic program's cells keep (dp_cell.h).
#include "search/dp_cell.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <numeric>
#include <tuple>

namespace pe::detail::dp {
namespace {

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
// Whether two entries' bounds hold the same bits, so that every field is equal. Such twins are
// most of some passes' candidates, nearly all behind a stage with no work (a block pass's
// stage inside a block): NASNet-A large at GBS 512 on 256 GPUs, 68 % of the candidates of its
// untimed exact passes are a twin of the one sorted before them, and a third of the sort's
// comparisons went through every field to find them equal. Compared word by word, the first
// alone (most pairs differ there), the rest without branches.
bool twins(const Entry& a, const Entry& b) {
  constexpr std::size_t kWords = offsetof(SuffixBound, stages) / 8;
  // Every byte before `stages` is in a word (all doubles): none is left uncompared.
  static_assert(offsetof(SuffixBound, stages) % 8 == 0);
  const auto* x = reinterpret_cast<const unsigned char*>(&a.bound);
  const auto* y = reinterpret_cast<const unsigned char*>(&b.bound);
  auto differ = [&](std::size_t i) {
    std::uint64_t u, v;
    std::memcpy(&u, x + 8 * i, 8);
    std::memcpy(&v, y + 8 * i, 8);
    return u ^ v;
  };
  if (differ(0) != 0) return false;
  std::uint64_t any = static_cast<std::uint64_t>(a.bound.stages ^ b.bound.stages);
  for (std::size_t i = 1; i < kWords; ++i) any |= differ(i);
  return any == 0;
}
Keys& key_scratch() {
  thread_local Keys keys;
  return keys;
}

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
}  // namespace

std::uint64_t keep_undominated(std::vector<Entry>& candidates, const Timings& timed,
                               std::vector<Entry>& cell, Timings& kept, int merged) {
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
    if (a.field(0) != b.field(0)) return a.field(0) < b.field(0);
    if (!twins(a, b))
      for (int i = 1; i < Entry::kFields; ++i) {
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
    Key key = timed.key(c);
    // A merged pass's key: of the fields dominance looks at.
    if (merged > 0 && merged < Entry::kFields) {
      for (int f = merged; f < kKeys; ++f) key[static_cast<std::size_t>(f - 1)] = 0;
      key[kKeys - 1] = 0;  // the sum of the fields after the eighth
    }
    comparisons += keys.size();
    auto beats = [&](std::size_t at) {
      return merged > 0 ? cell[at].no_worse_in_first(c, merged) : kept.no_worse(cell[at], timed, c);
    };
    bool dominated = hint < cell.size() && beats(hint);
    // An untimed twin of the entry kept last is no worse than it (sorted next to it). Not in a
    // merged pass, which lowers the first entry found that dominates.
    if (!dominated && merged == 0 && !c.timed() && cell.size() > group && twins(cell.back(), c))
      dominated = true;
    for (std::size_t j = 0; j < keys.size() && !dominated; j += Keys::kBlock) {
      const std::size_t n = std::min(Keys::kBlock, keys.size() - j);
      if (!keys.any_no_worse_than(j, n, key)) continue;
      for (std::size_t at = j; at < j + n && !dominated; ++at)
        if (group + at != hint && keys.no_worse_than(at, key) && beats(group + at))
          dominated = true, hint = group + at;
    }
    if (dominated) {
      if (merged > 0) cell[hint].lower_to(c, merged);
      continue;
    }
    keys.push_back(key);
    cell.push_back(c);
    kept.take(cell.back(), timed);
  }
  candidates.clear();
  return comparisons;
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
    cell.back().lower_to(c, 0);
  }
  const std::uint64_t steps = candidates.size();
  candidates.clear();
  return steps;
}

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

}  // namespace pe::detail::dp
