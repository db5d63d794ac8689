// The stages the pipeline dynamic program (dp_program.h) tries from a cell, and the entries
// they make in front of the suffixes behind them.
#include "search/dp_program.h"

#include <algorithm>
#include <cmath>

namespace pe::detail::dp {

// Every variant of the stages from state a on devices [o, o + r) of each copy.
// (The answer is reused by the next call.)
std::vector<Dp::Trial>& Dp::trials(Work& w, std::size_t a, int o, int r, bool one_stage) {
  const bool ar_intra = layout_.all_replicas_compact(o, r);
  const int most = one_stage ? r : q_.micro_batch;  // data-parallel replicas of the stage
  const CostModel::Place place = cost_.place(layout_, o, r);
  stage_variants(cost_, layout_, o, r, most, w.variants);
  w.trials.clear();
  for (const StageVariant& v : w.variants) {
    const int replicas = r / v.tensor_parallel;
    const StageSamples samples = samples_on(one_stage, replicas);
    const int reducers = replicas * q_.replicas;
    w.trials.push_back({v, place, samples,
                        CostModel::ExposedScan(cost_, first_of(a), samples.timed, reducers,
                                               ar_intra, v, place.speed),
                        reducers, ar_intra, true, reducers});
  }
  return w.trials;
}

// Whether devices `first` and `last` of a copy sit on different machines, as far as a class
// pass can tell: only where it has one copy, which starts on device 0 (on the cluster's first
// machines too); copies of a shape's class bound may start anywhere (DpQuery::narrowest_copy).
bool Dp::split(int first, int last) const {
  return q_.replicas == 1 && layout_.machine(0, first) != layout_.machine(0, last);
}

// The widths [first, second] of the stages from state a that start in class o and end
// before a device of class o + d (DpQuery::device_class); empty when first > second.
std::pair<int, int> Dp::class_widths(std::size_t a, int o, int d) const {
  const auto [first, last] = starts(a, o);
  const int end = (o + d) * c_;  // the first device of class o + d
  const int widest = std::min(end + c_ - 1, w_) - first;
  return {std::max(1, end - last),
          q_.max_stage_width > 0 ? std::min(widest, q_.max_stage_width) : widest};
}

// Every variant of the stages from state a of `narrowest` to `widest` devices (a class pass,
// DpQuery::device_class), each with the least times and memory of its widths:
// compute and memory on the widest with the fastest GPUs and the largest memory, the
// all-reduce and weight gathers on the narrowest, exposed behind the slowest GPUs' backward
// of the narrowest's samples, inside a machine where the narrowest's devices of every copy
// (DpQuery::narrowest_copy apart) fit the largest machine, the stages may sit on one (`head`)
// and that link is the faster. (The answer is reused by the next call.)
std::vector<Dp::Trial>& Dp::class_trials(Work& w, std::size_t a, int narrowest, int widest,
                                         bool one_stage, bool head) {
  w.trials.clear();
  const CostModel::Place place{cost_.fastest(), cost_.largest_memory(), ""};
  for (int t = 1; t <= cost_.max_tensor_parallel() && t <= widest; ++t) {
    // Widths that t divides, with at most b data-parallel replicas of t GPUs (any number in
    // a one-stage plan).
    const int lo = (narrowest + t - 1) / t,
              hi = one_stage ? widest / t : std::min(widest / t, q_.micro_batch);
    if (lo > hi || !cost_.tensor_parallel_allowed(t)) continue;
    for (const bool recompute : {false, true}) {
      if (recompute && !cost_.recomputable()) continue;
      const StageVariant v{t, recompute};
      const int reducers = lo * q_.replicas;
      const int stride = std::max(q_.narrowest_copy, lo * t);  // between copies' stages
      const bool intra =
          intra_allreduce_ && head && (q_.replicas - 1) * stride + lo * t <= largest_machine_;
      w.trials.push_back(
          {v, place, samples_on(one_stage, hi),
           CostModel::ExposedScan(cost_, first_of(a), samples_on(one_stage, lo).timed, reducers,
                                  intra, v, cost_.slowest()),
           reducers, intra, true, hi * q_.replicas});
    }
  }
  return w.trials;
}

// Every stage [a, e] on devices [o, o + r), in each variant: in a chain for growing e until
// no variant fits (stages only grow with e); otherwise for every e whose cut contains state
// a - 1's. A coarse pass's stage narrower than its granule can only be the last, [a, n - 1].
// (In a free-width pass, o is a position inside a machine: the stage stands for those on
// every later device of that position, which run as it does.)
void Dp::widen(Work& w, std::size_t a, int o, int r) {
  // Under DpQuery::max_stages, a stage after the first with a suffix behind it makes a plan of
  // at least three stages.
  const bool last_only = r % g_ != 0 || (a > 0 && b_ == 1 && most_stages_ < 3);
  if (last_only && !cost_.stage(a, n_ - 1)) return;
  std::vector<Trial>& variants = trials(w, a, o, r, false);
  const int start = starts(a, o).second;  // a free-width pass: the last device it may start on
  Stage s{
      a,  a, o, r, start, {}, 0, 0, layout_.compact(o, r), o + r < w_ && layout_.compact(o, r + 1),
      {}, 0, 0, 0};
  if (last_only) {
    s.last = n_ - 1, s.from = a, s.next = rows_;
    for (Trial& trial : variants)
      if (w.spend(1)) try_stage(w, s, trial);
    return;
  }
  grow(w, s, variants);
}

// Every stage from state a that starts in class o and ends before a device of class o + d
// (DpQuery::device_class), in each variant with its widths' least times. It sits on one
// machine where the narrowest fits the largest, and its cut stays inside one where the
// narrowest and the next device do and that link is the faster. From d = 1 on, each holds
// the devices from the cell's last start to the one before class o + d, and with its cut the
// next one: where those cross a machine's end (split), no stage of them sits on one machine.
void Dp::widen_classes(Work& w, std::size_t a, int o, int d) {
  const auto [narrowest, widest] = class_widths(a, o, d);
  if (narrowest > widest) return;
  const int last = starts(a, o).second, end = (o + d) * c_;
  const bool head = narrowest <= largest_machine_ && (d == 0 || !split(last, end - 1));
  const bool cut = intra_transfer_ && narrowest + 1 <= largest_machine_ &&
                   (d == 0 || end >= w_ || !split(last, end));
  std::vector<Trial>& variants = class_trials(w, a, narrowest, widest, false, head);
  Stage s{a, a, o, d, last, {}, 0, 0, head, cut, {}, 0, 0, 0};
  grow(w, s, variants);
}

// Stage s in each live variant (its states, cells and devices set); false when no variant
// was offered, which on a chain ends the longer stages of the variants that failed. A stage
// that no suffix can follow is offered nothing, so it is not costed: most stages are such on
// wide copies (GNMT-32 on 16 single-GPU machines: 87 % of them; its sweep took half the time
// without them). Checking one costs about a comparison, and counts as one. It does not end a
// chain, since whether it breaks the bound or memory is not known: the next stage that can
// be followed, costed, may end it (`unfollowed` counts them: count_unfollowed).
bool Dp::try_variants(Work& w, Stage& s, std::vector<Trial>& variants, std::uint64_t& unfollowed) {
  const int next = cell_after(s);
  if (s.next < rows_ && (next >= slots_ || cell(s.next, next).empty()))
    return count_unfollowed(w, 1, unfollowed);
  return try_trials(w, s, variants);
}

// Stage s in each live variant, where a suffix can follow it (try_variants).
bool Dp::try_trials(Work& w, Stage& s, std::vector<Trial>& variants) {
  bool any = false;
  for (Trial& trial : variants) {
    if (!trial.live || !w.spend(1)) continue;
    const bool offered = try_stage(w, s, trial);
    any |= offered;
    trial.live = offered || !cost_.chain();
  }
  return any;
}

// Stage s (its first state or block, cells and devices set) for each last state, in each
// variant. The stages whose next cell holds no entry are counted as try_variants counts them,
// a run at a time (next_followed): most are such.
void Dp::grow(Work& w, Stage& s, std::vector<Trial>& variants) {
  if (b_ > 1) return grow_blocks(w, s, variants);
  const std::size_t a = s.first;
  const bool chain = cost_.chain();
  s.from = a;
  // The last states: from a on a chain, from 0 at state 0, else those whose cut contains
  // state a - 1's (ascending); the whole model is offer_whole_model's.
  const std::vector<std::uint32_t>* listed = chain || a == 0 ? nullptr : &cost_.later(a - 1);
  const std::size_t first = chain ? a : 0, end = a == 0 ? n_ - 1 : n_;
  const std::size_t count = listed ? listed->size() : end - first;
  auto last_at = [&](std::size_t i) { return listed ? std::size_t{(*listed)[i]} : first + i; };
  auto index_of = [&](std::size_t last) {  // of the first last state no less than `last`
    if (!listed) return std::min(count, std::max(last, first) - first);
    return static_cast<std::size_t>(std::lower_bound(listed->begin(), listed->end(), last) -
                                    listed->begin());
  };
  const int to = cell_after(s);
  std::uint64_t unfollowed = 0;
  for (std::size_t i = 0; i < count && !w.stopped;) {
    const std::size_t last = last_at(i), row = next_followed(last + 1, to);
    if (row > last + 1) {  // none follows a stage ending before state row - 1
      const std::size_t j = std::max(i + 1, index_of(row - 1));
      if (!count_unfollowed(w, j - i, unfollowed)) return;
      i = j;
      continue;
    }
    s.last = last, s.next = row;
    if (!try_trials(w, s, variants) && chain) return;
    ++i;
  }
}

// Counts `n` more stages that no suffix follows (try_variants): one step every
// kComparisonsPerStep of them; false when the steps run out.
bool Dp::count_unfollowed(Work& w, std::size_t n, std::uint64_t& unfollowed) {
  std::uint64_t steps = (unfollowed + n) / kComparisonsPerStep - unfollowed / kComparisonsPerStep;
  unfollowed += n;
  for (; steps > 0; --steps)
    if (!w.spend(1)) return false;
  return true;
}

// A block pass's stages from block a = s.first (DpQuery::state_block): those inside block a
// before its last state, which stand for no work; then for each block c from a on, those
// ending in c before its last state (the next starts in c: they hold states from a's last
// to c's first) and those ending at its last (the next starts in c + 1: to c's last). On a
// chain (the only graphs it cuts into blocks) the states they hold only grow, so a variant
// that breaks the bound or memory ends.
void Dp::grow_blocks(Work& w, Stage& s, std::vector<Trial>& variants) {
  const std::size_t a = s.first, from = first_of(a), to = last_of(a);
  for (Trial& trial : variants) {
    trial.origin = -kInfinite;
    for (std::size_t i = from; i <= to; ++i)
      trial.origin = std::max(trial.origin, trial.exposed.origin(i));
    trial.reach = trial.exposed.reach(to), trial.reached = to;
  }
  std::uint64_t unfollowed = 0;
  s.from = from, s.first = s.last = to;
  if (to > from) {
    s.inside = true, s.next = a, s.cut = inside_cut_[a];
    try_variants(w, s, variants, unfollowed);
    s.inside = false;
  }
  for (std::size_t c = a; c < rows_ && !w.stopped; ++c) {
    const std::size_t first = first_of(c), last = last_of(c);
    if (c > a && last > first) {
      s.last = first, s.next = c, s.cut = inside_cut_[c];
      if (!try_variants(w, s, variants, unfollowed)) return;
    }
    s.last = last, s.next = c + 1;
    s.cut = c + 1 < rows_ ? cost_.crossing(last, q_.micro_batch) : 0;
    if (!try_variants(w, s, variants, unfollowed)) return;
  }
}

// The all-reduce a block pass's stage s leaves exposed at least (DpQuery::state_block): the
// largest reach over the states it holds minus the largest origin of a first state it stands
// for (CostModel::ExposedScan::reach), which grow_blocks keeps as s.last grows.
Seconds Dp::block_exposed(const Stage& s, Trial& trial) const {
  for (; trial.reached < s.last; ++trial.reached)
    trial.reach = std::max(trial.reach, trial.exposed.reach(trial.reached + 1));
  return std::max(0.0, trial.reach - trial.origin);
}

// Offers stage s (its first, last, offset and width set) in the trial's variant to
// extend(); false when it breaks the bound or memory, which in a chain every longer stage
// from s.first does too. A block pass's stage inside a block has no work, memory or
// all-reduce.
bool Dp::try_stage(Work& w, Stage& s, Trial& trial) {
  const StageVariant& v = s.variant = trial.variant;
  if (w.front_state != s.from || w.front_device != s.start)
    w.front = in_front(s.from, s.start), w.front_state = s.from, w.front_device = s.start;
  const InFront& front = w.front;
  if (s.inside) {
    s.memory = trial.place.memory;
    s.times = {};
    s.weights = s.activations = s.plain_weights = s.plain_activations = 0;
    extend(w, s, front);
    return true;
  }
  const double timed = trial.samples.timed, kept = trial.samples.memory;
  const Seconds gather = cost_.weight_gather(s.first, s.last, v, trial.reducers, trial.ar_intra);
  const double speed = trial.place.speed;
  s.memory = trial.place.memory;
  s.times.forward = cost_.forward(s.first, s.last, timed, v, gather, speed);
  s.times.backward = cost_.backward(s.first, s.last, timed, v, gather, speed);
  const Seconds compute = s.times.forward + s.times.backward;
  if (!busy_within_bound(compute) || front.trip() + compute + front.pace() > bound_) return false;
  s.weights = cost_.weight_memory(s.first, s.last, v, trial.memory_reducers) +
              cost_.working_memory(s.first, s.last, kept, v);
  s.activations = cost_.activation_memory(s.first, s.last, kept, v);
  if (!fits(s, 1)) return false;
  if (v.recompute) {
    const StageVariant plain{v.tensor_parallel, false};
    s.plain_weights = cost_.weight_memory(s.first, s.last, plain, trial.memory_reducers) +
                      cost_.working_memory(s.first, s.last, kept, plain);
    s.plain_activations = cost_.activation_memory(s.first, s.last, kept, plain);
  }
  s.times.allreduce = b_ > 1 ? block_exposed(s, trial) : trial.exposed.extend_to(s.last);
  extend(w, s, front);
  return true;
}

// A stage of every state on r devices is a one-stage plan, with its compute and memory
// from stage_samples, as evaluate() has it (in a class pass, wherever its devices sit).
void Dp::offer_whole_model(Work& w, int r) {
  if (!w.spend(n_)) return;
  const std::size_t last = n_ - 1;
  Stage s{0,  last, 0, r, 0, {}, 0, 0, layout_.compact(0, r), r < w_ && layout_.compact(0, r + 1),
          {}, 0,    0, 0};
  s.next = rows_;
  if (c_ > 1) s.head = r <= largest_machine_ && !split(0, r - 1);
  for (Trial& trial : c_ > 1 ? class_trials(w, 0, r, r, true, s.head) : trials(w, 0, 0, r, true))
    try_stage(w, s, trial);
}

// The entry for stage s in front of a suffix entry (`next` null: s is the last stage),
// with `send` the transfer across the cut between them.
// In a timed pass its timing goes to the end of `to`, from next's in `after`.
Entry Dp::prepend(const Stage& s, const Entry* next, Seconds send, int index, const Timings& after,
                  Timings& to) const {
  Entry e{prepend_stage(s.times, send, next ? &next->bound : nullptr, q_.micro_batches, q_.schedule,
                        terms_),
          s.head,
          s.last,
          s.width,
          index,
          s.variant};
  // (Under DpQuery::max_stages a GPipe suffix of fewer stages can be followed by more, so
  // suffixes compete only with those of their own count there too.)
  const bool any_count = q_.schedule == Schedule::GPipe && most_stages_ == kAnyCount;
  e.staged = any_count ? 0 : e.k();
  e.next_row = static_cast<std::uint32_t>(s.next);
  e.sited = e.head && compact_cuts_;
  if (timed_) {
    std::array<Seconds, timing_entries(kBlockTimedMicroBatches)>
        timing;  // `after` and `to` may be one
    prepend_timing(s.times, send, next ? after.of(*next) : nullptr, q_.micro_batches, q_.schedule,
                   e.k(), timing.data());
    e.timing = static_cast<std::uint32_t>(to.size());
    std::copy_n(timing.begin(), to.n(), to.add());
  }
  return e;
}

// Puts stage s in front of every entry of the cell that follows it; `front` is what the stages
// in front of s add at least (in_front).
void Dp::extend(Work& w, const Stage& s, const InFront& front) {
  if (enumerating_) {
    // Each entry tried costs a prepend per stage, and in a timed pass the composition of its
    // timing too, as when the cells were filled: counted as one step, an enumeration of
    // ResNet-101's graph at GBS 64 on 8 machines of 8 GPUs (8 copies of 8 micro-batches of 1,
    // a relaxed timed pass of 256 buckets) took 280 s for 388 M steps, about 7 times as long a
    // step as its pass's (13 s for 129 M).
    const std::size_t entries = s.last + 1 == n_ ? 1 : cell(s.last + 1, s.offset + s.width).size();
    const std::uint64_t prepend = timed_ ? 1 + timing_steps(q_.micro_batches) : 1;
    if (!w.spend(entries * (prefix_.size() + 1) * prepend)) return;
    const Seconds least = completion(s);
    if (least <= bound_) children_.push_back({s, least});
    return;
  }
  if (s.next == rows_) {
    if (!refused(s, 1)) offer(w, prepend(s, nullptr, 0, -1, blank_, w.timings), front);
    return;
  }
  const int to = cell_after(s);
  if (to >= slots_) return;
  const std::vector<Entry>& next = cell(s.next, to);
  if (!w.spend(next.size())) return;
  const Bytes crossing = b_ > 1 ? s.cut : cost_.crossing(s.last, q_.micro_batch);
  const std::vector<Brief>& briefs = briefs_[index(s.next, to)];
  // The next cell is sorted by (k, head, y): an entry no better than the last one offered
  // from its group is dominated by it (kept as its index among the candidates: entries are
  // large).
  const std::size_t none = std::numeric_limits<std::size_t>::max();
  std::size_t last = none;
  for (std::size_t i = 0; i < next.size(); ++i) {
    const Brief& after = briefs[i];
    // Refused before the bound is built: a stage beyond DpQuery::max_stages (counting one in
    // front of a stage after the first), one that does not
    // fit memory (or needs no recomputation) with this many stages from it on, or whose round
    // trip and the next entry's worst term (which prepending never lowers) break the bound.
    if (after.k + (s.first > 0) >= most_stages_ ||
        refused(s, std::min(after.k + 1, q_.micro_batches)))
      continue;
    const int split = std::min(s.variant.tensor_parallel, after.t);
    const Seconds c = cost_.transfer(crossing / split, after.head && s.cut_compact);
    const Seconds round_trip = s.times.forward + s.times.backward + 2 * c + after.round_trip;
    const Seconds before = front.trip();
    if (before + round_trip + std::max(after.worst, front.pace()) > bound_) continue;
    // Nor can its all-reduce term fit (offer() would drop it): stage b's all-reduce follows
    // the next stages' worst term (when paced) and their all-reduce term (prepend_stage).
    const Seconds ar = s.times.allreduce;
    if ((terms_.paced && round_trip + (after.worst + ar) > bound_) ||
        round_trip + (after.exposed - (s.times.backward + c)) > bound_)
      continue;
    // A timed pass's suffix also composes its timing, which costs about a step more (a few
    // micro-batches: kTimedMicroBatches) or more than one (timing_steps).
    if (timed_ && !w.spend(timing_steps(q_.micro_batches))) return;
    // Nor can the stage's own terms (stage_terms), which its worst and all-reduce terms
    // take whatever the suffix (the next entry's worst passed above): offer() would drop the
    // entry, whose bound costs far more to build (ResNet-101 at GBS 512 on 256 GPUs: 222 M
    // suffixes built, 83 M of them dropped there; now 161 M and 24 M).
    const Seconds own = stage_terms(s.times, c, std::min(after.k + 1, q_.micro_batches), round_trip,
                                    q_.micro_batches, q_.schedule);
    if (before + round_trip + own > bound_ || round_trip + (own + ar) > bound_) continue;
    Entry e = prepend(s, &next[i], c, static_cast<int>(i), timings(index(s.next, to)), w.timings);
    if (last != none && w.candidates[last].group() == e.group() &&
        w.timings.no_worse(w.candidates[last], w.timings, e)) {
      if (e.timed()) w.timings.drop_last();
      continue;
    }
    if (offer(w, e, front)) last = w.candidates.size() - 1;
  }
}

// Keeps a candidate (whose stage extend() found fits memory) whose plans can still end
// within the bound: the stages in front add at least their round trip to y and their pace
// beside e (InFront), and never lower e or y + x (nor, in a timed pass, the suffix's end:
// Timings::rank, Timings::behind). A timed candidate's timing is the last of the work's, and
// goes with it when it is dropped.
bool Dp::offer(Work& w, const Entry& entry, const InFront& front) {
  const SuffixBound& b = entry.bound;
  if (front.trip() + b.round_trip + std::max(b.worst, front.pace()) > bound_ ||
      entry.total() > bound_ ||
      (entry.timed() &&
       (w.timings.rank(entry) > bound_ || w.timings.behind(entry, front) > bound_))) {
    if (entry.timed()) w.timings.drop_last();
    return false;
  }
  w.candidates.push_back(entry);
  if (w.candidates.size() > w.room) w.stopped = w.out_of_memory = true;  // as spend() stops
  return true;
}

// The transfer across the cut between stage s and the suffix entry behind it.
Seconds Dp::send(const Stage& s, const Entry& next) const {
  const int split = std::min(s.variant.tensor_parallel, next.t());
  return cost_.transfer(cost_.crossing(s.last, q_.micro_batch) / split, next.head && s.cut_compact);
}

}  // namespace pe::detail::dp
