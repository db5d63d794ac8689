// What a cell of the pipeline dynamic program (pipeline_dp.cc) keeps of the suffixes
// offered to it: the undominated ones (an exact pass), the least of each field a group and
// bucket (a relaxed pass), or the one of least bound a group (a greedy pass).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "search/dp_entry.h"

namespace pe::detail::dp {

// A relaxed pass's candidate by its group, bucket and place among the candidates, packed into
// two words in that order (keep_least says how).
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
// With `merged` (DpQuery::merged_fields), dominance looks at the first `merged` fields only,
// and the entry that drops a candidate takes in its other fields (Entry::lower_to).
std::uint64_t keep_undominated(std::vector<Entry>& candidates, const Timings& timed,
                               std::vector<Entry>& cell, Timings& kept, int merged = 0);

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
std::uint64_t keep_least(std::vector<Entry>& candidates, const Timings& timed,
                         std::vector<Entry>& cell, Timings& kept_timings, const Bucketing& by,
                         std::vector<LeastKey>& keys);

// The greedy pass's cell (DpQuery::greedy): per (head, t), the candidate of least bound_of,
// ties broken by the plan; then sorted by (k, head, t, y) as extend() expects. Returns the
// steps.
std::uint64_t keep_greedy(std::vector<Entry>& candidates, std::vector<Entry>& cell);

}  // namespace pe::detail::dp
