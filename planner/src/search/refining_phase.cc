// The refining phase (branch_and_bound.h): free-width, block, class, merged and refining
// relaxed passes of the open shapes, least bound first, with the effort kept for them; its late
// passes, with what those leave, are in late_passes.cc.
#include "search/branch_and_bound.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <vector>

#include "cost/suffix_timing.h"
#include "search/pipeline_dp.h"
#include "search/polish.h"
#include "search/shape_pass.h"

namespace pe::detail::hybrid {

namespace {

// The refining phase's class screens (Search::classes_first) run on copies of at least
// kRefineClassWidth devices (as the search's class passes after a relaxed pass that ran out:
// shape_pass.cc), within kClassScreenGrowth times the steps the shape's relaxed passes ran out
// with: ResNet-101's graph at GBS 512 on 256 GPUs, four copies of 4 micro-batches of 32, ran
// out with 4.6 M and is settled by its first class pass in 4.8 M.
constexpr int kRefineClassWidth = 32;
constexpr std::uint64_t kClassScreenGrowth = 4;

// Block passes in the refining phase (Search::blocks_first) get at most this fraction of the
// steps the shape's relaxed pass is estimated to need.
constexpr std::uint64_t kBlocksShare = 2;

// Free-width passes (Search::frees_first) run where the fastest plan leaves at least this
// share of the cluster idle (it uses at most 1 / kFreeIdle of the devices).
constexpr int kFreeIdle = 2;

// The refining passes' plan of least bound is polished (polish.h) within this many simulated
// pairs, where that bound is below the fastest plan.
constexpr std::int64_t kPassPolishPairs = std::int64_t{1} << 22;

// A block pass's first kPolishedBlockPlans plans that fit are polished (offer_polished): NASNet-A
// large at GBS 32 on 2 x 8 GPUs reports 70.88 ms (one copy of 8 micro-batches of 4) with the
// first alone, 69.85 ms (one copy of 4 micro-batches of 8: speedup 9.287 -> 9.425, gap 9.0 ->
// 7.6 %) with two, and the same with 4 and 8 (9.202 again since the pace of the stages in front,
// cost/suffix_timing.h's InFront, left room for a refining pass that takes their steps).
constexpr std::ptrdiff_t kPolishedBlockPlans = 2;

}  // namespace

// First the transfer screen (transfer_screen.cc) settles the open shapes where no plan of two
// stages or more makes the fastest plan's time. Then refining relaxed passes (DpQuery::buckets)
// of the open shapes (count_bounds), of the whole cluster and its parts, while some has a bound
// below the fastest plan (each pass prunes with it: only the certificate needs them): the
// kRefineWave of least bound, each with an equal part of the effort kept for them (refine_left_),
// with kFirstBuckets buckets, then kBucketGrowth times as many; a shape no relaxed pass bounded
// gets a plain one first (after a free-width pass on wide copies: frees_first; on a chain,
// after block passes: blocks_first; on copies of 32 devices or more, after its first class
// pass: classes_first); one of 11 to kMergedMicroBatches micro-batches under 1F1B on fewer
// than kBlockPassStates states a merged pass before its refining passes (merged_first). A shape
// whose holder is
// open (held_by), or pending its closing passes (resume_closing), is left to it. The least goes
// alone, with all that is left, where its pass may need more than an equal part (needs(): its last
// pass's growth over the one before times its last, at first its relaxed pass: 16 buckets took 3
// times a relaxed pass's steps on GNMT large, four times the buckets 2.5 to 3 times the steps on
// GNMT-32), and a later one waits when its part is too small. Each pass that finishes raises its
// shape's bound, and its plans are candidates (DpQuery::relaxed), the one of least bound polished
// (offer_polished), which may lower the fastest plan
// and so what the certificate must reach (on GNMT-32 simplified at GBS 192 on 16 single-GPU
// machines they led to a plan 4.3 % faster than the best found before, 0.45 % from the optimum;
// bench/README.md). A shape is refined no more when its pass ran out or could not run, raised its
// bound by less than kLeastRefinement of the fastest plan (near the exact pass's bound, which more
// buckets only approach; within kStallBand of the fastest plan, for the kStalls-th time), or after
// kRefinements passes; where passes with buckets of round trip stall so, up to
// kWorstRefinements more follow with buckets of the worst term too (DpQuery::worst_buckets),
// until one of them stalls (raises the bound of the one before by less). The certificate is the
// least bound: refining any shape but the least is wasted until that one rises, and once the least
// is refined no more (unless a closing pass with what is left settles it: last_closing), or the
// relaxed passes of the shapes tied with it cannot all run (relaxed_passes_fit), so is every other.
// Where a whole cluster's shape pending its closing passes holds the certificate, merged passes
// of it come first (merge_unclosed).
// Then the closing passes short of effort resume with what is left (resume_closing), and then
// relaxed timed passes of the least open shape (refine_timed), then, where its refining
// passes had stalled, the next ones of their series (refine_past_stall), and last, where its
// merged pass finished, merged passes of more fields (refine_merged).
void Search::refine() {
  transfer_screen();
  std::vector<int> passes(open_.size(), 0), stalls(open_.size(), 0);
  // The least bound of each shape's last pass with buckets of worst term (0: none yet).
  std::vector<Seconds> worst_least(open_.size(), 0);
  std::vector<char> done(open_.size(), 0);
  for (;;) {
    // A shape whose bound meets the fastest plan no longer holds the certificate back.
    const Seconds target = pool_.fastest() * (1 - kTie);
    if (merge_unclosed()) continue;
    // A shape whose holder is open, or pending its closing passes (resume_closing), is
    // bounded by it (open_bound): the certificate, the least bound, is never its own, and
    // its passes would raise nothing.
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < open_.size(); ++i)
      if (open_bound(i) < target && open_[i].holder < 0 && open_[i].closing < 0) order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return open_bound(a) < open_bound(b); });
    // The certificate can rise no further once its least bound can, nor where the
    // relaxed passes that the shapes tied with it need cannot all fit what is left.
    if (order.empty() || refine_left_ == 0 || done[order.front()] ||
        !relaxed_passes_fit(order, target)) {
      if (!order.empty() && done[order.front()] && last_closing(order.front())) continue;
      break;
    }
    std::erase_if(order, [&](std::size_t i) { return done[i]; });
    // The least alone where it may need more than an equal part.
    const bool alone = needs(order.front()) > refine_left_ / kRefineWave;
    order.resize(std::min(order.size(), alone ? 1 : kRefineWave));
    const std::uint64_t share = refine_left_ / order.size();
    // Each shape's pass, decided once: needs() moves as the wave's passes are counted.
    std::vector<WavePass> wave(order.size());
    for (std::size_t j = 0; j < order.size(); ++j) {
      const std::size_t i = order[j];
      wave[j].kind = frees_first(i)     ? WavePass::Free
                     : merged_first(i)  ? WavePass::Merged
                     : blocks_first(i)  ? WavePass::Blocks
                     : classes_first(i) ? WavePass::Classes
                                        : WavePass::Relaxed;
      wave[j].runs = wave[j].kind == WavePass::Blocks || wave[j].kind == WavePass::Classes ||
                     wave[j].kind == WavePass::Merged || needs(i) <= share;
      wave[j].steps = pass_limit(i, wave[j].kind, share);
    }
    std::vector<PassBound> found(order.size());
    tbb::parallel_for(std::size_t{0}, order.size(), [&](std::size_t j) {
      const std::size_t i = order[j];
      const ShapeOn& s = open_[i].on;
      if (!wave[j].runs) return;
      const PassLimits pass = limits();
      if (wave[j].kind == WavePass::Free) {
        found[j] = free_bound(*s.cost, s.shape, target, wave[j].steps, pass);
      } else if (wave[j].kind == WavePass::Merged) {
        found[j] = merged_bound(*s.cost, s.shape, target, wave[j].steps, pass);
      } else if (wave[j].kind == WavePass::Blocks) {
        found[j] = block_bound(*s.cost, s.shape, target, wave[j].steps, pass, 0);
      } else if (wave[j].kind == WavePass::Classes) {
        found[j] = first_class_bound(*s.cost, s.shape, target, wave[j].steps, pass);
      } else {
        // A shape no relaxed pass bounded gets one (no buckets) first.
        const int buckets = open_[i].unrelaxed ? 0 : buckets_after(passes[i]);
        found[j] = refined_bound(*s.cost, s.shape, target, wave[j].steps, pass, buckets,
                                 open_[i].worst, target, false, kEnumerateNear);
      }
    });
    for (std::size_t j = 0; j < order.size(); ++j) {
      const std::size_t i = order[j];
      const PassBound& pass = found[j];
      // Not run: a later one waits (its part was too small); the least, alone where its pass
      // may need more than all that is left, is refined no more (it could not run).
      if (j > 0 && !wave[j].runs) continue;
      refine_left_ -= std::min(refine_left_, pass.steps);
      // Its block or relaxed pass comes next, where still needed.
      if (wave[j].kind != WavePass::Relaxed) {
        if (pass.finished)
          open_[i].bound = std::max(open_[i].bound, std::min(pass.least_bound, target));
        if (wave[j].kind == WavePass::Merged && pass.finished)
          open_[i].merged_fields = kMergedFields;
        (wave[j].kind == WavePass::Free     ? open_[i].freed
         : wave[j].kind == WavePass::Blocks ? open_[i].blocked
         : wave[j].kind == WavePass::Merged ? open_[i].merged
                                            : open_[i].classed) = true;
        if (wave[j].kind == WavePass::Blocks) offer_polished(*open_[i].on.cost, pass.plans, true);
        if (wave[j].kind == WavePass::Merged) offer_polished(*open_[i].on.cost, pass.plans);
        continue;
      }
      const bool refining = !open_[i].unrelaxed && passes[i] > 0;  // a second one or later
      const Seconds raised = std::max(open_[i].bound, std::min(pass.least_bound, target));
      if (open_[i].unrelaxed) {  // its refining passes come next
        done[i] = !pass.finished;
      } else {
        // Buckets of worst term start again from kFirstBuckets, below the bound that those of
        // round trip left: they stall where they no longer raise their own last pass's bound.
        const Seconds before = open_[i].worst ? worst_least[i] : open_[i].bound;
        const Seconds reached = std::max(before, std::min(pass.least_bound, target));
        if (open_[i].worst && pass.finished) worst_least[i] = reached;
        const bool stalled = pass.finished && reached < before + kLeastRefinement * target &&
                             (reached < target * (1 - kStallBand) || ++stalls[i] == kStalls);
        // Buckets of round trip that stall leave those of the worst term to try, from
        // kFirstBuckets again.
        const bool to_worst = stalled && !open_[i].worst;
        if (to_worst) open_[i].worst = true, stalls[i] = 0, passes[i] = 0;
        // Within kStallBand of the fastest plan, where the closing pass after them is untimed,
        // buckets of worst term that still rise go on (kNearWorstRefinements).
        const bool near = raised >= target * (1 - kStallBand) &&
                          open_[i].on.shape.micro_batches > kClosingTimedMicroBatches;
        const int most = !open_[i].worst ? kRefinements
                         : near          ? kNearWorstRefinements
                                         : kWorstRefinements;
        done[i] = !pass.finished || (stalled && !to_worst) || (!stalled && ++passes[i] == most);
        if (stalled && !to_worst) open_[i].stalled_before = passes[i] + 1;
      }
      if (pass.finished && open_[i].unrelaxed && open_[i].steps > 0)
        relaxed_growth_ = std::max(
            relaxed_growth_, static_cast<double>(pass.steps) / static_cast<double>(open_[i].steps));
      if (pass.finished) open_[i].bound = raised, open_[i].unrelaxed = false;
      open_[i].before = refining ? open_[i].steps : 0;
      open_[i].steps = pass.steps;
      offer_polished(*open_[i].on.cost, pass.plans);
    }
    pool_.simulate_promising();
  }
  merge_unclosed();
  resume_closing();
  refine_timed();
  refine_past_stall();
  refine_merged();
}

// The plans of a refining pass on the cluster of `cost`, as candidates (offer), and the one of
// least bound polished (polish.h) where that bound is below the fastest plan: the passes' plans
// are those of least merged bound, real plans of the shape, but seldom the fastest near them, and
// a faster plan makes the passes after them prune more and enumerate sooner (kEnumerateNear).
// NASNet-A large at GBS 32 on 16 single-GPU machines, two copies of 16 micro-batches of 1 under
// GPipe: a pass's plan of least bound polishes to 89.87 ms, the best plan, which the search had
// found only in the final polish after the refining passes; against it the pass of 64 buckets
// of worst term enumerates its band, and the point is exact (it was 1.0 % open).
// A block pass's plans (`blocks`, DpQuery::state_block) cut each stage somewhere in the block it
// ends in, so their own bounds say little of the plans near them: the first kPolishedBlockPlans
// that fit, least merged bound first, are polished where the pass's bound is below the fastest
// plan.
void Search::offer_polished(const CostModel& cost, const std::vector<DpPlan>& plans, bool blocks) {
  std::vector<CostedPlan> costed;
  add_fitting(cost, global_batch_, plans, costed);
  offer(cost, costed, 0);
  auto from = costed.begin(), to = costed.end();
  if (blocks) {
    if (plans.empty() || plans.front().lower_bound >= pool_.fastest()) return;
    to = from + std::min(kPolishedBlockPlans, std::ssize(costed));
  } else {
    from = std::min_element(from, to, [](const CostedPlan& a, const CostedPlan& b) {
      return a.plan.lower_bound < b.plan.lower_bound;
    });
    if (from == to || from->plan.lower_bound >= pool_.fastest()) return;
    to = from + 1;
  }
  for (; from != to; ++from) {
    std::int64_t pairs = kPassPolishPairs;
    if (std::optional<CostedPlan> faster =
            polish(cost, from->spec, global_batch_, options_.max_stage_width, pairs)) {
      add(cost, *faster);
      pool_.simulate_promising();
    }
  }
}

// Whether open shape i's next pass in refine() is its block passes (block_bound): a shape
// of a chain too short for relaxed_bound's (kBlockPassStates) that no relaxed pass bounded
// gets them first, pruned by the fastest plan. Where the search found its fastest plan
// late, the relaxed passes of the shapes it had left at their floor need far more than block
// passes of a few states each: GNMT-16 (77 states) at GBS 512 on 32 machines of 8 GPUs, one
// copy of 16 micro-batches of 32, is settled in 4 M steps by blocks of 3 states, where its
// relaxed pass takes 24 M (both with the narrow passes' plan as the cutoff: refined()); 6 of
// the 8 shapes that held the point's certificate are settled so. They get at most
// 1 / kBlocksShare of the steps the relaxed pass is estimated to need (needs()): they are
// worth it only where they cost less (Llama 2 70B's, 82 states, ran out with 5 M steps
// where its relaxed passes finish in 1.7 M). Longer chains had block passes where their
// relaxed passes ran out: on NASNet-A large (1,250 states) at GBS 512 on 1,024 GPUs, more
// in refine() took 9 s and raised nothing. On longer chains they get the wave's whole part
// (refine()): there a relaxed pass needs far more; on NASNet-A large at GBS 512 on 256 GPUs
// they settle the shapes of one and two copies of 4 to 32 micro-batches in 2 to 20 M steps
// (one copy of 4 micro-batches of 128: 20 M, where its class pass takes 59 M and its relaxed
// pass ran out at 37 M).
bool Search::blocks_first(std::size_t i) const {
  const CostModel& cost = *open_[i].on.cost;
  return open_[i].unrelaxed && !open_[i].blocked && cost.chain();
}
// Whether open shape i's next pass in refine() is its first class pass (first_class_bound):
// a shape that no relaxed pass bounded, on copies of at least kRefineClassWidth devices,
// after its block passes on a chain (blocks_first), before its relaxed pass. Pruned by the
// fastest plan, it settles most such shapes for a fraction of a relaxed pass's steps:
// ResNet-101's graph (410 cuts, no block passes) at GBS 512 on 256 GPUs: of the 33 shapes of
// the whole cluster at their floor (29 to 39 ms against the best plan's 52.8 ms), it settles
// 23 in 1.2 to 8.3 M steps each, where their relaxed passes take 3 to 200 M.
bool Search::classes_first(std::size_t i) const {
  return open_[i].unrelaxed && !open_[i].classed && width_of(open_[i].on) >= kRefineClassWidth;
}
// Whether open shape i's next pass in refine() is its merged pass (merged_bound), before its
// refining passes: a shape its relaxed pass bounded, under 1F1B, of more micro-batches than a
// relaxed timed pass times (kRelaxedTimedMicroBatches) and at most kMergedMicroBatches, on a
// chain or graph too short for block passes (kBlockPassStates): no timed pass bounds it. Its
// refining passes' buckets keep the least of each window cycle's field, which the merged pass
// keeps apart for each undominated round trip, worst and all-reduce term. GNMT-16 at GBS 64 on 8
// machines of 8 GPUs, one copy of 16 micro-batches of 4: 22.90 ms after 1,024 buckets (gap 8.0
// %), 23.49 ms with its merged pass (45 M steps; gap 5.7 %).
bool Search::merged_first(std::size_t i) const {
  const OpenShape& s = open_[i];
  return !s.unrelaxed && !s.merged && mergeable(s.on);
}
bool Search::mergeable(const ShapeOn& s) const {
  return s.shape.schedule == Schedule::OneFOneB &&
         s.shape.micro_batches > kRelaxedTimedMicroBatches &&
         s.shape.micro_batches <= kMergedMicroBatches &&
         s.cost->states() < static_cast<std::size_t>(kBlockPassStates);
}

// Whether open shape i's next pass in refine() is its free-width pass (free_bound), before
// any block or relaxed pass: a shape that no relaxed pass bounded, on copies wider than two
// machines of one size and GPU type, where the fastest plan leaves at least half of the
// cluster idle (kFreeIdle). The pass does not count the copy's devices, so it settles shapes
// where they do not bind: on GNMT-16 at GBS 512 on 1,024 GPUs, the one-copy shapes whose
// relaxed passes ran out in the search (4 to 47 M steps), at their floors (34 to 39 ms
// against 100.1 ms: gap 66 %), in 0.8 to 7.3 M steps each; the gap is then the 4.5 % of the
// best plan's own shape, as on 64 GPUs. Where the devices bind it seldom settles one: Llama
// 2 70B at GBS 512 on 128 GPUs, whose plans use them all, lost the steps its relaxed passes
// needed to such passes. It runs where the relaxed pass would (needs(): that pass's
// estimate), with all of the part that pass would get, since its steps do not follow the
// relaxed pass's (on 4,096 GPUs those had run out at 0.25 M in the search); where the
// relaxed passes of the shapes tied with the least cannot all run (relaxed_passes_fit),
// none runs (on NASNet-A large at GBS 512 on 1,024 GPUs, free passes ran out with the
// phase's 100 M steps).
bool Search::frees_first(std::size_t i) const {
  const CostModel& cost = *open_[i].on.cost;
  return open_[i].unrelaxed && !open_[i].freed &&
         kFreeIdle * pool_.fastest_devices() <= cost.device_count() &&
         free_widths_apply(cost, open_[i].on.shape);
}

// About the steps open shape i's next pass in refine() needs: what its relaxed passes ran
// out with, times the most any relaxed pass of refine() took over that (relaxed_growth_;
// with the fastest plan to prune it can also need fewer than in the search, where the
// cutoff was higher), or its last refining pass's times what that took over the one before
// (kBucketGrowth times, at most, and where there was none). Passes of kBucketGrowth times
// the buckets took 2.5 to 2.7 times the steps on GNMT large at GBS 128 on 16 single-GPU
// machines (3.2, 8.4, 22.7 and 56.8 M): at 4 times the 22.7 M, the pass that settles the
// shape of the best plan did not run, and the point stayed 0.5 % open. Block passes first
// (blocks_first): 1 / kBlocksShare of the relaxed pass's; a class screen (classes_first):
// what its relaxed passes ran out with (pass_limit allows it more).
std::uint64_t Search::needs(std::size_t i) const {
  const OpenShape& s = open_[i];
  const double steps = static_cast<double>(s.steps);
  const auto relaxed = static_cast<std::uint64_t>(relaxed_growth_ * steps) + 1;
  if (blocks_first(i) && !frees_first(i)) return relaxed / kBlocksShare;
  if (classes_first(i) && !frees_first(i)) return s.steps + 1;
  if (s.unrelaxed) return relaxed;
  const double growth = s.before > 0 ? std::clamp(steps / static_cast<double>(s.before), 1.0,
                                                  static_cast<double>(kBucketGrowth))
                                     : static_cast<double>(kBucketGrowth);
  return static_cast<std::uint64_t>(growth * steps) + 1;
}

// Whether the relaxed passes of the shapes of `order` (least bound first) that are tied
// with the least (within kLeastRefinement of `target`) and that none bounded yet may all
// run within what refine() has left (needs()): the certificate rises only once every one
// of them does.
bool Search::relaxed_passes_fit(const std::vector<std::size_t>& order, Seconds target) const {
  const Seconds tied = open_bound(order.front()) + kLeastRefinement * target;
  std::uint64_t needed = 0;
  for (std::size_t i : order)
    if (open_bound(i) <= tied && open_[i].unrelaxed) needed += needs(i);
  return needed <= refine_left_;
}

// The steps open shape i's next pass in refine(), of `kind`, may take in a wave whose parts
// are `share`: block passes on a chain of fewer than kBlockPassStates states what they are
// estimated to need (needs()), a class screen kClassScreenGrowth times the steps its relaxed
// passes ran out with (the part where none ran), any other pass the part.
std::uint64_t Search::pass_limit(std::size_t i, WavePass::Kind kind, std::uint64_t share) const {
  const bool short_chain = open_[i].on.cost->states() < static_cast<std::size_t>(kBlockPassStates);
  if (kind == WavePass::Blocks && short_chain) return std::min(share, needs(i));
  if (kind == WavePass::Classes && open_[i].steps > 0)
    return std::min(share, kClassScreenGrowth * needs(i));
  return share;
}
}  // namespace pe::detail::hybrid
