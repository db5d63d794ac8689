// The refining phase (branch_and_bound.h): free-width, block, class and refining relaxed
// passes of the open shapes, least bound first, with the effort kept for them.
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

// A refining pass whose own least bound comes within kEnumerateNear of the fastest plan also
// enumerates the plans of its cells whose bound is below the fastest plan (DpQuery::enumerate,
// as the closing passes do), within its part: a cell's entry holds the least of each field of
// the suffixes it stands for, so no plan is missed, and once it finishes every plan of the
// shape that could beat the fastest one is a candidate, simulated: the shape is settled. Where
// the refining passes' bound only approaches the path bound's least, this settles the shape in
// one pass. NASNet-A large at GBS 128 on 2 x 8 GPUs, two copies of 64 micro-batches of 1 under
// GPipe, 0.032 % below the best plan after 256 buckets: 1,024 buckets enumerate and settle it
// in 45 M steps with their pass, where they had bounded it 0.0077 % below (44 M), 4,096
// buckets went on (108 M) and the closing pass ran out (212 M); the point is exact in 18 s
// instead of 35 s with the same plan. At GBS 192 it becomes exact with a plan 0.003 % faster
// (8.4 s instead of 13.9). A band of 1 % can hold few plans too: DenseNet-121 at GBS 64 on 8
// machines of 8 GPUs, 8 copies of 4 micro-batches of 2, whose refining passes stalled 0.28 %
// below the fastest plan (its closing pass then ran out with 247 M steps): its fifth pass
// (4,096 buckets, 0.82 % below) enumerates its band in 39 M steps, and finds a plan 0.2 %
// faster than any found before; the point is exact (speedup 35.12 -> 35.19) in 20 s instead
// of 36. It was 0.1 % until then; with 1 % every bundled profile's default sweep on 2 x 8
// GPUs and on 16 single-GPU machines gives the same answers in the same time. Further from
// the fastest plan the band holds more plans than an enumeration reaches: NASNet-A large at
// GBS 32 and 64 on 16 single-GPU machines, shapes 1.0 and 1.5 % below, gained nothing with 2 %.
// The pass decides by its own bound, once its cells are filled (DpQuery::enumerate_from), not by
// the shape's before it: at GBS 32 there, the first pass of 64 buckets of worst term comes 0.6 %
// below the best plan from 1.0 %, and enumerates its band in 76 M steps with its pass, where the
// next (256 buckets) would need 292 M; the point is exact.
constexpr double kEnumerateNear = 0.01;

// A relaxed timed pass of a shape (refine_timed) within kTimedEnumerateNear of the fastest plan
// also enumerates its plans below it, as above: a timed cell's entry holds the least of each
// timing entry of the suffixes it stands for, so it misses none, and its completions are bounds
// of the simulated time, which prune far more of the band than path bounds. ResNet-101's graph
// at GBS 32 on 8 machines of 8 GPUs, 8 copies of 4 micro-batches of 1, 0.67 % open after its
// timed passes: exact in 36 s, with a plan 0.16 % faster. Until the pace of the stages in front
// (cost/suffix_timing.h's InFront) only the first two passes of a shape did: the later ones, of
// more buckets, enumerated for their larger steps (at GBS 64 every enumeration ran out, and the
// point took 359 s instead of 110). Pruned by it, their cells hold far fewer suffixes: DenseNet-121
// at GBS 32 on 8 machines of 8 GPUs, 8 copies of 4 micro-batches of 1, 0.42 % open after its
// timed passes, is exact, its pass of 1,024 buckets enumerating its band.
constexpr double kTimedEnumerateNear = 0.01;

// The refining passes' plan of least bound is polished (polish.h) within this many simulated
// pairs, where that bound is below the fastest plan.
constexpr std::int64_t kPassPolishPairs = std::int64_t{1} << 22;

// A block pass's first kPolishedBlockPlans plans that fit are polished (offer_polished): NASNet-A
// large at GBS 32 on 2 x 8 GPUs reports 70.88 ms (one copy of 8 micro-batches of 4) with the
// first alone, 69.85 ms (one copy of 4 micro-batches of 8: speedup 9.287 -> 9.425, gap 9.0 ->
// 7.6 %) with two, and the same with 4 and 8 (9.202 again since the pace of the stages in front,
// cost/suffix_timing.h's InFront, left room for a refining pass that takes their steps).
constexpr std::ptrdiff_t kPolishedBlockPlans = 2;

// The buckets of a shape's refining pass after `passes` of its kind: kFirstBuckets, then
// kBucketGrowth times as many each.
int buckets_after(int passes) {
  int buckets = kFirstBuckets;
  for (int p = 0; p < passes; ++p) buckets *= static_cast<int>(kBucketGrowth);
  return buckets;
}

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
                          open_[i].on.shape.micro_batches > kTimedMicroBatches;
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

// After the refining passes and the closing passes they resume, with what they left: relaxed
// timed passes (refined_bound's `timed`, DpQuery::timed) of the open shape of least bound, from
// kFirstBuckets buckets on, kBucketGrowth times as many each, while it holds the certificate,
// its micro-batches can be timed (relaxed_timeable), and until the kStalls-th that raises the
// bound of the ones before by less than kLeastRefinement of the fastest plan (at most
// kTimedRefinements passes a shape, kNearTimedRefinements where the last left it within
// kTimedEnumerateNear, each after the second only where its estimate fits what is left:
// kTimedGrowthRise): where the
// path bound of every plan of that shape lies below its simulated time, the passes before could
// only approach the path bound. Each pass gets all that is left; near the fastest plan each also
// enumerates (kTimedEnumerateNear). After the others: in the waves of refine() they took
// steps the closing passes resumed after them needed (ResNet-101 at GBS 512 on 1,024 GPUs: gap 3.4
// -> 12.5 %). On a chain of kBlockPassStates states or more, a shape's timed block passes
// (block_bound's `timed`) come first, then the least shape again: NASNet-A large at GBS 32 on 2 x 8
// GPUs, one copy of 8 micro-batches of 4, whose relaxed timed pass ran out of the 176 M steps left,
// is bound at 66.7 ms (fastest plan 71.5) in 53 M, and the point takes 24 s instead of 75, with a
// gap of 10.95 % instead of 12.46. Under 1F1B they also time shapes of up to 16 micro-batches
// (block_timeable) and those no relaxed pass bounded: there one copy of 16 micro-batches of 2 (63.7
// -> 64.5 ms) and one of 4 of 8 (64.4 -> 68.0 ms), gap 9.80 %.
void Search::refine_timed() {
  for (;;) {
    const Seconds target = pool_.fastest() * (1 - kTie);
    const std::size_t least = least_open(target);
    if (least == open_.size() || refine_left_ == 0) return;
    OpenShape& s = open_[least];
    // Its timed block passes come first (on a chain of kBlockPassStates states or more:
    // block_bound), then the least shape again; then its relaxed timed passes, where it has a
    // relaxed pass and few enough micro-batches. Beyond those (more micro-batches, or its
    // relaxed pass ran out), timed block passes only under 1F1B: for GPipe the path bound is
    // the simulated time, which its untimed passes bound already (16 single-GPU machines at
    // GBS 32: two copies of 16 micro-batches, 86 M steps for nothing). Held, or pending its
    // closing passes: its own bound is not the certificate's.
    const PipelineShapeChoice& shape = s.on.shape;
    const bool relaxed = !s.unrelaxed && relaxed_timeable(shape.micro_batches, shape.schedule);
    const bool blocks =
        !s.timed_blocked && (relaxed || (shape.schedule == Schedule::OneFOneB &&
                                         block_timeable(shape.micro_batches, shape.schedule)));
    if (s.holder >= 0 || s.closing >= 0 || s.timed_done || !(blocks || relaxed)) return;
    if (blocks) {
      s.timed_blocked = true;
      const PassBound timed = block_bound(*s.on.cost, shape, target, refine_left_, limits(),
                                          kBlockPassStates, true, kFirstBuckets);
      refine_left_ -= std::min(refine_left_, timed.steps);
      if (timed.finished) s.bound = std::max(s.bound, std::min(timed.least_bound, target));
      offer_polished(*s.on.cost, timed.plans, true);
      pool_.simulate_promising();
      continue;
    }
    if (s.timed_growth > 0 &&
        s.timed_growth * kTimedGrowthRise * static_cast<double>(s.timed_steps) >
            static_cast<double>(refine_left_)) {
      s.timed_done = true;
      continue;
    }
    const int buckets = buckets_after(s.timed_passes);
    const bool near = open_bound(least) >= target * (1 - kTimedEnumerateNear);
    const PassBound pass = refined_bound(*s.on.cost, s.on.shape, target, refine_left_, limits(),
                                         buckets, false, near ? target : Seconds{0}, true);
    refine_left_ -= std::min(refine_left_, pass.steps);
    // Like buckets of worst term (refine), timed passes start from kFirstBuckets, often below
    // the bound the passes before left: they go on until the kStalls-th raises nothing over
    // the ones before, at most kTimedRefinements, or kNearTimedRefinements where the shape is
    // within kTimedEnumerateNear of the fastest plan (where the next pass enumerates too).
    const Seconds reached = std::max(s.timed_least, std::min(pass.least_bound, target));
    const bool stalled = reached < s.timed_least + kLeastRefinement * target;
    const bool near_after =
        std::max(reached, open_bound(least)) >= target * (1 - kTimedEnumerateNear);
    s.timed_done = !pass.finished || (stalled && ++s.timed_stalls == kStalls) ||
                   ++s.timed_passes >= (near_after ? kNearTimedRefinements : kTimedRefinements);
    if (pass.finished) {
      s.timed_least = reached, s.bound = std::max(s.bound, reached);
      if (s.timed_steps > 0)
        s.timed_growth = static_cast<double>(pass.steps) / static_cast<double>(s.timed_steps);
      s.timed_steps = pass.steps;
    }
    offer_polished(*s.on.cost, pass.plans);
    pool_.simulate_promising();
  }
}

// The open shape of least bound below `target` (the first of those tied), or open_.size().
std::size_t Search::least_open(Seconds target) const {
  std::size_t least = open_.size();
  for (std::size_t i = 0; i < open_.size(); ++i)
    if (open_bound(i) < target && (least == open_.size() || open_bound(i) < open_bound(least)))
      least = i;
  return least;
}

// Last, with what the passes before left: where the open shape of least bound is its own
// certificate and its refining passes stalled (refine), the next passes of that series, while
// the next may fit what is left (needs()) and each raises the shape's bound (by
// kLeastRefinement of the fastest plan), up to kNearWorstRefinements passes in the series. A
// series stalls where a pass raises nothing over the one before, but a relaxation of more
// buckets can still rise well beyond both: NASNet-A large at GBS 64 on 16 single-GPU machines,
// two copies of 32 micro-batches of 1 under GPipe, 139.71 ms with 16 and with 64 buckets of
// worst term, then 141.16 ms with 256 in 157 M steps, of the 210 M left; its plans, polished,
// hold one 0.19 % faster than the best before (gap 1.39 -> 0.55 %).
void Search::refine_past_stall() {
  for (;;) {
    const Seconds target = pool_.fastest() * (1 - kTie);
    const std::size_t least = least_open(target);
    if (least == open_.size() || refine_left_ == 0) return;
    OpenShape& s = open_[least];
    if (s.holder >= 0 || s.closing >= 0 || s.stalled_before == 0 ||
        s.stalled_before >= kNearWorstRefinements || needs(least) > refine_left_)
      return;
    const PassBound pass =
        refined_bound(*s.on.cost, s.on.shape, target, refine_left_, limits(),
                      buckets_after(s.stalled_before), s.worst, target, false, kEnumerateNear);
    refine_left_ -= std::min(refine_left_, pass.steps);
    const Seconds reached = std::max(s.bound, std::min(pass.least_bound, target));
    const bool rose = pass.finished && reached >= s.bound + kLeastRefinement * target;
    s.stalled_before = rose ? s.stalled_before + 1 : 0;
    if (pass.finished) s.before = s.steps, s.steps = pass.steps, s.bound = reached;
    offer_polished(*s.on.cost, pass.plans);
    pool_.simulate_promising();
  }
}

// Last of all, where the open shape of least bound is its own certificate and its merged pass
// finished (merged_first), merged passes of one more field each (merged_bound) with all that is
// left, while each raises its bound (by kLeastRefinement of the fastest plan), up to
// kMostMergedFields; their plans are polished (offer_polished). Only with what the passes before
// left: a pass's growth with one more field cannot be told beforehand (GNMT-16 on 8 machines of
// 8 GPUs, three to five fields: 12.9, 18.7 and 34.7 M steps on one copy of 16 micro-batches of
// 2 at GBS 32, 45, 105 and 266 M on one of 16 of 4 at GBS 64), and a series in refine() took the
// steps of refining passes that raise more (GBS 64, 128 and 256 there went from 3.5, 2.4 and 1.7
// % to 4.4, 2.6 and 3.4 %). At GBS 32 there, four and five fields raise 15.83 ms to 16.04 ms,
// and their plans polish to one 1.0 % faster: gap 3.75 -> 1.58 %.
void Search::refine_merged() {
  for (;;) {
    const Seconds target = pool_.fastest() * (1 - kTie);
    const std::size_t least = least_open(target);
    if (least == open_.size() || refine_left_ == 0) return;
    OpenShape& s = open_[least];
    if (s.holder >= 0 || s.closing >= 0 || s.merged_fields < kMergedFields ||
        s.merged_fields >= kMostMergedFields)
      return;
    const Seconds before = s.bound;
    const bool finished = merged_pass(s.on, s.bound, s.merged_fields + 1).finished;
    const bool rose = finished && s.bound >= before + kLeastRefinement * target;
    s.merged_fields = rose ? s.merged_fields + 1 : kMostMergedFields;
  }
}

// A merged pass of `fields` fields (merged_bound) of shape `on` with all the refining effort
// left, cut off at the fastest plan (refine_merged, merge_unclosed): its steps spent, `bound`
// raised to its least bound where it finished, and its plans polished (offer_polished).
PassBound Search::merged_pass(const ShapeOn& on, Seconds& bound, int fields) {
  const Seconds target = pool_.fastest() * (1 - kTie);
  PassBound pass = merged_bound(*on.cost, on.shape, target, refine_left_, limits(), fields);
  refine_left_ -= std::min(refine_left_, pass.steps);
  if (pass.finished) bound = std::max(bound, std::min(pass.least_bound, target));
  offer_polished(*on.cost, pass.plans);
  pool_.simulate_promising();
  return pass;
}

// Where the certificate is the bound of a whole cluster's shape pending its closing passes
// (unclosed_) that merged passes take (mergeable, as merged_first), once, before any other pass
// of refine() (which takes no such shape, nor does refine_merged) and then before the closing
// passes resume: merged passes of kMergedFields fields and then one more each (merged_bound), up
// to kMostMergedFields, with what is left, while each raises the bound of the one before by
// kLeastRefinement of the fastest plan; each that finishes raises the shape's bound (and so its
// parts' shapes pending it: open_bound), and their plans are polished (offer_polished). False
// where none ran. GNMT-16 at GBS 32 on 4 machines of 8 GPUs, one copy of 16 micro-batches of 2,
// bounded at 15.89 ms by its timed pass: the refining passes raised other shapes, and its
// closing pass then ran out of the 46 M steps they left (on 5 machines none were left). Three to
// six fields reach 15.83, 15.93, 16.04 and 16.04 ms in 5.7, 5.9, 9.8 and 22.6 M steps, and their
// plans polish to one 0.7 % faster, the plan 3 machines find (speedup 7.585 -> 7.639; gap 3.17
// -> 1.58 %, on 5 machines too).
bool Search::merge_unclosed() {
  Unclosed* least = nullptr;
  for (Unclosed& u : unclosed_)
    if (!least || u.bound < least->bound) least = &u;
  if (!least || least->merged || !mergeable(least->on) || refine_left_ == 0 ||
      meets_fastest(least->bound) || certificate() < least->bound)
    return false;
  least->merged = true;
  Seconds last = 0;
  for (int fields = kMergedFields; fields <= kMostMergedFields && refine_left_ > 0; ++fields) {
    const Seconds target = pool_.fastest() * (1 - kTie);
    if (least->bound >= target || certificate() < least->bound) break;  // it holds it no more
    const PassBound pass = merged_pass(least->on, least->bound, fields);
    const bool rose =
        fields == kMergedFields || pass.least_bound >= last + kLeastRefinement * target;
    if (!pass.finished || !rose) break;
    last = pass.least_bound;
  }
  return true;
}

// Open shape i, the least bound once refine() refines it no more, gets one closing pass
// (close) with all the refining effort left, pruned by the fastest plan; false where it had one
// or gets none. The pass is timed where the shape's micro-batches are timeable
// (DpQuery::timed): its least bound is then the fastest simulated plan of the shape, so one
// that finishes settles it, where the relaxed passes' bounds only approach the path bound, which
// may lie below: simplified GNMT-32 at GBS 320 on 16 single-GPU machines, one copy of 5
// micro-batches of 64, ran out of the exact effort in its timed pass (it needs 69 M steps with
// the best plan as its bound), and its refining passes stopped 0.52 % below with 140 M steps
// left. Elsewhere it is an exact pass with the window cycles: with the fastest plan as its
// cutoff it may finish where the search's exact pass of the shape ran out, and its bound is the
// path bound's least, which the refining passes only approach: ResNet-101 at GBS 128 to 384 on
// 8 machines of 8 GPUs, the best plans' shapes of 8 copies of 16 to 48 micro-batches of 1
// (GPipe), whose refining passes stalled 0.03 to 0.45 % below with about 590 M steps left, are
// settled so (8.4 M steps at GBS 128). Only within kStallBand of the fastest plan: further
// below, the pass has more to search (ResNet-101 at GBS 512 on 1,024 GPUs, 128 copies of 4
// micro-batches of 1, 1.7 % below: it ran out with 158 M steps).
bool Search::last_closing(std::size_t i) {
  OpenShape& s = open_[i];
  if (s.last_closed || refine_left_ == 0 || open_bound(i) < pool_.fastest() * (1 - kStallBand))
    return false;
  s.last_closed = true;
  std::uint64_t before = 0;
  close(s.on, 1, 1, before, s.bound, refine_left_, true);
  return true;
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
