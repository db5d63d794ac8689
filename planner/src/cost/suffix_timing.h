// The simulated times of a pipeline's suffix, exactly, for a few micro-batches.
//
// The simulator (pe::simulate) starts every operation at the latest of the end of the one
// before it on its stage and the arrival of its input, and every transfer at the latest of
// the end of the operation it carries and of the transfer before it on its link: a time is
// a maximum of sums. So the times of the stages from b on are a max-plus linear function of
// when the activations of micro-batches 0 .. M-1 reach stage b (u_0 .. u_{M-1}): the end of
// b's backward of micro-batch i is max over j of (u_j + A[i][j]), and the end of the suffix's
// last operation (its all-reduces included) is max over j of (u_j + Z[j]), where an entry is
// the longest path from that arrival to that end (-infinity where there is none).
//
// Prepending stage b-1 composes the maps: its operations, in its schedule's order, and the
// transfers across the cut between, each a max of sums over the new inputs. The suffix of
// stage 0, whose inputs are all ready at 0, ends at max over j of Z[j]: the simulated
// makespan, not a bound. And if every entry of one suffix is no larger than another's (of
// the same stage count in 1F1B, which fixes the order of the stage in front), each plan it
// completes is no slower, stage by stage, than the same plan with the other: keeping only
// the undominated suffixes finds the fastest plan itself (search/pipeline_dp.cc).
//
// A suffix holds (M + 1) x M entries, so only shapes of at most kTimedMicroBatches are timed
// this way (DpQuery::timed; closing passes up to kClosingTimedMicroBatches): the pipelines of a few
// large micro-batches, where an exact pass over the fields of path_bound.h keeps hundreds of
// suffixes a cell that their simulated times order.
#pragma once

#include <algorithm>
#include <cstdint>

#include "pe/schedule.h"

namespace pe::detail {

// Up to 5: every step of a timed pass costs more with M. Simplified GNMT-32's timed passes at
// GBS 128 to 256 on 16 single-GPU machines take 31 to 70 M steps with the best plan as their
// bound, and its shape of 5 micro-batches of 64 at GBS 320 69 M: more than the exact effort
// leaves it, but the refining effort left settles it (Search::last_closing), where with 4 the
// point stayed 0.52 % open. With 5, the default sweeps' other rows are byte-identical.
inline constexpr int kTimedMicroBatches = 5;

// A relaxed timed pass (DpQuery::timed with DpQuery::relaxed) keeps one timing a cell's group
// and bucket, the least of each entry: up to 10 micro-batches, (M + 1) M = 110 entries a
// suffix. With 16, NASNet-A large at GBS 32 on 16 single-GPU machines (two copies of 16
// micro-batches of 1) took 58 s instead of 36 for the same gap (1.0 %), its passes counted
// at timing_steps.
inline constexpr int kRelaxedTimedMicroBatches = 2 * kTimedMicroBatches;

// A closing pass (search_shape's `closing`) is timed up to 10 micro-batches, as a relaxed timed
// pass is (kRelaxedTimedMicroBatches): it runs only on a finished shape still below the fastest
// plan, cut off there, where an untimed pass can bound the shape no higher than the least path
// bound of its plans, which may lie below their simulated times. A random graph of 80 layers at
// GBS 8 on 3 machines of 5 GPUs, one copy of 8 micro-batches of 1: four untimed closing passes
// (13 M steps) left it 1.7 % below the plan, the first timed one settles it in 84 K
// (Planner.TimedClosingPassesOfUpToTenMicroBatchesSettleTheirShape; bench/README.md, "Closing
// passes timed up to 10 micro-batches"). The bundled profiles' default sweeps give the same
// answers. Up to 16 (as timed block passes) closed none of the random profiles' points left open
// on 2 x 8 GPUs (seeds 20, 30, 34, 38, 48 and 95), and seed 95's at GBS 16 went from 4.39 to
// 5.15 % (one copy of 8 micro-batches of 2 holds it).
inline constexpr int kClosingTimedMicroBatches = kRelaxedTimedMicroBatches;

// A timed block pass (DpQuery::timed with DpQuery::state_block) on a long chain tries about
// (n / s)^2 stages where a relaxed timed pass tries n^2, so it can afford up to 16
// micro-batches, (M + 1) M = 272 entries a suffix: NASNet-A large at GBS 32 on 2 x 8 GPUs,
// one copy of 16 micro-batches of 2, whose untimed refining passes stopped at 63.7 ms (the
// fastest plan 71.9 ms), is bound at 64.5 ms by them in 50 M steps (docs/timeline.md).
inline constexpr int kBlockTimedMicroBatches = 16;

/// The entries of a suffix's timing of M micro-batches: after[i * M + j] is A[i][j] (i < M)
/// or Z[j] (i = M), -infinity where no path exists, each row in its latest form (entry j
/// the largest of entries j .. M-1: arrivals come in order, so the map is the same).
constexpr int timing_entries(int micro_batches) { return (micro_batches + 1) * micro_batches; }

/// Whether suffixes of `micro_batches` under `schedule` can be timed with at most `most`
/// micro-batches: 1 to `most`, 1F1B or GPipe.
constexpr bool timeable_within(int most, int micro_batches, Schedule schedule) {
  return micro_batches >= 1 && micro_batches <= most && schedule != Schedule::Interleaved;
}

/// The micro-batches prepend_timing's times hold for M of them (each operation costs about
/// as many): kTimedMicroBatches, kRelaxedTimedMicroBatches or kBlockTimedMicroBatches.
constexpr int timing_width(int micro_batches) {
  return micro_batches <= kTimedMicroBatches          ? kTimedMicroBatches
         : micro_batches <= kRelaxedTimedMicroBatches ? kRelaxedTimedMicroBatches
                                                      : kBlockTimedMicroBatches;
}

/// The steps prepend_timing counts as (DpQuery::step_limit) for M micro-batches: it runs 2M
/// operations, each a maximum over up to M arrivals of timing_width(M) times, so M^2 x that
/// width against kTimedMicroBatches^3 for one step (at least 1: a timed pass's shapes).
constexpr std::uint64_t timing_steps(int micro_batches) {
  const auto m = static_cast<std::uint64_t>(micro_batches);
  const auto few = static_cast<std::uint64_t>(kTimedMicroBatches);
  return std::max<std::uint64_t>(
      1, m * m * static_cast<std::uint64_t>(timing_width(micro_batches)) / (few * few * few));
}

/// How many comparisons of two entries (the steps count kComparisonsPerStep of them a step) a
/// comparison of two timings of M micro-batches counts as in an exact timed pass (DpQuery::timed;
/// closing passes take up to kClosingTimedMicroBatches): 1 up to kTimedMicroBatches, where the
/// steps were set, else the timing's entries over those of kTimedMicroBatches, rounded up.
/// Comparing the timings of a closing pass of 9 micro-batches (90 entries each) took most of its
/// time: a random chain of 150 layers at GBS 18 on 2 machines of 6 GPUs ran 54 ns a step, its
/// untimed pass 13; 3 a comparison now.
constexpr std::uint64_t timing_comparisons(int micro_batches) {
  const auto entries = static_cast<std::uint64_t>(timing_entries(micro_batches));
  const auto few = static_cast<std::uint64_t>(timing_entries(kTimedMicroBatches));
  return micro_batches <= kTimedMicroBatches ? 1 : (entries + few - 1) / few;
}

/// Whether suffixes of `micro_batches` under `schedule` can be timed in a relaxed pass: 1 to
/// kRelaxedTimedMicroBatches micro-batches, 1F1B or GPipe.
constexpr bool relaxed_timeable(int micro_batches, Schedule schedule) {
  return timeable_within(kRelaxedTimedMicroBatches, micro_batches, schedule);
}

/// Whether suffixes of `micro_batches` under `schedule` can be timed in a block pass: 1 to
/// kBlockTimedMicroBatches micro-batches, 1F1B or GPipe.
constexpr bool block_timeable(int micro_batches, Schedule schedule) {
  return timeable_within(kBlockTimedMicroBatches, micro_batches, schedule);
}

/// Writes to `after` (timing_entries(M) of them) the timing of stage b (its times; `send`
/// the transfer to the next stage, 0 when it is the last) in front of the suffix timed by
/// `next` (null for the last stage), with `stages` the stages from b to the end (1F1B runs
/// min(M, stages) forwards before its first backward). Needs block_timeable(micro_batches,
/// schedule).
void prepend_timing(const StageTimes& stage, Seconds send, const Seconds* next, int micro_batches,
                    Schedule schedule, int stages, Seconds* after);

/// The suffix's end when every micro-batch reaches it at 0: for the suffix of stage 0, the
/// simulated makespan; for a later one, a lower bound on that of every plan it ends.
Seconds timed_makespan(const Seconds* after, int micro_batches);

/// Whether every entry of `a` is no larger than `b`'s.
bool no_later_than(const Seconds* a, const Seconds* b, int micro_batches);

/// What the stages in front of a suffix add at least to the simulated time of every pipeline
/// it ends (the pipeline DP's floor of the stages it has not placed yet: search/dp_pruning.cc,
/// Dp::in_front). Micro-batch 0's activations reach the suffix's first stage no sooner than
/// `arrive` (the forwards in front and the transfer across the cut), and a gradient that stage
/// sends back reaches the end of the first stage's backward no sooner than `back` after it
/// leaves. Some stage in front forwards each micro-batch in no less than `forward_pace`, one
/// micro-batch after another, and the link across the cut carries them one after another: so
/// micro-batch j arrives no sooner than arrive + j x forward_pace. Likewise the gradients back:
/// the last backward in front ends no sooner than back + (M - 1 - i) x backward_pace after
/// gradient i leaves. Each is a chain of operations, each waiting for the one before it (as the
/// path bound's: cost/path_bound.h), under 1F1B and GPipe alike; zero where nothing is in front.
struct InFront {
  int micro_batches = 1;
  Seconds arrive = 0, back = 0;
  Seconds forward_pace = 0, backward_pace = 0;

  /// The least round trip of the stages in front (the path bound's fill_drain holds it).
  Seconds trip() const { return arrive + back; }
  /// What the slowest stage in front adds to the round trip in the path bound (its G, (M - 1)
  /// g, and Q, at least (M - 1) f).
  Seconds pace() const { return (micro_batches - 1) * std::max(forward_pace, backward_pace); }
};

/// A lower bound on the simulated makespan of every pipeline the suffix timed by `after` ends
/// behind stages no faster than `front`: micro-batch j arrives no sooner than front says, the
/// suffix then ends no sooner than Z[j] after, and its first stage's backward of micro-batch i
/// no sooner than A[i][j] after, whose gradient then passes the stages in front. With nothing
/// in front, timed_makespan.
Seconds timed_behind(const Seconds* after, int micro_batches, const InFront& front);

}  // namespace pe::detail
