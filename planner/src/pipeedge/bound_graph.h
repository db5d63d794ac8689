// The stages allowed under one bottleneck bound, with device types that allow exactly the
// same stages merged into classes. Kept per start position (O(n L) per bound), never per
// stage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pe/edge.h"
#include "pipeedge/bits.h"
#include "pipeedge/bound_search.h"
#include "pipeedge/stage_tables.h"

namespace pe::detail::edge {

/// Device types that allow the same stages under one bound: for that bound their hosts
/// are interchangeable, so the search only counts how many of them are used.
struct StageClass {
  std::size_t type = 0;            ///< Representative device type.
  std::vector<std::size_t> hosts;  ///< Hosts of all member types, ascending (devices.yml order).
  std::size_t capacity = 0;        ///< Most stages the class can run in one schedule.
};

/// Stage (i, j] on type u is allowed under bound T iff it fits u's memory, its compute on
/// u is <= T, and each of its cuts (i when i > 0, j when j < L) takes <= T at u's own
/// bandwidth. A cut's time uses the slower NIC of its two hosts, and that equals the larger
/// of the two one-sided times, so a schedule's bottleneck is <= T iff all of its stages are
/// allowed: the stage choices become independent of each other.
///
/// Compute grows with j, so the ends allowed from a start i whose cut is allowed are the
/// allowed cuts j in (i, E(i)] (E = the furthest end under T) that fit: all of them up to
/// full(i), those with a fit bit in (full(i), E(i)].
class BoundGraph {
 public:
  /// `ends` gives E for every used type (BoundSearch); it must outlive the graph.
  BoundGraph(const StageTables& tables, const EdgeCluster& cluster, const EndsByType& ends,
             Seconds bound);

  std::size_t layers() const { return tables_.layers(); }
  const std::vector<StageClass>& classes() const { return classes_; }
  /// Lowers class capacities until the product of (capacity + 1) is at most `most_vectors`:
  /// one host fewer at a time from the class with the most, among those the class whose
  /// stages reach least far (summed over starts), then the later class. Classes left
  /// without hosts are dropped. Returns the number of hosts taken out of the search.
  std::size_t restrict_capacities(std::size_t most_vectors);
  /// Whether stage (start, end] is allowed for class `k`.
  bool allows(std::size_t k, std::size_t start, std::size_t end) const;
  /// The furthest end of an allowed stage of class `k` from `start` (start when none).
  std::size_t furthest_end(std::size_t k, std::size_t start) const;
  /// ORs into `into` (a set over cut positions 0..L) every start i <= `limit` of an allowed
  /// stage (i, j] of class `k` with j in the set `from` (words [first_word, first_word +
  /// count) of a set over cut positions), and widens [low_word, high_word) to cover the
  /// words it sets. Costs O(sum over the set's positions of min(gap to the previous one,
  /// longest allowed stage)) plus the fit-bit words it reads.
  void add_predecessors(std::size_t k, const Word* from, std::size_t first_word, std::size_t count,
                        std::size_t limit, Word* into, std::size_t& low_word,
                        std::size_t& high_word) const;

 private:
  /// One used type under the bound.
  struct TypeGraph {
    const std::uint32_t* ends = nullptr;   ///< E(i): furthest end with compute <= bound.
    std::vector<Word> cut_ok;              ///< Cut positions 0..L whose time is <= bound.
    std::vector<std::uint32_t> plain;      ///< min(E, full) if cut i is allowed, else i.
    std::vector<std::uint32_t> window_to;  ///< E if cut i is allowed and E > full, else 0.
    /// When 0 < E - full <= 64: bit t set iff end full + 1 + t is allowed (it fits and
    /// its cut is allowed). Longer windows are read from the fit bits (window_hit).
    std::vector<Word> near_window;
    std::vector<std::uint32_t> furthest;  ///< Furthest allowed end from i (i when none).
    std::size_t longest = 0;              ///< Most layers in an allowed stage.
  };

  void build_type(std::size_t type, const std::uint32_t* ends, Seconds bound);
  bool window_hit(std::size_t type, std::size_t start, std::size_t from_end, const Word* set,
                  std::size_t first_word, std::size_t count) const;
  std::size_t highest_window_end(std::size_t type, std::size_t start) const;
  bool type_allows(std::size_t type, std::size_t start, std::size_t end) const;
  bool same_stages(std::size_t a, std::size_t b) const;
  std::size_t end_count(std::size_t type) const;
  std::size_t reach_sum(std::size_t type) const;
  void group_classes(const EdgeCluster& cluster);

  const StageTables& tables_;
  std::vector<TypeGraph> types_;  ///< By type index; empty for unused types.
  std::vector<StageClass> classes_;
};

}  // namespace pe::detail::edge
