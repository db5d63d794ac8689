// Closing passes (branch_and_bound.h): a finished shape whose bound is still below the fastest
// plan is searched again with more of the bound's terms, and resumed after the refining phase
// where the exact effort could not pay for it.
#include "search/branch_and_bound.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "search/pipeline_dp.h"
#include "search/shape_pass.h"

namespace pe::detail::hybrid {

namespace {

// A closing pass (Search::close_gaps) gets at most this many times the steps of the shape's
// finished first pass: one that needs more rarely finishes with what is left (on GNMT-32 on
// 16 single-GPU machines, 4x left 2 of 65 batch sizes inexact, 16x none, in the same time).
// One that the exact effort left cannot pay for resumes after the refining passes, with what
// they leave (Search::resume_closing): the later exact rounds may spend all of it on a shape
// that never finishes (DenseNet-121 at GBS 32 on 2 x 8 GPUs: a closing pass that needs 85 M
// steps had got 121, and the point stayed at 1.1 %; now exact). So does one that stopped at
// this cap: on a chain of 150 random layers at GBS 32 on 8 GPUs the first closing pass of the
// best plan's shape needs 0.42 M steps, 17 times its first pass's, and the point stayed 0.3 %
// open at any effort with 99.5 % of it unspent. Resumed, a closing pass has no cap but what is
// left: every other pass has run, and its shape holds the certificate back (a random chain of
// 300 layers at GBS 256 on 2 x 8 GPUs: a pass that ran short, resumed with 16 times the steps
// of the one before, 169 M, stopped at that cap with 134 M left).
constexpr std::uint64_t kCloseFactor = 16;

// A second closing pass, with the pairs of the last round trip (BoundTerms::last_pairs), gets at
// most this many times the steps of the first: the fields cost many passes several times the
// steps, and the shapes it closes (GNMT-32 at 11 batch sizes on 2 x 8 GPUs) need fewer than
// 4x; at 16x the default sweeps of GNMT-16 and GNMT took 11 % more CPU for nothing more.
constexpr std::uint64_t kLastPairsFactor = 4;

// A third closing pass, with the last round trip's stay on a later stage for its last
// backwards (BoundTerms::last_drains), gets at most this many times the steps of the second: on
// GNMT-32 at GBS 32 on 2 x 8 GPUs it needs 4.1x (0.30 M -> 1.22 M) and proves the plan optimal
// (gap 0.3 % before).
constexpr std::uint64_t kLastDrainsFactor = 8;

// A fourth, with the later stages' operations after their paced first backwards instead
// (BoundTerms::paced_afters), gets at most this many times the steps of the second: on AlexNet
// at GBS 32 on 2 x 8 GPUs it needs 5.5x (0.8 M -> 4.4 M), and finds a plan 2.8 % faster than
// any other pass. With both fields a pass costs far more (GNMT-32 above: 63 M steps).
constexpr std::uint64_t kPacedAftersFactor = 8;

// A finished shape's relaxed closing pass (Search::relaxed_closing) has this many buckets of
// round trip and as many of worst term, within 1 / kClosingShare of its first exact pass's
// steps.
constexpr int kClosingBuckets = 256;
constexpr std::uint64_t kClosingShare = 4;

// A finished shape whose bound lies within kListingBand below the fastest plan, of at most
// kListingMicroBatches micro-batches, gets a listing closing pass (Search::listing_closing)
// before its first closing pass, within kCloseFactor times its first exact pass's steps. Each
// plan it lists is simulated, for about its stages times micro-batches, which its steps do not
// count: on more micro-batches the listings took DAPPLE's simplified GNMT-32's default sweep on
// 2 x 8 GPUs from 21 to 48 s (53 passes of 80 to 544 micro-batches, 26 s), for no other answer.
constexpr double kListingBand = 0.01;
constexpr int kListingMicroBatches = 32;

}  // namespace

// Closing passes: a finished 1F1B shape whose bound is still below the fastest plan is
// first bounded by relaxed passes (relaxed_closing), then, near it, its first exact pass lists
// the plans below it (listing_closing), then, while still below it,
// searched again with the window cycles (BoundTerms::windows), which the first passes leave
// out (they make an exact pass keep more entries, which costs more effort than it saves
// there), least bound first, each with the exact effort left up to kCloseFactor times its
// first pass's steps; and when that one finishes below the fastest plan too, once more
// with the pairs of the last round trip (BoundTerms::last_pairs), up to kLastPairsFactor
// times the steps of the pass before. After those of every shape, the shapes whose second
// pass finished and that are still open get a third with the last round trip's stay on a
// later stage too (BoundTerms::last_drains), up to kLastDrainsFactor times the second's steps,
// and if still open a fourth with the later stages' operations after their paced first
// backwards instead (BoundTerms::paced_afters), up to kPacedAftersFactor times the second's:
// the costliest passes come last. A pass that finishes raises the shape's bound; one that
// stops changes nothing. Each enumerates the plans below the fastest when it leaves some
// (shape_pass.cc, kEnumerateFactor): the shape is then settled. Returns the shapes whose
// next closing pass the exact effort left could not give its steps, or which stopped at its
// cap (refine() resumes them: resume_closing).
std::vector<Unclosed> Search::close_gaps(const std::vector<ShapeOn>& shapes,
                                         const std::vector<std::size_t>& todo,
                                         const std::vector<std::uint64_t>& finished_with,
                                         std::vector<Seconds>& bounds) {
  std::vector<char> unfinished(shapes.size(), 0);
  for (std::size_t i : todo) unfinished[i] = 1;
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < shapes.size(); ++i)
    if (!unfinished[i] && shapes[i].shape.schedule == Schedule::OneFOneB) open.push_back(i);
  std::stable_sort(open.begin(), open.end(),
                   [&](std::size_t a, std::size_t b) { return bounds[a] < bounds[b]; });
  // Each shape's record: its bound, and the steps of its pass before the next closing pass.
  std::vector<Unclosed> records;
  for (std::size_t i : open) records.push_back({shapes[i], i, bounds[i], finished_with[i], 1});
  std::vector<Closing> last(records.size());
  for (std::size_t k = 0; k < records.size(); ++k)
    last[k] = first_closings(records[k], left_, false);
  for (std::size_t k = 0; k < records.size(); ++k)
    if (last[k] == Closing::Finished) last[k] = last_closings(records[k], left_, false);
  std::vector<Unclosed> short_of_effort;
  for (std::size_t k = 0; k < records.size(); ++k) {
    bounds[records[k].index] = records[k].bound;
    if (last[k] == Closing::Short || last[k] == Closing::Capped)
      short_of_effort.push_back(records[k]);
  }
  return short_of_effort;
}

// What closing pass `found` of shape `s` gives: its steps come out of `left`, its bound raises
// `bound` where it finished, and its plans join the pool (close, listing_closing).
void Search::take_closing(const ShapeOn& s, const ShapeResult& found, Seconds& bound,
                          std::uint64_t& left) {
  left -= std::min(left, found.steps);
  if (found.complete) bound = std::max(bound, found.lower_bound);
  for (const CostedPlan& plan : found.plans) add(*s.cost, plan);
  pool_.simulate_promising();
}

// One closing pass of `level` (search_shape's `closing`) on shape `s` while it is open, with
// up to `factor` times `before`, the steps of its pass before (then its own), or all of
// `left` where `uncapped`, within `left`; raises `bound`.
Search::Closing Search::close(const ShapeOn& s, int level, std::uint64_t factor,
                              std::uint64_t& before, Seconds& bound, std::uint64_t& left,
                              bool uncapped) {
  if (meets_fastest(bound)) return Closing::Unneeded;
  const bool short_of_effort = uncapped || before > left / factor;
  if (left == 0) return Closing::Short;
  const std::uint64_t cap = short_of_effort ? left : before * factor;
  ShapeResult found =
      search_shape(*s.cost, global_batch_, s.shape, pool_.cutoff_for(s.shape), std::min(left, cap),
                   0, limits(), level, pool_.fastest() * (1 - kTie), left);
  take_closing(s, found, bound, left);
  before = found.steps - found.enumeration_steps;
  if (found.complete) return Closing::Finished;
  return short_of_effort ? Closing::Short : Closing::Capped;
}

// Before the first closing pass of shape `s` (first_closings): a refining relaxed pass
// (kClosingBuckets buckets of round trip and of worst term, DpQuery::worst_buckets) within
// `cap` steps of `left`, pruned by the fastest plan, which raises `bound`. It follows the
// window cycles and the delayed arrivals (BoundTerms::arrivals) that the shape's first exact
// pass left out, for a fraction of a closing pass's steps: on BERT-48 at GBS 512 on 1,024
// GPUs, 817.4 -> 831.9 ms (the best plan's simulated time) in 0.16 M steps, where the
// closing pass with them ran out after 22 M. True when the shape no longer holds the
// certificate back. (Its plans are left out: unlike the refining passes', they found no
// faster plan on the simplified GNMT-32 on 16 single-GPU machines, and cost GNMT-16 at GBS
// 512 on 256 GPUs about a second.)
bool Search::relaxed_closing(const ShapeOn& s, std::uint64_t cap, Seconds& bound,
                             std::uint64_t& left) {
  const Seconds target = pool_.fastest() * (1 - kTie);
  const PassBound found =
      refined_bound(*s.cost, s.shape, target, std::min(left, cap), limits(), kClosingBuckets, true);
  left -= std::min(left, found.steps);
  if (found.finished) bound = std::max(bound, std::min(found.least_bound, target));
  return bound >= target;
}

// Before the first closing pass of shape `s` (first_closings), where its `bound` (its first
// exact pass's) lies within kListingBand below the fastest plan and it has at most
// kListingMicroBatches micro-batches: that exact pass again, within `cap` steps of `left`,
// pruned by the fastest plan, listing every plan whose path bound is below it and simulating
// each (DpQuery::enumerate, time_plan), which raises `bound` to the fastest plan (or to a
// faster one it lists) where it finishes. A band that narrow holds few plans, and the pass
// keeps the entries of its first pass, where the first closing pass (the window cycles) keeps
// many more: on random chains of 300 layers at GBS 32 on 2 x 8 GPUs, one copy of 32
// micro-batches of 1 was bound 0.05 to 0.17 % below the fastest plan by its first exact pass
// in 1.4 to 1.6 M steps, and its first closing pass ran out of 287 M (bench/README.md). True
// when the shape no longer holds the certificate back.
bool Search::listing_closing(const ShapeOn& s, std::uint64_t cap, Seconds& bound,
                             std::uint64_t& left) {
  const Seconds target = pool_.fastest() * (1 - kTie);
  if (bound < target * (1 - kListingBand) || s.shape.micro_batches > kListingMicroBatches)
    return false;
  const std::uint64_t steps = std::min(left, cap);
  const ShapeResult found = search_shape(*s.cost, global_batch_, s.shape, pool_.cutoff_for(s.shape),
                                         steps, 0, limits(), 0, target, steps);
  take_closing(s, found, bound, left);
  return meets_fastest(bound);
}

// Resumes the closing passes of the shapes close_gaps left short of effort or capped
// (unclosed_), least bound first, with what refine() left: only while the least of them is
// the certificate's least bound (no more than every other bound: open_bounds(), which a shape
// resumed may raise, as it bounds the parts' shapes it holds, and those resumed before), since
// closing any other cannot raise the certificate, and until one stops again.
void Search::resume_closing() {
  // In order of bound, by index: the parts' open shapes refer to unclosed_'s entries.
  std::vector<std::size_t> order(unclosed_.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return unclosed_[a].bound < unclosed_[b].bound;
  });
  Seconds resumed = kInfinity;  // the least bound of those resumed
  for (std::size_t k : order) {
    Unclosed& u = unclosed_[k];
    if (meets_fastest(u.bound)) continue;
    if (u.bound > std::min(open_bounds(), resumed) || refine_left_ == 0 || !resume(u)) break;
    resumed = std::min(resumed, u.bound);
  }
}

// The closing passes of one shape from its level on (close_gaps' order for one shape).
// False when one stopped.
bool Search::resume(Unclosed& u) {
  if (u.level > 4) return true;
  if (u.level <= 2) {
    const Closing c = first_closings(u, refine_left_, true);
    if (c == Closing::Unneeded) return true;
    if (c != Closing::Finished) return false;
  }
  return last_closings(u, refine_left_, true) != Closing::Short;
}

// The first and second closing passes of shape `u` from its level (1 or 2) on, within
// `left`, each capped as the first time or, `resumed`, by `left` alone, while each finishes:
// how the last one run went. One short of effort or stopped at its cap leaves `u` at its
// level, with the steps of the pass before it.
Search::Closing Search::first_closings(Unclosed& u, std::uint64_t& left, bool resumed) {
  // (Only for a shape still open: one at the fastest plan would spend its steps for nothing.)
  if (u.level == 1 && !u.relaxed && !meets_fastest(u.bound)) {
    u.relaxed = true;
    if (relaxed_closing(u.on, u.before / kClosingShare, u.bound, left)) return Closing::Unneeded;
  }
  if (u.level == 1 && !u.listed && !meets_fastest(u.bound)) {
    u.listed = true;
    if (listing_closing(u.on, kCloseFactor * u.before, u.bound, left)) return Closing::Unneeded;
  }
  for (; u.level <= 2; ++u.level) {
    const std::uint64_t base = u.before;
    const Closing c = close(u.on, u.level, u.level == 1 ? kCloseFactor : kLastPairsFactor, u.before,
                            u.bound, left, resumed);
    if (c == Closing::Short || c == Closing::Capped) u.before = base;
    if (c != Closing::Finished) return c;
  }
  return Closing::Finished;
}

// The third closing pass (from level 3) and the fourth of shape `u`, each capped by the
// second's steps or, `resumed`, by `left` alone, within `left`: when either was short of
// effort or stopped at its cap, how (Short or Capped), `u` then left at that level; otherwise
// how the fourth went, and `u` done (level 5).
Search::Closing Search::last_closings(Unclosed& u, std::uint64_t& left, bool resumed) {
  const std::uint64_t second = u.before;
  std::uint64_t steps = second;
  const Closing c3 = u.level == 3 ? close(u.on, 3, kLastDrainsFactor, steps, u.bound, left, resumed)
                                  : Closing::Finished;
  const Closing c4 = close(u.on, 4, kPacedAftersFactor, u.before, u.bound, left, resumed);
  u.before = second;
  const auto stopped = [](Closing c) { return c == Closing::Short || c == Closing::Capped; };
  u.level = stopped(c3) ? 3 : stopped(c4) ? 4 : 5;
  return u.level == 3 ? c3 : c4;
}

}  // namespace pe::detail::hybrid
