// Lower bounds on the simulated iteration time (pe::simulate) that the search can minimize.
//
// The simulated makespan is the longest path through the schedule's operations, where an
// operation waits for the one before it on its stage and for its inputs (a transfer adds
// its time). Any chain of such waits is a path, so its length is a lower bound. Every bound
// here is the one-micro-batch round trip (fill_drain) plus a term for one stage, cut or
// pair of stages (f, g: a stage's forward and backward, c: the transfer after it, M
// micro-batches, k = S - b the stages from b to the end, w = min(M, k) its warm-up):
//   A  (1F1B)  after micro-batch 0's backward, stage b still runs (M-1) backwards and
//              M - w forwards: (M-1) g + (M-w) f + late, where late is how much a later
//              stage j's warm-up delays that backward beyond the round trip (its w_j
//              forwards come from b, and over b's link, one after another; j up to kPaced
//              stages on, `delayed` for the delays found further on):
//              max(0, (w_j - 1) max(f, c) + (round trip from b + 1 through j, as if j
//              were the last stage) - R_{b+1}), or b's own warm-up, whose w forwards come
//              before its first backward: (w - 1) f - 2 c - R_{b+1}; stage b + 1 runs its
//              own A (or A', R) after its late first backward too (a term of its own);
//   H  (1F1B)  from stage b+1's first backward, b+1 runs its next j
//              backwards, each after one of its forwards while it has any left (its
//              M - w_{b+1} past the warm-up), and hands the gradient of micro-batch j to
//              stage b, which runs its backwards j .. M-1 and the forwards past its warm-up
//              between them: min(j, M - w_{b+1}) (f + g)_{b+1} + (M-1-j) g +
//              max(0, M - j - w) f + late', at the j where either stage's forwards run out
//              (late': late without b's own warm-up, how late b+1's first backward ends);
//   Z  (1F1B, 2 <= k < M)  from its first backward, stage b's next forward starts a cycle
//              through a window of j stages (R's, j = 2 P's), back to b's backward j
//              micro-batches on, while b has forwards left; then b's backwards left and
//              the forwards between them: the cycles' C_j + (M-1-a) g + max(0, M-a-k) f +
//              late, a the micro-batches they move on (a mix: each size, pairs (f + g, one
//              on) included, as often as fits or once less, then one more of any size);
//   L  (1F1B)  from stage b+1's first backward the cut's backward link carries the M
//              gradients one after another, the last into stage b's last backward:
//              (M-1) c + late';
//   A' (1F1B, k < M)  stage b starts forward m + k only after the backward of m, and that
//              forward's round trip R_b ends in backward m + k: with j = floor((M-1)/k),
//              M-1-jk pairs of a forward and a backward, then j round trips: j R_b +
//              (M-1-jk)(f + g) + late;
//   A'' (1F1B, k < M)  the same j round trips first, to b's backward of micro-batch jk,
//              whose gradient came over the cut's backward link; the gradients of the
//              M-1-jk micro-batches after it follow it one after another there (as in L), the
//              last into b's last backward: j R_b + (M-1-jk) c + late (where c > f + g, longer
//              than A': VGG-19 at GBS 512 on 256 GPUs, two stages of 4 micro-batches of 128
//              whose 12 ms transfers the bound took as 113.1 ms against the simulated 118.5);
//              or, from b's first backward, n cycles through a window of i stages as in R
//              (n = floor((M-1-k)/i) + 1, or 1), the last cycle's backward on the window's
//              last stage followed by the gradients after it on the link: n C_i + (M-1-ni) c +
//              late (VGG-19 at GBS 896 on 8 x 8 GPUs: 180.92 ms, the simulated time, not 174.06);
//   P  (1F1B, 2 <= k < M)  stages b and b+1 form a cycle: forward m on b, then on b+1,
//              whose next operation is the backward of m - (k - 2), back on b, whose next
//              operation is the forward of m + 2. From forward k - 2 on stage b, n =
//              floor((M + 1 - k) / 2) such cycles, then the last micro-batch's round trip:
//              (k - 2) f + n (f + g + 2 c + f_{b+1} + g_{b+1});
//   R  (1F1B, k < M)  micro-batch 0's round trip from b, then the same cycle through a
//              window of j stages b .. b+j-1 (2 <= j < k, j <= kWindows + 1): forward m on
//              each, then on the last the backward of m - (k - j), back to b, whose next
//              operation is the forward of m + j; it costs C_j, the window's f + g and twice
//              its inner transfers. From forward k, n = floor((M - 1 - k) / j) cycles, then
//              pairs of a forward and a backward up to the last micro-batch, whose round
//              trip ends the path: R_b + n C_j + (M - 1 - k - n j)(f + g) + late.
//              A pair is the cycle of one stage (C_1 = f + g) and a round trip that of all
//              k (C_k = R_b, A'), and cycles of any sizes follow one another: the bound
//              takes the best of the mixes with one size as often as fits (or once less)
//              and one smaller size in what is left (a round trip 63 times and a window of
//              three once, on BERT-48 at GBS 1024 on 2 x 8 GPUs). The last round trip
//              may also stay on a later stage j for the w_j backwards j runs after its last
//              forward: (w_j - 1) g_j - 2 c_j - R_{j+1} longer (last_drain; only to b's last
//              backward, as it skips the stages after j);
//   T  (1F1B, k >= M)  stage b runs its M forwards, then its M backwards; the last
//              forward travels to stage x = S - M (also all forwards first), whose first
//              backward comes back: (M-1)(f + g) - beyond, where `beyond` is the part of
//              the round trip past stage x (2 c_x + the round trip of the stages after x);
//              GPipe: every stage runs all forwards first, so x = S - 1: (M-1)(f + g);
//   D  (1F1B)  the backward of micro-batch m (1 <= m <= kArrivals) on stage b ends D_b(m)
//              after micro-batch 0's round trip: D_b(0) = late, and D_b(m) is the largest of
//              D_b(m - 1) + g, D_b(m - 1) + f + g (a forward between, while b has one left),
//              D_b(m - j) + C_j (the forward m - j + k through a window of j stages, as in
//              R, or all k, back to b's backward m) and D_{b+1}(m) (the gradient keeps its
//              delay on its way back); then b runs its backwards left and the forwards
//              between them: D_b(m) + (M-1-m) g + max(0, M - w - m) f (BERT-48 at GBS 512
//              on 1,024 GPUs: a window cycle of 4 stages from stage 9 delays micro-batch 4,
//              and stage 3, all forwards first and a slower backward, runs 4 to 7 after it);
//   W  (GPipe) the forward wave then the backward wave: M forwards on a stage e (or M
//              transfers on a cut), the last micro-batch to the end, M backwards on a stage
//              b (or transfers): (M-1)(max over stages of max(f, c) + the same of g);
//   G  (both)  (M-1) g, the backwards after the first; B (both) every operation of stage b:
//              M (f + g) - R_b; C (GPipe; 1F1B: L, never less) a cut's
//              link carries M transfers: (M-1) c.
// A stage's all-reduce starts when its last backward ends, which is at least fill_drain -
// (sum over earlier stages of g + c) + the largest of A, A', H, Z, L, T, D, G, B, Q of that stage,
// and of every term of a later stage or cut (each ends at or before the last backward of
// a later stage, whose gradient then passes stage b: `worst` of the suffix after b):
//   Q  (both)  the stage's operations before its last forward, then the last micro-batch
//              to the end and back: (M-1) f + (M - w) g (also a term of its own).
// Q of stage b also paces every later stage s: the last micro-batch's round trip passes
// s's last backward, so s's all-reduce ends no earlier than Q_b + the round trip from b
// - sum over b <= t < s of (g_t + c_t) + AR_s (the `drain` field carries the last part);
// so do A' and R, whose last round trip passes s's last backward too.
// A forward that stage b starts late also delays every later stage's operations after it,
// and so their all-reduces (1F1B; `fed` and `led` carry a later stage's part):
//   F  (1F1B, k < M)  from b's first backward, cycles as in Z to b's backward of x, after
//              which b starts the forward of m = x + k; it passes the stages to a later stage
//              s (their f + c), which then runs its M - m forwards and the backwards from
//              then on (min(M, M - m + w_s - 1)), then its all-reduce; for the last kFed
//              micro-batches m (GNMT at GBS 32 on 2 x 8 GPUs: a window cycle through a
//              cut across the machines delays the forward of micro-batch 14 of 16, and the
//              stage of the decoder's all-reduce, four stages on, runs its last backwards
//              after it: bound 7.972 ms, simulated 8.308);
//   F' (1F1B)  b's link carries micro-batches 0 .. m one after another, so m leaves b no
//              earlier than f + c + m max(f, c) after micro-batch 0's forward starts there;
//              then the same path to s's all-reduce, for m = 1 .. kFed (another plan of
//              that shape: the link of such a cut carries micro-batches 0 to 3 one after
//              another, and the stage of the all-reduce, whose warm-up takes four, runs all
//              its operations from the fourth on: simulated 8.288 ms, bound 7.989).
// docs/timeline.md, section "Lower bounds", explains the terms.
#pragma once

#include "pe/schedule.h"
#include "pe/units.h"

namespace pe::detail {

/// Windows of 2 to kWindows + 1 stages whose 1F1B cycles the bound follows (term R below).
inline constexpr int kWindows = 4;
/// Later stages, up to this many from a stage, whose warm-up the bound follows it pacing.
inline constexpr int kPaced = kWindows + 1;
/// Micro-batches 1 to kArrivals whose backwards' delays the bound carries to earlier stages
/// (term D below): as far as one window cycle reaches.
inline constexpr int kArrivals = kWindows + 1;
/// Micro-batches whose forwards' paths to a later stage's all-reduce the bound follows, at
/// each end (terms F and F' above): the last three and micro-batches 1 to 3, enough for the
/// paths met (micro-batch M - 2 after window cycles of two stages; micro-batch 3 over a
/// link). Each one more is two more fields that every suffix entry carries and copies.
inline constexpr int kFed = 3;

/// What the bound knows of the stages from b to the end (a suffix), built from the last
/// stage forwards. The bound of a whole pipeline is bound(suffix of stage 0). Every field
/// but `stages` can only raise the bound of any pipeline the suffix ends.
struct SuffixBound {
  Seconds round_trip = 0;  ///< fill_drain of the suffix: R_b.
  /// The largest term of a stage, cut or pair in the suffix. Each ends at or before the last
  /// backward of a stage of the suffix (the all-reduce terms of earlier stages rely on it).
  Seconds worst = 0;
  Seconds exposed = 0;  ///< The all-reduce term measured from stage b's last backward.
  /// What follows the last micro-batch's backward on stage b, if the later stages end as
  /// early as the backward wave allows: max over s >= b of AR_s (GPipe: + (M - 1) g_s, the
  /// backwards stage s runs after the last forward) - sum over b <= t < s of (g_t + c_t).
  /// An earlier stage's Q paces it (exposed).
  Seconds drain = 0;
  Seconds head_work = 0;      ///< 1F1B: f + g of stage b (P for the stage in front).
  Seconds after_x = 0;        ///< 1F1B, stages >= M: minus `beyond` of T (0 otherwise).
  Seconds forward_wave = 0;   ///< GPipe: max over the suffix of max(f, c).
  Seconds backward_wave = 0;  ///< GPipe: max over the suffix of max(g, c).
  /// 1F1B: window[i] is the cycle of the window of stages b .. b + i + 1 (j = i + 2 stages):
  /// the sum of their f + g and twice the transfers between them; 0 past the suffix's end.
  /// It is also micro-batch 0's round trip from b if stage b + i + 1 were the last.
  Seconds window[kWindows] = {};
  /// 1F1B: how much later than micro-batch 0's round trip its backward on stage b can end,
  /// for the warm-ups of later stages, each paced by an earlier stage of the suffix.
  Seconds delayed = 0;
  /// 1F1B: how long after stage b's first backward its last backward can end (A, A', R).
  Seconds after = 0;
  /// 1F1B: the largest f + g of a stage of the suffix (the last round trip of A' and R may
  /// take its pairs on it).
  Seconds max_pair = 0;
  /// 1F1B: how much longer than the round trip the last micro-batch's can be, where it stays
  /// on a stage j of the suffix for the w_j backwards j runs after its last forward: the
  /// largest (w_j - 1) g_j - 2 c_j - R_{j+1} (0 at least: the last stage's).
  Seconds last_drain = 0;
  /// 1F1B, fewer than M stages: the cycle of the window of every stage but the last (k - 1
  /// stages, which window[] holds only up to kWindows + 1); 0 otherwise.
  Seconds tail = 0;
  /// 1F1B: paced_after[i] is window[i] plus the `after` of the window's last stage: how long
  /// after micro-batch 0 leaves b that stage's last backward can end, beyond its warm-up's
  /// pace (a stage in front may delay its first backward, `late`); 0 past the suffix's end.
  Seconds paced_after[kWindows] = {};
  /// 1F1B: arrival[i] is how much later than micro-batch 0's round trip the backward of
  /// micro-batch i + 1 on stage b can end (D: a cycle from an earlier backward of a stage of
  /// the suffix delays it, and the gradient keeps that delay on its way to b); 0 where
  /// i + 1 >= M.
  Seconds arrival[kArrivals] = {};
  /// 1F1B: fed[d] is how long after stage b starts the forward of micro-batch M - 1 - d a
  /// stage s of the suffix can end its all-reduce: the forwards and transfers from b to s,
  /// then s's operations from that forward on, then its all-reduce (F); 0 where d >= M.
  Seconds fed[kFed] = {};
  /// 1F1B: led[i] is the same from the forward of micro-batch i + 1 (F'); 0 where i + 1 >= M.
  Seconds led[kFed] = {};
  int stages = 0;  ///< S - b, capped at M (no term depends on more).
};

/// Which of the bound's terms prepend_stage follows. All on is the tightest bound; each off
/// leaves fields at 0, a weaker bound whose suffixes differ in fewer fields (an exact pass
/// keeps the undominated ones, pipeline_dp.h).
struct BoundTerms {
  /// The R terms, the warm-ups of all but the next stage and the pairs of the last round
  /// trip (window, delayed, after, max_pair).
  bool windows = true;
  /// Stage b's all-reduce follows the later stages' terms too, not only its own (greedy
  /// passes rank suffixes without it, pipeline_dp.h).
  bool paced = true;
  /// With windows: the pairs of the last round trip and the window of all stages but the
  /// last (max_pair, tail).
  bool last_pairs = true;
  /// With last_pairs: the operations of later stages than the next after their paced first
  /// backward (paced_after).
  bool paced_afters = true;
  /// With last_pairs: the last round trip's stay on a later stage for its last backwards
  /// (last_drain).
  bool last_drains = true;
  /// With windows: a later micro-batch's gradient that a cycle delays, after which the stage
  /// runs its backwards left (arrival).
  bool arrivals = true;
  /// With windows: a forward that stage b starts late, followed to a later stage whose
  /// operations after it and all-reduce then end the iteration (fed, led; F and F').
  bool forwards = true;
};

/// The suffix of stage b: stage b (its times; `send` the transfer to the next stage, 0
/// when it is the last) in front of `next` (null for the last stage), with the terms of
/// `terms`.
SuffixBound prepend_stage(const StageTimes& stage, Seconds send, const SuffixBound* next,
                          int micro_batches, Schedule schedule, const BoundTerms& terms = {});

/// The terms of stage b alone that prepend_stage takes into `worst` whatever the suffix
/// behind it (Q, B, G; 1F1B: A, L), for a stage with `stages` stages from it to the end
/// (capped at M) and the suffix's `round_trip` from it: never above the `worst` of any
/// suffix it builds, so a search can drop a stage before building its suffix.
Seconds stage_terms(const StageTimes& stage, Seconds send, int stages, Seconds round_trip,
                    int micro_batches, Schedule schedule);

/// fill_drain + max(worst, exposed): a lower bound on the simulated makespan of a pipeline
/// whose suffix of stage 0 this is.
inline Seconds bound_of(const SuffixBound& s) {
  return s.round_trip + (s.worst > s.exposed ? s.worst : s.exposed);
}

/// Interleaved (no suffix form): each device group d runs M micro-batches of all its chunks
/// one after another, from micro-batch 0's arrival at its first chunk (stage d), which
/// needs sum over t < d of (f_t + c_t), to its last backward, the last micro-batch on stage d,
/// whose gradient then passes stages d-1..0 (sum over t < d of (g_t + c_t)); chunk c's
/// all-reduce follows its last backward, after which the group runs only the last round's
/// backwards of chunks c-1..0 (p of each); a group's outgoing links carry M transfers of
/// each of its chunks, the forward one from micro-batch 0's first forward there, the backward
/// one before the last gradient passes stages d-1..0; and one micro-batch's round trip
/// through every chunk.
Seconds interleaved_lower_bound(const PipelineShape& shape);

/// The bound of a whole pipeline (interleaved_lower_bound for that schedule) with `terms`.
/// Never above simulate(shape).makespan.
Seconds path_lower_bound(const PipelineShape& shape, const BoundTerms& terms = {});

}  // namespace pe::detail
