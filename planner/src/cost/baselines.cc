// Data-parallel baselines. Each state of a chain adds one operator, so per-state
// differences are the per-layer values the overlap models need; a model whose states are
// not a chain gives them along its spine (ModelProfile::spine), or is one piece without one.
#include "pe/baselines.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "cost/cost_model.h"
#include "cost/micro_step.h"

namespace pe {
namespace {

// Per-layer times of one micro-step and the all-reduce of each layer's gradients.
struct LayerTimes {
  std::vector<Seconds> forward, backward, allreduce;
};

LayerTimes layer_times(const detail::CostModel& cost, double forward_samples,
                       double backward_samples, int devices, bool intra) {
  LayerTimes t;
  auto add = [&](std::size_t first, std::size_t last) {
    // Every device steps together, so the slowest GPU sets the pace.
    t.forward.push_back(cost.forward(first, last, forward_samples) / cost.slowest());
    t.backward.push_back(cost.backward(first, last, backward_samples) / cost.slowest());
    t.allreduce.push_back(cost.gradient_sync(first, last, {}, devices, intra));
  };
  if (cost.chain()) {
    for (std::size_t i = 0; i < cost.states(); ++i) add(i, i);
  } else if (cost.spine().empty()) {
    add(0, cost.states() - 1);
  } else {
    std::size_t first = 0;
    for (std::uint32_t state : cost.spine()) {
      add(first, state);
      first = state + 1;
    }
  }
  return t;
}

// Time, from the start of the last backward, at which each layer's gradient is ready
// (the backward runs from the last layer to the first).
std::vector<Seconds> gradient_ready(const LayerTimes& t) {
  std::vector<Seconds> ready(t.backward.size());
  Seconds clock = 0;
  for (std::size_t i = t.backward.size(); i-- > 0;) {
    clock += t.backward[i];
    ready[i] = clock;
  }
  return ready;
}

// Normal overlap: all-reduces run one at a time in the order gradients become ready.
// Returns the communication left after the backward ends.
Seconds exposed_in_order(const LayerTimes& t, const std::vector<Seconds>& ready) {
  Seconds link = 0;
  for (std::size_t i = ready.size(); i-- > 0;) link = std::max(link, ready[i]) + t.allreduce[i];
  return std::max<Seconds>(0, link - ready.front());
}

// P3: preemptive priority to layers nearest the input. Every newly ready gradient has a
// smaller index than all pending ones, so the link serves a stack. Returns finish times.
std::vector<Seconds> priority_finish(const LayerTimes& t, const std::vector<Seconds>& ready) {
  const std::size_t n = ready.size();
  std::vector<Seconds> finish(n, 0), left = t.allreduce;
  std::vector<std::size_t> stack;
  Seconds clock = 0;
  for (std::size_t i = n; i-- > 0;) {
    Seconds until = ready[i];
    while (!stack.empty() && clock < until) {
      std::size_t top = stack.back();
      Seconds work = std::min(left[top], until - clock);
      clock += work;
      left[top] -= work;
      if (left[top] <= 0) finish[top] = clock, stack.pop_back();
    }
    clock = std::max(clock, until);
    stack.push_back(i);
  }
  for (; !stack.empty(); stack.pop_back()) finish[stack.back()] = clock += left[stack.back()];
  return finish;
}

// P3's exposed time: how much the next iteration's forward is delayed by parameters whose
// all-reduce has not finished when the forward reaches their layer.
Seconds exposed_priority(const LayerTimes& t, const std::vector<Seconds>& ready) {
  std::vector<Seconds> finish = priority_finish(t, ready);
  Seconds clock = ready.front(), ideal = ready.front();
  for (std::size_t i = 0; i < finish.size(); ++i) {
    clock = std::max(clock, finish[i]) + t.forward[i];
    ideal += t.forward[i];
  }
  return clock - ideal;
}

}  // namespace

Seconds ring_allreduce(Bytes bytes, int devices, BytesPerSecond bandwidth) {
  if (devices <= 1 || bytes <= 0) return 0;
  return 2.0 * (devices - 1) / devices * bytes / bandwidth;
}

int max_device_batch(const ModelProfile& model, const TrainingSettings& settings,
                     Bytes device_memory, int devices) {
  const detail::CostModel cost(model, Cluster{{1}, {}, device_memory, {}}, settings);
  return detail::largest_micro_step(cost, 1 << 30, devices);
}

Baselines data_parallel_baselines(const ModelProfile& model, const Cluster& cluster,
                                  const TrainingSettings& settings, int global_batch) {
  const detail::CostModel cost(model, cluster, settings);
  const int devices = cluster.device_count();
  const bool intra = cluster.one_machine(0, devices);
  Baselines b;
  b.single_device_time = cost.whole_model_time(global_batch);
  b.per_device_batch = (global_batch + devices - 1) / devices;
  b.max_device_batch = detail::largest_micro_step(cost, 1 << 30, devices);
  b.accumulation_steps = b.max_device_batch >= 1
                             ? (b.per_device_batch + b.max_device_batch - 1) / b.max_device_batch
                             : 1;
  // The smallest micro-step must still hold the floor's share of each device.
  const int floor = std::min(settings.min_micro_batch, global_batch);
  b.fits = b.max_device_batch >= 1 &&
           b.per_device_batch / b.accumulation_steps >= (floor + devices - 1) / devices;
  b.allreduce_time = cost.gradient_sync(0, model.size() - 1, {}, devices, intra);
  const Seconds compute = cost.whole_model_time(b.per_device_batch) / cost.slowest();
  // Micro-steps are as even as possible; the last (smallest) one overlaps communication,
  // and the next iteration's first (largest) forward may absorb it under P3.
  const int steps = b.accumulation_steps;
  const double last = std::floor(double(b.per_device_batch) / steps);
  const double first = std::ceil(double(b.per_device_batch) / steps);
  const LayerTimes t = layer_times(cost, first, last, devices, intra);
  const std::vector<Seconds> ready = gradient_ready(t);
  const Seconds T = b.single_device_time;
  b.dp = T / (compute + b.allreduce_time);
  b.dp_overlap = T / (compute + exposed_in_order(t, ready));
  b.dp_p3 = T / (compute + exposed_priority(t, ready));
  return b;
}

}  // namespace pe
