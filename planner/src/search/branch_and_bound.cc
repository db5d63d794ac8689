// The branch and bound of one global batch size (branch_and_bound.h): the effort's shares,
// the shapes of a cluster, their seeds and candidates, the certificate and the open shapes.
#include "search/branch_and_bound.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "cost/evaluate.h"
#include "search/interleaved_search.h"
#include "search/pipeline_shapes.h"
#include "search/polish.h"
#include "search/seeds.h"
#include "search/shape_pass.h"

namespace pe::detail::hybrid {

namespace {

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

// An unlimited effort (SearchOptions::effort 0), in steps: decades of work, but far from the
// largest count, so that sums of a few passes' steps cannot overflow where a pass stopped at its
// memory limit reports its whole share as spent (DpQuery::memory_limit).
constexpr std::uint64_t kUnlimitedEffort = std::uint64_t{1} << 60;

// `steps` times `times`, at most the largest count.
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

}  // namespace

Search::Search(int global_batch, const SearchOptions& options)
    : global_batch_(global_batch),
      options_(options),
      pool_(std::max(1, options.top)),
      left_(options.effort ? std::min(options.effort, kUnlimitedEffort) : kUnlimitedEffort),
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
std::vector<ShapeOn> Search::shapes(
    const CostModel& cost, const std::function<bool(const PipelineShapeChoice&)>& keep) const {
  std::vector<ShapeOn> on;
  for (const PipelineShapeChoice& shape :
       pipeline_shapes(global_batch_, cost.device_count(), cost.settings().min_micro_batch,
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
// `ran_out`: the steps a relaxed pass of each shape already ran out with (one per shape, or
// none), which a pass of no more steps is not tried with.
std::vector<Seconds> Search::run(const CostModel& cost, const std::vector<ShapeOn>& shapes,
                                 const std::vector<Seconds>& held, const std::vector<int>& holders,
                                 const std::vector<std::uint64_t>& ran_out) {
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
  std::vector<Seconds> bounds = search_rounds(shapes, unfinished, held, holders, ran_out);
  offer_interleaved(cost);
  return bounds;
}

// Offers seeds[from..], plans of the cluster of `cost`, to the pool and simulates the
// promising ones.
void Search::offer(const CostModel& cost, const std::vector<CostedPlan>& seeds, std::size_t from) {
  for (std::size_t i = from; i < seeds.size(); ++i) add(cost, seeds[i]);
  pool_.simulate_promising();
}
// The plans of a pass on the cluster of `cost` that fit, as candidates (add).
void Search::offer(const CostModel& cost, const std::vector<DpPlan>& plans) {
  std::vector<CostedPlan> costed;
  add_fitting(cost, global_batch_, plans, costed);
  for (const CostedPlan& plan : costed) add(cost, plan);
}

// Adds a plan of the cluster of `cost` to the pool and, where 1F1B is searched, the 1F1B
// twin of a GPipe plan (one_f_one_b_twin).
void Search::add(const CostModel& cost, const CostedPlan& candidate) {
  pool_.add(candidate.plan);
  if (!twins_) return;
  if (std::optional<CostedPlan> twin = one_f_one_b_twin(cost, candidate.spec, global_batch_))
    pool_.add(std::move(twin->plan));
}

// The interleaved plans of the cluster of `cost`, when that schedule is searched: each is
// costed (in parallel, kept in order) and offered unless it does not fit or its bound
// cannot make the answer; the pool simulates them by bound like any candidate.
void Search::offer_interleaved(const CostModel& cost) {
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

SearchResult Search::result() const {
  SearchResult result;
  result.plans = pool_.answer();
  result.lower_bound = certificate();
  result.exact = exact_with(result.lower_bound);
  result.fastest = pool_.fastest();
  return result;
}

// result()'s lower bound: the least of the open bounds, the fastest plan and the closing
// passes short of effort.
Seconds Search::certificate() const {
  Seconds lower = std::min(open_bounds(), pool_.fastest());
  for (const Unclosed& u : unclosed_) lower = std::min(lower, u.bound);
  return lower;
}

// The least bound of the shapes counted, of the open ones and of the candidates not yet
// simulated: the certificate but for the closing passes short of effort (unclosed_).
Seconds Search::open_bounds() const {
  Seconds lower = std::min(lower_, pool_.least_unsimulated());
  for (std::size_t i = 0; i < open_.size(); ++i) lower = std::min(lower, open_bound(i));
  return lower;
}

// Counts the bounds of a run's shapes (one per shape) in the certificate: those of the
// shapes `unfinished` (no exact pass finished them) stay open for refine(), each with the
// open shape of the whole cluster that holds its plans (`holders`, as for run(); none for
// a part's shapes bounded only) where there is one, and the steps of the relaxed pass that
// bounded it (`steps`, one per shape), or for those no relaxed pass bounded (`unbounded`)
// the most one ran out with (`ran_out_with`, one per shape); the others count as they are.
void Search::count_bounds(const std::vector<ShapeOn>& shapes, const std::vector<Seconds>& bounds,
                          const std::vector<std::size_t>& unfinished,
                          const std::vector<std::size_t>& unbounded,
                          const std::vector<std::uint64_t>& steps,
                          const std::vector<std::uint64_t>& ran_out_with,
                          const std::vector<int>& holders,
                          const std::vector<Unclosed>& short_of_effort) {
  std::vector<char> open(shapes.size(), 0), unrelaxed(shapes.size(), 0), pending(shapes.size(), 0);
  for (std::size_t i : unfinished) open[i] = 1;
  for (std::size_t i : unbounded) unrelaxed[i] = 1;
  for (const Unclosed& u : short_of_effort) pending[u.index] = 1;
  const bool whole = !whole_counted_;  // the first run is the whole cluster's
  whole_counted_ = true;
  if (whole) {
    whole_open_.assign(shapes.size(), -1), whole_closing_.assign(shapes.size(), -1);
    for (std::size_t k = 0; k < short_of_effort.size(); ++k)  // unclosed_ gets them next
      whole_closing_[short_of_effort[k].index] = static_cast<int>(unclosed_.size() + k);
  }
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (!open[i]) {
      if (!pending[i]) lower_ = std::min(lower_, bounds[i]);
      continue;
    }
    const bool held = !whole && i < holders.size() && holders[i] >= 0;
    const auto of = [&](const std::vector<int>& whole_index) {
      return held ? whole_index[static_cast<std::size_t>(holders[i])] : -1;
    };
    if (whole) whole_open_[i] = static_cast<int>(open_.size());
    open_.push_back({shapes[i], bounds[i], of(whole_open_), unrelaxed[i] != 0,
                     unrelaxed[i] ? ran_out_with[i] : steps[i]});
    open_.back().closing = of(whole_closing_);
  }
}

}  // namespace pe::detail::hybrid
