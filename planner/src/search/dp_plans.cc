// The plans of a pipeline dynamic program (dp_program.h) once its cells are filled: those of
// least bound, and an enumerating pass's plans within its bound.
#include "search/dp_program.h"

#include <algorithm>
#include <numeric>
#include <optional>

namespace pe::detail::dp {

// The complete plans of the first cell, least bound first (ties in the cell's order).
std::vector<DpPlan> Dp::best() {
  const std::vector<Entry>& root = cell(0, 0);
  std::vector<std::size_t> order(root.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return timings(0).rank(root[a]) < timings(0).rank(root[b]);
  });
  std::vector<DpPlan> plans;
  for (std::size_t i = 0; i < order.size() && static_cast<int>(i) < q_.plans; ++i)
    if (std::optional<PipelineSpec> spec = spec_from(order[i]))
      plans.push_back({std::move(*spec), timings(0).rank(root[order[i]])});
  return plans;
}

// The plan of the first cell's entry `pick`: each stage ends where its entry's does. In a block
// pass (DpQuery::state_block), one plan the entry stands for: where the next stage starts in the
// block a stage ends in, the stage ends in the middle of what that block has left; none where
// that leaves the next stage no state of the block.
std::optional<PipelineSpec> Dp::spec_from(std::size_t pick) const {
  PipelineSpec spec{q_.replicas,      q_.replica_width, q_.micro_batch,
                    q_.micro_batches, q_.schedule,      {}};
  std::size_t a = 0, first = 0;
  int o = 0, index = static_cast<int>(pick);
  while (index >= 0) {
    const Entry& e = cell(a, o)[index];
    std::size_t last = e.last;
    if (e.next_row < rows_ && first_of(e.next_row) <= e.last) {  // the next starts in its block
      last = (std::max(first, first_of(e.next_row)) + last_of(e.next_row)) / 2;
      if (last == last_of(e.next_row)) return std::nullopt;
    }
    spec.stages.push_back({first, last, o, e.width, e.variant});
    first = last + 1, a = e.next_row, o += e.width, index = e.child;
  }
  return spec;
}

// The least bound of the plans that start with prefix_ and then stage s: s is the last
// stage, or goes in front of an entry of the cell after it (which holds every suffix that
// can complete within the bound, or one no worse in every field), and prefix_ in front of
// that. Infinity when none fits memory (or DpQuery::max_stages).
Seconds Dp::completion(const Stage& s) const {
  Timings scratch = blank_;  // the timings of the entries built here
  auto with_prefix = [&](Entry e) {
    for (std::size_t i = prefix_.size(); i-- > 0;)
      e = prepend(prefix_[i], &e, send(prefix_[i], e), 0, scratch, scratch);
    return scratch.rank(e);
  };
  const int through = static_cast<int>(prefix_.size()) + 1;  // stages up to s
  if (through > most_stages_) return kInfinite;
  if (s.last + 1 == n_)
    return refused(s, 1) ? kInfinite : with_prefix(prepend(s, nullptr, 0, -1, blank_, scratch));
  const std::size_t at = index(s.last + 1, s.offset + s.width);
  Seconds least = kInfinite;
  for (const Entry& next : cells_[at]) {
    if (through + next.k() > most_stages_ || refused(s, std::min(next.k() + 1, q_.micro_batches)))
      continue;
    least = std::min(least, with_prefix(prepend(s, &next, send(s, next), 0, timings(at), scratch)));
  }
  return least;
}

// Depth first from state a on cell o, behind prefix_: every stage that can complete within
// the bound is followed to each plan it completes to (found_), least completion first; a plan
// found and simulated (DpQuery::time_plan) lowers the bound to its time. Where it stops, the
// least completion of the stages it did not follow bounds the plans it did not reach
// (frontier_); false where it stopped before its stages were all known, so that its caller
// bounds them by the stage that led here.
bool Dp::explore(Work& w, std::size_t a, int o) {
  children_.clear();
  stages_from(w, a, o);
  if (w.stopped) return false;
  std::vector<Child> children = std::move(children_);
  std::stable_sort(children.begin(), children.end(),
                   [](const Child& x, const Child& y) { return x.least < y.least; });
  auto unreached = [&](std::size_t from) {
    if (from < children.size()) frontier_ = std::min(frontier_, children[from].least);
    return true;
  };
  for (std::size_t i = 0; i < children.size(); ++i) {
    const auto& [s, least] = children[i];
    if (least > bound_) return true;  // slower than a plan found since (time_plan)
    if (!w.spend(prefix_.size() + 1)) return unreached(i);
    const std::size_t mark = signature_.size();
    sign(s);
    // A stage whose run of stages reached its next cell before adds no plan the simulator
    // can tell apart (one that ran out of steps there was not followed).
    bool followed = true;
    if (first_visit(w, s.last + 1, s.offset + s.width)) {
      if (s.last + 1 < n_) {
        prefix_.push_back(s);
        followed = explore(w, s.last + 1, s.offset + s.width);
        prefix_.pop_back();
      } else {
        found_.push_back({plan_ending(s), least});  // s ends the plan: its only completion
        if (q_.time_plan)
          if (const std::optional<Seconds> time = q_.time_plan(found_.back().spec);
              time && *time * (1 + kSlack) < bound_) {
            bound_ = *time * (1 + kSlack);
            fastest_found_ = found_.size() - 1;
          }
        if (found_.size() > static_cast<std::size_t>(q_.enumerate_plans)) w.stopped = true;
      }
    } else {
      followed = !w.stopped;
    }
    signature_.resize(mark);
    if (w.stopped) return unreached(followed ? i + 1 : i);
  }
  return true;
}

// The plan of prefix_ and then s, its last stage.
PipelineSpec Dp::plan_ending(const Stage& s) const {
  PipelineSpec spec{q_.replicas,      q_.replica_width, q_.micro_batch,
                    q_.micro_batches, q_.schedule,      {}};
  for (const Stage& t : prefix_)
    spec.stages.push_back({t.first, t.last, t.offset, t.width, t.variant});
  spec.stages.push_back({s.first, s.last, s.offset, s.width, s.variant});
  return spec;
}

// Appends what stage s gives the plans through it: its times, the bytes and links of the cut
// behind it, its variant, width and memory. Two runs of stages of equal signatures reach the
// same cell with the same completions, each the same plan to the simulator (its stage times,
// pe::PipelineShape) and to memory: states of no work, weights or activations whose cuts
// carry the same bytes (an identity, a reshape) may go to either side of a cut.
void Dp::sign(const Stage& s) {
  const double crossing = s.last + 1 < n_ ? cost_.crossing(s.last, q_.micro_batch) : 0;
  signature_.insert(signature_.end(),
                    {s.times.forward, s.times.backward, s.times.allreduce, crossing,
                     static_cast<double>(s.variant.tensor_parallel),
                     static_cast<double>(s.variant.recompute), static_cast<double>(s.width),
                     static_cast<double>(s.head), static_cast<double>(s.cut_compact), s.weights,
                     s.activations, s.memory, s.plain_weights, s.plain_activations});
}

// Whether the stages signed so far (signature_) reach cell (a, o) for the first time; a
// plan ends at (n, o). Counts a step.
bool Dp::first_visit(Work& w, std::size_t a, int o) {
  if (!w.spend(1)) return false;
  std::vector<double> key{static_cast<double>(a), static_cast<double>(o)};
  key.insert(key.end(), signature_.begin(), signature_.end());
  return visited_.insert(std::move(key)).second;
}

// DpQuery::enumerate, once the cells are filled: when it finishes within its steps and
// plans, the result's plans are the ones it found and those of the pass beyond its bound.
void Dp::enumerate(DpResult& result) {
  const auto factor = static_cast<std::uint64_t>(q_.enumerate);
  const std::uint64_t steps = main_.steps;
  const std::uint64_t room = std::max(q_.step_limit, q_.enumerate_step_limit) - steps;
  main_.limit = steps + (steps > room / factor ? room : steps * factor);
  // The cells hold the suffixes that can complete within the pass's bound, no more.
  Seconds within = std::min(q_.enumerate_bound, q_.bound);
  bound_ = within * (1 + kSlack);
  enumerating_ = true;
  const bool known = explore(main_, 0, 0);
  within = std::min(within, bound_ / (1 + kSlack));  // a plan's time, where lower (time_plan)
  result.enumeration_steps = main_.steps - result.steps;
  result.steps = main_.steps;
  if (main_.stopped) {
    // The first plans it found join the pass's: where many plans share the least bound
    // (stages with slack whose cuts may move), they are others of them. Every other plan is
    // one it did not reach (frontier_), one found after those, or beyond the bound.
    Seconds unlisted = known ? std::min(frontier_, within) : result.least_bound;
    auto listed = std::min(found_.size(), static_cast<std::size_t>(q_.plans));
    // The fastest plan found (time_plan) is listed too.
    if (fastest_found_ >= listed && fastest_found_ < found_.size()) {
      std::rotate(found_.begin() + static_cast<std::ptrdiff_t>(listed),
                  found_.begin() + static_cast<std::ptrdiff_t>(fastest_found_),
                  found_.begin() + static_cast<std::ptrdiff_t>(fastest_found_) + 1);
      ++listed;
    }
    for (std::size_t i = listed; i < found_.size(); ++i)
      unlisted = std::min(unlisted, found_[i].lower_bound);
    result.unlisted_bound = std::max(result.least_bound, unlisted);
    found_.resize(listed);
    result.plans.insert(result.plans.end(), found_.begin(), found_.end());
    return;
  }
  // The pass's own plans beyond the bound stay too (ties in the same order; those found before
  // a plan's time lowered it twice, which the candidates take as one).
  for (DpPlan& plan : result.plans)
    if (plan.lower_bound > bound_) found_.push_back(std::move(plan));
  std::stable_sort(found_.begin(), found_.end(),
                   [](const DpPlan& a, const DpPlan& b) { return a.lower_bound < b.lower_bound; });
  result.plans = std::move(found_);
  result.enumerated = true;
  result.unlisted_bound = within;  // every plan within it is listed, or a twin of one
}

}  // namespace pe::detail::dp
