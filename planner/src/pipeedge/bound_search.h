// The binary search over bottleneck values, without a list of them: the candidates are
// the compute times of all stages (about L * l per device type for stages of up to l
// layers) and the one-sided cut times; only the cut times are listed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pe/units.h"
#include "pipeedge/sampler.h"
#include "pipeedge/stage_tables.h"

namespace pe::detail::edge {

/// Per used device type, the furthest end under a bound for every start (nullptr for types
/// without hosts): ends[type][i] is the last j <= finite(type, i) whose stage (i, j] has
/// compute <= the bound (i when none). Compute grows with j, so these are all such ends.
using EndsByType = std::vector<const std::uint32_t*>;

/// Keeps the bounds `low` (infeasible; -inf at first) and `high` (feasible; the largest
/// candidate at first) and, for every start, the furthest ends under both, with the
/// compute sum at the low end. The ends under a bound between them resume the
/// left-to-right sums where the low ends stopped and never pass the high ends, so a
/// trial costs the number of stage computes between low and the bound, and the
/// candidates between low and high shrink with every trial.
class BoundSearch {
 public:
  explicit BoundSearch(const StageTables& tables);

  Seconds low() const { return low_; }
  Seconds high() const { return high_; }
  EndsByType high_ends() const { return view(high_end_); }

  /// Computes the ends under `bound` (low < bound < high); see trial_ends.
  void try_bound(Seconds bound);
  EndsByType trial_ends() const { return view(trial_end_); }
  /// The tried bound is feasible: it becomes `high`.
  void keep_as_high();
  /// The tried bound is infeasible: it becomes `low`.
  void keep_as_low();

  /// Adds the candidate values strictly between low and high to `sampler` (computes of
  /// the stages that fit, start by start, then cut times), reading each compute once.
  void sample(Sampler& sampler) const;

 private:
  EndsByType view(const std::vector<std::vector<std::uint32_t>>& ends) const;

  const StageTables& tables_;
  Seconds low_;
  Seconds high_;
  Seconds trial_ = 0;
  std::vector<std::vector<std::uint32_t>> low_end_;  ///< [type][start]
  std::vector<std::vector<Seconds>> low_sum_;        ///< compute of (start, low_end]
  std::vector<std::vector<std::uint32_t>> high_end_;
  std::vector<std::vector<std::uint32_t>> trial_end_;
  std::vector<std::vector<Seconds>> trial_sum_;
};

}  // namespace pe::detail::edge
