// Reachability over vectors of per-class stage counts: the exact core of the search.
#pragma once

#include <cstddef>
#include <vector>

#include "bits.h"
#include "bound_graph.h"

namespace pe::edge {

/// For every count vector R (R[k] <= capacity of class k), the set B(R) of cut positions
/// from which the layers up to L can be covered by exactly R[k] allowed stages of each
/// class k: B(0) = {L}; B(R) = union over k with R[k] > 0 of
/// { i : some j in B(R - e_k) has stage (i, j] allowed for class k }.
/// A schedule within the bound exists iff 0 is in B(R) for some R. Vectors are stored by
/// their mixed-radix code, sum of R[k] * stride(k), so R - e_k is code - stride(k).
/// Cost: product of (capacity + 1) vectors, each a bit set of L + 1 positions.
///
/// Pruning (exact): a position i matters in B(R) only if a schedule can also reach i from
/// position 0 with the hosts R leaves, C - R (C = the capacities). U(S) bounds how far
/// stages S can reach from 0: U(0) = 0, U(S) = max over k with S[k] > 0 of
/// max(U(S - e_k), E_k(U(S - e_k))), where E_k(p) is the furthest end of an allowed stage
/// of class k starting at or before p. Each B(R) keeps only positions <= U(C - R).
class CountDp {
 public:
  /// Throws SearchLimitError when the table would exceed `memory_limit` bytes.
  CountDp(const BoundGraph& graph, std::size_t memory_limit);

  /// Fills the table in increasing code order. With `stop_at_first`, returns as soon as
  /// one vector covers all layers. Returns whether some vector does.
  bool run(bool stop_at_first);

  std::size_t states() const { return states_; }
  /// Bytes of the position sets and reach bounds.
  std::size_t table_bytes() const;
  std::size_t stride(std::size_t k) const { return strides_[k]; }
  /// R[k] of the vector with code `code`.
  std::size_t digit(std::size_t code, std::size_t k) const;
  /// Stages in the vector with code `code` (sum of its digits).
  std::size_t stage_count(std::size_t code) const;
  /// Whether position `position` is in B(code).
  bool contains(std::size_t code, std::size_t position) const;

 private:
  void add_predecessors(std::size_t k, const Word* from, Word* into) const;
  std::vector<std::size_t> furthest_ends(std::size_t k) const;
  void compute_reach_bounds();
  void keep_at_most(Word* set, std::size_t position) const;

  const BoundGraph& graph_;
  std::vector<std::size_t> radices_;
  std::vector<std::size_t> strides_;
  std::size_t states_ = 1;
  std::size_t words_ = 0;
  std::vector<Word> table_;
  std::vector<std::size_t> reach_bound_;  ///< U(S) by code of S.
  std::vector<RowView> rows_;             ///< graph_.starts(k, end) at [k * (L + 1) + end].
};

}  // namespace pe::edge
