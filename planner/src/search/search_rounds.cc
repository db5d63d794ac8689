// The rounds of exact and relaxed passes over a run's shapes (branch_and_bound.h): the first
// round in waves, narrowest copies first, the later rounds one shape at a time; the relaxed
// passes between and after them, and the class and relaxed bounds of the parts' shapes.
#include "search/branch_and_bound.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "search/pipeline_dp.h"
#include "search/seeds.h"
#include "search/shape_pass.h"

namespace pe::detail::hybrid {

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
std::vector<Seconds> Search::search_rounds(const std::vector<ShapeOn>& shapes,
                                           std::vector<std::size_t>& unfinished,
                                           const std::vector<Seconds>& held,
                                           const std::vector<int>& holders,
                                           const std::vector<std::uint64_t>& ran_out) {
  const std::size_t n = shapes.size();
  Records r{held.empty() ? std::vector<Seconds>(n, 0) : held, std::vector<char>(n, 0),
            std::vector<std::uint64_t>(n, 0),
            ran_out.empty() ? std::vector<std::uint64_t>(n, 0) : ran_out,
            std::vector<std::uint64_t>(n, 0)};
  std::vector<std::size_t> todo(n);
  std::iota(todo.begin(), todo.end(), std::size_t{0});
  // A shape whose held bound is above its cutoff has no plan the search could report.
  std::erase_if(todo,
                [&](std::size_t i) { return r.bounds[i] > pool_.cutoff_for(shapes[i].shape); });
  narrowest_first(shapes, todo);
  bool greedy = false;  // between_rounds ran the late greedy passes
  for (int round = 0; round < kRounds && !todo.empty() && left_ > 0; ++round) {
    if (round == 1) between_rounds(shapes, todo, r), greedy = true;
    if (round > 0)
      std::stable_sort(todo.begin(), todo.end(),
                       [&](std::size_t a, std::size_t b) { return r.bounds[a] < r.bounds[b]; });
    todo = search_round(shapes, todo, round, r);
  }
  const std::vector<Unclosed> short_of_effort = close_gaps(shapes, todo, r.finished_with, r.bounds);
  unfinished = todo;
  std::sort(unfinished.begin(), unfinished.end());
  // Shapes never reached, and those whose relaxed pass ran out (with the share of the first
  // round, or between rounds), get a relaxed pass with what is left for those, in equal
  // parts; those that run out again are retried with what the others left, up to kRounds
  // times (wanting_relaxed).
  std::vector<std::size_t> unsettled = wanting_relaxed(todo, r);
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
  ran_out_with_ = r.ran_out_with;
  return r.bounds;
}

// One round of search_rounds over the shapes `todo`, in waves (kWave in the first round,
// then one shape at a time); returns those that stopped or were not reached, in order.
std::vector<std::size_t> Search::search_round(const std::vector<ShapeOn>& shapes,
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
    // A shape whose bound already meets the fastest plan (within kTie) can only bring a
    // simpler plan within the margin: its later passes look only at plans of no more stages
    // than the one that leads (Pool::stages_to_lead), and their bound is not the shape's. On
    // VGG-19 at GBS 512 on 256 GPUs, the best plan's shape (2 stages of 4 micro-batches) ran
    // out of 92 M steps looking at plans of up to 4 stages, and as many with up to 2, until such
    // a pass tried only last stages after the first (DpQuery::max_stages): 0.56 M, and the point
    // 2.6 -> 1.4 s.
    std::vector<int> most_stages(end - start, 0);
    // In the first round, a shape whose screens prove it no faster than the fastest plan looks
    // only for simpler plans the same way (search_shape's `meets`): on VGG-19 at GBS 512 on
    // 1,024 GPUs its relaxed, class and exact passes ran out with 50 M steps after the free-width
    // screen had bounded the best plan's own shape at its time.
    const Seconds meets = pool_.fastest() * (1 - kTie);  // infinity with no plan yet
    const int lead = pool_.stages_to_lead();
    for (std::size_t i = start; i < end; ++i) {
      bound[i - start] = pool_.cutoff_for(shapes[todo[i]].shape);
      if (round > 0 && meets_fastest(r.bounds[todo[i]]))
        most_stages[i - start] = pool_.stages_to_lead();
    }
    std::vector<ShapeResult> found(end - start);
    const bool screen = screening();
    // After the first round, a shape's exact pass is timed where it has few micro-batches
    // (DpQuery::timed; docs/timeline.md, "Timed passes").
    tbb::parallel_for(start, end, [&](std::size_t i) {
      const ShapeOn& s = shapes[todo[i]];
      // A relaxed pass that already ran out with its share would again (run()'s `ran_out`).
      const std::uint64_t relaxed = r.ran_out_with[todo[i]] < relaxed_share ? relaxed_share : 0;
      if (round > 0 && r.bounds[todo[i]] > bound[i - start])
        found[i - start] = {{}, r.bounds[todo[i]], true, 0, 0};
      else
        found[i - start] = search_shape(*s.cost, global_batch_, s.shape, bound[i - start], share,
                                        relaxed, limits(), 0, 0, 0, screen, round > 0,
                                        most_stages[i - start], meets, round == 0 ? lead : 0);
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
      if (most_stages[i - start] == 0) r.bounds[k] = std::max(r.bounds[k], shape.lower_bound);
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
void Search::between_rounds(const std::vector<ShapeOn>& shapes, std::vector<std::size_t>& todo,
                            Records& r) {
  std::vector<std::size_t> sorted = todo;
  std::sort(sorted.begin(), sorted.end());
  late_greedy_passes(shapes, sorted, r.bounds);
  std::vector<char> settled(shapes.size(), 0);
  relax(shapes, wanting_relaxed(todo, r), r, &settled);
  std::erase_if(todo, [&](std::size_t i) { return settled[i] != 0; });
}

// The shapes of `todo` that no relaxed pass bounded, but for those whose bound already meets
// the fastest plan (a free-width screen's, say), which no relaxed pass can raise further: on
// VGG-19 at GBS 512 on 1,024 GPUs the best plan's shape took one of 128 M steps that ended at
// that same bound.
std::vector<std::size_t> Search::wanting_relaxed(const std::vector<std::size_t>& todo,
                                                 const Records& r) const {
  std::vector<std::size_t> wanting;
  for (std::size_t i : todo)
    if (!r.relaxed_done[i] && !meets_fastest(r.bounds[i])) wanting.push_back(i);
  return wanting;
}

// Relaxed passes of the shapes `which` (none bounded yet) with equal parts of what is left
// for them (relaxed_left_): those that ran out with at least their part are not tried
// (less cannot finish). Raises the shapes' records; returns the shapes of `which` still
// unbounded (those tried first, in order), and marks in `settled` (one per shape, if
// given) those whose pass proved that no plan makes the cutoff.
std::vector<std::size_t> Search::relax(const std::vector<ShapeOn>& shapes,
                                       const std::vector<std::size_t>& which, Records& r,
                                       std::vector<char>* settled) {
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

// The bounds of shapes `which` (indices into `shapes`) from their relaxed passes, with
// equal parts of the effort `left` (in order, what one leaves passes on), in waves. A
// shape whose relaxed pass already ran out with at least its part (`ran_out_with`, per
// shape; empty: none did) is not searched again: it would run out again.
std::vector<RelaxedBound> Search::relaxed_bounds(const std::vector<ShapeOn>& shapes,
                                                 const std::vector<std::size_t>& which,
                                                 std::uint64_t& left,
                                                 const std::vector<std::uint64_t>& ran_out_with) {
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
        found[i - start] = relaxed_bound(*s.cost, s.shape, cutoff, share, limits(), screen);
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
void Search::last_relaxed_passes(const std::vector<ShapeOn>& shapes,
                                 std::vector<std::size_t>& which, std::vector<Seconds>& bounds,
                                 std::vector<std::uint64_t>& ran_out_with,
                                 std::vector<std::uint64_t>& steps) {
  std::vector<std::size_t> order = which;
  narrowest_first(shapes, order);
  const std::vector<RelaxedBound> found = relaxed_bounds(shapes, order, floor_left_, ran_out_with);
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
void Search::bound_only(const CostModel& cost, const std::vector<ShapeOn>& shapes,
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

// Raises `anywhere` (one per shape of `shapes`, of the whole cluster) with class passes of
// the shapes of several copies, in parallel, with equal parts of 1 / kClassShare of the
// effort (kClassShare), for their plans on parts of at least `used` devices.
void Search::class_bounds(const std::vector<ShapeOn>& shapes, int used,
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
    const PassBound classes =
        class_bound(*s.cost, s.shape, cutoff, share, limits(), narrowest_copy(s, used));
    if (classes.finished) found[j] = std::min(classes.least_bound, cutoff);
  });
  for (std::size_t j = 0; j < which.size(); ++j)
    anywhere[which[j]] = std::max(anywhere[which[j]], found[j]);
}

}  // namespace pe::detail::hybrid
