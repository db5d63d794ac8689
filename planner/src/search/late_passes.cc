// The refining phase's late passes (branch_and_bound.h), with the effort its waves left
// (refining_phase.cc): relaxed timed passes of the open shape of least bound, the next passes
// of a stalled refining series, merged passes of more fields, merged passes of a whole
// cluster's shape pending its closing passes, and the least shape's last closing pass.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cost/suffix_timing.h"
#include "search/branch_and_bound.h"
#include "search/shape_pass.h"

namespace pe::detail::hybrid {

namespace {

// A relaxed timed pass of a shape (refine_timed) within kTimedEnumerateNear of the fastest plan
// also enumerates its plans below it, as a refining pass does (kEnumerateNear,
// branch_and_bound.h): a timed cell's entry holds the least of each
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

}  // namespace

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
    if (least == open_.size()) return;
    OpenShape& s = open_[least];
    // Its timed block passes come first (on a chain of kBlockPassStates states or more:
    // block_bound), then the least shape again; then its relaxed timed passes, where it has a
    // relaxed pass and few enough micro-batches. Beyond those (more micro-batches, or its
    // relaxed pass ran out), timed block passes only under 1F1B: for GPipe the path bound is
    // the simulated time, which its untimed passes bound already (16 single-GPU machines at
    // GBS 32: two copies of 16 micro-batches, 86 M steps for nothing).
    const PipelineShapeChoice& shape = s.on.shape;
    const bool relaxed = !s.unrelaxed && relaxed_timeable(shape.micro_batches, shape.schedule);
    const bool blocks =
        !s.timed_blocked && (relaxed || (shape.schedule == Schedule::OneFOneB &&
                                         block_timeable(shape.micro_batches, shape.schedule)));
    if (s.timed_done || !(blocks || relaxed)) return;
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

// The open shape of least bound below `target` (the first of those tied) where the late passes
// may refine it: refining effort is left, and it is its own certificate (no open holder, not
// pending its closing passes, whose bounds are its). Else open_.size().
std::size_t Search::least_open(Seconds target) const {
  std::size_t least = open_.size();
  for (std::size_t i = 0; i < open_.size(); ++i)
    if (open_bound(i) < target && (least == open_.size() || open_bound(i) < open_bound(least)))
      least = i;
  if (least == open_.size() || refine_left_ == 0 || open_[least].holder >= 0 ||
      open_[least].closing >= 0)
    return open_.size();
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
    if (least == open_.size()) return;
    OpenShape& s = open_[least];
    if (s.stalled_before == 0 || s.stalled_before >= kNearWorstRefinements ||
        needs(least) > refine_left_)
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
    if (least == open_.size()) return;
    OpenShape& s = open_[least];
    if (s.merged_fields < kMergedFields || s.merged_fields >= kMostMergedFields) return;
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
// or gets none. The pass is timed where the shape's micro-batches are timeable (DpQuery::timed,
// up to kClosingTimedMicroBatches): its least bound is then the fastest simulated plan of the
// shape, so one that finishes settles it, where the relaxed passes' bounds only approach the path
// bound, which may lie below: simplified GNMT-32 at GBS 320 on 16 single-GPU machines, one copy of
// 5 micro-batches of 64, ran out of the exact effort in its timed pass (it needs 69 M steps with
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

}  // namespace pe::detail::hybrid
