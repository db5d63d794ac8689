// What the pipeline dynamic program (dp_program.h) drops unseen: cells no plan within the
// bound can pass through, and the floors of the stages in front of a suffix.
#include "search/dp_program.h"

#include <algorithm>
#include <cmath>

namespace pe::detail::dp {

// What the stages before state a on devices [0, o) add at least (InFront): each stage's f
// and g are at least its work over its width, no width exceeds parallelism(o), and the last
// of them sends its activations across the cut in front of a and gets the gradients back
// (send_floor).
InFront Dp::in_front(std::size_t a, int o) const {
  InFront front{.micro_batches = q_.micro_batches};
  if (a == 0) return front;
  const double fastest = cost_.fastest(), b = q_.micro_batch;
  const Seconds forward = cost_.forward(0, a - 1, b) / fastest;
  const Seconds backward = cost_.backward(0, a - 1, b) / fastest;
  const Seconds send = send_floor(a, o);
  const int widest = parallelism(o);
  front.arrive = forward / widest + send, front.back = backward / widest + send;
  // The cut's link carries one micro-batch after another each way (path_bound.h: C, L).
  front.forward_pace = std::max(forward / std::max(o, 1), send);
  front.backward_pace = std::max(backward / std::max(o, 1), send);
  return front;
}

// The path bound's terms of the slowest of the stages that hold states [first, last] on
// `devices` devices (InFront::pace).
Seconds Dp::pace(std::size_t first, std::size_t last, int devices) const {
  const double b = q_.micro_batch;
  const Seconds most = std::max(cost_.forward(first, last, b), cost_.backward(first, last, b));
  return (q_.micro_batches - 1) * most / (cost_.fastest() * std::max(devices, 1));
}

// The least transfer across the cut in front of state a from device o - 1 to device o of a
// copy (send()): the bytes split the most ways tensor parallelism may split them, over the
// link between the two devices. In a block pass, a is a block's first state, and the cut
// the least of the block's. 0 in a class or free-width pass, whose cells stand for stages
// that start on other devices, and in a coarse pass (floor_sends).
Seconds Dp::send_floor(std::size_t a, int o) const {
  if (cut_floor_.empty() || o == 0) return 0;
  const std::size_t o1 = static_cast<std::size_t>(o);
  return compact_cut_[o1 - 1] ? cut_floor_[a].intra : cut_floor_[a].inter;
}

// Fills cut_floor_ and compact_cut_ (send_floor) but in a class or free-width pass, and
// but in a coarse one (DpQuery::granule; greedy passes too), whose plans are candidates
// only: with it there, ResNet-50 at GBS 512 on 4,096 GPUs took 6.7 s instead of 1.4 s for
// the same answer (not found why).
void Dp::floor_sends() {
  if (c_ > 1 || period_ > 0 || g_ > 1) return;
  const double split = std::max(1, cost_.max_tensor_parallel());
  cut_floor_.assign(n_, {});
  for (std::size_t a = 1; a < n_; ++a) {
    const Bytes bytes = cost_.crossing(a - 1, q_.micro_batch) / split;
    const Seconds inter = cost_.transfer(bytes, false);
    cut_floor_[a] = {std::min(inter, cost_.transfer(bytes, true)), inter};
  }
  for (std::size_t a = 0; b_ > 1 && a < rows_; ++a)
    for (std::size_t j = first_of(a) + 1; j <= last_of(a); ++j) {
      CutFloor& least = cut_floor_[first_of(a)];
      least.intra = std::min(least.intra, cut_floor_[j].intra);
      least.inter = std::min(least.inter, cut_floor_[j].inter);
    }
  compact_cut_.assign(static_cast<std::size_t>(w_), 0);
  for (int o = 0; o + 1 < w_; ++o)
    compact_cut_[static_cast<std::size_t>(o)] = layout_.compact(o, 2);
}

// A stage's M forwards and backwards all lie on one path (path_bound.h, B), so no
// stage of a plan within the bound does more than bound / M per micro-batch.
bool Dp::busy_within_bound(Seconds per_micro_batch) const {
  return q_.micro_batches * per_micro_batch <= bound_;
}

// Necessary conditions for a cell to be part of a plan: the states before a fit devices
// [0, o) and the rest fit [o, W) within the bound (r devices do a stage's work at best r
// times faster, so some stage does at least the work over the devices), and the smallest
// fill_drain this split allows is within the bound.
// In a class pass, for some device of the class: the prefix's terms on its last device,
// the suffix's on its first.
// In a block pass, for some state of the block: the prefix's on its first, the suffix's
// on its last.
bool Dp::viable(std::size_t a, int o) const {
  const auto [first, last] = starts(a, o);
  if (first > last || !reachable(a, first)) return false;
  const double b = q_.micro_batch;
  const std::size_t from = first_of(a), to = last_of(a);
  const Seconds prefix = from ? work(0, from - 1) : 0;
  const Seconds suffix =
      (cost_.forward(to, n_ - 1, b) + cost_.backward(to, n_ - 1, b)) / cost_.fastest();
  if ((last > 0 && !busy_within_bound(prefix / last)) || !busy_within_bound(suffix / (w_ - first)))
    return false;
  // From state 0 a one-stage plan may use all `rest` devices (fill()).
  const int widest =
      capped(max_stage_width(a == 0, q_.micro_batch, w_ - first, cost_.max_tensor_parallel()));
  // The slowest stage in front or behind adds its pace to the round trip (InFront::pace).
  const Seconds paced =
      std::max(from > 0 ? pace(0, from - 1, last) : 0, pace(to, n_ - 1, w_ - first));
  return prefix_bound(from, last) + suffix / widest + paced <= bound_;
}

// Whether a plan can reach device `first` at row a: the stages in front of a stage that starts
// at state j are at most j (one state or more each), none wider than parallelism(), so no plan
// puts its stage further into the copy, and such a cell is led to only by the stages of other
// such cells, filled for nothing. (One copy of 128 micro-batches of 4 on 1,024 GPUs: stages of
// up to 4 GPUs, so GNMT-16's 77 states reach 308 of the 1,024 devices.) A plain or block pass
// (a stage may start at any state of the block); a class or free-width pass's cells stand for
// other devices too.
bool Dp::reachable(std::size_t a, int first) const {
  return c_ > 1 || period_ > 0 ||
         static_cast<long long>(first) <=
             static_cast<long long>(last_of(a)) * static_cast<long long>(parallelism(w_));
}

}  // namespace pe::detail::dp
