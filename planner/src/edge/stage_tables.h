// Bound-independent facts about every stage: which stages fit each device type's memory,
// where each bit-set row of the per-bound stage graph lives, and every value the
// bottleneck can take.
#pragma once

#include <cstddef>
#include <vector>

#include "bits.h"
#include "pe/edge.h"
#include "pe/edge_cost.h"

namespace pe::edge {

/// Where the row of stages ending at one cut position lives: bits for start positions
/// first_word*64 .. (first_word+words)*64-1, at `offset` in a flat word array.
struct RowSpan {
  std::size_t offset = 0;
  std::size_t first_word = 0;
  std::size_t words = 0;
};

/// Memory fits and candidate bottleneck values. Stages are (i, j]: cut positions
/// 0 <= i < j <= L, layers i+1..j. Only types that have hosts are considered ("used").
class StageTables {
 public:
  StageTables(const EdgeCostModel& cost, const EdgeCluster& cluster);

  std::size_t layers() const { return layers_; }
  std::size_t type_count() const { return used_.size(); }
  /// Whether `type` has at least one host.
  bool used(std::size_t type) const { return used_[type]; }
  /// Last end position j such that (i, j] might fit `type` (i when none does).
  std::size_t reach(std::size_t type, std::size_t start) const;
  /// Whether stage (start, end] fits `type`; requires start < end <= reach(type, start).
  bool fits(std::size_t type, std::size_t start, std::size_t end) const;
  /// Layout of the row for stages of `type` ending at `end` (1..L).
  const RowSpan& row(std::size_t type, std::size_t end) const;
  /// Words of all rows of `type` together.
  std::size_t row_words(std::size_t type) const { return row_words_[type]; }
  /// Sorted distinct finite values the bottleneck can take.
  const std::vector<double>& candidates() const { return candidates_; }

 private:
  void scan_type(const EdgeCostModel& cost, const EdgeCluster& cluster, std::size_t type);
  void lay_out_rows(std::size_t type, const std::vector<std::size_t>& first_start);
  void append_fit_bit(bool fits);
  void add_transfer_candidates(const EdgeCostModel& cost, const EdgeCluster& cluster);

  std::size_t layers_ = 0;
  std::vector<bool> used_;
  std::vector<std::size_t> reach_;      ///< [type * L + start]
  std::vector<std::size_t> fit_offset_; ///< [type * L + start], bit offset into fit_bits_
  std::vector<Word> fit_bits_;          ///< bit (offset + end - start - 1) set iff it fits
  std::size_t fit_count_ = 0;           ///< Bits used in fit_bits_
  std::vector<RowSpan> rows_;           ///< [type * L + end - 1]
  std::vector<std::size_t> row_words_;  ///< [type]
  std::vector<double> candidates_;
};

}  // namespace pe::edge
