// The hybrid search for one global batch size: branch and bound on the simulated time.
// Candidates come from the seeds (one-stage and equal-work pipelines, accumulation plans, and
// on wide copies the plans of greedy and coarse passes; the fastest few polished by local
// moves, search/polish.h), from one dynamic-programming pass per pipeline shape, which returns
// the plans of the shape with the least path lower bound (cost/path_bound.h), and after the
// first round from greedy passes of the narrow shapes whose pass ran out; where 1F1B is
// searched, each GPipe plan with its 1F1B twin (one_f_one_b_twin). Candidates are simulated
// in order of their lower bounds while a bound is below the best simulated time found (the
// incumbent); the passes drop every plan whose bound cannot beat the incumbent. What no pass
// could rule out is the certificate: the least lower bound over every shape.
#include "search/hybrid_search.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>

#include "cost/evaluate.h"
#include "cost/stage_samples.h"
#include "search/candidate_pool.h"
#include "search/interleaved_search.h"
#include "search/pipeline_dp.h"
#include "search/seeds.h"
#include "search/shape_pass.h"

namespace pe::detail {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr std::size_t kWave = 8;  // shapes searched together with one shared bound
constexpr int kRounds = 3;        // searches of a shape that runs out of effort, at most
// Coarse passes (Search::candidate_passes): copies wider than this many devices get one, on at
// most this many granules, with 1 / kCoarseShare of the effort among them, the whole cluster
// and its parts, on top of the exact passes' (which they would otherwise leave short: GNMT-16
// at GBS 1024 on 64 GPUs found a plan 7.7 % slower with a quarter less). Their plans are
// candidates where the exact passes run out (VGG-19 at GBS 512 on 256 GPUs: speedup 9.6 ->
// 19.5, on 1,024 GPUs 9.0 -> 19.5).
constexpr int kCoarseUnits = 16;
constexpr std::uint64_t kCoarseShare = 4;
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
constexpr int kGreedyUnits = 64;
constexpr std::uint64_t kGreedyShare = 4;
constexpr std::uint64_t kEarlyGreedyShare = 2;
constexpr std::size_t kEarlySharers = 2 * kWave;
// A closing pass (Search::close_gaps) gets at most this many times the steps of the shape's
// finished first pass: one that needs more rarely finishes with what is left (on GNMT-32 on
// 16 single-GPU machines, 4x left 2 of 65 batch sizes inexact, 16x none, in the same time).
// One that the exact effort left cannot pay for resumes after the refining passes, with what
// they leave (Search::resume_closing): the later exact rounds may spend all of it on a shape
// that never finishes (DenseNet-121 at GBS 32 on 2 x 8 GPUs: a closing pass that needs 85 M
// steps had got 121, and the point stayed at 1.1 %; now exact).
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
constexpr std::uint64_t kRelaxedShare = 2;
// The last relaxed passes (Search::last_relaxed_passes) share 1 / kLastRelaxedShare of the
// effort on top, for the shapes still at their floor when the others are spent: on GNMT-16
// at GBS 512 on 8 machines of 8 GPUs, 45 shapes of the cluster and of its first 6 and 7
// machines never got one, so the work floor (a third of the best plan's time) stood for them.
constexpr std::uint64_t kLastRelaxedShare = 2;
// The cluster's parts' shapes of several copies that no whole-cluster shape holds (copies
// that do not start on machine boundaries) take the class bound of the whole cluster's shape
// of the same copies, micro-batches and schedule; every such shape gets class passes for them
// (class_bound; classes of two devices on narrow copies), each within the shape's equal part
// of 1 / kClassShare of the effort on top (VGG-19 at GBS 512 on 256 GPUs: 8 copies of 30 GPUs
// on the first 30 machines are bounded by 8 copies of 32). Only where some shape of the whole
// cluster ran out: where all finished, the parts' own passes mostly do too, and the class
// passes cost more than they gave (GNMT-32's default sweep on 16 single-GPU machines, exact
// either way: 21 -> 54 s).
constexpr std::uint64_t kClassShare = 4;

// Narrow passes (Search::narrow_passes, before the refining passes where the answer is still
// open: HybridSearch::refined) share 1 / kNarrowShare of the effort on top, two at a time: where
// the exact passes of the whole cluster's one-copy shapes run out, a copy on its first machines
// often holds the best plan, and there they are cheap. GNMT-16 at GBS 512 on 8 machines of 8 GPUs
// reported 17.57 (113.3 ms) while its first 4 machines alone gave 18.24; the exact pass of
// one copy of 128 micro-batches takes 5.6 M steps on 32 GPUs, and 5.8 M on 40 with the plans
// of 32 as the cutoff, which finds 19.87 (gap 15.8 % -> 4.8 %).
constexpr std::uint64_t kNarrowShare = 4;
constexpr std::size_t kNarrowWave = 2;

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
constexpr std::uint64_t kRefineScale = 3;
constexpr std::size_t kRefineWave = 2;
constexpr int kFirstBuckets = 16;
constexpr std::uint64_t kBucketGrowth = 4;
constexpr int kRefinements = 5;
constexpr double kLeastRefinement = 1e-3;
constexpr int kStalls = 2;
constexpr double kStallBand = 0.01;

// A finished shape's relaxed closing pass (Search::relaxed_closing) has this many buckets of
// round trip and as many of worst term, within 1 / kClosingShare of its first exact pass's
// steps.
constexpr int kClosingBuckets = 256;
constexpr std::uint64_t kClosingShare = 4;

// Block passes in the refining phase (Search::blocks_first) get at most this fraction of the
// steps the shape's relaxed pass is estimated to need.
constexpr std::uint64_t kBlocksShare = 2;
// Free-width passes (Search::frees_first) run where the fastest plan leaves at least this
// share of the cluster idle (it uses at most 1 / kFreeIdle of the devices).
constexpr int kFreeIdle = 2;
// The refining phase's class screens (Search::classes_first) run on copies of at least
// kRefineClassWidth devices (as the search's class passes after a relaxed pass that ran out:
// shape_pass.cc), within kClassScreenGrowth times the steps the shape's relaxed passes ran out
// with: ResNet-101's graph at GBS 512 on 256 GPUs, four copies of 4 micro-batches of 32, ran
// out with 4.6 M and is settled by its first class pass in 4.8 M.
constexpr int kRefineClassWidth = 32;
constexpr std::uint64_t kClassScreenGrowth = 4;

// `steps` times `times`, at most the largest count (an unlimited effort stays unlimited).
std::uint64_t scaled(std::uint64_t steps, std::uint64_t times) {
  const std::uint64_t most = std::numeric_limits<std::uint64_t>::max() / times;
  return steps > most ? std::numeric_limits<std::uint64_t>::max() : steps * times;
}
// The relaxed passes' effort for `exact` steps of exact passes.
std::uint64_t relaxed_effort(std::uint64_t exact) { return scaled(exact, kRelaxedShare); }
// Seeds polished (polish_seeds) share at most this many simulated (stage, micro-batch) pairs,
// and at most the effort over kPolishShare (3M at the default effort), in one search (the
// whole cluster and its parts).
constexpr std::int64_t kPolishPairs = std::int64_t{1} << 22;
constexpr std::uint64_t kPolishShare = 32;

// Whether each plan of a shape on the first `part` devices is, or is no faster than, a plan of
// `whole`, a shape of the whole cluster of `cost` with the same copies, micro-batches and
// schedule, whose bound then bounds it too:
// - one copy: the same devices (the whole cluster's copy leaves its last devices idle);
// - on machines of one size and one GPU type (`machine` GPUs each, 0 otherwise), copies that
//   start on machine boundaries in both: each copy sits on its machines as the first does, so
//   the plan costs the same there. (With GPU types that differ, the whole cluster's copies may
//   sit on slower machines than the part's: BERT-48 at GBS 128 on 2 machines of 2 H100s and 2
//   of 2 V100s reported a plan 0.7 % slower than its first 2 machines give, as exact.)
// - there too, copies that do not start on machine boundaries, where the whole cluster's do,
//   when no link inside a machine is slower than the links between machines, and no stage's
//   replicas in every copy can share one machine (copies `part / r` apart): the same stages
//   in the whole cluster's copies cross machines only where the part's first copy does, while
//   the part's cross where any of its copies does, and each stage all-reduces across machines
//   in both. Such a shape is not held (its plans are not the whole cluster's), but bounded:
//   on NASNet-A large at GBS 512 on 8 machines of 8 GPUs the shapes of 2 to 8 copies on the
//   first 6 and 7 machines were left at their floor (gap 24.1 %; 11.5 % with these bounds).
bool held_by(const CostModel& cost, const PipelineShapeChoice& shape, int part,
             const PipelineShapeChoice& whole, int machine) {
  const int r = shape.replicas;
  if (!same_shape(shape, whole)) return false;
  if (r == 1) return true;
  if (machine == 0 || (cost.cluster().device_count() / r) % machine != 0) return false;
  const int width = part / r;
  if (width % machine == 0) return true;
  const Network& links = cost.cluster().network;
  return links.intra >= links.inter_p2p && links.intra >= links.inter_allreduce &&
         (r - 1) * width + 1 > machine;
}
}  // namespace

// The search's types have a name outside this file: HybridSearch::State holds a Search.
namespace hybrid {

// A shape on the cluster of one cost model: the whole cluster or a part of it.
struct ShapeOn {
  const CostModel* cost;
  PipelineShapeChoice shape;
};

// A finished shape whose closing passes (Search::close_gaps) could not get their steps from the
// exact effort left: its index in its run's shapes, its bound, the steps of its pass before
// the next closing pass, and that pass's level (1 to 4; 5 once all have run).
struct Unclosed {
  ShapeOn on;
  std::size_t index = 0;
  Seconds bound = 0;
  std::uint64_t before = 0;
  int level = 1;
  bool relaxed = false;  // its relaxed closing passes ran (Search::relaxed_closing)
};

// Branch and bound over shapes of the whole cluster, then of its parts, sharing one pool
// of candidates, one effort and one certificate.
class Search {
 public:
  Search(int global_batch, const SearchOptions& options)
      : global_batch_(global_batch),
        options_(options),
        pool_(std::max(1, options.top)),
        left_(options.effort ? options.effort : std::numeric_limits<std::uint64_t>::max()),
        relaxed_left_(relaxed_effort(left_)),
        floor_left_(left_ / kLastRelaxedShare),
        polish_left_(
            static_cast<std::int64_t>(std::min<std::uint64_t>(kPolishPairs, left_ / kPolishShare))),
        coarse_left_(left_ / kCoarseShare),
        class_effort_(left_ / kClassShare),
        greedy_left_(left_ / kGreedyShare),
        refine_left_(scaled(left_, kRefineScale)),
        narrow_left_(left_ / kNarrowShare),
        twins_(searches(options.schedules, Schedule::OneFOneB)) {}

  // Every shape of the cluster of `cost`, in order (1F1B first: its plans usually win, and
  // the bound they leave prunes GPipe's search); `keep` filters them.
  std::vector<ShapeOn> shapes(const CostModel& cost,
                              const std::function<bool(const PipelineShapeChoice&)>& keep) const {
    std::vector<ShapeOn> on;
    for (const PipelineShapeChoice& shape : pipeline_shapes(
             global_batch_, cost.cluster().device_count(), cost.settings().min_micro_batch,
             options_.schedules, options_.max_pipeline_copies))
      if (keep(shape)) on.push_back({&cost, shape});
    std::stable_partition(on.begin(), on.end(),
                          [](const ShapeOn& s) { return s.shape.schedule == Schedule::OneFOneB; });
    return on;
  }

  // Seeds and searches the shapes of the cluster of `cost` (with its accumulation plans);
  // returns each shape's lower bound, at least its `held` bound (one per shape, or none).
  // `holders`: for a part's shapes, the index of the whole cluster's shape that holds its
  // plans or plans no faster than each (held_by), or -1; none for the whole cluster's shapes.
  std::vector<Seconds> run(const CostModel& cost, const std::vector<ShapeOn>& shapes,
                           const std::vector<Seconds>& held = {},
                           const std::vector<int>& holders = {}) {
    anywhere_.assign(shapes.size(), 0);
    greedy_done_.assign(shapes.size(), 0);
    std::vector<CostedPlan> seeds;
    for (const ShapeOn& s : shapes)
      seed(cost, global_batch_, s.shape, options_.max_stage_width, seeds);
    seed_accumulation(cost, global_batch_, options_, seeds);
    offer(cost, seeds, 0);
    candidate_passes(shapes, wide(shapes, true), true, greedy_left_, seeds, LastWave::AllRanOut);
    candidate_passes(shapes, wide(shapes, false), false, coarse_left_, seeds, LastWave::AllRanOut);
    if (holders.empty()) early_greedy_passes(shapes);
    const std::size_t offered = seeds.size();
    polish_seeds(cost, global_batch_, options_.max_stage_width, polish_left_, seeds);
    offer(cost, seeds, offered);
    std::vector<std::size_t> unfinished;
    std::vector<Seconds> bounds = search_rounds(shapes, unfinished, held, holders);
    offer_interleaved(cost);
    return bounds;
  }
  // Offers plans found elsewhere to the pool and simulates the promising ones.
  void offer_plans(const std::vector<Plan>& plans) {
    for (const Plan& plan : plans) pool_.add(plan);
    pool_.simulate_promising();
  }
  // Offers seeds[from..], plans of the cluster of `cost`, to the pool and simulates the
  // promising ones.
  void offer(const CostModel& cost, const std::vector<CostedPlan>& seeds, std::size_t from) {
    for (std::size_t i = from; i < seeds.size(); ++i) add(cost, seeds[i]);
    pool_.simulate_promising();
  }
  // The plans of a pass on the cluster of `cost` that fit, as candidates (add).
  void offer(const CostModel& cost, const std::vector<DpPlan>& plans) {
    std::vector<CostedPlan> costed;
    add_fitting(cost, global_batch_, plans, costed);
    for (const CostedPlan& plan : costed) add(cost, plan);
  }
  // Adds a plan of the cluster of `cost` to the pool and, where 1F1B is searched, the 1F1B
  // twin of a GPipe plan (one_f_one_b_twin).
  void add(const CostModel& cost, const CostedPlan& candidate) {
    pool_.add(candidate.plan);
    if (!twins_) return;
    if (std::optional<CostedPlan> twin = one_f_one_b_twin(cost, candidate.spec, global_batch_))
      pool_.add(std::move(twin->plan));
  }
  // The shapes whose copies are wider than kCoarseUnits devices: all of them for greedy
  // passes, those of a granule above one device for coarse passes; narrowest copies first.
  static std::vector<std::size_t> wide(const std::vector<ShapeOn>& shapes, bool greedy) {
    std::vector<std::size_t> wide;
    for (std::size_t i = 0; i < shapes.size(); ++i)
      if (greedy ? width_of(shapes[i]) > kCoarseUnits : granule(shapes[i], kCoarseUnits) > 1)
        wide.push_back(i);
    narrowest_first(shapes, wide);
    return wide;
  }
  // Which wave ends candidate_passes: none (all shapes get a pass), one in which some pass ran
  // out (early_greedy_passes), or one in which every pass ran out (the wide shapes' passes in
  // run(), narrowest copies first: wider copies' passes cost more, so they would run out too.
  // On ResNet-50 at GBS 512 on 256 GPUs the greedy passes ran out on all 24 wide shapes and the
  // coarse passes on 22, 1.8 s of CPU for two plans; bench/README.md, "Wide shapes' candidate
  // passes narrowest first").
  enum class LastWave { None, AnyRanOut, AllRanOut };
  // The plans of greedy passes (DpQuery::greedy, on at most kGreedyUnits granules) or of
  // coarse passes (DpQuery::granule, on at most kCoarseUnits) of shapes `which` (indices into
  // `shapes`), in parallel, kept in the order of `which`, in waves of kWave with equal parts of
  // their effort `left` (what a pass leaves passes on), until `last`. Early passes
  // (LastWave::AnyRanOut) share it as if at most kEarlySharers shapes were left. Marks in
  // greedy_done_ the greedy passes that finished.
  void candidate_passes(const std::vector<ShapeOn>& shapes, const std::vector<std::size_t>& which,
                        bool greedy, std::uint64_t& left, std::vector<CostedPlan>& seeds,
                        LastWave last = LastWave::None) {
    const bool early = last == LastWave::AnyRanOut;
    bool ran_out = false;
    for (std::size_t start = 0; start < which.size() && left >= which.size() - start && !ran_out;
         start += kWave) {
      const std::size_t end = std::min(which.size(), start + kWave);
      const std::size_t sharers = which.size() - start;
      const std::uint64_t share = left / (early ? std::min(sharers, kEarlySharers) : sharers);
      std::vector<DpResult> found(end - start);
      std::vector<Seconds> bound(end - start);
      bool every_out = true;
      for (std::size_t i = start; i < end; ++i)
        bound[i - start] = pool_.cutoff_for(shapes[which[i]].shape);
      tbb::parallel_for(start, end, [&](std::size_t i) {
        const PipelineShapeChoice& s = shapes[which[i]].shape;
        DpQuery query{s.replicas,
                      width_of(shapes[which[i]]),
                      s.micro_batch,
                      s.micro_batches,
                      s.schedule,
                      bound[i - start],
                      share,
                      kPlansPerPass,
                      options_.max_stage_width};
        query.granule = granule(shapes[which[i]], greedy ? kGreedyUnits : kCoarseUnits);
        query.greedy = greedy;
        found[i - start] = best_pipeline(*shapes[which[i]].cost, query);
      });
      for (std::size_t i = start; i < end; ++i) {
        const DpResult& pass = found[i - start];
        left -= std::min(left, pass.steps);
        if (greedy && !pass.stopped) greedy_done_[which[i]] = 1;
        ran_out = ran_out || (early && pass.stopped);
        every_out = every_out && pass.stopped;
        for (const DpPlan& plan : pass.plans) {
          Evaluation ev = evaluate(*shapes[which[i]].cost, plan.spec, global_batch_);
          if (!ev.fits) continue;
          seeds.push_back({plan.spec, std::move(ev.plan)});
          add(*shapes[which[i]].cost, seeds.back());
        }
      }
      pool_.simulate_promising();
      ran_out = ran_out || (last == LastWave::AllRanOut && every_out);
    }
  }
  // The early greedy passes (kEarlyGreedyShare) of the shapes of copies of 2 to kCoarseUnits
  // devices, with at most that share of what the greedy effort has left: the narrowest copies
  // first, until a pass runs out (those of wider copies cost more: they would run out too).
  void early_greedy_passes(const std::vector<ShapeOn>& shapes) {
    std::vector<std::size_t> narrow;
    for (std::size_t i = 0; i < shapes.size(); ++i)
      if (width_of(shapes[i]) > 1 && width_of(shapes[i]) <= kCoarseUnits) narrow.push_back(i);
    narrowest_first(shapes, narrow);
    const std::uint64_t given = greedy_left_ / kEarlyGreedyShare;
    std::uint64_t early = given;
    std::vector<CostedPlan> found;
    candidate_passes(shapes, narrow, true, early, found, LastWave::AnyRanOut);
    greedy_left_ -= given - early;
  }
  static int width_of(const ShapeOn& s) {
    return s.cost->cluster().device_count() / s.shape.replicas;
  }
  // Sorts `which` (indices into `shapes`) by copy width, narrowest first, stably: their
  // passes are the cheapest, and what one leaves passes on.
  static void narrowest_first(const std::vector<ShapeOn>& shapes, std::vector<std::size_t>& which) {
    std::stable_sort(which.begin(), which.end(), [&](std::size_t a, std::size_t b) {
      return width_of(shapes[a]) < width_of(shapes[b]);
    });
  }
  // The granule of a shape's candidate pass: the least power of two that leaves at most
  // `units` granules a copy, and no wider than a pipeline stage may be (so that stages of
  // one granule can run).
  static int granule(const ShapeOn& s, int units) {
    const int width = width_of(s);
    int g = 1;
    while (width / g > units) g *= 2;
    const int widest =
        max_stage_width(false, s.shape.micro_batch, width, s.cost->max_tensor_parallel());
    while (g > 1 && g > widest) g /= 2;
    return g;
  }

  // The interleaved plans of the cluster of `cost`, when that schedule is searched: each is
  // costed (in parallel, kept in order) and offered unless it does not fit or its bound
  // cannot make the answer; the pool simulates them by bound like any candidate.
  void offer_interleaved(const CostModel& cost) {
    if (!searches(options_.schedules, Schedule::Interleaved)) return;
    const std::vector<PipelineSpec> specs = interleaved_specs(cost, global_batch_, options_);
    const Seconds cutoff = pool_.cutoff();
    std::vector<std::optional<Plan>> plans(specs.size());
    tbb::parallel_for(std::size_t{0}, specs.size(), [&](std::size_t i) {
      Evaluation ev = evaluate(cost, specs[i], global_batch_);
      if (ev.fits && ev.plan.lower_bound <= cutoff) plans[i] = std::move(ev.plan);
    });
    for (std::optional<Plan>& plan : plans)
      if (plan) pool_.add(std::move(*plan));
    pool_.simulate_promising();
  }
  // The bounds of shapes `which` (indices into `shapes`) from their relaxed passes, with
  // equal parts of the effort `left` (in order, what one leaves passes on), in waves. A
  // shape whose relaxed pass already ran out with at least its part (`ran_out_with`, per
  // shape; empty: none did) is not searched again: it would run out again.
  std::vector<RelaxedBound> relaxed_bounds(const std::vector<ShapeOn>& shapes,
                                           const std::vector<std::size_t>& which,
                                           std::uint64_t& left,
                                           const std::vector<std::uint64_t>& ran_out_with = {}) {
    std::vector<RelaxedBound> bounds(which.size());
    for (std::size_t start = 0; start < which.size(); start += kWave) {
      const std::size_t end = std::min(which.size(), start + kWave);
      const std::uint64_t share = left / (which.size() - start);
      const Seconds cutoff = pool_.cutoff();
      const bool screen = screening();
      std::vector<RelaxedBound> found(end - start);
      tbb::parallel_for(start, end, [&](std::size_t i) {
        const ShapeOn& s = shapes[which[i]];
        const bool hopeless = !ran_out_with.empty() && ran_out_with[which[i]] >= share;
        if (share > 0 && !hopeless) {
          found[i - start] =
              relaxed_bound(*s.cost, s.shape, cutoff, share, options_.max_stage_width, screen);
        } else {
          const ShapeFloor floors = floors_of(s);
          found[i - start] = RelaxedBound{floors.own, false, 0, true, floors.anywhere};
        }
      });
      for (std::size_t i = start; i < end; ++i) {
        bounds[i] = found[i - start];
        left -= std::min(left, found[i - start].steps);
        anywhere_[which[i]] = std::max(anywhere_[which[i]], found[i - start].anywhere);
        count_screen(found[i - start].screened, found[i - start].screen_settled);
        offer(*shapes[which[i]].cost, found[i - start].plans);
      }
      pool_.simulate_promising();
    }
    return bounds;
  }
  // Last relaxed passes, with the effort kept for them (floor_left_), for the shapes `which`
  // whose relaxed passes ran out or never ran (so that they count with their floor), the
  // narrowest copies first: their passes are the cheapest, and what one leaves passes on.
  // Raises `bounds` (one per shape) and leaves in `which` the shapes that ran out again (or
  // were not tried again: `ran_out_with`, as for relaxed_bounds); `steps` (one per shape)
  // gets the steps of each pass that finished, and `ran_out_with` those of each that ran out.
  void last_relaxed_passes(const std::vector<ShapeOn>& shapes, std::vector<std::size_t>& which,
                           std::vector<Seconds>& bounds, std::vector<std::uint64_t>& ran_out_with,
                           std::vector<std::uint64_t>& steps) {
    std::vector<std::size_t> order = which;
    narrowest_first(shapes, order);
    const std::vector<RelaxedBound> found =
        relaxed_bounds(shapes, order, floor_left_, ran_out_with);
    which.clear();
    for (std::size_t j = 0; j < order.size(); ++j) {
      bounds[order[j]] = std::max(bounds[order[j]], found[j].lower_bound);
      if (found[j].ran_out) {
        which.push_back(order[j]);
        ran_out_with[order[j]] = std::max(ran_out_with[order[j]], found[j].steps);
      } else
        steps[order[j]] = found[j].steps;
    }
  }
  // Bounds the shapes of a part that no exact pass could search (no effort left) with
  // their relaxed passes, each at least its `held` bound (one per shape). Its accumulation
  // plans, outside every shape, are still offered.
  void bound_only(const CostModel& cost, const std::vector<ShapeOn>& shapes,
                  const std::vector<Seconds>& held) {
    anywhere_.assign(shapes.size(), 0);
    std::vector<CostedPlan> seeds;
    seed_accumulation(cost, global_batch_, options_, seeds);
    offer(cost, seeds, 0);
    std::vector<std::size_t> all(shapes.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    const std::vector<RelaxedBound> relaxed = relaxed_bounds(shapes, all, relaxed_left_);
    std::vector<Seconds> bounds(shapes.size());
    std::vector<std::size_t> ran_out;
    std::vector<std::uint64_t> ran_out_with(shapes.size(), 0), steps(shapes.size(), 0);
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      bounds[i] = std::max(held[i], relaxed[i].lower_bound);
      if (relaxed[i].ran_out)
        ran_out.push_back(i), ran_out_with[i] = relaxed[i].steps;
      else
        steps[i] = relaxed[i].steps;
    }
    last_relaxed_passes(shapes, ran_out, bounds, ran_out_with, steps);
    count_bounds(shapes, bounds, all, ran_out, steps, ran_out_with, {});
    unfinished_ = unfinished_ || !shapes.empty();
  }

  // Counts a bound of plans left out of the search (`unfinished`: for lack of effort).
  void bound_unsearched(Seconds floor, bool unfinished) {
    lower_ = std::min(lower_, floor);
    unfinished_ = unfinished_ || unfinished;
  }
  std::uint64_t effort_left() const { return left_; }
  // Whether some shape searched so far never finished its pass.
  bool unfinished() const { return unfinished_; }

  SearchResult result() const {
    SearchResult result;
    result.plans = pool_.answer();
    result.lower_bound = certificate();
    result.exact = exact_with(result.lower_bound);
    result.fastest = pool_.fastest();
    return result;
  }
  // result()'s exact, without building its plans.
  bool exact() const { return exact_with(certificate()); }
  // result()'s lower bound: the least of the open bounds, the fastest plan and the closing
  // passes short of effort.
  Seconds certificate() const {
    Seconds lower = std::min(open_bounds(), pool_.fastest());
    for (const Unclosed& u : unclosed_) lower = std::min(lower, u.bound);
    return lower;
  }
  // Whether the certificate `lower` meets the fastest plan (with none, whether every shape
  // finished).
  bool exact_with(Seconds lower) const {
    return !pool_.empty() ? lower >= pool_.fastest() * (1 - kTie) : !unfinished_;
  }
  // The least bound of the shapes counted, of the open ones and of the candidates not yet
  // simulated: the certificate but for the closing passes short of effort (unclosed_).
  Seconds open_bounds() const {
    Seconds lower = std::min(lower_, pool_.least_unsimulated());
    for (std::size_t i = 0; i < open_.size(); ++i) lower = std::min(lower, open_bound(i));
    return lower;
  }
  Seconds cutoff() const { return pool_.cutoff(); }
  // For each shape of the last run(): a bound of the plans of the same copies, micro-batches
  // and schedule on the cluster's first machines too (RelaxedBound::anywhere).
  const std::vector<Seconds>& anywhere() const { return anywhere_; }
  // The narrowest copies of a shape on parts of at least `used` devices (at most its own).
  static int narrowest_copy(const ShapeOn& s, int used) {
    return std::clamp(used / s.shape.replicas, 1, width_of(s));
  }
  // Raises `anywhere` (one per shape of `shapes`, of the whole cluster) with class passes of
  // the shapes of several copies, in parallel, with equal parts of 1 / kClassShare of the
  // effort (kClassShare), for their plans on parts of at least `used` devices.
  void class_bounds(const std::vector<ShapeOn>& shapes, int used,
                    std::vector<Seconds>& anywhere) const {
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < shapes.size(); ++i)
      if (shapes[i].shape.replicas > 1 && width_of(shapes[i]) > 1) which.push_back(i);
    if (which.empty()) return;
    const std::uint64_t share = class_effort_ / which.size();
    const Seconds cutoff = pool_.cutoff();
    std::vector<Seconds> found(which.size(), 0);
    tbb::parallel_for(std::size_t{0}, which.size(), [&](std::size_t j) {
      const ShapeOn& s = shapes[which[j]];
      const PassBound classes = class_bound(*s.cost, s.shape, cutoff, share,
                                            options_.max_stage_width, narrowest_copy(s, used));
      if (classes.finished) found[j] = std::min(classes.least_bound, cutoff);
    });
    for (std::size_t j = 0; j < which.size(); ++j)
      anywhere[which[j]] = std::max(anywhere[which[j]], found[j]);
  }
  // Narrow passes: exact passes of the one-copy shapes of the whole cluster `whole` that are
  // open with a bound below the cutoff, on one copy of its first machines, `parts` (each a
  // machine more than the last, the fewest devices that can beat the cutoff first): the
  // same micro-batches and schedule, on fewer devices, whose plans are the shape's too (the
  // other devices idle). Their plans are candidates; they prove nothing. On each part the
  // shapes get equal parts of what narrow_left_ has left, kNarrowWave at a time (what one
  // leaves passes on), then those that ran out get all that is left, one at a time, the
  // least bound on the part before first (at first the whole cluster's bound): a shape
  // whose plans beat the cutoff on fewer devices is the one likely to beat it on more. A
  // shape that ran out is not tried on wider parts (its pass would need more).
  void narrow_passes(const CostModel& whole, const std::vector<const CostModel*>& parts) {
    std::vector<PipelineShapeChoice> shapes;
    std::vector<Seconds> least;  // each shape's least bound so far
    for (std::size_t i = 0; i < open_.size(); ++i)
      if (open_[i].on.cost == &whole && open_[i].on.shape.replicas == 1 &&
          open_bound(i) < pool_.cutoff_for(open_[i].on.shape))
        shapes.push_back(open_[i].on.shape), least.push_back(open_bound(i));
    for (const CostModel* part : parts) {
      if (shapes.empty() || narrow_left_ < shapes.size()) break;
      std::vector<std::size_t> all(shapes.size());
      std::iota(all.begin(), all.end(), std::size_t{0});
      std::vector<char> finished(shapes.size(), 0);
      narrow_wave(*part, shapes, all, kNarrowWave, false, least, finished);
      std::vector<std::size_t> again;
      for (std::size_t i : all)
        if (!finished[i]) again.push_back(i);
      std::stable_sort(again.begin(), again.end(),
                       [&](std::size_t a, std::size_t b) { return least[a] < least[b]; });
      narrow_wave(*part, shapes, again, 1, true, least, finished);
      std::size_t kept = 0;
      for (std::size_t i : all)
        if (finished[i]) shapes[kept] = shapes[i], least[kept++] = least[i];
      shapes.resize(kept), least.resize(kept);
    }
  }
  // The narrow passes of shapes `which` (indices into `shapes`) on `part`, `wave` at a time,
  // each with an equal part of what is left, or with all of it (`all`); records which
  // finished and their least bounds.
  void narrow_wave(const CostModel& part, const std::vector<PipelineShapeChoice>& shapes,
                   const std::vector<std::size_t>& which, std::size_t wave, bool all,
                   std::vector<Seconds>& least, std::vector<char>& finished) {
    for (std::size_t start = 0; start < which.size(); start += wave) {
      const std::size_t end = std::min(which.size(), start + wave);
      const std::uint64_t share = all ? narrow_left_ : narrow_left_ / (which.size() - start);
      if (share == 0) break;
      std::vector<Seconds> bound(end - start);
      for (std::size_t i = start; i < end; ++i)
        bound[i - start] = pool_.cutoff_for(shapes[which[i]]);
      std::vector<ShapeResult> found(end - start);
      tbb::parallel_for(start, end, [&](std::size_t i) {
        found[i - start] = search_shape(part, global_batch_, shapes[which[i]], bound[i - start],
                                        share, 0, options_.max_stage_width);
      });
      for (std::size_t i = start; i < end; ++i) {
        const ShapeResult& pass = found[i - start];
        narrow_left_ -= std::min(narrow_left_, pass.steps);
        for (const CostedPlan& plan : pass.plans) add(part, plan);
        finished[which[i]] = pass.complete;
        if (pass.complete) least[which[i]] = pass.lower_bound;
      }
      pool_.simulate_promising();
    }
  }
  Seconds best_time() const { return pool_.best_time(); }

  // Refining relaxed passes (DpQuery::buckets) of the open shapes (count_bounds), of the
  // whole cluster and its parts, while some has a bound below the fastest plan (each pass
  // prunes with it: only the certificate needs them): the kRefineWave of
  // least bound, each with an equal part of the effort kept for them (refine_left_), with
  // kFirstBuckets buckets, then kBucketGrowth times as many; a shape no relaxed pass bounded
  // gets a plain one first (after a free-width pass on wide copies: frees_first; on a chain,
  // after block passes: blocks_first; on copies of 32 devices or more, after its first class
  // pass: classes_first). A shape whose holder is
  // open (held_by) is left to it. The least goes alone, with all that is left, where its pass may
  // need more than an equal part (needs(): its last pass's growth over the one before times its
  // last, at first its relaxed pass: 16 buckets took 3 times a relaxed pass's steps on GNMT large,
  // four times the buckets 2.5 to 3 times the steps on GNMT-32), and a later one waits when its
  // part is too small. Each pass that finishes raises its shape's bound, and its plans are
  // candidates (DpQuery::relaxed), which may lower the fastest plan and so what the certificate
  // must reach (on GNMT-32 simplified at GBS 192 on 16 single-GPU machines they led to a plan 4.3 %
  // faster than the best found before, 0.45 % from the optimum; bench/README.md). A shape is
  // refined no more when its pass ran out or could not run, raised its bound by less than
  // kLeastRefinement of the fastest plan (near the exact pass's bound, which more buckets only
  // approach; within kStallBand of the fastest plan, for the kStalls-th time), or after
  // kRefinements passes. The certificate is the least bound: refining any shape
  // but the least is wasted until that one rises, and once the least is refined no more, or the
  // relaxed passes of the shapes tied with it cannot all run (relaxed_passes_fit), so is every
  // other. Then the closing passes short of effort resume with what is left (resume_closing).
  void refine() {
    std::vector<int> passes(open_.size(), 0), stalls(open_.size(), 0);
    std::vector<char> done(open_.size(), 0);
    for (;;) {
      // A shape whose bound meets the fastest plan no longer holds the certificate back.
      const Seconds target = pool_.fastest() * (1 - kTie);
      // A shape whose holder is open is bounded by it (open_bound): the certificate, the
      // least bound, is never its own, and its passes would raise nothing.
      std::vector<std::size_t> order;
      for (std::size_t i = 0; i < open_.size(); ++i)
        if (open_bound(i) < target && open_[i].holder < 0) order.push_back(i);
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return open_bound(a) < open_bound(b); });
      // The certificate can rise no further once its least bound can, nor where the
      // relaxed passes that the shapes tied with it need cannot all fit what is left.
      if (order.empty() || refine_left_ == 0 || done[order.front()] ||
          !relaxed_passes_fit(order, target))
        break;
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
                       : blocks_first(i)  ? WavePass::Blocks
                       : classes_first(i) ? WavePass::Classes
                                          : WavePass::Relaxed;
        wave[j].runs = wave[j].kind == WavePass::Blocks || wave[j].kind == WavePass::Classes ||
                       needs(i) <= share;
        wave[j].steps = pass_limit(i, wave[j].kind, share);
      }
      std::vector<PassBound> found(order.size());
      tbb::parallel_for(std::size_t{0}, order.size(), [&](std::size_t j) {
        const std::size_t i = order[j];
        const ShapeOn& s = open_[i].on;
        if (!wave[j].runs) return;
        const int width = options_.max_stage_width;
        if (wave[j].kind == WavePass::Free) {
          found[j] = free_bound(*s.cost, s.shape, target, wave[j].steps, width);
        } else if (wave[j].kind == WavePass::Blocks) {
          found[j] = block_bound(*s.cost, s.shape, target, wave[j].steps, width, 0);
        } else if (wave[j].kind == WavePass::Classes) {
          found[j] = first_class_bound(*s.cost, s.shape, target, wave[j].steps, width);
        } else {
          // A shape no relaxed pass bounded gets one (no buckets) first.
          int buckets = open_[i].unrelaxed ? 0 : kFirstBuckets;
          for (int p = 0; p < passes[i] && buckets > 0; ++p)
            buckets *= static_cast<int>(kBucketGrowth);
          found[j] = refined_bound(*s.cost, s.shape, target, wave[j].steps, width, buckets);
        }
      });
      for (std::size_t j = 0; j < order.size(); ++j) {
        const std::size_t i = order[j];
        const PassBound& pass = found[j];
        // Not run (a later one's part was too small; the least's never is): it waits.
        if (j > 0 && !wave[j].runs) continue;
        // Its block or relaxed pass comes next, where still needed.
        if (wave[j].kind != WavePass::Relaxed) {
          refine_left_ -= std::min(refine_left_, pass.steps);
          if (pass.finished)
            open_[i].bound = std::max(open_[i].bound, std::min(pass.least_bound, target));
          (wave[j].kind == WavePass::Free     ? open_[i].freed
           : wave[j].kind == WavePass::Blocks ? open_[i].blocked
                                              : open_[i].classed) = true;
          continue;
        }
        const bool refining = !open_[i].unrelaxed && passes[i] > 0;  // a second one or later
        refine_left_ -= std::min(refine_left_, pass.steps);
        const Seconds raised = std::max(open_[i].bound, std::min(pass.least_bound, target));
        if (open_[i].unrelaxed)  // its refining passes come next
          done[i] = !pass.finished;
        else
          done[i] = !pass.finished ||
                    (raised < open_[i].bound + kLeastRefinement * target &&
                     (raised < target * (1 - kStallBand) || ++stalls[i] == kStalls)) ||
                    ++passes[i] == kRefinements;
        if (pass.finished && open_[i].unrelaxed && open_[i].steps > 0)
          relaxed_growth_ = std::max(relaxed_growth_, static_cast<double>(pass.steps) /
                                                          static_cast<double>(open_[i].steps));
        if (pass.finished) open_[i].bound = raised, open_[i].unrelaxed = false;
        open_[i].before = refining ? open_[i].steps : 0;
        open_[i].steps = pass.steps;
        offer(*open_[i].on.cost, pass.plans);
      }
      pool_.simulate_promising();
    }
    resume_closing(open_bounds());
  }

 private:
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
  bool blocks_first(std::size_t i) const {
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
  bool classes_first(std::size_t i) const {
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
  bool frees_first(std::size_t i) const {
    const CostModel& cost = *open_[i].on.cost;
    return open_[i].unrelaxed && !open_[i].freed &&
           kFreeIdle * pool_.fastest_devices() <= cost.cluster().device_count() &&
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
  std::uint64_t needs(std::size_t i) const {
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
  bool relaxed_passes_fit(const std::vector<std::size_t>& order, Seconds target) const {
    const Seconds tied = open_bound(order.front()) + kLeastRefinement * target;
    std::uint64_t needed = 0;
    for (std::size_t i : order)
      if (open_bound(i) <= tied && open_[i].unrelaxed) needed += needs(i);
    return needed <= refine_left_;
  }
  // A shape's floors: `own` bounds its plans, `anywhere` also those of its parts' shapes.
  static ShapeFloor floors_of(const ShapeOn& s) {
    return shape_floor(*s.cost, s.shape, width_of(s));
  }
  static Seconds floor_of(const ShapeOn& s) { return floors_of(s).own; }

  // What search_rounds knows of each shape of a run (one entry per shape).
  struct Records {
    std::vector<Seconds> bounds;
    std::vector<char> relaxed_done;            // a relaxed pass bounded the shape
    std::vector<std::uint64_t> relaxed_steps;  // and took this many steps
    std::vector<std::uint64_t> ran_out_with;   // steps of one that ran out
    std::vector<std::uint64_t> finished_with;  // steps of one that finished
  };

  // The first round shares the effort in order of copy width, narrowest first: each wave's
  // shapes get equal parts of what is left (of the exact and of the relaxed effort: each
  // shape's relaxed pass runs first), and what a cheap shape leaves unused passes on to later
  // waves, so the narrow shapes, whose passes are the cheapest, finish. On ResNet-101 at GBS
  // 512 on 1,024 GPUs the relaxed pass of 128 copies of 4 micro-batches of 1 under GPipe needs
  // 1.35 M steps: widest first, its equal part was about 1 M, and the plans it returns
  // (speedup 215, against 159 found without them) were missed. Shapes
  // that ran out are searched again from the start (after between_rounds), one at a time,
  // least bound first, each with all that is left (and the tighter bound), up to kRounds
  // rounds; a shape whose bound no longer makes the cutoff is settled. Those never finished
  // keep the bound of their relaxed pass or their floor. All of it depends on the steps each
  // shape took, not on timing, so the result is the same on any thread count.
  // The shapes never finished are left in `unfinished`, in shape order. Each shape's bound
  // starts from `held` (one per shape, or none); `holders` as for run().
  std::vector<Seconds> search_rounds(const std::vector<ShapeOn>& shapes,
                                     std::vector<std::size_t>& unfinished,
                                     const std::vector<Seconds>& held,
                                     const std::vector<int>& holders) {
    const std::size_t n = shapes.size();
    Records r{held.empty() ? std::vector<Seconds>(n, 0) : held, std::vector<char>(n, 0),
              std::vector<std::uint64_t>(n, 0), std::vector<std::uint64_t>(n, 0),
              std::vector<std::uint64_t>(n, 0)};
    std::vector<std::size_t> todo(n);
    std::iota(todo.begin(), todo.end(), std::size_t{0});
    narrowest_first(shapes, todo);
    bool greedy = false;  // between_rounds ran the late greedy passes
    for (int round = 0; round < kRounds && !todo.empty() && left_ > 0; ++round) {
      if (round == 1) between_rounds(shapes, todo, r), greedy = true;
      if (round > 0)
        std::stable_sort(todo.begin(), todo.end(),
                         [&](std::size_t a, std::size_t b) { return r.bounds[a] < r.bounds[b]; });
      todo = search_round(shapes, todo, round, r);
    }
    const std::vector<Unclosed> short_of_effort =
        close_gaps(shapes, todo, r.finished_with, r.bounds);
    unfinished = todo;
    std::sort(unfinished.begin(), unfinished.end());
    // Shapes never reached, and those whose relaxed pass ran out (with the share of the first
    // round, or between rounds), get a relaxed pass with what is left for those, in equal
    // parts; those that run out again are retried with what the others left, up to kRounds
    // times.
    std::vector<std::size_t> unsettled;
    for (std::size_t i : todo)
      if (!r.relaxed_done[i]) unsettled.push_back(i);
    for (int round = 0; round < kRounds && !unsettled.empty() && relaxed_left_ > 0; ++round) {
      std::vector<std::size_t> again = relax(shapes, unsettled, r);
      if (again == unsettled) break;  // none was worth a pass
      unsettled = std::move(again);
    }
    last_relaxed_passes(shapes, unsettled, r.bounds, r.ran_out_with, r.relaxed_steps);
    // A shape no relaxed pass bounded keeps its floor.
    for (std::size_t i : unsettled) r.bounds[i] = std::max(r.bounds[i], floor_of(shapes[i]));
    unfinished_ = unfinished_ || !todo.empty();
    count_bounds(shapes, r.bounds, unfinished, unsettled, r.relaxed_steps, r.ran_out_with, holders,
                 short_of_effort);
    unclosed_.insert(unclosed_.end(), short_of_effort.begin(), short_of_effort.end());
    if (!greedy) late_greedy_passes(shapes, unfinished, r.bounds);
    return r.bounds;
  }
  // One round of search_rounds over the shapes `todo`, in waves (kWave in the first round,
  // then one shape at a time); returns those that stopped or were not reached, in order.
  std::vector<std::size_t> search_round(const std::vector<ShapeOn>& shapes,
                                        const std::vector<std::size_t>& todo, int round,
                                        Records& r) {
    const std::size_t wave = round == 0 ? kWave : 1;
    std::vector<std::size_t> stopped;
    std::size_t start = 0;
    for (; start < todo.size() && left_ > 0; start += wave) {
      const std::size_t end = std::min(todo.size(), start + wave);
      const std::uint64_t share = round == 0 ? left_ / (todo.size() - start) : left_;
      const std::uint64_t relaxed_share = round == 0 ? relaxed_left_ / (todo.size() - start) : 0;
      std::vector<Seconds> bound(end - start);
      for (std::size_t i = start; i < end; ++i)
        bound[i - start] = pool_.cutoff_for(shapes[todo[i]].shape);
      std::vector<ShapeResult> found(end - start);
      const bool screen = screening();
      // After the first round, a shape's exact pass is timed where it has few micro-batches
      // (DpQuery::timed; docs/timeline.md, "Timed passes").
      tbb::parallel_for(start, end, [&](std::size_t i) {
        const ShapeOn& s = shapes[todo[i]];
        if (round > 0 && r.bounds[todo[i]] > bound[i - start])
          found[i - start] = {{}, r.bounds[todo[i]], true, 0, 0};
        else
          found[i - start] =
              search_shape(*s.cost, global_batch_, s.shape, bound[i - start], share, relaxed_share,
                           options_.max_stage_width, 0, 0, 0, screen, round > 0);
      });
      for (std::size_t i = start; i < end; ++i) {
        ShapeResult& shape = found[i - start];
        const std::size_t k = todo[i];
        count_screen(shape.screened, shape.screen_settled);
        if (!shape.complete) stopped.push_back(k);
        if (shape.complete) r.finished_with[k] = shape.steps;
        if (!shape.complete && !shape.relaxed_ran_out)
          r.relaxed_done[k] = 1, r.relaxed_steps[k] = shape.relaxed_steps;
        if (shape.relaxed_ran_out)
          r.ran_out_with[k] = std::max(r.ran_out_with[k], shape.relaxed_steps);
        r.bounds[k] = std::max(r.bounds[k], shape.lower_bound);
        anywhere_[k] = std::max(anywhere_[k], shape.anywhere);
        left_ -= std::min(left_, shape.steps);
        relaxed_left_ -= std::min(relaxed_left_, shape.relaxed_steps);
        for (const CostedPlan& plan : shape.plans) add(*shapes[k].cost, plan);
      }
      pool_.simulate_promising();
    }
    // Shapes not reached for lack of effort stay to do.
    start = std::min(start, todo.size());
    stopped.insert(stopped.end(), todo.begin() + static_cast<std::ptrdiff_t>(start), todo.end());
    return stopped;
  }
  // Between the first round and the second, for the shapes `todo` that stopped: the late
  // greedy passes, whose plans lower the cutoff before the exact passes, then relaxed passes
  // of those that none bounded, pruned by that cutoff; the shapes they settle (no plan makes
  // the cutoff) leave `todo`. On NASNet-A large at GBS 256 on 2 x 8 GPUs, the greedy pass of
  // two copies of 64 micro-batches found a plan 2.6 % faster than the first round's, and the
  // relaxed passes of the three shapes of one copy that ran out in the first round (3.1 M
  // steps each) settled them in 3.8 to 4.3 M: the second round's exact passes, which had run
  // out on one of those, finished the shape of the fastest plan (speedup 14.03 with a gap of
  // 0.7 % -> 14.11, exact).
  void between_rounds(const std::vector<ShapeOn>& shapes, std::vector<std::size_t>& todo,
                      Records& r) {
    std::vector<std::size_t> sorted = todo;
    std::sort(sorted.begin(), sorted.end());
    late_greedy_passes(shapes, sorted, r.bounds);
    std::vector<std::size_t> unbounded;
    for (std::size_t i : todo)
      if (!r.relaxed_done[i]) unbounded.push_back(i);
    std::vector<char> settled(shapes.size(), 0);
    relax(shapes, unbounded, r, &settled);
    std::erase_if(todo, [&](std::size_t i) { return settled[i] != 0; });
  }
  // Relaxed passes of the shapes `which` (none bounded yet) with equal parts of what is left
  // for them (relaxed_left_): those that ran out with at least their part are not tried
  // (less cannot finish). Raises the shapes' records; returns the shapes of `which` still
  // unbounded (those tried first, in order), and marks in `settled` (one per shape, if
  // given) those whose pass proved that no plan makes the cutoff.
  std::vector<std::size_t> relax(const std::vector<ShapeOn>& shapes,
                                 const std::vector<std::size_t>& which, Records& r,
                                 std::vector<char>* settled = nullptr) {
    if (which.empty() || relaxed_left_ == 0) return which;
    const std::uint64_t share = relaxed_left_ / which.size();
    std::vector<std::size_t> worth, again, skipped;
    for (std::size_t i : which) (r.ran_out_with[i] < share ? worth : skipped).push_back(i);
    const std::vector<RelaxedBound> relaxed = relaxed_bounds(shapes, worth, relaxed_left_);
    for (std::size_t j = 0; j < worth.size(); ++j) {
      const std::size_t k = worth[j];
      r.bounds[k] = std::max(r.bounds[k], relaxed[j].lower_bound);
      if (relaxed[j].ran_out) {
        again.push_back(k);
        r.ran_out_with[k] = std::max(r.ran_out_with[k], relaxed[j].steps);
      } else
        r.relaxed_done[k] = 1, r.relaxed_steps[k] = relaxed[j].steps;
      if (settled && relaxed[j].settled) (*settled)[k] = 1;
    }
    again.insert(again.end(), skipped.begin(), skipped.end());
    return again;
  }

  // Counts the bounds of a run's shapes (one per shape) in the certificate: those of the
  // shapes `unfinished` (no exact pass finished them) stay open for refine(), each with the
  // open shape of the whole cluster that holds its plans (`holders`, as for run(); none for
  // a part's shapes bounded only) where there is one, and the steps of the relaxed pass that
  // bounded it (`steps`, one per shape), or for those no relaxed pass bounded (`unbounded`)
  // the most one ran out with (`ran_out_with`, one per shape); the others count as they are.
  void count_bounds(const std::vector<ShapeOn>& shapes, const std::vector<Seconds>& bounds,
                    const std::vector<std::size_t>& unfinished,
                    const std::vector<std::size_t>& unbounded,
                    const std::vector<std::uint64_t>& steps,
                    const std::vector<std::uint64_t>& ran_out_with, const std::vector<int>& holders,
                    const std::vector<Unclosed>& short_of_effort = {}) {
    std::vector<char> open(shapes.size(), 0), unrelaxed(shapes.size(), 0),
        pending(shapes.size(), 0);
    for (std::size_t i : unfinished) open[i] = 1;
    for (std::size_t i : unbounded) unrelaxed[i] = 1;
    for (const Unclosed& u : short_of_effort) pending[u.index] = 1;
    const bool whole = !whole_counted_;  // the first run is the whole cluster's
    whole_counted_ = true;
    if (whole) whole_open_.assign(shapes.size(), -1);
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      if (!open[i]) {
        if (!pending[i]) lower_ = std::min(lower_, bounds[i]);
        continue;
      }
      const int holder = whole || i >= holders.size() || holders[i] < 0
                             ? -1
                             : whole_open_[static_cast<std::size_t>(holders[i])];
      if (whole) whole_open_[i] = static_cast<int>(open_.size());
      open_.push_back({shapes[i], bounds[i], holder, unrelaxed[i] != 0,
                       unrelaxed[i] ? ran_out_with[i] : steps[i]});
    }
  }
  // An open shape's bound: its own, or its holder's where that is more.
  Seconds open_bound(std::size_t i) const {
    const OpenShape& s = open_[i];
    return s.holder < 0 ? s.bound : std::max(s.bound, open_[s.holder].bound);
  }

  // Late greedy passes: the shapes `unfinished` (in shape order) of copies of at most
  // kCoarseUnits devices (which had no candidate pass, or an early one that ran out) whose
  // bound still makes the cutoff get a greedy pass at granule one with what the greedy effort
  // left; their plans are candidates. Only batch sizes whose exact passes run out pay for them
  // (between_rounds, or where no second round ran, after the rounds for the shapes never
  // finished).
  void late_greedy_passes(const std::vector<ShapeOn>& shapes,
                          const std::vector<std::size_t>& unfinished,
                          const std::vector<Seconds>& bounds) {
    std::vector<std::size_t> narrow;
    for (std::size_t i : unfinished)
      if (width_of(shapes[i]) <= kCoarseUnits && !greedy_done_[i] &&
          bounds[i] <= pool_.cutoff_for(shapes[i].shape))
        narrow.push_back(i);
    std::vector<CostedPlan> found;
    candidate_passes(shapes, narrow, true, greedy_left_, found);
  }

  // Closing passes: a finished 1F1B shape whose bound is still below the fastest plan is
  // first bounded by relaxed passes (relaxed_closing), then, while still below it,
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
  // next closing pass the exact effort left could not give its steps (refine() resumes them).
  std::vector<Unclosed> close_gaps(const std::vector<ShapeOn>& shapes,
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
    for (std::size_t k = 0; k < records.size(); ++k) last[k] = first_closings(records[k], left_);
    for (std::size_t k = 0; k < records.size(); ++k)
      if (last[k] == Closing::Finished) last[k] = last_closings(records[k], left_);
    std::vector<Unclosed> short_of_effort;
    for (std::size_t k = 0; k < records.size(); ++k) {
      bounds[records[k].index] = records[k].bound;
      if (last[k] == Closing::Short) short_of_effort.push_back(records[k]);
    }
    return short_of_effort;
  }
  // How a closing pass went: it finished (raising the bound), was not needed (the shape's
  // bound meets the fastest plan), stopped at its own cap, or could not get its cap's steps
  // from the effort left (not run, or stopped with less).
  enum class Closing { Finished, Unneeded, Capped, Short };
  // One closing pass of `level` (search_shape's `closing`) on shape `s` while it is open, with
  // up to `factor` times `before`, the steps of its pass before (then its own), within
  // `left`; raises `bound`.
  Closing close(const ShapeOn& s, int level, std::uint64_t factor, std::uint64_t& before,
                Seconds& bound, std::uint64_t& left) {
    if (bound >= pool_.fastest() * (1 - kTie)) return Closing::Unneeded;
    const bool short_of_effort = before > left / factor;
    if (left == 0) return Closing::Short;
    const std::uint64_t cap = short_of_effort ? left : before * factor;
    ShapeResult found = search_shape(*s.cost, global_batch_, s.shape, pool_.cutoff_for(s.shape),
                                     std::min(left, cap), 0, options_.max_stage_width, level,
                                     pool_.fastest() * (1 - kTie), left);
    left -= std::min(left, found.steps);
    if (found.complete) bound = std::max(bound, found.lower_bound);
    for (const CostedPlan& plan : found.plans) add(*s.cost, plan);
    pool_.simulate_promising();
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
  bool relaxed_closing(const ShapeOn& s, std::uint64_t cap, Seconds& bound, std::uint64_t& left) {
    const Seconds target = pool_.fastest() * (1 - kTie);
    const PassBound found = refined_bound(*s.cost, s.shape, target, std::min(left, cap),
                                          options_.max_stage_width, kClosingBuckets, true);
    left -= std::min(left, found.steps);
    if (found.finished) bound = std::max(bound, std::min(found.least_bound, target));
    return bound >= target;
  }
  // Resumes the closing passes of the shapes close_gaps left short of effort (unclosed_),
  // least bound first, with what refine() left: only while the least of them is the
  // certificate's least bound (`others`: every other bound), since closing any other cannot
  // raise the certificate, and until one stops again.
  void resume_closing(Seconds others) {
    std::stable_sort(unclosed_.begin(), unclosed_.end(),
                     [](const Unclosed& a, const Unclosed& b) { return a.bound < b.bound; });
    for (Unclosed& u : unclosed_) {
      if (u.bound >= pool_.fastest() * (1 - kTie)) continue;
      if (u.bound > others || refine_left_ == 0 || !resume(u)) break;
      others = std::min(others, u.bound);
    }
  }
  // The closing passes of one shape from its level on (close_gaps' order for one shape).
  // False when one stopped.
  bool resume(Unclosed& u) {
    if (u.level > 4) return true;
    if (u.level <= 2) {
      const Closing c = first_closings(u, refine_left_);
      if (c == Closing::Unneeded) return true;
      if (c != Closing::Finished) return false;
    }
    return last_closings(u, refine_left_) != Closing::Short;
  }
  // The first and second closing passes of shape `u` from its level (1 or 2) on, within
  // `left`, while each finishes: how the last one run went. One short of effort leaves `u`
  // at its level, with the steps of the pass before it.
  Closing first_closings(Unclosed& u, std::uint64_t& left) {
    // (Only for a shape still open: one at the fastest plan would spend its steps for nothing.)
    if (u.level == 1 && !u.relaxed && u.bound < pool_.fastest() * (1 - kTie)) {
      u.relaxed = true;
      if (relaxed_closing(u.on, u.before / kClosingShare, u.bound, left)) return Closing::Unneeded;
    }
    for (; u.level <= 2; ++u.level) {
      const std::uint64_t base = u.before;
      const Closing c = close(u.on, u.level, u.level == 1 ? kCloseFactor : kLastPairsFactor,
                              u.before, u.bound, left);
      if (c == Closing::Short) u.before = base;
      if (c != Closing::Finished) return c;
    }
    return Closing::Finished;
  }
  // The third closing pass (from level 3) and the fourth of shape `u`, each capped by the
  // second's steps, within `left`: Short when either was short of effort, `u` then left at
  // that level; otherwise how the fourth went, and `u` done (level 5).
  Closing last_closings(Unclosed& u, std::uint64_t& left) {
    const std::uint64_t second = u.before;
    std::uint64_t steps = second;
    const Closing c3 =
        u.level == 3 ? close(u.on, 3, kLastDrainsFactor, steps, u.bound, left) : Closing::Finished;
    const Closing c4 = close(u.on, 4, kPacedAftersFactor, u.before, u.bound, left);
    u.before = second;
    u.level = c3 == Closing::Short ? 3 : c4 == Closing::Short ? 4 : 5;
    return u.level < 5 ? Closing::Short : c4;
  }

  int global_batch_;
  const SearchOptions& options_;
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
  // The shapes no exact pass finished, for refine().
  // A pass of refine()'s wave: a free-width pass (frees_first), block passes (blocks_first)
  // or a relaxed or refining pass; whether it runs (a later shape's waits where its part is
  // too small), and within how many steps.
  struct WavePass {
    enum Kind { Free, Blocks, Classes, Relaxed } kind = Relaxed;
    bool runs = false;
    std::uint64_t steps = 0;
  };
  // The steps open shape i's next pass in refine(), of `kind`, may take in a wave whose parts
  // are `share`: block passes on a chain of fewer than kBlockPassStates states what they are
  // estimated to need (needs()), a class screen kClassScreenGrowth times the steps its relaxed
  // passes ran out with (the part where none ran), any other pass the part.
  std::uint64_t pass_limit(std::size_t i, WavePass::Kind kind, std::uint64_t share) const {
    const bool short_chain =
        open_[i].on.cost->states() < static_cast<std::size_t>(kBlockPassStates);
    if (kind == WavePass::Blocks && short_chain) return std::min(share, needs(i));
    if (kind == WavePass::Classes && open_[i].steps > 0)
      return std::min(share, kClassScreenGrowth * needs(i));
    return share;
  }
  struct OpenShape {
    ShapeOn on;
    Seconds bound;
    int holder;  // the open shape of the whole cluster that holds its plans (held_by), or -1
    // No relaxed pass bounded it yet (they ran out, or none ran): its bound is its floor or
    // its class passes', and `steps` the most a relaxed pass of it ran out with.
    bool unrelaxed;
    std::uint64_t steps;       // of its last bounding pass: relaxed, then refining
    std::uint64_t before = 0;  // of the refining pass before that one (0: none)
    bool blocked = false;      // its block passes ran (blocks_first)
    bool freed = false;        // its free-width pass ran (frees_first)
    bool classed = false;      // its first class pass ran (classes_first)
  };
  std::vector<OpenShape> open_;
  std::vector<Unclosed> unclosed_;  // shapes whose closing passes were short of effort
  std::vector<char> greedy_done_;   // per shape of the current run: a greedy pass finished
  // The most times as many steps as its shape's relaxed passes had run out with that a
  // relaxed pass in refine() took, at least 1 (needs()).
  double relaxed_growth_ = 1;
  std::vector<int> whole_open_;    // the open shape of each whole-cluster shape, or -1
  bool whole_counted_ = false;     // count_bounds has had the whole cluster's shapes
  bool twins_;                     // 1F1B searched: GPipe plans' 1F1B twins are candidates
  Seconds lower_ = kInfinity;      // least bound of the shapes searched or floored
  bool unfinished_ = false;        // some shape never finished its pass
  std::vector<Seconds> anywhere_;  // anywhere(), per shape of the last run
};

}  // namespace hybrid

namespace {

// The parts of a cluster: its first machines (largest first), and its first device when
// its first machine has more.
std::vector<Cluster> cluster_parts(const Cluster& cluster) {
  std::vector<Cluster> parts;
  for (int m = cluster.machine_count() - 1; m >= 1; --m) {
    Cluster part = cluster;
    part.machine_gpus.resize(static_cast<std::size_t>(m));
    parts.push_back(std::move(part));
  }
  if (cluster.machine_gpus.front() > 1) {
    Cluster one = cluster;
    one.machine_gpus = {1};
    parts.push_back(std::move(one));
  }
  return parts;
}

// Every plan of `global_batch` on `used` devices of the cluster of `cost` takes at least the
// batch's work over them (shape_floor), more on fewer devices.
Seconds work_floor(const CostModel& cost, int global_batch, int used) {
  return cost.whole_model_time(global_batch) / (used * cost.fastest());
}

}  // namespace

using hybrid::Search;
using hybrid::ShapeOn;

struct HybridSearch::State {
  SearchOptions options;
  Search search;
  // The parts searched, which refine() goes back to, and those of narrow passes.
  std::deque<CostModel> part_models;
  // For narrow passes (refined()), where the search had parts: the whole cluster, the batch,
  // how to cost a part, the cutoff once the parts were searched, and how many were searched
  // (part_models' first ones, in the order of cluster_parts).
  const CostModel* whole = nullptr;
  int batch;
  PartCostModel part_cost;
  Seconds parts_cutoff = 0;
  std::size_t searched_parts = 0;

  State(int global_batch, const SearchOptions& o)
      : options(o), search(global_batch, options), batch(global_batch) {}
};

HybridSearch::~HybridSearch() = default;

SearchResult HybridSearch::result() const { return state_->search.result(); }

SearchResult HybridSearch::refined(const std::vector<Plan>& more) {
  State& s = *state_;
  s.search.offer_plans(more);
  // Narrow passes first where the answer is open: a plan they find prunes the refining
  // passes, which then settle shapes for fewer steps. On GNMT-16 at GBS 512 on 32 machines of
  // 8 GPUs the best plan, 4 % faster than the search's, is a narrow pass's; after it, block
  // passes settle 6 of the 8 shapes that held the certificate for 4 to 5 M steps each, where
  // with the search's plan as the cutoff they took 91 M together (gap 43.3 % -> 4.5 %).
  if (s.whole && !s.search.exact()) narrow(s);
  s.search.refine();
  return s.search.result();
}

// Narrow passes on the parts of at least two devices that could beat the cutoff once the
// parts were searched, fewest devices first. Those searched keep their cost models; the
// others get one.
void HybridSearch::narrow(State& s) {
  const std::vector<Cluster> parts = cluster_parts(s.whole->cluster());
  std::vector<const CostModel*> models;
  for (std::size_t k = parts.size(); k-- > 0;)
    if (parts[k].device_count() > 1 &&
        work_floor(*s.whole, s.batch, parts[k].device_count()) <= s.parts_cutoff)
      models.push_back(k < s.searched_parts ? &s.part_models[k]
                                            : &s.part_models.emplace_back(s.part_cost(parts[k])));
  if (!models.empty()) s.search.narrow_passes(*s.whole, models);
}

HybridSearch::HybridSearch(const CostModel& cost, int global_batch, const SearchOptions& options,
                           const PartCostModel& part_cost, const std::vector<Plan>& hints)
    : state_(std::make_unique<State>(global_batch, options)) {
  Search& search = state_->search;
  search.offer_plans(hints);
  const std::vector<ShapeOn> whole =
      search.shapes(cost, [](const PipelineShapeChoice&) { return true; });
  const std::vector<Seconds> whole_bounds = search.run(cost, whole);
  if (!part_cost) return;
  const std::vector<Seconds> whole_anywhere = search.anywhere();
  std::vector<Seconds> whole_classes(whole.size(), 0);  // Search::class_bounds
  bool classed = false;                                 // whole_classes is filled
  const int devices = cost.cluster().device_count();
  const int machine = uniform_machines(cost);
  const std::vector<Cluster> parts = cluster_parts(cost.cluster());
  auto floor_on = [&](int used) { return work_floor(cost, global_batch, used); };
  // The fewest devices of a part that can beat the cutoff (which only falls): class_bounds
  // bound the plans of the parts searched.
  auto least_used = [&] {
    int least = devices;
    for (const Cluster& part : parts)
      if (floor_on(part.device_count()) <= search.cutoff()) least = part.device_count();
    return least;
  };
  for (const Cluster& part : parts) {
    const int used = part.device_count();
    // Once a part cannot beat the cutoff, neither can the smaller ones.
    const Seconds floor = floor_on(used);
    if (floor > search.cutoff()) {
      search.bound_unsearched(floor, false);
      break;
    }
    const CostModel& part_model = state_->part_models.emplace_back(part_cost(part));
    // A shape whose plans a shape of the whole cluster holds (or plans no faster than each,
    // held_by), and whose bound there is no less than the best time, has no faster plan; nor has
    // one whose plans that shape's placement-free bound covers (the same copies, micro-batches and
    // schedule, anywhere). The others are searched as the part's own search would, so the part's
    // best plans are candidates here too, and they keep those bounds where their own passes prove
    // less (they run out sooner on parts, which get only the effort the whole cluster left).
    if (!classed && search.unfinished())
      search.class_bounds(whole, least_used(), whole_classes), classed = true;
    // Each shape of the part, its bound from the whole cluster's shape, and that shape where
    // it holds its plans or bounds them (held_by), or -1.
    std::vector<ShapeOn> shapes;
    std::vector<Seconds> bounds;
    std::vector<int> holders;
    for (const ShapeOn& s :
         search.shapes(part_model, [](const PipelineShapeChoice&) { return true; })) {
      Seconds bound = 0;
      int holder = -1;
      for (std::size_t i = 0; i < whole.size(); ++i)
        if (same_shape(s.shape, whole[i].shape)) {
          const bool holds = held_by(cost, s.shape, used, whole[i].shape, machine);
          holder = holds ? static_cast<int>(i) : -1;
          bound = std::max(whole_anywhere[i], whole_classes[i]);
          if (holds) bound = std::max(bound, whole_bounds[i]);
        }
      if (bound >= search.best_time()) continue;
      shapes.push_back(s), bounds.push_back(bound), holders.push_back(holder);
    }
    // Parts get only the effort the whole cluster left: with less than a step a shape, their
    // shapes are only bounded (by relaxed passes). Searched with a few steps, each would be
    // seeded and polished for nothing: NASNet-A large at GBS 512 on 1,024 GPUs, 6 steps left
    // for 23,574 shapes of the parts, took 38 s instead of 24 s, with the same answer.
    if (search.effort_left() < shapes.size()) {
      // There the held shapes need nothing: the whole cluster's bound covers their plans.
      std::vector<ShapeOn> unheld;
      std::vector<Seconds> unheld_bounds;
      for (std::size_t i = 0; i < shapes.size(); ++i)
        if (holders[i] < 0) unheld.push_back(shapes[i]), unheld_bounds.push_back(bounds[i]);
      search.bound_only(part_model, unheld, unheld_bounds);
    } else
      search.run(part_model, shapes, bounds, holders);
  }
  state_->whole = &cost;
  state_->part_cost = part_cost;
  state_->parts_cutoff = search.cutoff();
  state_->searched_parts = state_->part_models.size();
}

SearchResult search_plans(const CostModel& cost, int global_batch, const SearchOptions& options,
                          const PartCostModel& part_cost, const std::vector<Plan>& hints) {
  return HybridSearch(cost, global_batch, options, part_cost, hints).refined();
}

}  // namespace pe::detail
