// Candidate passes (branch_and_bound.h): greedy and coarse passes of the wide shapes, early
// greedy passes of the narrow ones, and late greedy passes of those whose exact pass ran out.
// Their plans are candidates; they prove nothing.
#include "search/branch_and_bound.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cost/evaluate.h"
#include "search/pipeline_dp.h"
#include "search/pipeline_shapes.h"

namespace pe::detail::hybrid {

// The shapes whose copies are wider than kCoarseUnits devices: all of them for greedy
// passes, those of a granule above one device for coarse passes; narrowest copies first.
std::vector<std::size_t> Search::wide(const std::vector<ShapeOn>& shapes, bool greedy) {
  std::vector<std::size_t> wide;
  for (std::size_t i = 0; i < shapes.size(); ++i)
    if (greedy ? width_of(shapes[i]) > kCoarseUnits : granule(shapes[i], kCoarseUnits) > 1)
      wide.push_back(i);
  narrowest_first(shapes, wide);
  return wide;
}

// The plans of greedy passes (DpQuery::greedy, on at most kGreedyUnits granules) or of
// coarse passes (DpQuery::granule, on at most kCoarseUnits) of shapes `which` (indices into
// `shapes`), in parallel, kept in the order of `which`, in waves of kWave with equal parts of
// their effort `left` (what a pass leaves passes on), until `last`. Early passes
// (LastWave::AnyRanOut) share it as if at most kEarlySharers shapes were left. Marks in
// greedy_done_ the greedy passes that finished.
void Search::candidate_passes(const std::vector<ShapeOn>& shapes,
                              const std::vector<std::size_t>& which, bool greedy,
                              std::uint64_t& left, std::vector<CostedPlan>& seeds, LastWave last) {
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
      DpQuery query = shape_query(s, width_of(shapes[which[i]]), bound[i - start], share,
                                  kPlansPerPass, limits());
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
void Search::early_greedy_passes(const std::vector<ShapeOn>& shapes) {
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

// Sorts `which` (indices into `shapes`) by copy width, narrowest first, stably: their
// passes are the cheapest, and what one leaves passes on.
void Search::narrowest_first(const std::vector<ShapeOn>& shapes, std::vector<std::size_t>& which) {
  std::stable_sort(which.begin(), which.end(), [&](std::size_t a, std::size_t b) {
    return width_of(shapes[a]) < width_of(shapes[b]);
  });
}

// The granule of a shape's candidate pass: the least power of two that leaves at most
// `units` granules a copy, and no wider than a pipeline stage may be (so that stages of
// one granule can run).
int Search::granule(const ShapeOn& s, int units) {
  const int width = width_of(s);
  int g = 1;
  while (width / g > units) g *= 2;
  const int widest =
      max_stage_width(false, s.shape.micro_batch, width, s.cost->max_tensor_parallel());
  while (g > 1 && g > widest) g /= 2;
  return g;
}

// Late greedy passes: the shapes `unfinished` (in shape order) of copies of at most
// kCoarseUnits devices (which had no candidate pass, or an early one that ran out) whose
// bound still makes the cutoff get a greedy pass at granule one with what the greedy effort
// left; their plans are candidates. Only batch sizes whose exact passes run out pay for them
// (between_rounds, or where no second round ran, after the rounds for the shapes never
// finished).
void Search::late_greedy_passes(const std::vector<ShapeOn>& shapes,
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

}  // namespace pe::detail::hybrid
