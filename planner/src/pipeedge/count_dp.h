// Reachability over vectors of per-class stage counts: the exact core of the search.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pipeedge/bits.h"
#include "pipeedge/bound_graph.h"

namespace pe::detail::edge {

/// For every count vector R (R[k] <= capacity of class k), the set B(R) of cut positions
/// from which the layers up to L can be covered by exactly R[k] allowed stages of each
/// class k: B(0) = {L}; B(R) = union over k with R[k] > 0 of
/// { i : some j in B(R - e_k) has stage (i, j] allowed for class k }.
/// A schedule within the bound exists iff 0 is in B(R) for some R. Vectors are stored by
/// their mixed-radix code, sum of R[k] * stride(k), so R - e_k is code - stride(k).
///
/// Pruning (exact): a position i matters in B(R) only if a schedule can also reach i from
/// position 0 with the hosts R leaves, C - R (C = the capacities). U(S) bounds how far
/// stages S can reach from 0: U(0) = 0, U(S) = max over k with S[k] > 0 of
/// max(U(S - e_k), E_k(U(S - e_k))), where E_k(p) is the furthest end of an allowed stage
/// of class k starting at or before p. Each B(R) keeps only positions <= U(C - R).
///
/// Storage: each B(R) keeps only the words from its first to its last non-zero word, so
/// vectors far from any schedule cost a few bytes. Cost: product of (capacity + 1) vectors.
class CountDp {
 public:
  /// Most layers the sets can address (positions in 16-bit word indices).
  static constexpr std::size_t kMostLayers = 65535 * kWordBits - 1;

  /// The most count vectors whose tables fit `memory_limit` bytes however full their
  /// position sets get (so run() cannot pass the limit).
  static std::size_t most_vectors_within(std::size_t layers, std::size_t memory_limit);

  /// Throws SearchLimitError when the per-vector bookkeeping alone would exceed
  /// `memory_limit` bytes; run() throws it when the sets outgrow the limit.
  CountDp(const BoundGraph& graph, std::size_t memory_limit);

  /// Fills the table in increasing code order. With `stop_at_first`, returns as soon as
  /// one vector covers all layers. Returns whether some vector does.
  bool run(bool stop_at_first);

  std::size_t states() const { return states_; }
  /// Bytes of the position sets and per-vector bookkeeping.
  std::size_t table_bytes() const;
  std::size_t stride(std::size_t k) const { return strides_[k]; }
  /// R[k] of the vector with code `code`.
  std::size_t digit(std::size_t code, std::size_t k) const;
  /// Stages in the vector with code `code` (sum of its digits).
  std::size_t stage_count(std::size_t code) const;
  /// Whether position `position` is in B(code).
  bool contains(std::size_t code, std::size_t position) const;

 private:
  /// Where B(code) lives: words [first_word, first_word + count) at `offset` in pool_.
  /// Compact because there is one per count vector.
  struct SetSpan {
    std::uint32_t offset = 0;
    std::uint16_t first_word = 0;
    std::uint16_t count = 0;
  };
  /// Words of the scratch set that may be non-zero: [low, high).
  struct Touched {
    std::size_t low = 0;
    std::size_t high = 0;
  };

  void add_predecessors(std::size_t k, const SetSpan& from, std::size_t limit, Word* into,
                        Touched& touched) const;
  std::vector<std::size_t> furthest_ends(std::size_t k) const;
  void compute_reach_bounds();
  void store(std::size_t code, Word* scratch, Touched touched, std::size_t limit_position);
  void fail_limit(double bytes) const;

  const BoundGraph& graph_;
  std::size_t memory_limit_ = 0;
  std::vector<std::size_t> radices_;
  std::vector<std::size_t> strides_;
  std::size_t states_ = 1;
  std::size_t words_ = 0;
  std::vector<SetSpan> spans_;              ///< B(S) by code of S.
  std::vector<Word> pool_;                  ///< The words of all stored sets.
  std::vector<std::uint32_t> reach_bound_;  ///< U(S) by code of S.
};

}  // namespace pe::detail::edge
