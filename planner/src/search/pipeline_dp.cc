// Suffix dynamic program over (first state of the suffix, first free device offset).
// A cell keeps, for each (k, head), the suffix plans not dominated in the fields of their
// SuffixBound (cost/path_bound.h):
//   y     = round_trip, the fill_drain of the suffix,
//   e     = worst, the largest path term of a stage, cut or pair of the suffix,
//   y + x = round_trip + exposed, the all-reduce term,
//   y + D = round_trip + drain, what follows an earlier stage's Q in the all-reduce term,
//   and head_work, after_x, forward_wave, backward_wave (each schedule uses two of them),
//   and the window cycles (1F1B: window, kWindows of them, 0 past the suffix's end),
//   delayed, after, max_pair, tail, last_drain and paced_after (1F1B: how late the warm-ups
//   of later stages make the first backward, how long after it the last backward can end,
//   the largest f + g of a stage, the cycle of the window of all stages but the last, how
//   much a later stage's last backwards lengthen the last round trip, and the later stages'
//   operations after their paced first backwards; path_bound.h),
//   k     = stages in the suffix, capped at M (in 1F1B memory, warm-up and the terms depend
//           on it; in GPipe nothing does, so there every k competes in one group: on
//           NASNet-A large's shape of 2 copies, 56 micro-batches of 2 at GBS 224 on 2 x 8
//           GPUs, the exact pass took 68 M steps instead of 106 M),
//   head  = the suffix's first stage sits on one machine in every copy (needed to know
//           whether the cut in front of it stays inside a machine; where no cut can, as on
//           single-GPU machines, or that link is as fast, exact passes leave it out of the
//           group: simplified GNMT-32's shape of 2 micro-batches of 64 at GBS 128 on 16
//           single-GPU machines took 1.19 G steps instead of 1.41 G), and its
//           tensor-parallel degree (the cut in front of it splits over as many links).
// Entry A dominates B (same group: k, head) when every one of these is no larger for A:
// prepending a stage (prepend_stage) adds a constant to y and maps the others through
// maxima of terms that grow with them (x through max(T, x - d); a warm-up's late, which
// falls as y grows, enters only sums with y: y + max(0, W - y) grows with both), so the
// order is kept all the way to the full plan, whose bound y + max(e, x) grows with y, e and
// y + x. Keeping only undominated entries is therefore exact.
// A timed pass (DpQuery::timed) compares entries by their suffix's simulated times instead
// (cost/suffix_timing.h: a max-plus map that prepending a stage composes, order-preserving
// too), kept in Timings beside the cells; its fields then only prune.
#include "search/pipeline_dp.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <memory>
#include <vector>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "search/dp_program.h"

namespace pe::detail {
namespace dp {

Dp::Dp(const CostModel& cost, const DpQuery& q)
    : cost_(cost),
      q_(q),
      layout_(cost.layout(q.replicas, q.replica_width)),
      n_(cost.states()),
      b_(q.relaxed && cost.chain() && q.device_class <= 1 && q.granule <= 1 && q.free_widths <= 0
             ? std::max(1, q.state_block)
             : 1),
      rows_(n_),
      w_(q.replica_width),
      g_(std::max(1, q.granule)),
      c_(std::max(1, q.device_class)),
      period_(q.free_widths > 0 && c_ == 1 && g_ == 1 ? q.free_widths : 0),
      slots_(period_ > 0 ? std::min(w_, period_) : (w_ + c_ - 1) / c_),
      intra_allreduce_(cost.cluster().network.intra >= cost.cluster().network.inter_allreduce),
      intra_transfer_(cost.cluster().network.intra >= cost.cluster().network.inter_p2p),
      compact_cuts_(cost.largest_machine() > 1 &&
                    cost.cluster().network.intra != cost.cluster().network.inter_p2p),
      largest_machine_(cost.largest_machine()),
      timed_(q.timed && !q.greedy && c_ == 1 && period_ == 0 &&
             (!q.relaxed ? timeable_within(q.timed_most, q.micro_batches, q.schedule)
              : b_ > 1   ? block_timeable(q.micro_batches, q.schedule)
                         : relaxed_timeable(q.micro_batches, q.schedule))),
      bound_(q.bound * (1 + kSlack)) {
  main_.limit = q.step_limit;
  blank_.m = timed_ ? q.micro_batches : 0;
  terms_.paced = terms_.paced && !q.greedy;  // a greedy pass ranks without it
  if (q.relaxed && q.buckets > 1 && std::isfinite(q.bound))
    bucketing_ = {q.bound / q.buckets, q.worst_buckets,
                  q.schedule == Schedule::GPipe ? q.micro_batches - 1.0 : 0.0,
                  q.bound / std::min(q.buckets, kCoarseBuckets),
                  q.micro_batches > kRelaxedTimedMicroBatches ? q.micro_batches / 2.0 : 0.0};
  if (b_ > 1) rows_ = blocks();
  floor_sends();
}

DpResult Dp::run() {
  const std::uint64_t cells =
      static_cast<std::uint64_t>(rows_) * static_cast<std::uint64_t>(slots_);
  if (!main_.spend(cells)) return {{}, main_.steps, true};
  cells_.resize(rows_ * static_cast<std::size_t>(slots_));
  briefs_.resize(cells_.size());
  next_followed_.assign((rows_ + 1) * static_cast<std::size_t>(slots_),
                        static_cast<std::uint32_t>(rows_));
  if (timed_) timings_.assign(cells_.size(), blank_);
  if (b_ > 1) {
    if (!main_.spend(n_)) return {{}, main_.steps, true};
    inside_cut_.assign(rows_, kInfinite);
    for (std::size_t a = 0; a < rows_; ++a)
      for (std::size_t j = first_of(a); j < last_of(a); ++j)
        inside_cut_[a] = std::min(inside_cut_[a], cost_.crossing(j, q_.micro_batch));
  }
  // A block pass's stages inside a block lead to a later cell of the same block.
  for (std::size_t a = rows_; a-- > 0 && !main_.stopped;) {
    if (q_.memory_limit > 0) main_.room = (q_.memory_limit - held_) / candidate_bytes_;
    main_.most = 0;
    fill_row(a);
    mark_followed(a);
    peak_ = std::max(peak_, held_ + main_.most);
    if (!main_.out_of_memory && !main_.stopped) held_ += row_bytes(a);
    if (main_.out_of_memory || (q_.memory_limit > 0 && held_ > q_.memory_limit))
      return out_of_memory();
    peak_ = std::max(peak_, held_);
  }
  if (main_.stopped) return {{}, main_.steps, true};
  // A class or free-width pass's entries stand for many plans at once, not one; a block
  // pass's plans are one of those of each entry (spec_from).
  DpResult result{q_.plans <= 0 || c_ > 1 || period_ > 0 ? std::vector<DpPlan>{} : best(),
                  main_.steps, false};
  result.bytes = peak_;
  for (const Entry& e : cell(0, 0))
    result.least_bound = std::min(result.least_bound, timings(0).rank(e));
  if (q_.enumerate > 0 && result.least_bound >= q_.enumerate_from &&
      result.least_bound <= q_.enumerate_bound)
    enumerate(result);
  return result;
}

// Sets next_followed() for row a, once its cells are filled.
void Dp::mark_followed(std::size_t a) {
  for (int o = 0; o < slots_; ++o) {
    const std::size_t at = static_cast<std::size_t>(o) * (rows_ + 1) + a;
    next_followed_[at] =
        cell(a, o).empty() ? next_followed_[at + 1] : static_cast<std::uint32_t>(a);
  }
}

// The bytes row a's cells hold (entries, briefs and timings, by capacity).
std::uint64_t Dp::row_bytes(std::size_t a) const {
  std::uint64_t bytes = 0;
  for (int o = 0; o < slots_; ++o) {
    const std::size_t i = index(a, o);
    bytes += cells_[i].capacity() * sizeof(Entry) + briefs_[i].capacity() * sizeof(Brief) +
             (timed_ ? timings_[i].at.capacity() * sizeof(Seconds) : 0);
  }
  return bytes;
}

// A pass stopped at its memory limit: every step it was allowed counts as spent.
DpResult Dp::out_of_memory() {
  DpResult result{{}, q_.step_limit, true};
  result.out_of_memory = true;
  return result;
}

// Cuts the states into blocks of about equal work (DpQuery::state_block: n / b_ of them),
// each of at least one state and at most 2 b_ (starts_); returns how many.
std::size_t Dp::blocks() {
  const std::size_t target = (n_ + static_cast<std::size_t>(b_) - 1) / static_cast<std::size_t>(b_);
  const Seconds total = work(0, n_ - 1);
  starts_.assign(1, 0);
  for (std::size_t i = 1; i < n_; ++i) {
    const Seconds done = work(0, i - 1);
    const bool full =
        done >= total * static_cast<double>(starts_.size()) / static_cast<double>(target);
    if (full || i - starts_.back() >= 2 * static_cast<std::size_t>(b_)) starts_.push_back(i);
  }
  starts_.push_back(n_);
  return starts_.size() - 1;
}

// The entries of cell (a, o).
void Dp::fill(Work& w, std::size_t a, int o) {
  w.timings.m = blank_.m;
  stages_from(w, a, o);
  w.most = std::max<std::uint64_t>(w.most, w.candidates.size() * candidate_bytes_);
  std::uint64_t steps = 0;
  if (q_.greedy)
    steps = keep_greedy(w.candidates, cell(a, o));
  else if (q_.relaxed)
    steps =
        keep_least(w.candidates, w.timings, cell(a, o), timings(index(a, o)), bucketing_, w.keys);
  else  // a comparison of two timings counts as timing_comparisons of two entries
    steps = keep_undominated(w.candidates, w.timings, cell(a, o), timings(index(a, o)),
                             timed_ ? 0 : q_.merged_fields) *
            (timed_ ? timing_comparisons(q_.micro_batches) : 1) / kComparisonsPerStep;
  w.spend(steps);
  w.timings.clear();
  std::vector<Brief>& briefs = briefs_[index(a, o)];
  for (const Entry& e : cell(a, o))
    briefs.push_back({e.bound.round_trip, e.bound.worst, e.bound.exposed, e.k(), e.t(), e.head});
}

// Tries every stage from state a on cell o (each goes to extend()). A one-stage plan (a =
// 0, which the loop of widen() stops short of) may be wider than a pipeline stage
// (max_stage_width).
void Dp::stages_from(Work& w, std::size_t a, int o) {
  if (a == 0 && starts(a, o).first == 0)
    for (int r = 1; r <= capped(max_stage_width(true, q_.micro_batch, w_)); ++r)
      offer_whole_model(w, r);
  if (c_ > 1) {
    // Classes o + d while their narrowest stage has devices to use.
    const int first = starts(a, o).first;
    for (int d = 0; class_widths(a, o, d).first <= parallelism(w_ - first) && !w.stopped; ++d)
      widen_classes(w, a, o, d);
  } else {
    for (int r = 1; r <= parallelism(w_ - o); ++r)
      if ((r % g_ == 0 || a > 0) &&
          !(q_.greedy && r % g_ == 0 && !std::has_single_bit(static_cast<unsigned>(r / g_))))
        widen(w, a, o, r);
  }
}

// Fills the viable cells of row a: in parallel, each with the Work of its thread, where more
// than one thread may run and the row before took at least kParallelRow steps; otherwise, and
// always in a block pass (whose stages inside a block lead to a later cell of the same row),
// one after another. Steps count as if the cells were filled one after another by offset: a cell
// that would have run out with what the cells before it left is filled again with that, and
// the pass stops there with the steps it would have taken, whatever the threads.
void Dp::fill_row(std::size_t a) {
  const std::uint64_t before = main_.steps;
  if (b_ > 1 || slots_ < 2 * g_ || row_steps_ < kParallelRow || threads_ < 2) {
    for (int i = 0; i < slots_; i += g_) {
      const int o = b_ > 1 ? slots_ - 1 - i : i;
      if (viable(a, o)) fill(main_, a, o);
    }
    row_steps_ = main_.steps - before;
    return;
  }
  if (!works_) works_ = std::make_unique<tbb::enumerable_thread_specific<Work>>();
  std::vector<int> offsets;
  for (int o = 0; o < slots_; o += g_)
    if (viable(a, o)) offsets.push_back(o);
  struct Tally {
    std::uint64_t steps = 0;
    bool stopped = false;
    std::uint64_t most = 0;  // Work::most
  };
  std::vector<Tally> tallies(offsets.size(), {0, true});  // a cell not filled: stopped
  const std::uint64_t room = main_.limit - main_.steps;
  std::atomic<std::uint64_t> row{0};
  auto fill_with = [&](std::uint64_t limit, int o, std::atomic<std::uint64_t>* shared) -> Work& {
    Work& w = works_->local();
    w.limit = limit, w.steps = 0, w.stopped = false, w.row = shared, w.shared = 0;
    w.room = main_.room, w.out_of_memory = false, w.most = 0;
    fill(w, a, o);
    if (shared) shared->fetch_add(w.steps - w.shared);
    return w;
  };
  // Each thread takes the next cell in order until the row's steps pass the pass's limit: the
  // cells filled are those before it, but for the few the threads had begun. Isolated: a
  // thread waiting for the row's cells takes none of the search's other tasks (a whole pass
  // of another shape), which would hold this pass up until it ends.
  std::atomic<std::size_t> next{0};
  const int tasks = std::min(threads_, static_cast<int>(offsets.size()));
  tbb::this_task_arena::isolate([&] {
    tbb::parallel_for(0, tasks, [&](int) {
      for (std::size_t j; row.load() <= room && (j = next++) < offsets.size();) {
        const Work& w = fill_with(room, offsets[j], &row);
        tallies[j] = {w.steps, w.stopped, w.most};
      }
    });
  });
  // One after another: a cell that stopped (by itself or with the row) or was not filled, or
  // took more than the cells before it left, is filled again with what they left.
  for (std::size_t j = 0; j < offsets.size() && !main_.stopped; ++j) {
    const Tally& t = tallies[j];
    if (!t.stopped && t.steps <= main_.limit - main_.steps) {
      main_.steps += t.steps;
      main_.most = std::max(main_.most, t.most);
      continue;
    }
    cell(a, offsets[j]).clear();
    briefs_[index(a, offsets[j])].clear();
    timings(index(a, offsets[j])).clear();
    const Work& w = fill_with(main_.limit - main_.steps, offsets[j], nullptr);
    main_.steps += w.steps;
    main_.stopped = w.stopped;
    main_.out_of_memory = w.out_of_memory;
    main_.most = std::max(main_.most, w.most);
  }
  row_steps_ = main_.steps - before;
}

}  // namespace dp

DpResult best_pipeline(const CostModel& cost, const DpQuery& query) {
  if (cost.states() == 0 || query.replica_width < 1) return {};
  return dp::Dp(cost, query).run();
}

}  // namespace pe::detail
