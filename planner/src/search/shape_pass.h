// The passes of one pipeline shape (copies, micro-batches, schedule) on one cluster: its
// floor, its relaxed and class passes (lower bounds on every plan of the shape), and its
// exact pass, closing passes and enumeration (pipeline_dp.h), which return its plans.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "cost/cost_model.h"
#include "pe/plan.h"
#include "search/pipeline_dp.h"
#include "search/pipeline_shapes.h"
#include "search/polish.h"

namespace pe::detail {

/// What every pass of a search may take besides its steps: the most devices of a stage
/// (SearchOptions::max_stage_width, DpQuery::max_stage_width) and the most bytes a pass may hold
/// (SearchOptions::pass_memory, DpQuery::memory_limit). From a width alone: that width and the
/// default memory. Explicit, so that a search's call cannot drop its memory limit by passing
/// a width where its limits() belong.
struct PassLimits {
  explicit PassLimits(int width = 0, std::uint64_t bytes = kDefaultPassMemory)
      : max_width(width), memory(bytes) {}
  int max_width;
  std::uint64_t memory;
};

/// Candidates one pass returns, least bound first. Their bounds are below their simulated
/// times by different amounts, so the fastest plan of a shape need not have the least bound:
/// on GNMT-16 at GBS 256 on 4 machines of 8 GPUs the 16 plans of least bound of the shape
/// that wins hold a plan 4 % faster than the best of the first 4 (speedup 15.35 -> 16.00).
inline constexpr int kPlansPerPass = 16;

/// A lower bound on every plan of a shape without searching it: some stage does at least
/// a copy's share of each micro-batch's work, M times (every stage width is at most
/// `width`, a copy's devices); the path floor (some micro-batch's round trip); the least of
/// the fill floor (fill_floor.h: how a pipeline of two stages or more fills) and the one-stage
/// plans' floor; and on a chain the stage floor (stage_floor.h: the stage that holds each
/// state, and its all-reduce).
/// `own` bounds the shape's plans (copies `width` apart), `anywhere` those of the same
/// copies, micro-batches and schedule on the cluster's first machines too (copies narrower,
/// whose stages' replicas may share a machine where the shape's cannot).
struct ShapeFloor {
  Seconds own = 0;
  Seconds anywhere = 0;
};
ShapeFloor shape_floor(const CostModel& cost, const PipelineShapeChoice& shape, int width);

/// A bound on every plan of a shape from its relaxed pass (DpQuery::relaxed) within
/// `effort`, or its floor when that runs out (`ran_out`); `settled` when no plan can make
/// `bound`. `anywhere` bounds the plans of the same copies, micro-batches and schedule on the
/// cluster's first machines too: the floor, or the class pass's bound (DpQuery::device_class).
struct RelaxedBound {
  Seconds lower_bound = 0;
  bool settled = false;
  std::uint64_t steps = 0;
  bool ran_out = false;
  Seconds anywhere = 0;
  bool screened = false;        ///< the screen ran (relaxed_bound's `screen`)
  bool screen_settled = false;  ///< and settled the shape, with no relaxed pass
  /// Where the relaxed pass finished: its plans of least merged bound (DpQuery::relaxed),
  /// real plans of the shape, candidates only.
  std::vector<DpPlan> plans{};
};
/// A merged pass's cells keep the suffixes undominated in their round trip, worst term and
/// all-reduce term (the first three fields; DpQuery::merged_fields), the others merged. On
/// GNMT-16 at GBS 64 on 8 machines of 8 GPUs, one copy of 16 micro-batches of 4, cut off at
/// 24.17 ms (bench/bm_bounds.cc): 23.49 ms in 45 M steps, where the first one or two fields
/// give 21.27 and 21.81 ms (2 and 8 M), four 23.47 in 105 M, and eight run out of 300 M (so
/// does the exact pass, with the search's first terms too); refining passes of 256 and 1,024
/// buckets of round trip reach 22.86 and 22.92 ms in 38 and 126 M.
inline constexpr int kMergedFields = 3;
/// The most fields the refining phase's last merged passes keep undominated
/// (Search::refine_merged); six took 115 M steps where five took 35 M and raised no more
/// (GNMT-16 at GBS 32 on 8 machines of 8 GPUs, one copy of 16 micro-batches of 2).
inline constexpr int kMostMergedFields = 6;
/// The refining phase's merged passes take shapes of at most this many micro-batches
/// (Search::merged_first): on more the merged fields lose more. GNMT-16 on 8 machines of 8
/// GPUs: at GBS 128, one copy of 32 micro-batches of 4, gap 2.82 -> 2.41 % (a plan 0.2 %
/// faster); at GBS 256, one copy of 64 micro-batches of 4 got 56.5 ms (below its relaxed pass's
/// bound) against a plan of 66.9, in 66 M steps its refining passes then lacked (gap 1.74 ->
/// 2.61 %).
inline constexpr int kMergedMicroBatches = 32;
/// Chains of fewer states get no block passes in relaxed_bound (shape_pass.cc, kBlockRows).
inline constexpr int kBlockPassStates = 128;

/// The relaxed pass of a shape within `effort`, and where it runs out on copies of at least
/// 32 devices, its class passes (class_bound) within `effort` each; where those do not run or
/// finish, on a chain of at least kBlockPassStates states, its block passes
/// (DpQuery::state_block) within `effort` together. With `screen`, on copies of at least 128
/// devices, the first class pass runs first, and where it settles the shape no relaxed pass runs;
/// where it does not, on one copy, a free-width pass (free_bound) next, the same way.
/// `anywhere` is the class passes' bound (or the floor): block passes look at where devices sit.
/// Where a screen's bound reaches `meets` (the fastest plan: no plan of the shape is faster),
/// no relaxed or class pass follows: the shape's bound is the screen's, and not settled.
RelaxedBound relaxed_bound(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                           std::uint64_t effort, PassLimits limits, bool screen = false,
                           Seconds meets = std::numeric_limits<Seconds>::infinity());

/// What bounding passes proved: the greatest least bound of those that finished (infinity:
/// no plan makes `bound`), and whether one did; a refining pass's plans too.
struct PassBound {
  Seconds least_bound = 0;
  bool finished = false;
  std::uint64_t steps = 0;
  std::vector<DpPlan> plans;  ///< refined_bound's and block_bound's: candidates only
};
/// The GPUs on each machine of the cluster of `cost` when all machines have as many, and all
/// GPUs run as fast and have as much memory; else 0.
int uniform_machines(const CostModel& cost);

/// The class passes of a shape within `effort` each: 8 classes a copy, then twice as many,
/// up to 4 times, while the last finished with its bound below `bound` and the classes still
/// get narrower (each bounds every plan of the shape, so the greatest does; finer classes
/// give tighter bounds for more steps); one copy of more than 16 machines of one size has
/// classes a machine wide in its second pass, within 4 times `effort`. They bound the plans
/// of copies at least `narrowest_copy` wide (DpQuery::narrowest_copy), on the cluster's
/// first machines too. `first`, where given, is the first pass's answer (it ran already).
PassBound class_bound(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                      std::uint64_t effort, PassLimits limits, int narrowest_copy = 0,
                      const DpResult* first = nullptr);

/// The first of a shape's class passes (kClassCells classes a copy) within `effort`, on
/// copies of at least 4 devices (otherwise nothing runs: not finished, no
/// steps): a screen for a shape that no relaxed pass bounded, cheap once the cutoff is
/// low. Its bound holds for every plan of the shape.
PassBound first_class_bound(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                            std::uint64_t effort, PassLimits limits);

/// The block passes of a shape (DpQuery::state_block) within `effort` together, on a chain
/// of at least `least_states` states: 32 blocks of states, then twice as many, up to 6 times,
/// while the last finished with its bound below `bound`, the blocks still hold two states or
/// more, and the next, at about 4 times the last one's steps, fits what is left. Each bounds
/// every plan of the shape (looser than the relaxed pass by about a block's work at each
/// cut), so the greatest does; they look at where devices sit. With `buckets`, refining
/// passes (DpQuery::buckets); with `timed` too, where block_timeable (up to 16 micro-batches),
/// timed ones (refined_bound's): each then bounds the simulated time of every plan of the
/// shape. Its plans are the last finished pass's (DpQuery::state_block).
PassBound block_bound(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                      std::uint64_t effort, PassLimits limits, int least_states, bool timed = false,
                      int buckets = 0);

/// The merged pass of a shape (DpQuery::merged_fields: `fields`, every term) within
/// `effort`: when it finishes, every plan of the shape has a bound no less than its least
/// bound, and its plans are candidates.
PassBound merged_bound(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                       std::uint64_t effort, PassLimits limits, int fields = kMergedFields);

/// Whether a shape gets free-width passes (free_bound): on machines of one size and one GPU
/// type (uniform_machines), copies wider than two machines.
bool free_widths_apply(const CostModel& cost, const PipelineShapeChoice& shape);
/// The free-width pass of a shape (DpQuery::free_widths, positions inside a machine) within
/// `effort`, where free_widths_apply (otherwise nothing runs: not finished, no steps). Its bound
/// holds for every plan of the shape.
PassBound free_bound(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                     std::uint64_t effort, PassLimits limits);

/// A refining relaxed pass of a shape (DpQuery::buckets: `buckets` buckets of round trip,
/// with `worst_buckets` of the worst term too; BoundTerms::arrivals) within `effort`: when it
/// finishes, every plan of the shape has a bound no less than its least bound, and its plans
/// are those of its entries (DpQuery::relaxed). With `enumerate_within` above 0 (at most
/// `bound`) it also enumerates, within `effort`, the plans whose bound is within it
/// (DpQuery::enumerate), where its own least bound lies within `enumerate_band` (a fraction)
/// below `enumerate_within`, 5 % where 0: where that finishes, they are its plans, and its
/// least bound is `enumerate_within` (every plan left out has a bound above it). With `timed`,
/// where relaxed_timeable, a relaxed timed pass (DpQuery::timed): its entries carry the least of
/// each entry of their suffixes' simulated times, its buckets are of those, and its bound
/// is of the simulated time itself, not of the path bound alone.
PassBound refined_bound(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                        std::uint64_t effort, PassLimits limits, int buckets,
                        bool worst_buckets = false, Seconds enumerate_within = 0,
                        bool timed = false, double enumerate_band = 0);

/// What one shape's pass found: its candidates, the least bound of any of its plans (a
/// valid lower bound, also when the pass stopped), whether the shape is settled (searched,
/// or proven unable to enter the answer), and the effort used.
struct ShapeResult {
  std::vector<CostedPlan> plans;
  Seconds lower_bound = std::numeric_limits<Seconds>::infinity();
  bool complete = true;
  std::uint64_t steps = 0, relaxed_steps = 0;
  bool relaxed_ran_out = false;         ///< stopped, and its relaxed pass too (or it had none)
  Seconds anywhere = 0;                 ///< RelaxedBound::anywhere
  std::uint64_t enumeration_steps = 0;  ///< of steps, DpQuery::enumerate's
  bool screened = false;                ///< RelaxedBound::screened
  bool screen_settled = false;          ///< RelaxedBound::screen_settled
};

/// The query of one pass of `shape` on copies of `width` devices, within `bound` and `effort`,
/// returning up to `plans` plans, under `limits` (its stage width and memory): every pass of a
/// search starts from it, so none leaves a limit out.
DpQuery shape_query(const PipelineShapeChoice& shape, int width, Seconds bound,
                    std::uint64_t effort, int plans, PassLimits limits);

/// Appends to `to` the plans `found` of a pass that fit memory, costed (evaluate).
void add_fitting(const CostModel& cost, int global_batch, const std::vector<DpPlan>& found,
                 std::vector<CostedPlan>& to);

/// One shape's exact pass within `effort` (`closing` 1 to 4: a closing pass, with the
/// tighter bound of BoundTerms::windows, and from 2 BoundTerms::last_pairs and
/// BoundTerms::forwards, at 3
/// BoundTerms::last_drains, at 4 BoundTerms::paced_afters, and more plans; with
/// `enumerate_within`, every plan whose bound is within it when the pass leaves some,
/// DpQuery::enumerate, within `enumerate_effort` steps with the pass where that is more than
/// `effort`, and which when it finishes are the plans returned, and enumerate_within the
/// shape's bound). With a `relaxed_effort` (the first round), its relaxed pass runs first:
/// when that settles the shape (no plan can make `bound`) the exact pass is not needed, and
/// when the exact pass stops, the relaxed bound (or the floor, when it ran out) bounds the
/// shape instead, and the relaxed pass's plans (RelaxedBound::plans) are its candidates;
/// `screen` as for relaxed_bound. A closing pass, or one with `timed`, is timed where the
/// shape has few enough micro-batches (DpQuery::timed). With `max_stages`, plans of at most
/// that many stages only (DpQuery::max_stages): the bound is then theirs alone. Where the
/// relaxed pass's screens prove every plan of the shape no faster than `meets` (the fastest
/// plan, with `lead` its stages: Pool::stages_to_lead, 0 for none), only a simpler plan within
/// the margin can come of it: the exact pass takes plans of at most `lead` stages, and the
/// shape's bound is the screens'.
ShapeResult search_shape(const CostModel& cost, int global_batch, const PipelineShapeChoice& shape,
                         Seconds bound, std::uint64_t effort, std::uint64_t relaxed_effort,
                         PassLimits limits, int closing = 0, Seconds enumerate_within = 0,
                         std::uint64_t enumerate_effort = 0, bool screen = false,
                         bool timed = false, int max_stages = 0,
                         Seconds meets = std::numeric_limits<Seconds>::infinity(), int lead = 0);

}  // namespace pe::detail
