// Suffix dynamic program over (first state of the suffix, first free device offset).
// A cell keeps, for each (k, head), the suffix plans not dominated in
//   y    = fill_drain of the suffix,
//   x    = exposed all-reduce of the suffix, measured from its first stage's last backward
//          (x_s = max(AR_s, x_{s+1} - g_s - c_s) telescopes to evaluate.h's formula),
//   k    = stages in the suffix, capped at M (memory and the 1F1B round trip depend on it),
//   head = the suffix's first stage sits on one machine in every copy (needed to know
//          whether the cut in front of it stays inside a machine).
// Entry A dominates B (same k, head) when y_A <= y_B and y_A + x_A <= y_B + x_B: prepending
// a stage adds a constant to y and maps x through max(AR, x - d), which is monotone and
// 1-Lipschitz, so the order is kept all the way to the full plan, whose cost grows with y
// and with y + x. Keeping only undominated entries is therefore exact.
#include "search/pipeline_dp.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

#include "cost/evaluate.h"
#include "cost/layout.h"
#include "cost/stage_samples.h"

namespace pe::detail {
namespace {

constexpr double kSlack = 1e-12;  // relative tolerance so that ties survive the bound

struct Entry {
  Seconds y = 0, x = 0;
  int k = 0;
  bool head = false;
  std::size_t last = 0;  // last state of this entry's first stage
  int width = 0;         // its width
  int child = -1;        // entry index in the next cell, -1 for the final stage
};

// Keeps the undominated candidates, in a deterministic order.
void keep_undominated(std::vector<Entry>& candidates, std::vector<Entry>& cell) {
  // A total order, so the result does not depend on how candidates arrived.
  std::sort(candidates.begin(), candidates.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.k, b.head, a.y, a.x, a.last, a.width, a.child) <
           std::tie(b.k, a.head, b.y, b.x, b.last, b.width, b.child);
  });
  for (std::size_t i = 0; i < candidates.size();) {
    std::size_t j = i;
    Seconds best_total = std::numeric_limits<Seconds>::infinity();
    for (; j < candidates.size() && candidates[j].k == candidates[i].k &&
           candidates[j].head == candidates[i].head;
         ++j)
      if (candidates[j].y + candidates[j].x < best_total) {
        best_total = candidates[j].y + candidates[j].x;
        cell.push_back(candidates[j]);
      }
    i = j;
  }
  candidates.clear();
}

// One stage being placed: states [first, last] on devices [offset, offset + width).
struct Stage {
  std::size_t first = 0, last = 0;
  int offset = 0, width = 0;
  StageTimes times;
  Bytes weights = 0, activations = 0;
  bool head = false;         // the stage sits on one machine in every copy
  bool cut_compact = false;  // it and the next device share a machine in every copy
};

class Dp {
 public:
  Dp(const CostModel& cost, const DpQuery& q)
      : cost_(cost),
        q_(q),
        layout_(cost.cluster(), q.replicas, q.replica_width),
        n_(cost.states()),
        w_(q.replica_width),
        gpipe_(q.schedule == Schedule::GPipe),
        cap_(gpipe_ ? q.forward_cap + q.backward_cap : q.slot_cap),
        cut_cap_(gpipe_ ? std::min(q.forward_cap, q.backward_cap) : q.slot_cap),
        bound_(q.bound * (1 + kSlack)),
        cap_k_(q.schedule == Schedule::GPipe ? 1 : q.micro_batches) {}

  DpResult run() {
    const std::uint64_t cells = static_cast<std::uint64_t>(n_) * static_cast<std::uint64_t>(w_);
    if (!spend(cells)) return {std::nullopt, steps_, true};
    cells_.resize(n_ * w_);
    for (std::size_t a = n_; a-- > 0 && !stopped_;)
      for (int o = 0; o < w_; ++o)
        if (viable(a, o)) fill(a, o);
    if (stopped_) return {std::nullopt, steps_, true};
    return {best(), steps_, false};
  }

 private:
  std::vector<Entry>& cell(std::size_t a, int o) { return cells_[a * w_ + o]; }

  // Counts work against the step limit; false (and the pass stops) once it is used up.
  bool spend(std::uint64_t steps) {
    if (stopped_ || steps > q_.step_limit - steps_) return !(stopped_ = true);
    steps_ += steps;
    return true;
  }

  Seconds work(std::size_t first, std::size_t last) const {
    return cost_.forward(first, last, q_.micro_batch) + cost_.backward(first, last, q_.micro_batch);
  }

  // Most devices one pipeline stage on `devices` can use: a stage of width r takes at least
  // 1/r of its one-device time.
  int parallelism(int devices) const {
    return capped(max_stage_width(false, q_.micro_batch, devices));
  }
  // A width within the query's max_stage_width (none when it is 0).
  int capped(int width) const {
    return q_.max_stage_width > 0 ? std::min(width, q_.max_stage_width) : width;
  }

  // The stage_samples of a stage on r devices; a copy's share is b x M (the shapes searched
  // here divide it evenly).
  StageSamples samples_on(bool one_stage, int r) const {
    return stage_samples(one_stage, q_.micro_batch * q_.micro_batches, q_.micro_batch,
                         q_.micro_batches, r);
  }

  // Lower bound on the fill_drain of the stages before state a on devices [0, o): each
  // stage's f + g is at least its work over its width, and no width exceeds parallelism(o).
  Seconds prefix_bound(std::size_t a, int o) const {
    return a == 0 ? 0 : work(0, a - 1) / parallelism(o);
  }

  bool stage_fits_caps(const StageTimes& t) const {
    if (gpipe_) return t.forward <= q_.forward_cap && t.backward <= q_.backward_cap;
    return t.forward + t.backward <= cap_;
  }

  // Necessary conditions for a cell to be part of a plan: the states before a fit devices
  // [0, o) and the rest fit [o, W) under the caps (r devices do at least r times a stage's
  // time of work), and the smallest fill_drain this split allows is within the bound.
  bool viable(std::size_t a, int o) const {
    if ((a == 0) != (o == 0)) return false;
    const double b = q_.micro_batch;
    const Seconds pf = a ? cost_.forward(0, a - 1, b) : 0, pb = a ? cost_.backward(0, a - 1, b) : 0;
    const Seconds sf = cost_.forward(a, n_ - 1, b), sb = cost_.backward(a, n_ - 1, b);
    const int rest = w_ - o;
    if (gpipe_ && (pf > q_.forward_cap * o || pb > q_.backward_cap * o ||
                   sf > q_.forward_cap * rest || sb > q_.backward_cap * rest))
      return false;
    if (pf + pb > cap_ * o || sf + sb > cap_ * rest) return false;
    // From state 0 a one-stage plan may use all `rest` devices (fill()).
    return prefix_bound(a, o) + (sf + sb) / capped(max_stage_width(a == 0, q_.micro_batch, rest)) <=
           bound_;
  }

  bool fits(const Stage& s, int stages_from_here) const {
    const int kept = in_flight(q_.schedule, 0, stages_from_here, q_.micro_batches);
    return s.weights + kept * s.activations <= cost_.cluster().device_memory;
  }

  // A one-stage plan (a = 0, which the loop of widen() stops short of) may be wider than
  // a pipeline stage (max_stage_width).
  void fill(std::size_t a, int o) {
    if (a == 0)
      for (int r = 1; r <= capped(max_stage_width(true, q_.micro_batch, w_)); ++r)
        offer_whole_model(r);
    for (int r = 1; r <= parallelism(w_ - o); ++r) widen(a, o, r);
    keep_undominated(candidates_, cell(a, o));
  }

  void widen(std::size_t a, int o, int r);
  bool try_stage(Stage& s, const StageSamples& samples, CostModel::ExposedScan& exposed);
  void offer_whole_model(int r);
  void extend(const Stage& s);
  void offer(const Stage& s, const Entry& entry);
  std::optional<PipelineSpec> best();

  const CostModel& cost_;
  const DpQuery& q_;
  Layout layout_;
  std::size_t n_;
  int w_;
  std::vector<std::vector<Entry>> cells_;
  std::vector<Entry> candidates_;
  bool gpipe_;
  Seconds cap_, cut_cap_, bound_;
  int cap_k_;
  std::uint64_t steps_ = 0;
  bool stopped_ = false;
};

// Every stage [a, e] on devices [o, o + r): in a chain for growing e until it stops fitting
// (stages only grow with e); otherwise for every e whose cut contains state a - 1's.
void Dp::widen(std::size_t a, int o, int r) {
  const StageSamples samples = samples_on(false, r);
  const bool ar_intra = layout_.all_replicas_compact(o, r);
  CostModel::ExposedScan exposed(cost_, a, samples.timed, r * q_.replicas, ar_intra);
  Stage s{a, a, o, r, {}, 0, 0, layout_.compact(o, r), o + r < w_ && layout_.compact(o, r + 1)};
  const std::size_t end = a == 0 ? n_ - 1 : n_;  // the whole model is offer_whole_model's
  if (cost_.chain()) {
    for (s.last = a; s.last < end && spend(1); ++s.last)
      if (!try_stage(s, samples, exposed)) break;
    return;
  }
  if (a == 0) {
    for (s.last = 0; s.last < end && spend(1); ++s.last) try_stage(s, samples, exposed);
    return;
  }
  for (const std::uint32_t last : cost_.later(a - 1)) {
    if (!spend(1)) return;
    s.last = last;
    try_stage(s, samples, exposed);
  }
}

// Offers stage s (its first, last, offset and width set) to extend(); false when it breaks
// a cap, the bound or memory, which in a chain every longer stage from s.first does too.
bool Dp::try_stage(Stage& s, const StageSamples& samples, CostModel::ExposedScan& exposed) {
  s.times.forward = cost_.forward(s.first, s.last, samples.timed);
  s.times.backward = cost_.backward(s.first, s.last, samples.timed);
  const Seconds compute = s.times.forward + s.times.backward;
  if (!stage_fits_caps(s.times) || prefix_bound(s.first, s.offset) + compute > bound_) return false;
  s.weights = cost_.weight_memory(s.first, s.last);
  s.activations = cost_.activation_memory(s.first, s.last, samples.memory);
  if (!fits(s, 1)) return false;
  s.times.allreduce = exposed.extend_to(s.last);
  extend(s);
  return true;
}

// A stage of every state on r devices is a one-stage plan, with its compute and memory
// from stage_samples, as evaluate() has it.
void Dp::offer_whole_model(int r) {
  if (!spend(n_)) return;
  const std::size_t last = n_ - 1;
  const StageSamples samples = samples_on(true, r);
  const bool ar_intra = layout_.all_replicas_compact(0, r);
  Stage s{0, last, 0, r, {}, 0, 0, layout_.compact(0, r), r < w_ && layout_.compact(0, r + 1)};
  s.times.forward = cost_.forward(0, last, samples.timed);
  s.times.backward = cost_.backward(0, last, samples.timed);
  if (!stage_fits_caps(s.times) || s.times.forward + s.times.backward > bound_) return;
  s.weights = cost_.weight_memory(0, last);
  s.activations = cost_.activation_memory(0, last, samples.memory);
  if (!fits(s, 1)) return;
  s.times.allreduce = cost_.exposed_allreduce(0, last, samples.timed, r * q_.replicas, ar_intra);
  extend(s);
}

// Puts stage s in front of every entry of the cell that follows it.
void Dp::extend(const Stage& s) {
  const StageTimes& t = s.times;
  if (s.last + 1 == n_) {
    offer(s, {t.forward + t.backward, t.allreduce, 1, s.head, s.last, s.width, -1});
    return;
  }
  if (s.offset + s.width >= w_) return;
  // The next cell is sorted by (k, head, y) and each group's y + x falls as y grows; after
  // adding this stage a group's y + x may rise again, and such entries are dominated by an
  // earlier one of the same group, so only new minima are offered.
  const std::vector<Entry>& next = cell(s.last + 1, s.offset + s.width);
  if (!spend(next.size())) return;
  const Bytes crossing = cost_.crossing(s.last, q_.micro_batch);
  Seconds group_best = 0;
  for (std::size_t i = 0; i < next.size(); ++i) {
    const Entry& n = next[i];
    const bool new_group = i == 0 || n.k != next[i - 1].k || n.head != next[i - 1].head;
    const Seconds c = cost_.transfer(crossing, n.head && s.cut_compact);
    if (c > cut_cap_) continue;
    Entry e{t.forward + t.backward + 2 * c + n.y,
            std::max(t.allreduce, n.x - t.backward - c),
            std::min(n.k + 1, cap_k_),
            s.head,
            s.last,
            s.width,
            static_cast<int>(i)};
    if (!new_group && e.y + e.x >= group_best) continue;
    group_best = e.y + e.x;
    offer(s, e);
  }
}

// Keeps a candidate that fits memory, the bound and, under 1F1B, the round trip: a stage
// with k < M stages from it to the end starts micro-batch m + k only after micro-batch m's
// backward came back, so the slot is at least the suffix's fill_drain / k.
void Dp::offer(const Stage& s, const Entry& entry) {
  const Seconds before = prefix_bound(s.first, s.offset);
  if (before + entry.y > bound_) return;
  if (!fits(s, entry.k)) return;
  if (!gpipe_ && entry.k < q_.micro_batches && entry.y > cap_ * entry.k) return;
  candidates_.push_back(entry);
}

std::optional<PipelineSpec> Dp::best() {
  const std::vector<Entry>& root = cell(0, 0);
  if (root.empty()) return std::nullopt;
  std::size_t pick = 0;
  for (std::size_t i = 1; i < root.size(); ++i)
    if (root[i].y + root[i].x < root[pick].y + root[pick].x) pick = i;
  PipelineSpec spec{q_.replicas,      q_.replica_width, q_.micro_batch,
                    q_.micro_batches, q_.schedule,      {}};
  std::size_t a = 0;
  int o = 0, index = static_cast<int>(pick);
  while (index >= 0) {
    const Entry& e = cell(a, o)[index];
    spec.stages.push_back({a, e.last, o, e.width});
    a = e.last + 1, o += e.width, index = e.child;
  }
  return spec;
}

}  // namespace

DpResult best_pipeline(const CostModel& cost, const DpQuery& query) {
  if (cost.states() == 0 || query.replica_width < 1) return {};
  return Dp(cost, query).run();
}

}  // namespace pe::detail
