#include "cost/path_bound.h"

#include <algorithm>
#include <span>
#include <vector>

namespace pe::detail {
namespace {

// A cycle of a 1F1B stage that moves `forwards` of its forwards on and takes `time`.
struct Cycle {
  int forwards = 1;
  Seconds time = 0;
};
// The cycles through the windows of 2 to kWindows + 1 stages from stage b (R's), fewer than
// its k stages to the end (all k are a round trip), into `out`; returns how many.
int window_cycles(const SuffixBound& s, Cycle* out) {
  int count = 0;
  for (int j = 2; j < s.stages && j <= kWindows + 1 && s.window[j - 2] > 0; ++j)
    out[count++] = {j, s.window[j - 2]};
  return count;
}
// The cycles a stage's forward starts from its backward as in R and A': the windows'
// (window_cycles) and, when the k stages to the end are fewer than M, the round trip through
// all of them, into `out` (room for kWindows + 1); returns how many.
int trip_cycles(const SuffixBound& s, int micro_batches, Cycle* out) {
  int count = window_cycles(s, out);
  if (s.stages < micro_batches) out[count++] = {s.stages, s.round_trip};
  return count;
}
// How much longer than `steps` pairs (`pair` each) a mix of the `count` cycles that moves no
// more than `steps` forwards on can be (0 at least): each cycle as often as fits, or once
// less, and what is left with one shorter cycle as often as fits. Every mix is a path, so
// each one tried gives a valid bound; these cover the paths the simulator takes (a round
// trip M / k times and one window cycle, as on BERT-48 with micro-batches of 1). A cycle no
// longer than its forwards' pairs adds nothing to a mix, so only the others are tried (the
// same maximum, with far fewer divisions: this runs for every suffix entry extended).
Seconds mixed_gain(const Cycle* cycles, int count, int steps, Seconds pair) {
  Cycle longer[kWindows + 2];  // each cycle's time beyond its pairs, where positive
  int useful = 0;
  for (const Cycle& c : std::span(cycles, count))
    if (const Seconds beyond = c.time - c.forwards * pair; beyond > 0)
      longer[useful++] = {c.forwards, beyond};
  Seconds best = 0;
  for (const Cycle& a : std::span(longer, useful)) {
    const int fit = steps / a.forwards;
    for (int n = fit; n >= std::max(0, fit - 1); --n) {
      const Seconds base = n * a.time;
      const int rest = steps - n * a.forwards;
      best = std::max(best, base);
      for (const Cycle& c : std::span(longer, useful))
        if (c.forwards < a.forwards) best = std::max(best, base + (rest / c.forwards) * c.time);
    }
  }
  return best;
}

// Z (1F1B, k < M): from stage b's first backward (B_0), b's next forward (F_k) may start a
// cycle through a window of j stages from b, as in R: forward on each, the last one's next
// operation the backward of j micro-batches on, back to b (B_j), whose next forward starts
// the next cycle; a cycle starts at B_m while b has the forward m + k. After the cycles, at
// B_a, b's backwards left and the forwards past its warm-up between them: (M - 1 - a) g +
// max(0, M - a - k) f. Tried: each cycle as often as fits, and once less followed by one more
// of any size (AmoebaNet-36 at GBS 32 on 2 x 8 GPUs: the cycle through stages 0 and 1, then
// through 0 to 2). With no cycle this is A. That covers the same paths as trying each count:
// a mix of one cycle repeated is convex in its count, so largest at none or as often as fits;
// and a cycle of j forwards no longer than j g, which replaces j of b's backwards, never
// lengthens a mix, so only the others are tried (the same maximum, with fewer steps: this
// runs for every suffix entry extended).
Seconds cycles_from_first_backward(std::span<const Cycle> all, Seconds f, Seconds g,
                                   int micro_batches, int k) {
  auto rest = [&](int a) {
    return (micro_batches - 1 - a) * g + std::max(0, micro_batches - a - k) * f;
  };
  Cycle useful[kWindows + 4];
  int count = 0;
  for (const Cycle& c : all)
    if (c.time > c.forwards * g) useful[count++] = c;
  const std::span<const Cycle> cycles(useful, count);
  Seconds best = rest(0);
  const int last_start = micro_batches - 1 - k;  // the last B_m a cycle can start from
  for (const Cycle& a : cycles) {
    const int fit = last_start / a.forwards + 1;
    best = std::max(best, fit * a.time + rest(fit * a.forwards));
    // Once less, then one more cycle of any size (fit * a.forwards passes last_start).
    const int at = (fit - 1) * a.forwards;
    const Seconds base = (fit - 1) * a.time;
    for (const Cycle& c : cycles) best = std::max(best, base + c.time + rest(at + c.forwards));
  }
  return best;
}

// Stage b's last backward after stage b + 1's first (1F1B): the path may stay on b + 1 for
// its next j backwards, each after one of its forwards while it has forwards left (the
// M - w_{b+1} past its warm-up: f + g each, its head_work), then cross to stage b for
// backwards j .. M - 1 and the forwards past b's warm-up that come between them. Beyond the
// round trip from b: min(j, M - w_{b+1}) (f + g)_{b+1} + (M - 1 - j) g + max(0, M - j - w) f.
// It is piecewise linear in j, largest where b + 1's forwards run out or b's own begin, so
// only those j are tried (j = 0 is A). On Inception-v3 at GBS 32 on 2 x 8 GPUs a 4-stage
// plan's path (j = 1: stage 1's forward and backward, then stage 0's three backwards) runs
// 2.3 ms past A.
Seconds handed_over(Seconds f, Seconds g, const SuffixBound& next, int micro_batches, int warmup) {
  const int left = micro_batches - std::min(micro_batches, next.stages);
  if (left == 0) return 0;
  auto path = [&](int j) {
    return std::min(j, left) * next.head_work + (micro_batches - 1 - j) * g +
           std::max(0, micro_batches - j - warmup) * f;
  };
  return std::max(path(left), path(std::min(left, micro_batches - warmup)));
}

// How long after stage b's first forward starts its last forward can start (`forward`) and
// its last backward can end (`backward`), each beyond the round trip from b for the latter:
// the terms of stage b that pass its last forward (Q, A') or end at its last backward (A,
// A', L, T, G, B and Q); `later`: the chains that stay on stage b + 1 after its first
// backward, delayed by b's pace: its own operations, which end before b's last backward
// too, or its next backwards until it hands one to b (H, handed_over). Like a later
// stage's terms, they pace b's all-reduce only in `paced` bounds. 1F1B: `late` is how much
// later than its round trip micro-batch 0's backward on stage b can end, and `after` how
// long after it b's last backward can end (A, A', R).
struct StagePaths {
  Seconds forward = 0, backward = 0, later = 0;
  Seconds late = 0, after = 0;
  // 1F1B, k < M: the longest of A' and R to b's last backward, whose last round trip passes
  // b + 1's last backward g + c before it (0 otherwise).
  Seconds round_trips = 0;
};
StagePaths stage_paths(const StageTimes& t, Seconds send, const SuffixBound* next,
                       const SuffixBound& s, int micro_batches, Schedule schedule, bool windows) {
  const double m = micro_batches;
  const Seconds f = t.forward, g = t.backward;
  const int k = s.stages;
  const int warmup = schedule == Schedule::GPipe ? micro_batches : std::min(micro_batches, k);
  StagePaths p;
  p.forward = (m - 1) * f + (m - warmup) * g;  // Q
  // Q, B, G (1F1B: A and L too, which the terms below reach anyway): what the search checks
  // before it builds the suffix, the same numbers.
  p.backward = stage_terms(t, send, k, s.round_trip, micro_batches, schedule);
  // T (GPipe: every stage runs its M forwards first, so the last one's round trip to the
  // end comes back before micro-batch 0's backward)
  if (schedule == Schedule::GPipe) {
    p.backward = std::max(p.backward, (m - 1) * (s.forward_wave + s.backward_wave));
    return p;
  }
  // A later stage j runs its w_j warm-up forwards before its first backward, and the last
  // of them comes from stage b, which forwards them (and whose link carries them) one after
  // another: that backward ends no earlier than (w_j - 1) max(f, c) after micro-batch 0's
  // round trip from b + 1 through j as if j were the last stage (next's head_work or
  // window), late_j beyond the round trip R_{b+1}. The gradient then passes every stage
  // back to b, so stage b + 1 still runs its operations after its first backward after
  // that. The delay a later stage found (`delayed`) passes on to b the same way.
  // Stage b's own warm-up delays its first backward too: it follows b's w forwards, so it
  // ends no earlier than w f + g after the first starts, (w - 1) f - 2 c - R_{b+1} beyond
  // the round trip R_b.
  Seconds next_late = 0;  // how late stage b + 1's first backward can end
  if (next) {
    const Seconds pace = std::max(f, send);
    Seconds paced_late = 0;
    for (int i = 0; i < std::min(windows ? kPaced : 1, next->stages); ++i) {
      const Seconds trip = i == 0 ? next->head_work : next->window[i - 1];
      const Seconds warm = (std::min(micro_batches, next->stages - i) - 1) * pace;
      paced_late = std::max(paced_late, warm + trip - next->round_trip);
      // Stage j's own operations after that late first backward end at its last backward
      // (its `after`, in paced_after; only suffixes built with windows have it), which
      // comes before b's too.
      if (i > 0 && next->paced_after[i - 1] > 0)
        p.later = std::max(p.later, warm + next->paced_after[i - 1] - next->round_trip);
    }
    next_late = std::max(next->delayed, paced_late);
    p.late = std::max(next_late, (warmup - 1) * f - 2 * send - next->round_trip);
    p.later = std::max({p.later, paced_late + next->after,
                        handed_over(f, g, *next, micro_batches, warmup) + next_late});
  }
  p.after = (m - 1) * g + (m - warmup) * f;  // A
  // L: from stage b + 1's first backward, the cut's link carries the M gradients one after
  // another, the last one then runs its backward on stage b.
  p.backward = std::max(p.backward, (m - 1) * send + next_late);
  if (k < micro_batches) {  // A' and R
    // After micro-batch 0's round trip from b, stage b's forwards k .. M - 1 follow one
    // another through cycles: a pair (f + g) moves one forward on, a window of j stages
    // (R) j of them, all k stages (A': a round trip) k; the last forward's round trip ends
    // the path. Any mix of them is a path.
    Cycle cycles[kWindows + 4];
    int count = trip_cycles(s, micro_batches, cycles);
    if (k - 1 > kWindows + 1 && s.tail > 0) cycles[count++] = {k - 1, s.tail};
    const int steps = micro_batches - 1 - k;
    auto chained = [&](Seconds pair) {
      return s.round_trip + steps * pair + mixed_gain(cycles, count, steps, pair);
    };
    const Seconds own = chained(f + g);
    p.forward = std::max(p.forward, own + p.late);
    // To b's last backward, the pairs left may also come after the cycles, in the last round
    // trip: it may stay on any stage it passes for them, which alternates its forwards and
    // backwards there (its f + g each), so on the slowest. The larger pair gives the longer
    // path.
    p.round_trips = s.max_pair > f + g ? chained(s.max_pair) : own;
    p.after = std::max(p.after, p.round_trips);
    // Or the round trips come first, j = floor((M - 1) / k) of them to b's backward of
    // micro-batch jk, and then the gradients of the M - 1 - jk micro-batches after it reach b
    // one after another over the cut's backward link (as in L), the last one to b's last
    // backward (A''). Where the link is slower than a pair, this is the longer path.
    // The same with window cycles in place of the round trips: the last cycle's window runs
    // the backward of x - (k - j) after the forward of x, and from there the gradients of the
    // micro-batches after it follow over the cut's backward link (VGG-19 at GBS 896 on 8 x 8
    // GPUs, stages of 56, 6, 1 and 1 GPUs whose first cut crosses machines: 6 cycles through
    // stages 0 and 1, then 3 gradients, 180.92 ms with the all-reduce, the simulated time; the
    // bound was 174.06). A cycle of j forwards runs as often as fits from forward k on, once
    // more from the last forward it reaches: linear in the count, largest there or at one.
    if (next) {
      for (const Cycle& c : std::span(cycles, count)) {
        const int most = (micro_batches - 1 - k) / c.forwards + 1;
        for (const int n : {1, most})
          p.after = std::max(p.after, n * c.time + (micro_batches - 1 - n * c.forwards) * send);
      }
    }
    // Or the last round trip stays on a later stage j for the backwards j runs after its
    // last forward (last_drain), then comes back: it skips the stages after j (and their
    // pairs), so it passes no later stage's last backward (not a round trip for `exposed`).
    if (next) p.after = std::max(p.after, own + next->last_drain);
    // Z: the same cycles from b's first backward, then b's backwards left, and pairs (a
    // cycle of one stage) among them. Without windows, the cycle through b and b + 1 (P's)
    // still counts.
    if (next && k > 2 && cycles[0].forwards != 2)
      cycles[count++] = {2, f + g + 2 * send + next->head_work};
    cycles[count++] = {1, f + g};
    p.after = std::max(
        p.after, cycles_from_first_backward(std::span(cycles, count), f, g, micro_batches, k));
  } else {  // T
    p.backward = std::max(p.backward, (m - 1) * (f + g) + s.after_x);
  }
  p.backward = std::max(p.backward, p.after + p.late);
  return p;
}

// D (1F1B): how much later than micro-batch 0's round trip the backwards of micro-batches
// 1 .. kArrivals on stage b can end (into s.arrival), from `late` (micro-batch 0's), and the
// longest path from one of them to b's last backward. A cycle starts at b's backward of x
// while b has the forward x + k: through a window of j stages (R) it ends in b's backward of
// x + j, through all k (A') in x + k, and a pair (f + g) in x + 1; backwards follow one
// another (g); a later stage's delay stays with the gradient on its way to b.
Seconds arrivals(const StageTimes& t, const SuffixBound* next, Seconds late, int micro_batches,
                 SuffixBound& s) {
  const Seconds f = t.forward, g = t.backward;
  const int k = s.stages, warmup = std::min(micro_batches, k);
  Cycle cycles[kWindows + 1];
  const int count = trip_cycles(s, micro_batches, cycles);
  Seconds delay[kArrivals + 1] = {late};
  Seconds longest = 0;
  for (int m = 1; m <= std::min(kArrivals, micro_batches - 1); ++m) {
    Seconds& d = delay[m];
    d = std::max(next ? next->arrival[m - 1] : 0, delay[m - 1] + g);
    if (m - 1 + warmup < micro_batches) d = std::max(d, delay[m - 1] + f + g);
    for (const Cycle& c : std::span(cycles, count))
      if (const int x = m - c.forwards; x >= 0 && x + k < micro_batches)
        d = std::max(d, delay[x] + c.time);
    s.arrival[m - 1] = d;
    longest = std::max(
        longest, d + (micro_batches - 1 - m) * g + std::max(0, micro_batches - warmup - m) * f);
  }
  return longest;
}

// F (1F1B, k < M): from stage b's first backward, cycles as in Z (pairs, windows' cycles and
// round trips) to b's backward of x = M - 1 - k - d, after which b starts the forward of
// M - 1 - d, which fed[d] follows to a later stage's all-reduce; the pairs fill what the
// cycles leave. Every mix is a path; tried: each cycle as often as fits or once less, then
// pairs, with each d < kFed (as in mixed_gain, a cycle no longer than its pairs adds nothing).
Seconds forwarded(std::span<const Cycle> cycles, Seconds pair, int last_start,
                  const SuffixBound& s) {
  auto ended = [&](Seconds cycled, int left) {  // `left` forwards to go by pairs, then fed
    Seconds best = 0;
    for (int d = 0; d <= std::min(left, kFed - 1); ++d)
      best = std::max(best, cycled + (left - d) * pair + s.fed[d]);
    return best;
  };
  Seconds best = ended(0, last_start);
  for (const Cycle& a : cycles) {
    if (a.time <= a.forwards * pair) continue;
    const int fit = last_start / a.forwards;
    for (int n = fit; n >= std::max(0, fit - 1); --n)
      best = std::max(best, ended(n * a.time, last_start - n * a.forwards));
  }
  return best;
}

// Stage b's fed and led (1F1B): its own operations from the forward of micro-batch m on (the
// M - m forwards, and the backwards from then on: all M in its warm-up) and its all-reduce,
// or that forward, the transfer and the next stage's.
void feed(const StageTimes& t, Seconds send, const SuffixBound* next, int micro_batches,
          SuffixBound& s) {
  const int warmup = std::min(micro_batches, s.stages);
  auto own = [&](int m) {
    return (micro_batches - m) * t.forward +
           std::min(micro_batches, micro_batches - m + warmup - 1) * t.backward + t.allreduce;
  };
  auto on = [&](Seconds later) { return t.forward + send + later; };
  for (int d = 0; d < std::min(micro_batches, kFed); ++d)
    s.fed[d] = std::max(own(micro_batches - 1 - d), next ? on(next->fed[d]) : 0);
  for (int i = 0; i + 1 < std::min(micro_batches, kFed + 1); ++i)
    s.led[i] = std::max(own(i + 1), next ? on(next->led[i]) : 0);
}

// F' (1F1B): stage b's link carries micro-batches 0 .. m one after another, each after its
// forward there, so m leaves b no earlier than f + c + m max(f, c) after micro-batch 0's
// forward starts on b; the next stage's led then follows it. Beyond the round trip from b.
Seconds led_path(const StageTimes& t, Seconds send, const SuffixBound& next, int micro_batches,
                 Seconds round_trip) {
  Seconds best = 0;
  for (int i = 0; i + 1 < std::min(micro_batches, kFed + 1); ++i)
    best = std::max(
        best, t.forward + send + (i + 1) * std::max(t.forward, send) + next.led[i] - round_trip);
  return best;
}

// F and F' of stage b (1F1B), beyond the round trip from b (`late`: how late b's first
// backward can end); fills s.fed and s.led.
Seconds forward_paths(const StageTimes& t, Seconds send, const SuffixBound* next, int micro_batches,
                      Seconds late, SuffixBound& s) {
  feed(t, send, next, micro_batches, s);
  Seconds longest = next ? led_path(t, send, *next, micro_batches, s.round_trip) : 0;
  if (s.stages < micro_batches) {
    Cycle cycles[kWindows + 1];
    const int count = trip_cycles(s, micro_batches, cycles);
    longest = std::max(longest, late + forwarded(std::span(cycles, count), t.forward + t.backward,
                                                 micro_batches - 1 - s.stages, s));
  }
  return longest;
}

// The terms that do not end at stage b's last backward: C and W (GPipe), P (1F1B; its C is
// L's (M - 1) c, which L never falls below).
Seconds other_terms(const StageTimes& t, Seconds send, const SuffixBound* next,
                    const SuffixBound& s, int micro_batches, Schedule schedule) {
  const double m = micro_batches;
  if (schedule == Schedule::GPipe)
    return std::max((m - 1) * send, (m - 1) * (s.forward_wave + s.backward_wave));  // C, W
  const int k = s.stages;
  if (!next || k < 2 || k >= micro_batches) return 0;
  const int cycles = (micro_batches + 1 - k) / 2;  // P
  return (k - 2) * t.forward + cycles * (t.forward + t.backward + 2 * send + next->head_work);
}

}  // namespace

Seconds stage_terms(const StageTimes& t, Seconds send, int stages, Seconds round_trip,
                    int micro_batches, Schedule schedule) {
  const double m = micro_batches;
  const Seconds f = t.forward, g = t.backward;
  const int warmup = schedule == Schedule::GPipe ? micro_batches : std::min(micro_batches, stages);
  const Seconds q = (m - 1) * f + (m - warmup) * g;
  Seconds terms = std::max({q, m * (f + g) - round_trip, (m - 1) * g});  // Q, B, G
  if (schedule == Schedule::GPipe) return terms;
  // A (late is never negative) and L (nor is the next stage's lateness).
  return std::max({terms, (m - 1) * g + (m - warmup) * f, (m - 1) * send});
}

SuffixBound prepend_stage(const StageTimes& t, Seconds send, const SuffixBound* next,
                          int micro_batches, Schedule schedule, const BoundTerms& terms) {
  const bool windows = terms.windows, paced = terms.paced, last_pairs = terms.last_pairs;
  SuffixBound s;
  s.stages = next ? std::min(next->stages + 1, micro_batches) : 1;
  s.round_trip = t.forward + t.backward + 2 * send + (next ? next->round_trip : 0);
  if (schedule == Schedule::GPipe) {
    s.forward_wave = std::max({t.forward, send, next ? next->forward_wave : 0});
    s.backward_wave = std::max({t.backward, send, next ? next->backward_wave : 0});
  } else {
    s.head_work = t.forward + t.backward;
    if (windows && last_pairs) {
      s.max_pair = next ? std::max(next->max_pair, s.head_work) : s.head_work;
      // Stage b's w backwards after its last forward, instead of the rest of the round trip.
      if (terms.last_drains && next)
        s.last_drain =
            std::max(next->last_drain, (s.stages - 1) * t.backward - 2 * send - next->round_trip);
      // The window of all but the last stage: stage b alone in front of the last stage.
      if (next && s.stages < micro_batches)
        s.tail = next->stages == 1 ? s.head_work : s.head_work + 2 * send + next->tail;
    }
    // Windows need a stage after b. (R follows them from stages with fewer than M stages to
    // the end, `late` from every stage.)
    const bool windowed = windows && next;
    // A window of i + 2 stages from b is stage b, its outgoing transfer both ways and the
    // window of i + 1 stages from b + 1 (one stage: b + 1's head_work); it fits when b + 1
    // has at least i + 1 stages to the end.
    const int fitting = windowed ? std::min(kWindows, next->stages) : 0;
    for (int i = 0; i < fitting; ++i)
      s.window[i] = s.head_work + 2 * send + (i == 0 ? next->head_work : next->window[i - 1]);
    // Stage b is x = S - M when it is the first with M stages from it to the end.
    const bool is_x = s.stages == micro_batches && (!next || next->stages < micro_batches);
    if (is_x)
      s.after_x = t.forward + t.backward - s.round_trip;  // minus what lies beyond x
    else if (s.stages == micro_batches)
      s.after_x = next->after_x;
  }
  StagePaths paths = stage_paths(t, send, next, s, micro_batches, schedule, windows);
  const Seconds forwards = schedule != Schedule::GPipe && windows && terms.forwards
                               ? forward_paths(t, send, next, micro_batches, paths.late, s)
                               : 0;
  if (schedule != Schedule::GPipe && windows) {
    if (terms.arrivals)
      paths.backward = std::max(paths.backward, arrivals(t, next, paths.late, micro_batches, s));
    s.delayed = paths.late;
    s.after = paths.after;
    // The window of i + 2 stages and its last stage's `after`: b, its transfer both ways and
    // the same of b + 1's window of i + 1 stages.
    if (last_pairs && terms.paced_afters && next)
      for (int i = 0; i < kWindows && s.window[i] > 0; ++i)
        s.paced_after[i] =
            i == 0 ? s.window[0] + next->after : s.head_work + 2 * send + next->paced_after[i - 1];
  }
  s.worst =
      std::max({paths.backward, paths.later, other_terms(t, send, next, s, micro_batches, schedule),
                next ? next->worst : 0});
  // Stage b's last backward ends after its own terms and, when `paced`, after every term of
  // the later stages and cuts (their last backwards come first, then the gradient passes b).
  s.exposed = std::max({paths.backward, paced ? paths.later : 0, next && paced ? next->worst : 0}) +
              t.allreduce;
  s.exposed = std::max(s.exposed, forwards);  // F and F' end with an all-reduce
  // After the last micro-batch's forward, GPipe runs all M backwards of a stage.
  s.drain = t.allreduce + (schedule == Schedule::GPipe ? (micro_batches - 1) * s.backward_wave : 0);
  if (next) {
    const Seconds back = t.backward + send;  // from stage b + 1's last backward to b's
    s.drain = std::max(s.drain, next->drain - back);
    // The last micro-batch leaves b after its last forward starts (Q, A'), and after the
    // M - 1 transfers before it (C).
    const Seconds last_sent = std::max(paths.forward, (micro_batches - 1) * send);
    s.exposed = std::max({s.exposed, next->exposed - back, last_sent + next->drain - back});
    // A' and R pass stage b + 1's last backward at their end, so its all-reduce (and the
    // later stages', next's drain) follow them too.
    if (paths.round_trips > 0)
      s.exposed = std::max(s.exposed, paths.late + paths.round_trips - back + next->drain);
  }
  // GPipe: the forward wave on the slowest stage or cut of the suffix, the last micro-batch
  // to the end, micro-batch 0's gradient back to the stage s of the drain, its backward
  // wave, the last gradient on to s, then s's all-reduce (W, paced to every all-reduce).
  if (schedule == Schedule::GPipe)
    s.exposed = std::max(s.exposed, (micro_batches - 1) * s.forward_wave + s.drain);
  return s;
}

Seconds interleaved_lower_bound(const PipelineShape& shape) {
  const int groups = shape.devices();
  const auto g_count = static_cast<std::size_t>(groups);
  const auto stages = shape.stages.size();
  std::vector<Seconds> work(g_count, 0);
  Seconds round_trip = 0;
  for (std::size_t j = 0; j < stages; ++j) {
    const StageTimes& t = shape.stages[j];
    work[j % g_count] += shape.micro_batches * (t.forward + t.backward);
    round_trip += t.forward + t.backward + (j + 1 < stages ? 2 * t.send : 0);
  }
  // Each group's outgoing links carry M transfers per chunk: activations (every stage but
  // the last) and gradients (every stage but the first).
  std::vector<Seconds> forward_link(g_count, 0), backward_link(g_count, 0);
  for (std::size_t j = 0; j + 1 < stages; ++j) {
    forward_link[j % g_count] += shape.micro_batches * shape.stages[j].send;
    backward_link[(j + 1) % g_count] += shape.micro_batches * shape.stages[j].send;
  }
  Seconds bound = round_trip, before = 0, after = 0;
  for (std::size_t d = 0; d < g_count; ++d) {
    // The first activation leaves after micro-batch 0's first forward here; the last
    // gradient this group sends goes to stage d - 1 (its first chunk's), which then still
    // runs its backward and passes it on.
    const StageTimes& first = shape.stages[d];
    bound = std::max(bound, before + first.forward + forward_link[d]);
    if (d > 0) bound = std::max(bound, backward_link[d] + after - shape.stages[d - 1].send);
    const Seconds end = before + work[d];  // the group's last operation ends no earlier
    bound = std::max(bound, end + after);
    // Chunk c's last backward is followed only by the last round's backwards of chunks
    // c-1..0 (p each), so its all-reduce starts no earlier than `end` minus those.
    Seconds later = 0;
    for (std::size_t j = d; j < stages; j += g_count) {
      const StageTimes& t = shape.stages[j];
      bound = std::max(bound, end - later + t.allreduce);
      later += groups * t.backward;
    }
    const StageTimes& t = shape.stages[d];
    before += t.forward + t.send;
    after += t.backward + t.send;
  }
  return bound;
}

Seconds path_lower_bound(const PipelineShape& shape, const BoundTerms& terms) {
  if (shape.schedule == Schedule::Interleaved) return interleaved_lower_bound(shape);
  const int stages = static_cast<int>(shape.stages.size());
  SuffixBound suffix;
  for (int b = stages - 1; b >= 0; --b) {
    const StageTimes& t = shape.stages[b];
    suffix = prepend_stage(t, b + 1 < stages ? t.send : 0, b + 1 < stages ? &suffix : nullptr,
                           shape.micro_batches, shape.schedule, terms);
  }
  return bound_of(suffix);
}

}  // namespace pe::detail
