#include "cost/suffix_timing.h"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <stdexcept>

namespace pe::detail {
namespace {

constexpr Seconds kNever = -std::numeric_limits<Seconds>::infinity();

// A time as a function of the inputs: max over j of (u_j + at[j]), kNever where it does
// not depend on u_j. Every operation depends on some input, which is at least 0, so the
// stages' start at 0 needs no constant term. N is the most micro-batches it holds: the
// exact passes' few (kTimedMicroBatches) or a relaxed pass's more (kRelaxedTimedMicroBatches).
template <std::size_t N>
using Time = std::array<Seconds, N>;

template <std::size_t N>
Time<N> never() {
  Time<N> t;
  t.fill(kNever);
  return t;
}
template <std::size_t N>
Time<N> input(int j) {
  Time<N> t = never<N>();
  t[static_cast<std::size_t>(j)] = 0;
  return t;
}
template <std::size_t N>
Time<N> plus(Time<N> t, Seconds d) {
  for (Seconds& x : t) x += d;  // kNever stays kNever
  return t;
}
template <std::size_t N>
Time<N> latest(Time<N> a, const Time<N>& b) {
  for (std::size_t j = 0; j < N; ++j) a[j] = std::max(a[j], b[j]);
  return a;
}

// Stage b's operations in its schedule's order, with the cut behind it and the suffix's map.
template <std::size_t N>
class Composer {
  using T = Time<N>;

 public:
  Composer(const StageTimes& stage, Seconds send, const Seconds* next, int micro_batches)
      : stage_(stage), send_(send), next_(next), m_(micro_batches) {
    arrived_.fill(false);
  }

  void forward(int j) {
    free_ = plus(latest(free_, input<N>(j)), stage_.forward);
    if (!next_) return;
    // The activation crosses the cut after the one before it.
    link_forward_ = plus(latest(free_, link_forward_), send_);
    at_next_[static_cast<std::size_t>(j)] = link_forward_;
    arrived_[static_cast<std::size_t>(j)] = true;
  }

  void backward(int i) {
    T ready = free_;
    if (next_) {
      // The gradient leaves the next stage's backward of i, then crosses the cut after the
      // one before it.
      const T done = through_next(i);
      link_backward_ = plus(latest(done, link_backward_), send_);
      ready = latest(ready, link_backward_);
    }
    free_ = plus(ready, stage_.backward);
    backward_end_[static_cast<std::size_t>(i)] = free_;
    if (i == m_ - 1) last_ = plus(free_, stage_.allreduce);
  }

  // Each row in its latest form: entry j the largest of j and those after it (arrivals come
  // in order, u_j <= u_j' for j < j', so u_j + A[i][j'] <= u_j' + A[i][j'] adds nothing, and
  // the map is the same for every input the stage in front can give). Then more suffixes
  // are no larger than another in every entry: those that end no later for every such input
  // but would end later for inputs out of order.
  void write(Seconds* after) {
    const T end = next_ ? latest(last_, through_next(m_)) : last_;
    for (int i = 0; i <= m_; ++i) {
      const T& row = i < m_ ? backward_end_[static_cast<std::size_t>(i)] : end;
      Seconds* out = after + i * m_;
      std::copy_n(row.begin(), m_, out);
      for (int j = m_ - 1; j-- > 0;) out[j] = std::max(out[j], out[j + 1]);
    }
  }

 private:
  // Row i of the next suffix's map applied to the arrivals at it.
  T through_next(int i) const {
    T t = never<N>();
    for (int j = 0; j < m_; ++j) {
      const Seconds a = next_[i * m_ + j];
      if (a == kNever) continue;
      if (!arrived_[static_cast<std::size_t>(j)])
        throw std::logic_error("prepend_timing: an operation waits for a later one");
      t = latest(t, plus(at_next_[static_cast<std::size_t>(j)], a));
    }
    return t;
  }

  const StageTimes& stage_;
  Seconds send_;
  const Seconds* next_;
  int m_;
  T free_ = never<N>(), link_forward_ = never<N>(), link_backward_ = never<N>(), last_ = never<N>();
  std::array<T, N> at_next_{}, backward_end_{};
  std::array<bool, N> arrived_{};
};

}  // namespace

Seconds timed_makespan(const Seconds* after, int micro_batches) {
  Seconds end = 0;
  for (int j = 0; j < micro_batches; ++j)
    end = std::max(end, after[micro_batches * micro_batches + j]);
  return end;
}

bool no_later_than(const Seconds* a, const Seconds* b, int micro_batches) {
  return std::equal(a, a + timing_entries(micro_batches), b, std::less_equal<>());
}

Seconds timed_behind(const Seconds* after, int micro_batches, const InFront& front) {
  const int m = micro_batches;
  Seconds end = 0;
  for (int j = 0; j < m; ++j) {
    const Seconds arrival = front.arrive + j * front.forward_pace;
    end = std::max(end, arrival + after[m * m + j]);
    for (int i = 0; i < m; ++i)
      end = std::max(end,
                     arrival + after[i * m + j] + front.back + (m - 1 - i) * front.backward_pace);
  }
  return end;
}

namespace {

template <std::size_t N>
void compose(const StageTimes& stage, Seconds send, const Seconds* next, int micro_batches,
             Schedule schedule, int stages, Seconds* after) {
  Composer<N> c(stage, send, next, micro_batches);
  // 1F1B: w forwards, then each backward and the next forward while any is left; GPipe:
  // every forward first (pe::scheduled_op).
  const int w = schedule == Schedule::GPipe ? micro_batches : std::min(micro_batches, stages);
  for (int j = 0; j < w; ++j) c.forward(j);
  for (int i = 0; i < micro_batches; ++i) {
    c.backward(i);
    if (w + i < micro_batches) c.forward(w + i);
  }
  c.write(after);
}

}  // namespace

void prepend_timing(const StageTimes& stage, Seconds send, const Seconds* next, int micro_batches,
                    Schedule schedule, int stages, Seconds* after) {
  if (!block_timeable(micro_batches, schedule))
    throw std::logic_error("prepend_timing: not a timed suffix");
  if (timing_width(micro_batches) == kTimedMicroBatches)
    compose<kTimedMicroBatches>(stage, send, next, micro_batches, schedule, stages, after);
  else if (timing_width(micro_batches) == kRelaxedTimedMicroBatches)
    compose<kRelaxedTimedMicroBatches>(stage, send, next, micro_batches, schedule, stages, after);
  else
    compose<kBlockTimedMicroBatches>(stage, send, next, micro_batches, schedule, stages, after);
}

}  // namespace pe::detail
