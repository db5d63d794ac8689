// Narrow passes (branch_and_bound.h): exact passes of the whole cluster's one-copy shapes on
// its first machines, fewest devices first, where the answer is still open.
#include "search/branch_and_bound.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <vector>

#include "search/shape_pass.h"

namespace pe::detail::hybrid {

// Narrow passes: exact passes of the one-copy shapes of the whole cluster `whole` that are
// open with a bound below the cutoff, on one copy of its first machines, `parts` (each a
// machine more than the last, the fewest devices that can beat the cutoff first): the
// same micro-batches and schedule, on fewer devices, whose plans are the shape's too (the
// other devices idle; a part's cost model is built when its passes run). Their plans are
// candidates; they prove nothing. On each part the shapes get equal parts of what
// narrow_left_ has left, kNarrowWave at a time (what one leaves passes on), then those that
// ran out get all that is left, one at a time, the least bound on the part before first (at
// first the whole cluster's bound): a shape whose plans beat the cutoff on fewer devices is
// the one likely to beat it on more. A shape that ran out is not tried on wider parts (its
// pass would need more).
void Search::narrow_passes(const CostModel& whole, std::size_t parts,
                           const std::function<const CostModel&(std::size_t)>& part_model) {
  std::vector<PipelineShapeChoice> shapes;
  std::vector<Seconds> least;  // each shape's least bound so far
  for (std::size_t i = 0; i < open_.size(); ++i)
    if (open_[i].on.cost == &whole && open_[i].on.shape.replicas == 1 &&
        open_bound(i) < pool_.cutoff_for(open_[i].on.shape))
      shapes.push_back(open_[i].on.shape), least.push_back(open_bound(i));
  for (std::size_t k = 0; k < parts; ++k) {
    if (shapes.empty() || narrow_left_ < shapes.size()) break;
    const CostModel* part = &part_model(k);
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
void Search::narrow_wave(const CostModel& part, const std::vector<PipelineShapeChoice>& shapes,
                         const std::vector<std::size_t>& which, std::size_t wave, bool all,
                         std::vector<Seconds>& least, std::vector<char>& finished) {
  for (std::size_t start = 0; start < which.size(); start += wave) {
    const std::size_t end = std::min(which.size(), start + wave);
    const std::uint64_t share = all ? narrow_left_ : narrow_left_ / (which.size() - start);
    if (share == 0) break;
    std::vector<Seconds> bound(end - start);
    for (std::size_t i = start; i < end; ++i) bound[i - start] = pool_.cutoff_for(shapes[which[i]]);
    std::vector<ShapeResult> found(end - start);
    tbb::parallel_for(start, end, [&](std::size_t i) {
      found[i - start] =
          search_shape(part, global_batch_, shapes[which[i]], bound[i - start], share, 0, limits());
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

}  // namespace pe::detail::hybrid
