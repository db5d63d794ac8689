// The one search: for a fixed pipeline shape (replicas, micro-batch size and count,
// schedule), the plans with the least path lower bound on the simulated iteration time.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "cost/cost_model.h"
#include "cost/path_bound.h"
#include "cost/pipeline_spec.h"
#include "cost/suffix_timing.h"
#include "pe/planner.h"

namespace pe::detail {

/// The terms of a search's first exact passes (DpQuery::terms): every stage's own, paced,
/// without the window cycles (and so without the terms that follow them).
inline constexpr BoundTerms kFirstPassTerms{.windows = false,
                                            .last_pairs = false,
                                            .paced_afters = false,
                                            .last_drains = false,
                                            .arrivals = false,
                                            .forwards = false};

/// DpQuery::merged_fields that keeps every field of an entry undominated: the exact pass.
inline constexpr int kMergedAll = 1 << 16;

/// What one dynamic-programming pass optimizes over.
struct DpQuery {
  int replicas = 1;
  int replica_width = 1;  ///< Devices of one pipeline copy (W).
  int micro_batch = 1;    ///< Samples per micro-batch (b).
  int micro_batches = 1;  ///< M.
  Schedule schedule = Schedule::OneFOneB;
  /// Plans whose lower bound exceeds this are dropped (the best simulated time found so
  /// far, with the simplicity margin; infinity disables it).
  Seconds bound = std::numeric_limits<Seconds>::infinity();
  /// Work allowed to this pass, in steps (one step: a cell allocated, a stage tried, a
  /// suffix entry extended, or eight comparisons of two entries or checks of a stage that no
  /// suffix can follow, which cost about as much).
  /// A pass that needs more stops without a plan.
  std::uint64_t step_limit = std::numeric_limits<std::uint64_t>::max();
  /// Most plans to return (the least bounds first); 0 for none (a pass wanted for its bound).
  int plans = 4;
  /// Most devices per stage (SearchOptions::max_stage_width); 0 = no limit.
  int max_stage_width = 0;
  /// Plans of at most this many stages only, where it is fewer than `micro_batches` (the
  /// suffixes count their stages up to M: SuffixBound::stages); otherwise, or 0, no limit.
  /// The least bound is then that of those plans alone. The search looks for plans simpler
  /// than the one it reports this way (Pool::stages_to_lead). A stage after the first has one
  /// in front, so it takes a suffix of at most L - 2 stages behind it (with L = 2, none: only
  /// last stages are tried there).
  int max_stages = 0;
  /// A relaxed pass: instead of the undominated suffixes, each cell keeps one entry per
  /// (k, head) whose every field is the least of the group's. Each field only raises the
  /// bound of the pipelines an entry ends (round trip and the sums with it, see
  /// pipeline_dp.cc), so the least bound of the first cell is a lower bound on the path bound
  /// of every plan of the shape, found with far fewer entries. Each entry keeps the stages of
  /// the suffix of least bound among those it merges, so the pass also returns plans of the
  /// shape, least merged bound first (not in a class or block pass, whose stages stand for many):
  /// candidates only, whose DpPlan::lower_bound is that merged bound, no more than their own. The
  /// search takes those of its refining passes (on GNMT-32 simplified at GBS 192 on 16
  /// single-GPU machines they led to a plan 4.3 % faster than the best found before) and
  /// of its relaxed passes that finish (ResNet-101 at GBS 512 on 256 GPUs: 28 % faster).
  bool relaxed = false;
  /// A refining relaxed pass (with `relaxed`, more than 1, and a finite `bound`): each cell
  /// keeps one entry per group and bucket of round trip (y), buckets `bound / buckets` wide,
  /// with each field the least of its entries'. An entry no larger in every field than
  /// each of the entries it stands for is still below every plan they end, so the least
  /// bound is a lower bound as with one entry a group; entries of different round trips no
  /// longer lend each other their small fields, so it is tighter, for up to `buckets` times
  /// the entries. As buckets grow it tends to the exact pass's bound (DpQuery::terms) where
  /// round trips differ; where many suffixes share one (a chain of equal layers on one GPU
  /// each: their f + g add up to the same), see worst_buckets.
  int buckets = 0;
  /// With buckets: a bucket is one of round trip (y) and one of y plus the worst term (e), and
  /// under 1F1B beyond kRelaxedTimedMicroBatches one of M / 2 times the head's f + g too
  /// (`head_work`, which the cycles of the stage in front take: P, Z), y's and the head's at
  /// most 256 a bound: suffixes of one round trip keep their own worst terms, and a small head
  /// no longer stands for a large one (with fewer micro-batches the relaxed timed passes that
  /// follow need the steps the extra entries take). GNMT-16 at GBS 384 on
  /// 8 machines of 8 GPUs, one copy of 96 micro-batches of 4: without the head's buckets the
  /// passes returned no plan faster than 95.0 ms, with them one of 78.8 ms (21 % faster).
  /// Before the head's buckets, on BERT-48 at GBS 512 on 1,024 GPUs, a pass of 256 buckets of
  /// y and y + e bounded the shape of the best plan at its simulated time (831.9 ms) in 0.16 M
  /// steps; with buckets of y alone, 821.0 ms, and 822.7 with 16,384 of them
  /// (Search::relaxed_closing, closing_passes.cc). Under GPipe a bucket is one of (M - 1) x the
  /// forward wave and one of (M - 1) x the backward wave instead (the worst term's (M - 1)(max f +
  /// max g), whose two maxima may come from different stages): where every suffix of a cell has the
  /// same round trip (stages of one device each, micro-batches of one), buckets of y separate
  /// nothing. NASNet-A large at GBS 512 on 8 machines of 8 GPUs, 8 copies of 64 micro-batches of 1,
  /// cutoff 230.6 ms: 227.3 ms with 64 such buckets (5.8 M steps), 226.3 with buckets of y
  /// and y + e (2.8 M; 226.8 with 1,024 of them, 27 M).
  bool worst_buckets = false;
  /// The terms each plan is bounded with (path_bound.h). Each term makes the bound tighter
  /// but gives entries more fields that differ, so an exact pass keeps more of them; a
  /// relaxed pass keeps one entry a group (or a bucket) either way. By default
  /// (kFirstPassTerms) no window cycles, which the search's first exact passes leave out.
  /// The window cycles (`windows`: R, and the warm-ups a stage paces further on than the
  /// next, six more fields) are on for relaxed passes and for the closing passes of shapes
  /// whose bound is still below the best plan (closing_passes.cc). The pairs of the last round
  /// trip (`last_pairs`: max_pair and tail, fields that differ with the later stages) only
  /// from a second closing pass: they can cost a pass several times the steps (a closing pass
  /// on PipeDream's ResNeXt-50 graph at GBS 64 on 2 x 8 GPUs: 28 M -> 93 M with the last
  /// stage's f + g alone); so do the forwards' paths to a later all-reduce (`forwards`, 2 kFed
  /// more fields), which in a first closing pass made one run out. The last round trip's stay on a
  /// later stage (`last_drains`, one more field) only in a third: in the second it made a pass on
  /// VGG-19 at GBS 512 on 16 single-GPU machines run out. The later stages' operations after their
  /// paced first backward (`paced_afters`, kWindows more fields) only in a fourth: in the second
  /// they made its passes run out of steps, and XLNet-36 at GBS 64 on 2 x 8 GPUs inexact again. The
  /// delayed arrivals (`arrivals`, D, kArrivals more fields) in refining relaxed passes only.
  /// A greedy pass ranks without `paced` whatever this says (DpQuery::greedy).
  BoundTerms terms = kFirstPassTerms;
  /// A coarse pass: every stage starts at a multiple of this many devices of its copy, and
  /// every stage but the last is a multiple of it wide (W / granule cells a state, not W).
  /// Its plans are plans of the shape, and its bound holds for them only: the search takes
  /// its plans as candidates and nothing else.
  int granule = 1;
  /// A class pass (with `relaxed`): the cells of a state are classes of this many
  /// consecutive devices of a copy instead of single devices, W / c of them. A stage from
  /// class o to class o + d stands for every stage that starts on a device of class o and
  /// ends before a device of class o + d, in each variant; its times are the least of theirs
  /// (compute at the widest with the fastest GPUs, the all-reduce and weight gathers at the
  /// narrowest, exposed behind the slowest GPUs' backward, transfers and all-reduces inside
  /// a machine wherever the narrowest would fit the largest machine and that link is the
  /// faster; with one copy, which starts on device 0, not where the devices every such stage
  /// holds cross a machine's end), and it fits memory when the widest fits the largest GPU. Every
  /// plan of the shape is thus a plan of the pass with no smaller fields, so its least bound is a
  /// lower bound of every plan's, from W / c cells a state instead of W and (W / c)^2 stages a
  /// state pair instead of W^2, and looser than the pass on single devices. It does not
  /// look at where devices sit, so it also bounds the plans of the same copies,
  /// micro-batches and schedule on the cluster's first machines (copies of fewer devices,
  /// wherever they start, at least `narrowest_copy` wide). With `granule` 1 only.
  int device_class = 1;
  /// A block pass (with `relaxed`, on a chain; on other graphs the relaxed pass, since there
  /// a stage's times are differences of two cuts', which need not grow with its states): the
  /// cells of a device are blocks of consecutive states of about equal work, about n / s of
  /// them (at most 2 s states each). A stage from block a to block c stands for every stage
  /// whose first state lies in block a and whose last in block c, and takes the least of
  /// their times and memory: those of the states from a's last to c's first (to c's last for
  /// the stages that end there, after which the next stage starts a block on; otherwise it
  /// starts in block c), the least bytes of their cuts, and an all-reduce no longer than
  /// any of them leaves exposed (CostModel::ExposedScan::reach). A stage that starts and ends
  /// inside one block before its last state stands for nothing but its devices and its cut:
  /// no work, memory or all-reduce. Every plan of the shape is thus a plan of the pass with
  /// no larger fields, so its least bound is a lower bound of every plan's, from n / s cells
  /// a device and (n / s)^2 stages a device pair instead of n and n^2; looser than the
  /// relaxed pass, by about a block's work at each cut. Its plans (candidates only, as a
  /// relaxed pass's, DpPlan::lower_bound their entry's merged bound) are one plan of each of
  /// its first cell's entries of least bound: each stage ends where the stage it stands for
  /// ends, at the last state of a block, or, where the next one starts in that block, in the
  /// middle of what the block has left (none where a stage would hold no state); so each is a
  /// plan its entry stands for, its bound no less than the entry's (but memory: a stage takes
  /// the least of the stages it stands for). The search polishes the first two that fit
  /// (Search::offer_polished): where relaxed passes over single states cannot finish in the
  /// steps left, they are its plans of the shape (NASNet-A large at GBS 512 on 1,024 GPUs: a
  /// plan 49 % faster than any found before; docs/timeline.md, "Lower bounds"). With
  /// `device_class` and `granule` 1 only (otherwise the pass is the class or coarse pass: a
  /// stage inside a block and inside one class would lead back to its own cell).
  int state_block = 1;
  /// A free-width pass (with `relaxed`, on machines of this many GPUs each, all of one type;
  /// 0 for none): the copy's devices never run out. A cell is a state and a position inside
  /// a machine (the device offset modulo this), not a device, and from each a stage may take
  /// any width the copy allows. A stage runs as it would on the first machine's device of its
  /// position: shifting every copy's stage by a machine moves each of its devices to the next
  /// machine, so the same devices share one (the stage, its cut, its all-reduce and
  /// tensor-parallel groups stay inside a machine or cross one as before). Every plan of the
  /// shape is thus a plan of the pass with the same stage times, so its least bound is a lower
  /// bound of every plan's; looser than the relaxed pass where the plans need the copy's
  /// devices (a plan of the pass may use more) and where entries of the same position merge,
  /// from m cells a state instead of W. It binds where wider stages stop paying (their
  /// all-reduces grow): GNMT-16 at GBS 512 on 1,024 GPUs, one copy of one micro-batch of 512,
  /// 0.259 s as the relaxed pass on 64 GPUs, in 7.3 M steps with the best plan's 0.100 s to
  /// prune it, where the relaxed pass runs out at 47 M (Search::frees_first,
  /// refining_phase.cc). With `device_class` and `granule` 1 only.
  int free_widths = 0;
  /// A class pass bounds only the plans whose copies are at least this many devices wide
  /// (and at least as wide as a stage): the devices of a stage in R copies then sit on one
  /// machine only where (R - 1) x that width + the stage's fit the largest machine.
  int narrowest_copy = 0;
  /// A greedy pass: each cell keeps, per (head, tensor-parallel degree), only the suffix of
  /// least bound taken as a whole plan (bound_of), whatever its stage count, and the stages
  /// of a pipeline are a power of two granules wide (a last stage narrower than one granule
  /// aside; a one-stage plan may have any width). Far cheaper than the exact pass on wide
  /// copies (one entry per cell and group instead of the undominated ones of every stage
  /// count, log W widths instead of W); its plans are plans of the shape, and it proves
  /// nothing: DpResult::least_bound is the least bound of its own plans. The search takes
  /// them as candidates. It ranks suffixes by the bound without the later stages' pacing of
  /// an all-reduce (prepend_stage's `paced`): with it, the plans it found on GNMT-16 at GBS
  /// 512 on 8 machines of 8 GPUs polished to 4 % slower plans than without.
  bool greedy = false;
  /// A merged pass (1 or more; 0: none; not with `relaxed`, `greedy` or `timed`): an exact
  /// pass whose cells keep the suffixes undominated in their first `merged_fields` fields
  /// only (round trip, worst term, all-reduce term, ...: the order of Entry::field, in
  /// dp_entry.h), and lower every other field of the entry that drops a suffix to the
  /// suffix's where it is less. Every plan's bound is then no less than that of the entry it
  /// went into (prepend_stage and the bound grow with every field), so the least bound is a
  /// lower bound of the shape's plans, as a relaxed pass's, and its plans are plans of the
  /// shape whose bounds may be below their own; its cells grow with those fields alone.
  /// kMergedAll keeps every field: the exact pass.
  int merged_fields = 0;
  /// With more than 0 (an exact or relaxed pass, with or without buckets, of granule, class
  /// and block 1, not greedy or free-width; a relaxed cell's entry has the least of each
  /// field of the suffixes it stands for, no worse in every field than any of them): once the
  /// cells are filled, if the least bound is within enumerate_bound (taken at most `bound`)
  /// and at least enumerate_from (a wide band holds many plans), every plan whose bound is
  /// within it, found depth first from the first stage, each stage followed only when some
  /// entry of the cell after it (which holds each suffix that can complete within the bound,
  /// or one no worse in every field) completes the plan so far within it, stages of least
  /// completion first; but of stages
  /// that reach a cell with the same stage times, cut bytes, variants, widths and memory as
  /// stages that reached it before (states of no work or bytes on either side of a cut),
  /// whose plans the simulator cannot tell apart, only the first. With at most this many
  /// times the pass's steps more (and within enumerate_step_limit), and at most enumerate_plans
  /// plans. DpResult::enumerated says whether it finished; when it did not, up to `plans`
  /// of the first it found join the pass's (where many plans share the least bound, others
  /// of them), and DpResult::unlisted_bound bounds every other plan: the least completion of
  /// each stage it had not followed yet, and the bounds of the plans it found beyond those.
  int enumerate = 0;
  /// The most steps the pass and its enumeration take together, when more than step_limit
  /// (which then bounds the pass alone; an enumeration may need more than a pass is
  /// allowed); 0: step_limit.
  std::uint64_t enumerate_step_limit = 0;
  Seconds enumerate_bound = 0;
  Seconds enumerate_from = 0;
  int enumerate_plans = 0;
  /// Where set, an enumeration's plans are simulated as it finds them (none: the plan does not
  /// fit or is not simulated), and the least time so far becomes the bound it enumerates
  /// within: a plan whose bound is above a plan's simulated time is slower than that plan, so
  /// neither it nor any stage that completes only beyond that time is followed (the time is then
  /// DpResult::unlisted_bound). NASNet-A large at GBS 64 on 16 single-GPU machines, two copies of
  /// 32 micro-batches of 1 under GPipe, cut off at 142.21 ms: its pass of 256 buckets of worst
  /// term had enumerated for 57 M steps and stopped, with plans unlisted from 141.48 ms, against
  /// a plan of 141.95 (gap 0.33 %); with its plans timed it finishes, and the point is exact, with
  /// a plan 0.16 % faster.
  std::function<std::optional<Seconds>(const PipelineSpec&)> time_plan{};
  /// A timed pass (granule and class 1, not greedy or free-width; an exact pass of at
  /// most kTimedMicroBatches micro-batches, a relaxed one of at most kRelaxedTimedMicroBatches,
  /// a block pass of at most kBlockTimedMicroBatches, 1F1B or GPipe; elsewhere ignored): each
  /// suffix also carries its simulated times (cost/suffix_timing.h), entries are compared by
  /// those alone, and plans are ranked by their simulated makespan (DpPlan::lower_bound). Its
  /// least bound is then the fastest simulated plan of the shape within `bound`, where the
  /// path bound's least may lie below it: on simplified GNMT-32's shape of 2 micro-batches of
  /// 64 at GBS 128 on 16 single-GPU machines, with the best plan as its bound, it settles the
  /// shape in 31 M steps, where the exact pass with every term needs 2.77 G (docs/timeline.md,
  /// "Timed passes"). The search times a shape's passes after its first exact pass
  /// (search_shape). A relaxed timed pass keeps one entry a group and bucket as other relaxed
  /// passes do, its timing the least of each entry of the timings it stands for: a timing is a
  /// max-plus map that prepending a stage composes with additions and maxima alone, so each of
  /// its entries only grows with each of the suffix's, and the least timing's makespan is no
  /// more than that of any plan the entry ends. Its buckets (DpQuery::buckets) are pairs of the
  /// suffix's end (timed_makespan) and of the mean of its timing's entries, whatever
  /// `worst_buckets` says. Its least bound is then a lower bound on the simulated time itself.
  /// So is a timed block pass's (state_block): its stages take the least times, transfers and
  /// exposed all-reduces of the stages they stand for, and the timings only grow with each.
  bool timed = false;
  /// The most micro-batches an exact timed pass times: kTimedMicroBatches, or for a closing
  /// pass kClosingTimedMicroBatches (search_shape).
  int timed_most = kTimedMicroBatches;
  /// Most bytes the pass may hold; 0 for no limit. Counted are its cells' entries, briefs and
  /// timings (by capacity) once each row of cells is filled, and while a cell is filled, its
  /// candidates (entries and timings) on top of the rows before. A pass that would hold more
  /// stops without a plan, as one out of steps does, and reports its whole step_limit spent
  /// (DpResult::out_of_memory), so the effort it draws from is used up and the search ends
  /// with what it has proved. Each cell counts its own candidates and rows are counted in order,
  /// so a pass stops at the same place on any thread count. It may hold more than the limit
  /// for a while: the row being filled, and where a row is filled in parallel each thread's
  /// candidates, up to what the rows before left each.
  std::uint64_t memory_limit = kDefaultPassMemory;
};

/// A plan of the pass and its path lower bound (cost/path_bound.h); in a timed pass
/// (DpQuery::timed), its simulated makespan.
struct DpPlan {
  PipelineSpec spec;
  Seconds lower_bound = 0;
};

/// One pass's answer: up to DpQuery::plans plans, least bound first (empty when nothing
/// fits under the bound, or when the pass stopped; a relaxed pass's, see DpQuery::relaxed, a
/// block pass's DpQuery::state_block),
/// the steps it took, and whether it stopped at step_limit. When an exact pass did not stop,
/// plans.front().lower_bound is the least path bound of any plan of the shape (or every
/// plan's bound exceeds DpQuery::bound).
struct DpResult {
  std::vector<DpPlan> plans;
  std::uint64_t steps = 0;
  bool stopped = false;
  /// It stopped at DpQuery::memory_limit (`steps` is then its step_limit).
  bool out_of_memory = false;
  /// When it did not stop: the least DpQuery::memory_limit it needs (the most bytes its cells
  /// held, with those of one cell's candidates while that cell was filled).
  std::uint64_t bytes = 0;
  /// When the pass did not stop: a lower bound on the path bound of every plan of the shape
  /// whose bound is within DpQuery::bound (infinity when there is none); the bound of
  /// plans.front() for an exact pass.
  Seconds least_bound = std::numeric_limits<Seconds>::infinity();
  /// DpQuery::enumerate finished: `plans` holds every plan whose bound is within
  /// DpQuery::enumerate_bound (but for plans of the same stage times as one of them), and
  /// the pass's own beyond it, least bound first.
  bool enumerated = false;
  /// Of `steps`, those DpQuery::enumerate took.
  std::uint64_t enumeration_steps = 0;
  /// Where the pass enumerated (DpQuery::enumerate): a lower bound on the path bound of every
  /// plan of the shape not in `plans` (nor of the same stage times as one of them). When the
  /// enumeration finished, DpQuery::enumerate_bound (at most `bound`), or the least simulated
  /// time of the plans it found where lower (DpQuery::time_plan); when it stopped, no less
  /// than least_bound: the least completion of each stage it did not follow, of the plans found
  /// after those it lists, and that bound. 0 where it did not enumerate.
  Seconds unlisted_bound = 0;
};

/// Exact over: stage cuts on the states (nested cut pairs, CostModel::stage), a width per stage,
/// stages packed in order from device 0 of each copy (devices at the end of a copy may stay idle),
/// memory per device. Minimizes path_lower_bound (cost/path_bound.h) of the plan's stage times.
/// Ties keep the first plan in a fixed enumeration order. Large rows of cells are filled by
/// the threads together (TBB); the answer and the steps do not depend on how many there are.
DpResult best_pipeline(const CostModel& cost, const DpQuery& query);

}  // namespace pe::detail
