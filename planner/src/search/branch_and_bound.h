// The branch and bound of the hybrid search for one global batch size (hybrid_search.h): the
// shapes of the whole cluster, then of its parts, share one pool of candidates, one effort and
// one certificate. Its phases are written in the files named after them: candidate_passes.cc,
// search_rounds.cc, closing_passes.cc, narrow_passes.cc, refining_phase.cc and its late passes
// in late_passes.cc; the rest in branch_and_bound.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "cost/cost_model.h"
#include "pe/plan.h"
#include "search/candidate_pool.h"
#include "search/hybrid_search.h"
#include "search/pipeline_dp.h"
#include "search/pipeline_shapes.h"
#include "search/shape_pass.h"

namespace pe::detail::hybrid {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();
inline constexpr std::size_t kWave = 8;  // shapes searched together with one shared bound
inline constexpr int kRounds = 3;        // searches of a shape that runs out of effort, at most

// Coarse passes (Search::candidate_passes): copies wider than this many devices get one, on at
// most this many granules, with 1 / kCoarseShare of the effort among them, the whole cluster
// and its parts, on top of the exact passes' (which they would otherwise leave short: GNMT-16
// at GBS 1024 on 64 GPUs found a plan 7.7 % slower with a quarter less). Their plans are
// candidates where the exact passes run out (VGG-19 at GBS 512 on 256 GPUs: speedup 9.6 ->
// 19.5, on 1,024 GPUs 9.0 -> 19.5).
inline constexpr int kCoarseUnits = 16;
inline constexpr std::uint64_t kCoarseShare = 4;

// Greedy passes (DpQuery::greedy) of the same shapes, run before the coarse passes, on at
// most kGreedyUnits granules (1 device up to 64-device copies), with 1 / kGreedyShare of the
// effort on top: stages of one or two GPUs that keep slow cuts on machine boundaries, which
// coarse passes cannot express and exact passes run out before reaching (GNMT-16 at GBS 256
// on 4 machines of 8: speedup 11.5 -> 15.6, the plan of the unlimited search, which they
// also take from 66 to 15 s on one thread; on 8 machines of 8 at GBS 512, 12.8 -> 17.2).
// Narrower copies of two or more devices on the whole cluster get one early, with at most
// 1 / kEarlyGreedyShare of that quarter, shared as if at most kEarlySharers shapes were left
// (equal parts for every narrow shape were too small for the widest), and those whose early
// pass ran out (or never ran: the parts' shapes) one late, with what is left of the quarter
// (late_greedy_passes). The early passes' plans lower the cutoff of the first round's relaxed
// and exact passes: on GNMT-32 at GBS 448 on 16 single-GPU machines the seeds' best plan took
// 0.396 s, the relaxed passes of the 44 1F1B shapes searched first ran with it as their
// cutoff (25 M steps, of 33 M), and the best plan, 0.315 s, came from GPipe's shapes,
// searched after; with early greedy passes (6.7 M steps) the batch size took 1.5 s instead of
// 3.3, with the same plan. Where they run out (NASNet-A large, 1,250 states: on four-device
// copies) they stop after that wave, and leave most of the quarter to the late passes
// (bench/README.md, "Early greedy passes").
inline constexpr int kGreedyUnits = 64;
inline constexpr std::uint64_t kGreedyShare = 4;
inline constexpr std::uint64_t kEarlyGreedyShare = 2;
inline constexpr std::size_t kEarlySharers = 2 * kWave;

// The relaxed passes of a batch size share kRelaxedShare times the effort. Twice the effort:
// a relaxed pass is cheap where an exact pass runs out, and its bound both certifies and
// orders the later rounds (on the default sweep on 2 x 8 GPUs, ResNet-101's largest gap 48 %
// -> 3 % with better plans, NASNet-A large 14 -> 20 s). In the first round it runs before the
// exact pass (search_shape), and a shape it settles needs none: GNMT-32's default sweep on 16
// single-GPU machines, where most shapes are settled so, went from 81 to 56 s with the same
// plans, and on 2 x 8 GPUs, where most exact passes finish, the sweeps take as long as
// before. The same on every cluster: with proportionally less beyond 64 GPUs (their steps
// grow with the squared width), ResNet-50 at GBS 512 on 256 and 1,024 GPUs was at its floor
// (gap 54 % and 56 %, 12 s and 32 s); with the same share its relaxed passes settle the
// wide shapes, and the point is exact in 7 s and 8.5 s (bench/README.md), the same plans.
inline constexpr std::uint64_t kRelaxedShare = 2;

// Narrow passes (Search::narrow_passes, before the refining passes where the answer is still
// open: HybridSearch::refined) share 1 / kNarrowShare of the effort on top, two at a time: where
// the exact passes of the whole cluster's one-copy shapes run out, a copy on its first machines
// often holds the best plan, and there they are cheap. GNMT-16 at GBS 512 on 8 machines of 8 GPUs
// reported 17.57 (113.3 ms) while its first 4 machines alone gave 18.24; the exact pass of
// one copy of 128 micro-batches takes 5.6 M steps on 32 GPUs, and 5.8 M on 40 with the plans
// of 32 as the cutoff, which finds 19.87 (gap 15.8 % -> 4.8 %).
inline constexpr std::uint64_t kNarrowShare = 4;
inline constexpr std::size_t kNarrowWave = 2;

// Refining relaxed passes (Search::refine) have kRefineScale times the effort on top,
// kRefineWave shapes at a time, with kFirstBuckets buckets of round trip, then kBucketGrowth
// times as many, up to kRefinements passes a shape, until one raises the bound by less than
// kLeastRefinement of the fastest plan, or within kStallBand of it, the kStalls-th: NASNet-A
// large at GBS 128 on 16 single-GPU machines, two copies of 16 micro-batches of 4 under GPipe,
// is bounded at 238.11 ms by 64 buckets and by 256, and at 238.90 ms by 1,024, whose plans
// hold one at 238.91 ms, which makes the point exact (gap 0.41 % at the first stall). Not
// further from it: on GNMT-16 at GBS 512 on 1,024 GPUs (gap 4.5 %) more passes only took time.
// Three times the effort: on large clusters the search leaves many shapes at their floor, and
// their screens (classes_first, blocks_first) take 1 to 20 M steps each. At GBS 512 on 256
// GPUs (2 threads), ResNet-101 (36 such shapes) ran out of the effort once at gap 38.9 %, and
// NASNet-A large at 50.6 %; with twice, 1.2 % and 22.5 %; with three times, 1.2 % and 7.9 %,
// with a plan 17.5 % faster, in 24 and 32 s (twice: 26 and 33 s), and ResNet-101 on 1,024 GPUs
// 16.7 % (twice: 51.7 %); four times gave 1.2 %, 7.7 % and 16.7 %.
inline constexpr std::uint64_t kRefineScale = 3;
inline constexpr std::size_t kRefineWave = 2;
inline constexpr int kFirstBuckets = 16;
inline constexpr std::uint64_t kBucketGrowth = 4;
inline constexpr int kRefinements = 5;
inline constexpr double kLeastRefinement = 1e-3;
inline constexpr int kStalls = 2;
inline constexpr double kStallBand = 0.01;
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
inline constexpr double kEnumerateNear = 0.01;
// The buckets of a shape's refining pass after `passes` of its kind: kFirstBuckets, then
// kBucketGrowth times as many each.
inline int buckets_after(int passes) {
  int buckets = kFirstBuckets;
  for (int p = 0; p < passes; ++p) buckets *= static_cast<int>(kBucketGrowth);
  return buckets;
}
// A shape whose passes with buckets of round trip stall gets up to kWorstRefinements more
// with buckets of round trip and of worst term (DpQuery::worst_buckets; under GPipe, of the
// forward and backward waves), from kFirstBuckets on (16, 64, 256 buckets), while each raises
// the bound of the one before (the first, of few buckets, often lies below the bound that
// round trip's left: NASNet-A large at GBS 32 on 16 single-GPU machines, 88.77 ms under 88.97,
// then 89.33 ms with 64, within 1 % of the best plan, whose pass then settles the shape):
// where many suffixes share a round trip, round trip's buckets raise nothing.
// NASNet-A large at GBS 512 on 8 machines of 8 GPUs, 8 copies of 64 micro-batches of 1 under
// GPipe: 221.7 ms with 64 to 1,024 buckets of round trip; after two passes of both (16 and 64
// buckets) the refining phase stopped, with 260 M steps left and the point 1.0 % open. With a
// third (and GPipe's waves) the passes' plans bring the search's best plan from 230.8 to
// 227.7 ms (the reported one, after the final polish, from 228.4 ms) and the third pass bounds
// the shape there: exact. A fourth (1,024 buckets) took GNMT-16's point on 64 GPUs from 13 to
// 42 s (its pass ran out with 236 M steps).
inline constexpr int kWorstRefinements = 3;
// Within kStallBand of the fastest plan, on shapes of more micro-batches than a closing pass
// times (kClosingTimedMicroBatches), up to kNearWorstRefinements of them (1,024 and 4,096 buckets),
// until they stall: there the next pass, about three times the last's steps, costs far less
// than the closing pass that follows the refining passes (Search::last_closing), an exact
// pass with every term. NASNet-A large on 2 x 8 GPUs at GBS 128, two copies of 64
// micro-batches of 1 under GPipe: 256 buckets bound it at 205.299 ms in 12.4 M steps, 0.058 %
// below the best plan, and the closing pass ran out with 212 M; 1,024 and 4,096 buckets
// bound it at 205.403 ms (0.0078 %) in 44 and 108 M. Where the closing pass is timed (its
// least bound is the fastest simulated plan of the shape), it follows the third, as before.
// Within 0.1 % a refining pass also enumerates (kEnumerateNear, above): the pass
// of 1,024 buckets settles that shape, and the point is exact.
inline constexpr int kNearWorstRefinements = 5;
// The open shape of least bound, once the refining passes and the closing passes they resume
// are done, gets up to kTimedRefinements relaxed timed passes (Search::refine_timed), from
// kFirstBuckets buckets on, until the kStalls-th that raises nothing over the passes before
// (the first often comes below the bound the passes before left; and more buckets need not
// rise: pruned by the pace of the stages in front, cost/suffix_timing.h's InFront, DenseNet-121
// at GBS 32 on 8 machines of 8 GPUs, 8 copies of 4 micro-batches of 1, is bound at 13.925 ms
// by 16 buckets, 13.921 by 64, 13.970 by 256 and 14.004 by 1,024), where its micro-batches can be
// timed (relaxed_timeable). ResNet-101's graph at GBS 64 on 8 machines of 8 GPUs, 8 copies of 8
// micro-batches of 1: the passes before stalled at 33.8 ms against the best plan's 36.2 ms
// (gap 6.6 %) with 595 M steps left; these bound it at 35.97 ms and find a plan 0.26 % faster
// (gap 0.38 %). ResNet-101 at GBS 512 on 1,024 GPUs: 3.4 % -> exact, with their enumeration
// (late_passes.cc, kTimedEnumerateNear; docs/timeline.md).
inline constexpr int kTimedRefinements = 4;
// Where its timed passes leave a shape within kTimedEnumerateNear of the fastest plan (1 %),
// one more follows (where its estimate fits), which enumerates the shape's plans below it
// (late_passes.cc) and so may settle it. Inception-v3 at GBS 32 on 8 machines of 8 GPUs, 8
// copies of 4 micro-batches of 1: the fourth pass (1,024 buckets) bound it at 31.007 ms, 0.85 %
// below the best plan, with 283 M steps left; the fifth (4,096 buckets) enumerates its band in
// 40 M and settles it: exact, 6.0 -> 8.9 s (two threads).
inline constexpr int kNearTimedRefinements = 5;
// A shape's next relaxed timed pass runs only where the steps it is estimated to need fit what
// is left: the last pass's steps times its growth (over the pass before) times
// kTimedGrowthRise, as the growth itself grows with the buckets (by about that much here).
// Where it is short, the pass runs out and bounds nothing, and its steps go to the passes after
// it. On 8 machines of 8 GPUs at GBS 32: Inception-v3's best shape took 2.9, 12.3 (4.3x) and
// 78.6 M steps (6.4x, estimated 79 M) for 16, 64 and 256 buckets, whose pass held the fastest
// plan, and the one of 1,024 buckets ran out at 183 M (estimated 755 M); DenseNet-121's took
// 5.7 and 29.2 M (5.2x), and its pass of 256 buckets ran out at 220 M (estimated 228 M),
// twice. With 2, Inception-v3's pass of 256 buckets (estimated 106 M) was skipped at 0.4 times
// the default effort, for a plan 0.13 % slower.
inline constexpr double kTimedGrowthRise = 1.5;

// A shape on the cluster of one cost model: the whole cluster or a part of it.
struct ShapeOn {
  const CostModel* cost;
  PipelineShapeChoice shape;
};

// A finished shape whose closing passes (Search::close_gaps) could not get their steps from the
// exact effort left, or stopped at their cap: its index in its run's shapes, its bound, the
// steps of its pass before the next closing pass, and that pass's level (1 to 4; 5 once all
// have run).
struct Unclosed {
  ShapeOn on;
  std::size_t index = 0;
  Seconds bound = 0;
  std::uint64_t before = 0;
  int level = 1;
  bool relaxed = false;  // its relaxed closing passes ran (Search::relaxed_closing)
  bool listed = false;   // its listing closing pass ran (Search::listing_closing)
  bool merged = false;   // its merged passes ran (Search::merge_unclosed)
};

// Branch and bound over shapes of the whole cluster, then of its parts, sharing one pool
// of candidates, one effort and one certificate. Each member is described where it is
// defined: branch_and_bound.cc, candidate_passes.cc, search_rounds.cc, closing_passes.cc,
// narrow_passes.cc, transfer_screen.cc, refining_phase.cc and late_passes.cc.
class Search {
 public:
  Search(int global_batch, const SearchOptions& options);

  // The runs: the whole cluster's shapes, then each part's.
  std::vector<ShapeOn> shapes(const CostModel& cost,
                              const std::function<bool(const PipelineShapeChoice&)>& keep) const;
  std::vector<Seconds> run(const CostModel& cost, const std::vector<ShapeOn>& shapes,
                           const std::vector<Seconds>& held = {},
                           const std::vector<int>& holders = {},
                           const std::vector<std::uint64_t>& ran_out = {});
  void bound_only(const CostModel& cost, const std::vector<ShapeOn>& shapes,
                  const std::vector<Seconds>& held);
  void class_bounds(const std::vector<ShapeOn>& shapes, int used,
                    std::vector<Seconds>& anywhere) const;
  // Counts a bound of plans left out of the search (`unfinished`: for lack of effort).
  void bound_unsearched(Seconds floor, bool unfinished) {
    lower_ = std::min(lower_, floor);
    unfinished_ = unfinished_ || unfinished;
  }
  // Offers plans found elsewhere to the pool and simulates the promising ones.
  void offer_plans(const std::vector<Plan>& plans) {
    for (const Plan& plan : plans) pool_.add(plan);
    pool_.simulate_promising();
  }

  // After the runs, where the answer is still open.
  // `parts` parts, `part(i)` the i-th's cost model (built when a pass needs it).
  void narrow_passes(const CostModel& whole, std::size_t parts,
                     const std::function<const CostModel&(std::size_t)>& part);
  void refine();
  // The refining phase's effort: what it has left, and more for it (effort another search
  // of the same batch left unused: search_with_spine), saturating as the effort does.
  std::uint64_t refine_left() const { return refine_left_; }
  void add_refine_effort(std::uint64_t steps) {
    refine_left_ = refine_left_ > std::numeric_limits<std::uint64_t>::max() - steps
                       ? std::numeric_limits<std::uint64_t>::max()
                       : refine_left_ + steps;
  }

  // The answer, and where the search stands.
  SearchResult result() const;
  // result()'s exact, without building its plans.
  bool exact() const { return exact_with(certificate()); }
  Seconds cutoff() const { return pool_.cutoff(); }
  Seconds best_time() const { return pool_.best_time(); }
  std::uint64_t effort_left() const { return left_; }
  // Whether some shape searched so far never finished its pass.
  bool unfinished() const { return unfinished_; }
  // For each shape of the last run(): a bound of the plans of the same copies, micro-batches
  // and schedule on the cluster's first machines too (RelaxedBound::anywhere).
  const std::vector<Seconds>& anywhere() const { return anywhere_; }
  // For each shape of the last run(): the most steps a relaxed pass of it ran out with (0:
  // none ran out).
  const std::vector<std::uint64_t>& ran_out_with() const { return ran_out_with_; }

 private:
  // Which wave ends candidate_passes: none (all shapes get a pass), one in which some pass ran
  // out (early_greedy_passes), or one in which every pass ran out (the wide shapes' passes in
  // run(), narrowest copies first: wider copies' passes cost more, so they would run out too.
  // On ResNet-50 at GBS 512 on 256 GPUs the greedy passes ran out on all 24 wide shapes and the
  // coarse passes on 22, 1.8 s of CPU for two plans; bench/README.md, "Wide shapes' candidate
  // passes narrowest first").
  enum class LastWave { None, AnyRanOut, AllRanOut };
  // What search_rounds knows of each shape of a run (one entry per shape).
  struct Records {
    std::vector<Seconds> bounds;
    std::vector<char> relaxed_done;            // a relaxed pass bounded the shape
    std::vector<std::uint64_t> relaxed_steps;  // and took this many steps
    std::vector<std::uint64_t> ran_out_with;   // steps of one that ran out
    std::vector<std::uint64_t> finished_with;  // steps of one that finished
  };
  // How a closing pass went: it finished (raising the bound), was not needed (the shape's
  // bound meets the fastest plan), stopped at its own cap, or could not get its cap's steps
  // from the effort left (not run, or stopped with less).
  enum class Closing { Finished, Unneeded, Capped, Short };
  // A pass of refine()'s wave: a free-width pass (frees_first), a merged pass (merged_first),
  // block passes (blocks_first), a class screen (classes_first) or a relaxed or refining pass;
  // whether it runs (a later shape's waits where its part is too small), and within how many
  // steps.
  struct WavePass {
    enum Kind { Free, Blocks, Classes, Merged, Relaxed } kind = Relaxed;
    bool runs = false;
    std::uint64_t steps = 0;
  };
  // A shape no exact pass finished, for refine().
  struct OpenShape {
    ShapeOn on;
    Seconds bound;
    int holder;  // the open shape of the whole cluster that holds its plans (held_by), or -1
    // No relaxed pass bounded it yet (they ran out, or none ran): its bound is its floor or
    // its class passes', and `steps` the most a relaxed pass of it ran out with.
    bool unrelaxed;
    std::uint64_t steps;            // of its last bounding pass: relaxed, then refining
    std::uint64_t before = 0;       // of the refining pass before that one (0: none)
    bool blocked = false;           // its block passes ran (blocks_first)
    bool merged = false;            // its merged pass ran (merged_first)
    int merged_fields = 0;          // the fields of its last merged pass (refine_merged; 0: none)
    bool freed = false;             // its free-width pass ran (frees_first)
    bool classed = false;           // its first class pass ran (classes_first)
    bool worst = false;             // its refining passes have buckets of worst term (refine)
    int timed_passes = 0;           // its relaxed timed passes (refine_timed)
    Seconds timed_least = 0;        // the bound of the last of them (0: none yet)
    std::uint64_t timed_steps = 0;  // the steps of the last of them
    double timed_growth = 0;        // those steps over the steps of the one before (0: not two yet)
    int timed_stalls = 0;           // its relaxed timed passes that raised nothing
    bool timed_done = false;        // refine_timed passes it no more
    bool timed_blocked = false;     // its timed block passes ran (refine_timed)
    bool last_closed = false;  // its closing pass with the effort refine() left ran (last_closing)
    // Where its refining passes stalled (refine), the number of its series' next pass
    // (buckets_after), which refine_past_stall may run; 0: they did not stall.
    int stalled_before = 0;
    bool fill_checked = false;  // transfer_screen checked its transfer fill
    // The whole cluster's shape that holds its plans (held_by) where that one's closing passes
    // are pending (its entry in unclosed_), or -1.
    int closing = -1;
  };

  static int width_of(const ShapeOn& s) { return s.cost->device_count() / s.shape.replicas; }
  // The narrowest copies of a shape on parts of at least `used` devices (at most its own).
  static int narrowest_copy(const ShapeOn& s, int used) {
    return std::clamp(used / s.shape.replicas, 1, width_of(s));
  }
  // A shape's floors: `own` bounds its plans, `anywhere` also those of its parts' shapes.
  static ShapeFloor floors_of(const ShapeOn& s) {
    return shape_floor(*s.cost, s.shape, width_of(s));
  }
  static Seconds floor_of(const ShapeOn& s) { return floors_of(s).own; }

  // branch_and_bound.cc: candidates and the certificate.
  void offer(const CostModel& cost, const std::vector<CostedPlan>& seeds, std::size_t from);
  void offer(const CostModel& cost, const std::vector<DpPlan>& plans);
  void add(const CostModel& cost, const CostedPlan& candidate);
  void offer_interleaved(const CostModel& cost);
  void count_bounds(const std::vector<ShapeOn>& shapes, const std::vector<Seconds>& bounds,
                    const std::vector<std::size_t>& unfinished,
                    const std::vector<std::size_t>& unbounded,
                    const std::vector<std::uint64_t>& steps,
                    const std::vector<std::uint64_t>& ran_out_with, const std::vector<int>& holders,
                    const std::vector<Unclosed>& short_of_effort = {});
  Seconds certificate() const;
  // Whether the certificate `lower` meets the fastest plan (with none, whether every shape
  // finished).
  bool exact_with(Seconds lower) const {
    return !pool_.empty() ? meets_fastest(lower) : !unfinished_;
  }
  // Whether a bound meets the fastest plan (within kTie): no plan it bounds is faster, and no
  // pass can raise the certificate by raising it.
  bool meets_fastest(Seconds bound) const { return bound >= pool_.fastest() * (1 - kTie); }
  Seconds open_bounds() const;
  // An open shape's bound: its own, or its holder's where that is more.
  Seconds open_bound(std::size_t i) const {
    const OpenShape& s = open_[i];
    const Seconds held = s.holder < 0 ? s.bound : std::max(s.bound, open_[s.holder].bound);
    return s.closing < 0 ? held : std::max(held, unclosed_[s.closing].bound);
  }

  // candidate_passes.cc
  static std::vector<std::size_t> wide(const std::vector<ShapeOn>& shapes, bool greedy);
  static void narrowest_first(const std::vector<ShapeOn>& shapes, std::vector<std::size_t>& which);
  static int granule(const ShapeOn& s, int units);
  void candidate_passes(const std::vector<ShapeOn>& shapes, const std::vector<std::size_t>& which,
                        bool greedy, std::uint64_t& left, std::vector<CostedPlan>& seeds,
                        LastWave last = LastWave::None);
  void early_greedy_passes(const std::vector<ShapeOn>& shapes);
  void late_greedy_passes(const std::vector<ShapeOn>& shapes,
                          const std::vector<std::size_t>& unfinished,
                          const std::vector<Seconds>& bounds);

  // search_rounds.cc
  std::vector<Seconds> search_rounds(const std::vector<ShapeOn>& shapes,
                                     std::vector<std::size_t>& unfinished,
                                     const std::vector<Seconds>& held,
                                     const std::vector<int>& holders,
                                     const std::vector<std::uint64_t>& ran_out);
  std::vector<std::size_t> search_round(const std::vector<ShapeOn>& shapes,
                                        const std::vector<std::size_t>& todo, int round,
                                        Records& r);
  void between_rounds(const std::vector<ShapeOn>& shapes, std::vector<std::size_t>& todo,
                      Records& r);
  std::vector<std::size_t> wanting_relaxed(const std::vector<std::size_t>& todo,
                                           const Records& r) const;
  std::vector<std::size_t> relax(const std::vector<ShapeOn>& shapes,
                                 const std::vector<std::size_t>& which, Records& r,
                                 std::vector<char>* settled = nullptr);
  std::vector<RelaxedBound> relaxed_bounds(const std::vector<ShapeOn>& shapes,
                                           const std::vector<std::size_t>& which,
                                           std::uint64_t& left,
                                           const std::vector<std::uint64_t>& ran_out_with = {});
  void last_relaxed_passes(const std::vector<ShapeOn>& shapes, std::vector<std::size_t>& which,
                           std::vector<Seconds>& bounds, std::vector<std::uint64_t>& ran_out_with,
                           std::vector<std::uint64_t>& steps);
  // Whether relaxed passes on wide copies are screened by a class pass first (relaxed_bound):
  // while at least half of the screens run so far in this search settled their shape. With
  // every wide shape screened, they settle most shapes of BERT-48 and ResNet-50 on 1,024 GPUs
  // (58 of 84, 26 of 26) for a fraction of a relaxed pass's steps, and few of Llama 2 70B's at
  // GBS 1024 on 256 GPUs (10 of 76), whose class passes cost as much as its relaxed passes: 2.6 s
  // without screens, 3.4 with every wide shape screened, 2.9 with this rule (its first wave of
  // screens; 2 threads). Screening only two shapes until one settled, Llama took 2.7 s, but
  // ResNet-50 on 1,024 GPUs 2.8 instead of 1.9. Decided before each wave from the waves before
  // it: the same on any thread count.
  bool screening() const { return 2 * screens_settled_ >= screens_; }
  void count_screen(bool screened, bool settled) {
    screens_ += screened;
    screens_settled_ += settled;
  }

  // closing_passes.cc
  std::vector<Unclosed> close_gaps(const std::vector<ShapeOn>& shapes,
                                   const std::vector<std::size_t>& todo,
                                   const std::vector<std::uint64_t>& finished_with,
                                   std::vector<Seconds>& bounds);
  Closing close(const ShapeOn& s, int level, std::uint64_t factor, std::uint64_t& before,
                Seconds& bound, std::uint64_t& left, bool uncapped);
  bool relaxed_closing(const ShapeOn& s, std::uint64_t cap, Seconds& bound, std::uint64_t& left);
  bool listing_closing(const ShapeOn& s, std::uint64_t cap, Seconds& bound, std::uint64_t& left);
  void take_closing(const ShapeOn& s, const ShapeResult& found, Seconds& bound,
                    std::uint64_t& left);
  void resume_closing();
  bool resume(Unclosed& u);
  Closing first_closings(Unclosed& u, std::uint64_t& left, bool resumed);
  Closing last_closings(Unclosed& u, std::uint64_t& left, bool resumed);

  // narrow_passes.cc
  void narrow_wave(const CostModel& part, const std::vector<PipelineShapeChoice>& shapes,
                   const std::vector<std::size_t>& which, std::size_t wave, bool all,
                   std::vector<Seconds>& least, std::vector<char>& finished);

  // transfer_screen.cc
  void transfer_screen();

  // refining_phase.cc
  void offer_polished(const CostModel& cost, const std::vector<DpPlan>& plans, bool blocks = false);
  bool blocks_first(std::size_t i) const;
  bool classes_first(std::size_t i) const;
  bool frees_first(std::size_t i) const;
  bool merged_first(std::size_t i) const;
  bool mergeable(const ShapeOn& s) const;
  std::uint64_t needs(std::size_t i) const;
  bool relaxed_passes_fit(const std::vector<std::size_t>& order, Seconds target) const;
  std::uint64_t pass_limit(std::size_t i, WavePass::Kind kind, std::uint64_t share) const;

  // late_passes.cc
  void refine_timed();
  void refine_past_stall();
  void refine_merged();
  bool merge_unclosed();
  PassBound merged_pass(const ShapeOn& on, Seconds& bound, int fields);
  bool last_closing(std::size_t i);
  std::size_t least_open(Seconds target) const;

  int global_batch_;
  const SearchOptions& options_;
  // What every pass may take besides steps (SearchOptions::max_stage_width, pass_memory).
  PassLimits limits() const { return PassLimits{options_.max_stage_width, options_.pass_memory}; }
  Pool pool_;
  std::uint64_t left_, relaxed_left_;  // effort left to exact passes and to relaxed ones
  std::uint64_t floor_left_;           // and to the last relaxed passes (last_relaxed_passes)
  std::int64_t polish_left_;           // simulated pairs left to polish seeds, parts included
  std::uint64_t coarse_left_;          // steps left to coarse passes, parts included
  std::uint64_t class_effort_;         // steps for class_bounds
  std::uint64_t greedy_left_;          // and to greedy passes
  std::uint64_t refine_left_;          // and to refining relaxed passes (refine)
  std::uint64_t narrow_left_;          // and to narrow passes (narrow_passes)
  std::size_t screens_ = 0;            // screens run (relaxed_bound), and those that
  std::size_t screens_settled_ = 0;    // settled their shape
  std::vector<OpenShape> open_;
  std::vector<Unclosed> unclosed_;  // shapes whose closing passes were short of effort or capped
  std::vector<char> greedy_done_;   // per shape of the current run: a greedy pass finished
  // The most times as many steps as its shape's relaxed passes had run out with that a
  // relaxed pass in refine() took, at least 1 (needs()).
  double relaxed_growth_ = 1;
  std::vector<int> whole_open_;     // the open shape of each whole-cluster shape, or -1
  std::vector<int> whole_closing_;  // the entry in unclosed_ of each whole-cluster shape, or -1
  bool whole_counted_ = false;      // count_bounds has had the whole cluster's shapes
  bool twins_;                      // 1F1B searched: GPipe plans' 1F1B twins are candidates
  Seconds lower_ = kInfinity;       // least bound of the shapes searched or floored
  bool unfinished_ = false;         // some shape never finished its pass
  std::vector<Seconds> anywhere_;   // anywhere(), per shape of the last run
  std::vector<std::uint64_t> ran_out_with_;  // ran_out_with(), per shape of the last run
};

}  // namespace pe::detail::hybrid
