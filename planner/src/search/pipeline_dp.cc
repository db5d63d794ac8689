// Suffix dynamic program over (first state of the suffix, first free device offset).
// A cell keeps the Pareto set of suffix plans over
//   y    = fill_drain of the suffix,
//   x    = exposed all-reduce of the suffix, measured from its first stage's last backward
//          (x_s = max(AR_s, x_{s+1} - g_s - c_s) telescopes to evaluate.h's formula),
//   k    = stages in the suffix, capped at M (1F1B memory depends on min(M, k)),
//   head = the suffix's first stage sits on one machine in every copy (needed to know
//          whether the cut in front of it stays inside a machine).
// All four are monotone in the final cost or feasibility, so dominated entries can go.
#include "search/pipeline_dp.h"

#include <algorithm>
#include <vector>

#include "search/evaluate.h"
#include "search/layout.h"

namespace pe {
namespace {

constexpr double kSlack = 1e-12;  // relative tolerance so that ties survive the bound

struct Entry {
  Seconds y = 0, x = 0;
  int k = 0;
  bool head = false;
  std::size_t last = 0;   // last state of this entry's first stage
  int width = 0;          // its width
  int child = -1;         // entry index in the next cell, -1 for the final stage
};

bool dominates(const Entry& a, const Entry& b) {
  return a.y <= b.y && a.x <= b.x && a.k <= b.k && a.head >= b.head;
}

void insert(std::vector<Entry>& cell, const Entry& e) {
  for (const Entry& other : cell)
    if (dominates(other, e)) return;
  std::erase_if(cell, [&](const Entry& other) { return dominates(e, other); });
  cell.push_back(e);
}

class Dp {
 public:
  Dp(const CostModel& cost, const DpQuery& q)
      : cost_(cost), q_(q), layout_(cost.cluster(), q.replicas, q.replica_width),
        n_(cost.states()), w_(q.replica_width), cells_(n_ * w_),
        cap_(q.slot_cap), bound_(q.bound * (1 + kSlack)) {}

  std::optional<PipelineSpec> run() {
    for (std::size_t a = n_; a-- > 0;)
      for (int o = 0; o < w_; ++o)
        if (viable(a, o)) fill(a, o);
    return best();
  }

 private:
  std::vector<Entry>& cell(std::size_t a, int o) { return cells_[a * w_ + o]; }

  Seconds work(std::size_t first, std::size_t last) const {
    return cost_.forward(first, last, q_.micro_batch) + cost_.backward(first, last, q_.micro_batch);
  }

  // Lower bound on the fill_drain of the stages before state a on devices [0, o).
  Seconds prefix_bound(std::size_t a, int o) const {
    return a == 0 ? 0 : work(0, a - 1) / o;
  }

  // Necessary conditions: the prefix and the suffix fit their devices under the cap.
  bool viable(std::size_t a, int o) const {
    if ((a == 0) != (o == 0)) return false;
    if (a > 0 && work(0, a - 1) > cap_ * o) return false;
    return work(a, n_ - 1) <= cap_ * (w_ - o);
  }

  bool fits(Bytes weights, Bytes activations, int stages_from_here) const {
    int kept = in_flight(q_.schedule, 0, stages_from_here, q_.micro_batches);
    return weights + kept * activations <= cost_.cluster().device_memory;
  }

  void fill(std::size_t a, int o) {
    for (int r = 1; r <= w_ - o && r <= q_.micro_batch; ++r) widen(a, o, r);
  }

  void widen(std::size_t a, int o, int r);
  void extend(std::size_t a, int o, int r, std::size_t e, const StageTimes& t, Bytes weights,
              Bytes activations, bool cut_compact);
  std::optional<PipelineSpec> best();

  const CostModel& cost_;
  const DpQuery& q_;
  Layout layout_;
  std::size_t n_;
  int w_;
  std::vector<std::vector<Entry>> cells_;
  Seconds cap_, bound_;
  bool head_ = false;
};

// Every stage [a, e] on devices [o, o + r), for growing e until it stops fitting.
void Dp::widen(std::size_t a, int o, int r) {
  const double samples = device_samples(q_.micro_batch, r);
  const bool cut_compact = o + r < w_ && layout_.compact(o, r + 1);
  const bool ar_intra = layout_.all_replicas_compact(o, r);
  const Seconds before = prefix_bound(a, o);
  head_ = layout_.compact(o, r);
  CostModel::ExposedScan exposed(cost_, a, samples, r * q_.replicas, ar_intra);
  for (std::size_t e = a; e < n_; ++e) {
    StageTimes t;
    t.forward = cost_.forward(a, e, samples);
    t.backward = cost_.backward(a, e, samples);
    if (t.forward + t.backward > cap_ || before + t.forward + t.backward > bound_) break;
    const Bytes weights = cost_.weight_memory(a, e);
    const Bytes activations = cost_.activation_memory(a, e, samples);
    if (!fits(weights, activations, 1)) break;
    t.allreduce = exposed.extend_to(e);
    extend(a, o, r, e, t, weights, activations, cut_compact);
  }
}

// Adds stage [a, e] on [o, o + r) in front of every entry of the cell that follows it.
void Dp::extend(std::size_t a, int o, int r, std::size_t e, const StageTimes& t,
                Bytes weights, Bytes activations, bool cut_compact) {
  const Seconds before = prefix_bound(a, o);
  const int cap_k = q_.schedule == Schedule::GPipe ? 1 : q_.micro_batches;
  if (e + 1 == n_) {
    Entry fin{t.forward + t.backward, t.allreduce, 1, head_, e, r, -1};
    if (before + fin.y <= bound_) insert(cell(a, o), fin);
    return;
  }
  if (o + r >= w_) return;
  const std::vector<Entry>& next = cell(e + 1, o + r);
  for (std::size_t i = 0; i < next.size(); ++i) {
    const Entry& n = next[i];
    const Seconds c = cost_.transfer(cost_.crossing(e, q_.micro_batch), n.head && cut_compact);
    if (c > cap_ || !fits(weights, activations, n.k + 1)) continue;
    Entry entry{t.forward + t.backward + 2 * c + n.y, std::max(t.allreduce, n.x - t.backward - c),
                std::min(n.k + 1, cap_k), head_, e, r, static_cast<int>(i)};
    if (before + entry.y <= bound_) insert(cell(a, o), entry);
  }
}

std::optional<PipelineSpec> Dp::best() {
  const std::vector<Entry>& root = cell(0, 0);
  if (root.empty()) return std::nullopt;
  std::size_t pick = 0;
  for (std::size_t i = 1; i < root.size(); ++i)
    if (root[i].y + root[i].x < root[pick].y + root[pick].x) pick = i;
  PipelineSpec spec{q_.replicas, q_.replica_width, q_.micro_batch, q_.micro_batches,
                    q_.schedule, {}};
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

std::optional<PipelineSpec> best_pipeline(const CostModel& cost, const DpQuery& query) {
  if (cost.states() == 0 || query.replica_width < 1) return std::nullopt;
  return Dp(cost, query).run();
}

}  // namespace pe
