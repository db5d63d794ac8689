// The pipeline dynamic program (pipeline_dp.cc explains it): one pass over the cells (first
// state of a suffix, first free device) of one pipeline shape.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>

#include "cost/cost_model.h"
#include "cost/layout.h"
#include "cost/stage_samples.h"
#include "cost/stage_variants.h"
#include "cost/suffix_timing.h"
#include "search/dp_cell.h"
#include "search/dp_entry.h"
#include "search/pipeline_dp.h"

namespace pe::detail::dp {

constexpr double kSlack = 1e-12;  // relative tolerance so that ties survive the bound
// Comparisons of two entries that count as one step: a comparison costs about a
// nanosecond, a stage tried or an entry extended ten to thirty.
constexpr std::uint64_t kComparisonsPerStep = 8;
// A row of cells is filled in parallel (Dp::fill_row) when the last one took at least this
// many steps (about a millisecond). Below it the tasks cost more than they save where the
// shapes' passes already keep the threads busy: with 10,000 the default sweeps of every
// bundled profile on 2 x 8 GPUs took 6 % longer on two threads, with this 3 %, against 25 to
// 30 % less on one point of VGG-19 on 256 GPUs or GNMT-16 on 64 (bench/README.md, "Rows of
// cells in parallel").
constexpr std::uint64_t kParallelRow = 1 << 16;
// Its cells add their steps to the row's every this many steps, and stop once the row's pass
// the pass's limit.
constexpr std::uint64_t kSharedSteps = 1 << 16;

// One stage being placed: states [first, last] on devices [offset, offset + width) (in a
// class pass, DpQuery::device_class, on classes [offset, offset + width) of devices).
struct Stage {
  std::size_t first = 0, last = 0;
  int offset = 0, width = 0;
  int start = 0;  // the device it starts on (in a class pass the last its class allows)
  StageTimes times;
  Bytes weights = 0, activations = 0;  // per device: weights + working, per micro-batch
  bool head = false;                   // the stage sits on one machine in every copy
  bool cut_compact = false;            // it and the next device share a machine in every copy
  StageVariant variant;
  Bytes memory = 0;  // of its smallest GPU
  // A recomputing stage: the memory of the same stage without recomputation (which is
  // faster, so preferred wherever it fits).
  Bytes plain_weights = 0, plain_activations = 0;
  // The least first state of the stages it stands for (prefix_bound), and the row of the cell
  // after it (rows_ when it is the last stage); in a block pass (DpQuery::state_block) the
  // least bytes of their cuts, and whether it stands for stages inside one block (no work).
  std::size_t from = 0, next = 0;
  Bytes cut = 0;
  bool inside = false;
};

// One pass (best_pipeline, pipeline_dp.h): fills the cells from the last state to the first,
// each with the entries of the stages tried from it (extend), kept by what the query asks
// (dp_cell.h), and returns the plans of the first cell.
class Dp {
 public:
  Dp(const CostModel& cost, const DpQuery& q);

  DpResult run();

 private:
  std::vector<Entry>& cell(std::size_t a, int o) { return cells_[index(a, o)]; }
  // The timings of cell i: in a pass that is not timed, blank_ (never written: its entries
  // have none), so that its cells cost nothing more.
  Timings& timings(std::size_t i) { return timed_ ? timings_[i] : blank_; }
  const Timings& timings(std::size_t i) const { return timed_ ? timings_[i] : blank_; }
  const std::vector<Entry>& cell(std::size_t a, int o) const { return cells_[index(a, o)]; }
  std::size_t index(std::size_t a, int o) const {
    return a * static_cast<std::size_t>(slots_) + static_cast<std::size_t>(o);
  }
  // The cell (of the next row) after stage s: where its devices end (in a free-width pass,
  // the position of that device; slots_ or more: the copy has none left).
  int cell_after(const Stage& s) const {
    return period_ > 0 ? (s.offset + s.width) % period_ : s.offset + s.width;
  }

  // The states of row a: state a, or in a block pass (DpQuery::state_block) block a.
  std::size_t first_of(std::size_t a) const { return b_ > 1 ? starts_[a] : a; }
  std::size_t last_of(std::size_t a) const { return b_ > 1 ? starts_[a + 1] - 1 : a; }

  // The devices [first, second] a stage of row a in cell o may start on: device o (in a
  // class pass, one of class o; in a free-width pass, o or a later device of the copy);
  // device 0 for state 0 and no other state (in a block pass, any device for the first
  // block, whose later states may start a stage).
  std::pair<int, int> starts(std::size_t a, int o) const {
    if (a == 0 && b_ == 1) return o == 0 ? std::pair{0, 0} : std::pair{1, 0};
    if (period_ > 0) return {std::max(1, o), w_ - 1};
    return {a == 0 ? o * c_ : std::max(1, o * c_), std::min(o * c_ + c_ - 1, w_ - 1)};
  }

  // The work of states [first, last] for one micro-batch on the fastest GPU.
  Seconds work(std::size_t first, std::size_t last) const {
    return (cost_.forward(first, last, q_.micro_batch) +
            cost_.backward(first, last, q_.micro_batch)) /
           cost_.fastest();
  }

  // Most devices one pipeline stage on `devices` can use: a stage of width r takes at least
  // 1/r of its one-device time.
  int parallelism(int devices) const {
    return capped(max_stage_width(false, q_.micro_batch, devices, cost_.max_tensor_parallel()));
  }
  // A width within the query's max_stage_width (none when it is 0).
  int capped(int width) const {
    return q_.max_stage_width > 0 ? std::min(width, q_.max_stage_width) : width;
  }

  // The stage_samples of a stage of r data-parallel replicas; a copy's share is b x M (the
  // shapes searched here divide it evenly).
  StageSamples samples_on(bool one_stage, int r) const {
    return stage_samples(one_stage, q_.micro_batch * q_.micro_batches, q_.micro_batch,
                         q_.micro_batches, r);
  }

  bool fits(const Stage& s, int stages_from_here) const {
    return fits(s.weights, s.activations, s.memory, stages_from_here);
  }
  bool fits(Bytes weights, Bytes activations, Bytes memory, int stages_from_here) const {
    const int kept = in_flight(q_.schedule, 0, stages_from_here, q_.micro_batches);
    return weights + kept * activations <= memory;
  }
  // A recomputing stage is slower than the same stage without recomputation, so it only
  // counts where that one does not fit.
  bool needless(const Stage& s, int stages_from_here) const {
    return s.variant.recompute &&
           fits(s.plain_weights, s.plain_activations, s.memory, stages_from_here);
  }
  // Whether a stage with this many stages from it on is refused on memory alone: it does
  // not fit, or it recomputes where it need not.
  bool refused(const Stage& s, int stages_from_here) const {
    return !fits(s, stages_from_here) || needless(s, stages_from_here);
  }

  // One variant of the stages from a state on a set of devices, as their last state grows.
  struct Trial {
    StageVariant variant;
    CostModel::Place place;
    StageSamples samples;
    CostModel::ExposedScan exposed;
    int reducers = 1;
    bool ar_intra = false;    // its data-parallel GPUs all share one machine
    bool live = true;         // a chain: no shorter stage broke the bound or memory
    int memory_reducers = 1;  // reducers for its weight memory (a class pass: the most)
    // A block pass: the largest origin over the first block's states, and the largest reach
    // so far over the stage's states up to `reached` (ExposedScan::reach).
    Seconds origin = 0, reach = 0;
    std::size_t reached = 0;
  };
  // What filling cells changes: scratch space, reused, and the steps spent against a limit.
  // The cells of a row are filled in parallel, each with the Work of its thread (fill_row).
  struct Work {
    std::vector<Entry> candidates;
    std::vector<Trial> trials;           // trials()' answer
    std::vector<StageVariant> variants;  // its variants
    std::vector<LeastKey> keys;          // keep_least's scratch
    Timings timings;                     // the candidates' (a timed pass)
    std::uint64_t limit = 0, steps = 0;  // steps allowed and spent
    bool stopped = false;
    // The candidates a cell may have (of what DpQuery::memory_limit leaves the rows filled
    // before), and whether one had more (the work then stops too).
    std::size_t room = std::numeric_limits<std::size_t>::max();
    bool out_of_memory = false;
    std::uint64_t most = 0;  // the most bytes a cell's candidates took (since the row began)
    // A cell of a row filled in parallel: the steps of all the row's cells, to which it adds
    // its own every kSharedSteps; it stops once they pass its limit (fill_row).
    std::atomic<std::uint64_t>* row = nullptr;
    std::uint64_t shared = 0;  // its steps added to *row
    // The last in_front() asked for (try_stage): every stage a cell tries starts at the same
    // state and device, so it asks the same.
    std::size_t front_state = std::numeric_limits<std::size_t>::max();
    int front_device = 0;
    InFront front;
    // Counts work against the limit; false (and the work stops) once it is used up.
    bool spend(std::uint64_t n) {
      if (stopped || n > limit - steps) return !(stopped = true);
      steps += n;
      return !row || steps - shared < kSharedSteps || share();
    }
    bool share() {
      const std::uint64_t all = row->fetch_add(steps - shared) + (steps - shared);
      shared = steps;
      return !(stopped = all > limit);
    }
  };

  // The rows of cells, filled from the last state (pipeline_dp.cc).
  void fill_row(std::size_t a);
  void fill(Work& w, std::size_t a, int o);
  void stages_from(Work& w, std::size_t a, int o);
  std::size_t blocks();
  std::uint64_t row_bytes(std::size_t a) const;
  DpResult out_of_memory();

  // Cells and stages no plan within the bound passes through (dp_pruning.cc).
  InFront in_front(std::size_t a, int o) const;
  // The least round trip of the stages before state a on devices [0, o) (InFront::trip).
  Seconds prefix_bound(std::size_t a, int o) const { return in_front(a, o).trip(); }
  Seconds pace(std::size_t first, std::size_t last, int devices) const;
  Seconds send_floor(std::size_t a, int o) const;
  void floor_sends();
  bool busy_within_bound(Seconds per_micro_batch) const;
  bool viable(std::size_t a, int o) const;
  bool reachable(std::size_t a, int first) const;

  // The stages tried from a cell and the entries they make (dp_stages.cc).
  std::vector<Trial>& trials(Work& w, std::size_t a, int o, int r, bool one_stage);
  std::pair<int, int> class_widths(std::size_t a, int o, int d) const;
  std::vector<Trial>& class_trials(Work& w, std::size_t a, int narrowest, int widest,
                                   bool one_stage, bool head);
  bool split(int first, int last) const;
  void widen(Work& w, std::size_t a, int o, int r);
  void widen_classes(Work& w, std::size_t a, int o, int d);
  void grow(Work& w, Stage& s, std::vector<Trial>& variants);
  void grow_blocks(Work& w, Stage& s, std::vector<Trial>& variants);
  bool try_variants(Work& w, Stage& s, std::vector<Trial>& variants, std::uint64_t& unfollowed);
  bool try_trials(Work& w, Stage& s, std::vector<Trial>& variants);
  bool count_unfollowed(Work& w, std::size_t n, std::uint64_t& unfollowed);
  // The first row from `row` on whose cell at device `o` holds an entry (a row filled: rows
  // after the one being filled), or rows_ (a stage that ends the model): next_followed_.
  std::size_t next_followed(std::size_t row, int o) const {
    if (row >= rows_ || o >= slots_) return rows_;
    return next_followed_[static_cast<std::size_t>(o) * (rows_ + 1) + row];
  }
  void mark_followed(std::size_t a);
  Seconds block_exposed(const Stage& s, Trial& trial) const;
  bool try_stage(Work& w, Stage& s, Trial& trial);
  void offer_whole_model(Work& w, int r);
  Entry prepend(const Stage& s, const Entry* next, Seconds send, int index, const Timings& after,
                Timings& to) const;
  void extend(Work& w, const Stage& s, const InFront& front);
  bool offer(Work& w, const Entry& entry, const InFront& front);
  Seconds send(const Stage& s, const Entry& next) const;

  // The plans of the first cell, and an enumerating pass's (dp_plans.cc).
  std::vector<DpPlan> best();
  std::optional<PipelineSpec> spec_from(std::size_t pick) const;
  Seconds completion(const Stage& s) const;
  bool explore(Work& w, std::size_t a, int o);
  PipelineSpec plan_ending(const Stage& s) const;
  void sign(const Stage& s);
  bool first_visit(Work& w, std::size_t a, int o);
  void enumerate(DpResult& result);

  const CostModel& cost_;
  const DpQuery& q_;
  Layout layout_;
  std::size_t n_;
  int b_;             // DpQuery::state_block (1 but in a relaxed pass on a chain, devices 1)
  std::size_t rows_;  // rows of cells: states, or blocks of b_ states
  int w_;
  int g_;       // DpQuery::granule
  int c_;       // DpQuery::device_class
  int period_;  // DpQuery::free_widths (0: not a free-width pass)
  int slots_;   // cells a state: W / c (a free-width pass: positions, at most the period)
  // Whether the links inside a machine are no slower than those across machines, for
  // all-reduces and for transfers (a class pass takes the faster).
  bool intra_allreduce_, intra_transfer_;
  // Some cut may stay inside a machine, at another speed than across machines: only then
  // does a suffix's head change the transfer in front of it.
  bool compact_cuts_;
  int largest_machine_;  // GPUs of the largest machine
  std::vector<std::vector<Entry>> cells_;
  // Per cell, what extend() checks of each entry before it builds the entry in front (most
  // end there), kept apart from the entries, which are eight times as large.
  struct Brief {
    Seconds round_trip, worst, exposed;
    int k, t;
    bool head;
  };
  std::vector<std::vector<Brief>> briefs_;
  // next_followed(row, o) at o * (rows_ + 1) + row, set as each row is filled (the cells of
  // one device lie far apart in cells_).
  std::vector<std::uint32_t> next_followed_;
  BoundTerms terms_ = q_.terms;  // DpQuery::terms, `paced` off in a greedy pass
  bool timed_;                   // DpQuery::timed, where it applies
  // DpQuery::max_stages where it applies, else more than any suffix counts.
  static constexpr int kAnyCount = std::numeric_limits<int>::max();
  int most_stages_ =
      q_.max_stages > 0 && q_.max_stages < q_.micro_batches ? q_.max_stages : kAnyCount;
  // The cells' timings (only in a timed pass: timings()), and an empty one of this pass
  // (m = M where it is timed, else 0).
  std::vector<Timings> timings_;
  Timings blank_;
  Seconds bound_;
  Bucketing bucketing_;              // DpQuery::buckets and worst_buckets (width 0: none)
  std::vector<Bytes> inside_cut_;    // a block pass: per block, its least cut but its last
  std::vector<std::size_t> starts_;  // a block pass: block a's states [starts_[a], starts_[a + 1])
  // But in a class, free-width or coarse pass (floor_sends): per state, the least transfer across
  // the cut in front of it (in a block pass, at a block's first state, the block's least), where
  // the two devices may share a machine and where they do not; per device but the last,
  // whether it and the next may share one.
  struct CutFloor {
    Seconds intra = 0, inter = 0;
  };
  std::vector<CutFloor> cut_floor_;
  std::vector<char> compact_cut_;
  // The pass's steps in all (its limit: DpQuery::step_limit), and the enumeration's scratch.
  Work main_;
  // fill_row's scratch, one a thread, made for the first row filled in parallel (most passes
  // have none: they would pay for it, about 2 % of a sweep on one thread).
  std::unique_ptr<tbb::enumerable_thread_specific<Work>> works_;
  std::uint64_t row_steps_ = 0;  // the steps of the last row filled
  std::uint64_t held_ = 0;       // bytes of the rows filled (row_bytes)
  std::uint64_t peak_ = 0;       // DpResult::bytes so far
  // A candidate's bytes (its entry and timing), as DpQuery::memory_limit counts them.
  std::size_t candidate_bytes_ =
      sizeof(Entry) +
      (timed_ ? static_cast<std::size_t>(timing_entries(q_.micro_batches)) * sizeof(Seconds) : 0);
  // The threads that may run.
  int threads_ = static_cast<int>(
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
  // An enumerating pass (DpQuery::enumerate) once the cells are filled: the stages in front
  // of the one being tried, the stages extend() found can complete within the bound (each
  // with its least completion), and the plans found.
  bool enumerating_ = false;
  struct Child {
    Stage stage;
    Seconds least = 0;
  };
  std::vector<Stage> prefix_;
  std::vector<Child> children_;
  std::vector<DpPlan> found_;
  // Where it stopped: the least completion of the stages it did not follow (explore()).
  Seconds frontier_ = kInfinite;
  // The plan of found_ whose simulated time lowered the bound last (DpQuery::time_plan).
  std::size_t fastest_found_ = std::numeric_limits<std::size_t>::max();
  std::vector<double> signature_;          // of prefix_ (sign())
  std::set<std::vector<double>> visited_;  // first_visit()'s cells and signatures
};

}  // namespace pe::detail::dp
