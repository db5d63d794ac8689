// The refining phase's transfer screen (branch_and_bound.h): whether any plan of an open
// shape can beat the fastest plan, by its transfer fill (search/transfer_fill.h).
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "search/branch_and_bound.h"
#include "search/stage_floor.h"
#include "search/transfer_fill.h"

namespace pe::detail::hybrid {

namespace {

// The most steps one shape's check takes.
constexpr std::uint64_t kFillCheckSteps = 8'000'000;
// The checks together take at most this fraction of the refining effort: with little effort
// the refining passes need it (a random instance whose refining passes find a plan 39 % faster
// with 2,400 steps, and none where the checks took them all).
constexpr std::uint64_t kFillScreenShare = 4;

}  // namespace

// Each open shape not held by another (held_by) nor pending its closing passes, whose bound is
// below the fastest plan, gets one transfer fill check at the fastest plan's time (with at most
// kFillCheckSteps, or an equal part of 1 / kFillScreenShare of the refining effort where that is
// less; the checks run side by side, and the steps they took leave the refining effort). Where no
// plan of two stages or more makes that time, its bound rises to it, or to its one-stage plans'
// floor where that is lower. NASNet-A large at GBS 512 on 1,024 GPUs: 41 of 90 shapes settled,
// gap 67.4 % -> 42.1 %; ResNet-101's graph on 4,096 GPUs: 43.9 % -> 1.5 % (docs/timeline.md).
void Search::transfer_screen() {
  const Seconds target = pool_.fastest() * (1 - kTie);
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < open_.size(); ++i)
    if (!open_[i].fill_checked && open_[i].holder < 0 && open_[i].closing < 0 &&
        open_bound(i) < target)
      open.push_back(i);
  const std::uint64_t each = std::min(
      kFillCheckSteps, refine_left_ / kFillScreenShare / std::max<std::size_t>(1, open.size()));
  std::vector<FillCheck> checks(open.size());
  std::vector<std::uint64_t> steps(open.size(), 0);
  tbb::parallel_for(std::size_t{0}, open.size(), [&](std::size_t j) {
    const OpenShape& s = open_[open[j]];
    const int width = width_of(s.on);
    checks[j] = transfer_fill_check(*s.on.cost, s.on.shape, width, width, target, each, steps[j]);
  });
  for (std::size_t j = 0; j < open.size(); ++j) {
    OpenShape& s = open_[open[j]];
    s.fill_checked = true;
    refine_left_ -= std::min(refine_left_, steps[j]);
    // No plan of two stages or more makes the fastest plan's time; one-stage plans take no
    // less than their floor.
    if (checks[j] == FillCheck::Impossible) {
      const int width = width_of(s.on);
      s.bound = std::max(s.bound,
                         std::min(target, one_stage_floor(*s.on.cost, s.on.shape, width, width)));
    }
  }
}

}  // namespace pe::detail::hybrid
