// Bound-independent facts about the stages of each device type, kept per start position
// (O(L) per type, never per stage): how far stages from a start fit in memory, which
// ends near the memory limit fit, the one-sided cut times, and a sample of the values the
// bottleneck can take.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pe/edge.h"
#include "pe/edge_cost.h"
#include "pipeedge/bits.h"
#include "pipeedge/sampler.h"

namespace pe::detail::edge {

/// Fit bits of the ends j in (full, last] of one start, in words aligned to cut positions:
/// bit b of words[w] stands for end (first_word + w) * 64 + b; bits outside (full, last]
/// are zero.
struct WindowView {
  const Word* words = nullptr;
  std::size_t first_word = 0;
  std::size_t count = 0;
};

/// Stages are (i, j]: cut positions 0 <= i < j <= L, layers i+1..j. Only types that have
/// hosts are considered ("used"). For a start i on type u:
///   full(u, i):   (i, j] fits u's memory for every j in (i, full]      (i <= full)
///   last(u, i):   the last j whose stage fits (i when none)            (full <= last)
///   finite(u, i): the last j <= last whose compute on u is finite      (i when none)
/// Ends in (full, last] fit or not as the buffers of their outputs decide; their fit bits
/// are kept in a window. Memory weights grow with j, so nothing beyond last fits.
/// Built by one left-to-right pass per start (O(n L l) additions for stages of at most l
/// layers, the same sums as EdgeCostModel, so every value is bit-identical).
class StageTables {
 public:
  /// Adds the finite compute time of every stage that fits to `sampler`.
  StageTables(const EdgeCostModel& cost, const EdgeCluster& cluster, Sampler& sampler);

  std::size_t layers() const { return layers_; }
  std::size_t type_count() const { return used_.size(); }
  /// Whether `type` has at least one host.
  bool used(std::size_t type) const { return used_[type]; }
  std::size_t full(std::size_t type, std::size_t start) const { return fact(type, start).full; }
  std::size_t last(std::size_t type, std::size_t start) const { return fact(type, start).last; }
  std::size_t finite(std::size_t type, std::size_t start) const { return fact(type, start).finite; }
  /// Whether stage (start, end] fits `type`; requires start < end.
  bool fits(std::size_t type, std::size_t start, std::size_t end) const;
  /// The fit bits of the ends in (full, last] of `start` (count 0 when full == last).
  WindowView window(std::size_t type, std::size_t start) const;
  /// Per-layer times of `type` (layer k at index k - 1).
  const std::vector<Seconds>& times(std::size_t type) const { return *times_[type]; }
  /// Seconds across cut `cut` (1..L-1) at the bandwidth of `type` (one side of the link).
  Seconds transfer(std::size_t type, std::size_t cut) const {
    return transfers_[type * layers_ + cut];
  }
  /// Sorted finite one-sided cut times of all used types (with repeats).
  const std::vector<double>& transfer_candidates() const { return transfer_candidates_; }
  /// Whether some stage compute or cut time is finite.
  bool has_candidates() const { return has_candidates_; }
  /// The largest finite stage compute (up to `finite`) or cut time; needs has_candidates().
  Seconds largest_candidate() const { return largest_candidate_; }
  /// Number of candidate values: the finite computes of the stages that fit and the
  /// finite one-sided cut times, counted with repeats.
  std::size_t candidate_count() const { return candidate_count_; }

 private:
  struct StartFact {
    std::uint32_t full = 0;
    std::uint32_t last = 0;
    std::uint32_t finite = 0;
    std::size_t window_offset = 0;  ///< Into windows_[type].
  };

  const StartFact& fact(std::size_t type, std::size_t start) const {
    return facts_[type * layers_ + start];
  }
  void scan_type(const EdgeCostModel& cost, std::size_t type, Sampler& sampler);
  void store_window(std::size_t type, StartFact& fact, const std::size_t* fitting,
                    std::size_t count);
  void add_transfers(const EdgeCostModel& cost, const EdgeCluster& cluster);

  std::size_t layers_ = 0;
  std::vector<bool> used_;
  std::vector<const std::vector<Seconds>*> times_;
  std::vector<StartFact> facts_;            ///< [type * L + start]
  std::vector<std::vector<Word>> windows_;  ///< Per type, the window words of all starts.
  std::vector<Seconds> transfers_;          ///< [type * L + cut], cut 1..L-1
  std::vector<double> transfer_candidates_;
  bool has_candidates_ = false;
  Seconds largest_candidate_ = 0;
  std::size_t candidate_count_ = 0;
};

}  // namespace pe::detail::edge
