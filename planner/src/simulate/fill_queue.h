// The pending pieces of one stage in priority order (part of bubble filling).
#pragma once

#include <vector>

#include "simulate/fill_work.h"

namespace pe::detail::fill {

/// A stage's pending pieces, in priority order, with removal in near-constant time.
///
/// Positions index the original order and stay valid; removed ones are skipped by a
/// path-compressed "next pending position" forest. Consecutive pieces of one item with
/// the same length and non-decreasing ready times form a *run*: when the first pending
/// piece of a run cannot start in a gap, none of the others can, so a search can move on
/// to the next run at once.
class PieceQueue {
 public:
  /// `ids` index `pieces`, highest priority first.
  PieceQueue(std::vector<int> ids, const std::vector<Piece>& pieces);

  bool empty() const { return pending_ == 0; }
  /// Past-the-end position.
  int end() const { return static_cast<int>(ids_.size()); }
  /// First pending position, or end().
  int first() { return pending_from(0); }
  /// First pending position after the run holding `position`, or end().
  int after_run(int position) { return pending_from(run_end_[position]); }
  /// The piece at `position`.
  int piece(int position) const { return ids_[position]; }
  /// Removes the pending piece at `position`.
  void remove(int position);

 private:
  int pending_from(int position);

  std::vector<int> ids_;
  std::vector<int> run_end_;  // One past the last position of each position's run.
  std::vector<int> next_;     // Towards the first pending position at or after each one.
  int pending_ = 0;
};

}  // namespace pe::detail::fill
