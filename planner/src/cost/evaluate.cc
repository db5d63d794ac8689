#include "cost/evaluate.h"

#include <algorithm>

#include "cost/path_bound.h"
#include "cost/stage_samples.h"

namespace pe::detail {
namespace {

PlanStage make_stage(const CostModel& cost, const Layout& layout, const PipelineSpec& spec,
                     int share, std::size_t index) {
  const StageSpec& s = spec.stages[index];
  const StageVariant& v = s.variant;
  const bool last = index + 1 == spec.stages.size();
  const int replicas = s.width / v.tensor_parallel;  // data-parallel, in one copy
  const StageSamples samples =
      stage_samples(spec.stages.size() == 1, share, spec.micro_batch, spec.micro_batches, replicas);
  PlanStage stage;
  stage.first_state = s.first;
  stage.last_state = s.last;
  stage.width = s.width;
  stage.tensor_parallel = v.tensor_parallel;
  stage.recompute = v.recompute;
  stage.zero_stage = cost.settings().zero_stage;
  for (int k = 0; k < spec.replicas; ++k)
    for (int d = 0; d < s.width; ++d) stage.devices.push_back(layout.device(k, s.offset + d));
  stage.allreduce_intra_machine = layout.all_replicas_compact(s.offset, s.width);
  if (!last) {  // the next stage's devices: after these, or (interleaved) group 0's
    const StageSpec& n = spec.stages[index + 1];
    const int from = std::min(s.offset, n.offset);
    stage.cut_intra_machine =
        layout.compact(from, std::max(s.offset + s.width, n.offset + n.width) - from);
  } else {
    stage.cut_intra_machine = false;
  }
  const int reducers = replicas * spec.replicas;
  const bool intra = stage.allreduce_intra_machine;
  const CostModel::Place place = cost.place(layout, s.offset, s.width);
  stage.device_memory = place.memory;
  stage.gpu = place.gpu;
  const Seconds gather = cost.weight_gather(s.first, s.last, v, reducers, intra);
  stage.times.forward = cost.forward(s.first, s.last, samples.timed, v, gather, place.speed);
  stage.times.backward = cost.backward(s.first, s.last, samples.timed, v, gather, place.speed);
  stage.recompute_time = cost.recompute_time(s.first, s.last, samples.timed, v, place.speed);
  stage.tensor_parallel_time = cost.tensor_parallel_total(s.first, s.last, samples.timed, v);
  const int split =
      last ? 1 : std::min(v.tensor_parallel, spec.stages[index + 1].variant.tensor_parallel);
  stage.times.send = last ? 0
                          : cost.transfer(cost.crossing(s.last, spec.micro_batch) / split,
                                          stage.cut_intra_machine);
  stage.allreduce_total = cost.gradient_sync(s.first, s.last, v, reducers, intra);
  stage.times.allreduce =
      CostModel::ExposedScan(cost, s.first, samples.timed, reducers, intra, v, place.speed)
          .extend_to(s.last);
  stage.weight_memory = cost.weight_memory(s.first, s.last, v, reducers);
  stage.working_memory = cost.working_memory(s.first, s.last, samples.memory, v);
  stage.activation_memory = spec_in_flight(spec, static_cast<int>(index)) *
                            cost.activation_memory(s.first, s.last, samples.memory, v);
  return stage;
}

// f + g of every device group: its stage's, or (interleaved) the sum over its chunks.
std::vector<Seconds> group_work(const Plan& plan) {
  const std::size_t groups = plan.stages.size() / static_cast<std::size_t>(plan.chunks);
  std::vector<Seconds> work(groups, 0);
  for (std::size_t j = 0; j < plan.stages.size(); ++j)
    work[j % groups] += plan.stages[j].times.forward + plan.stages[j].times.backward;
  return work;
}

// Interleaved: every chunk of a group reports the group's device memory (the chunks'
// weights, the most activations its order keeps at once, the largest working memory).
void share_device_memory(Plan& plan) {
  const std::size_t chunks = static_cast<std::size_t>(plan.chunks);
  const std::size_t groups = plan.stages.size() / chunks;
  for (std::size_t d = 0; d < groups; ++d) {
    Bytes weights = 0, working = 0;
    std::vector<double> per_micro_batch;
    for (std::size_t c = 0; c < chunks; ++c) {
      const PlanStage& chunk = plan.stages[c * groups + d];
      weights += chunk.weight_memory;
      working = std::max(working, chunk.working_memory);
      per_micro_batch.push_back(chunk.activation_memory);
    }
    const Bytes held = interleaved_activations(static_cast<int>(d), static_cast<int>(groups),
                                               plan.micro_batches, per_micro_batch);
    for (std::size_t c = 0; c < chunks; ++c) {
      PlanStage& chunk = plan.stages[c * groups + d];
      chunk.weight_memory = weights;
      chunk.working_memory = working;
      chunk.activation_memory = held;
    }
  }
}

// Interleaved: the estimate of group d is its M micro-batches of work, after micro-batch 0
// reached its first chunk and before the last one's gradient leaves its first chunk for
// stage 0 (the path the bound follows, cost/path_bound.h): slot = the busiest group's work
// per micro-batch (or a link's transfers), fill_drain = the largest of (what comes before and
// after a group's work + one micro-batch of it), exposed = the all-reduce of a chunk beyond
// what its group still computes after its last backward (the last round's backwards of its
// earlier chunks) and that drain.
void interleaved_estimate(Plan& plan) {
  const std::vector<Seconds> work = group_work(plan);
  const std::size_t groups = work.size();
  std::vector<Seconds> link(groups, 0);
  for (std::size_t j = 0; j + 1 < plan.stages.size(); ++j)
    link[j % groups] += plan.stages[j].times.send;
  plan.slot = 0;
  plan.fill_drain = 0;
  plan.exposed_allreduce = 0;
  Seconds before = 0;  // sum over stages t < d of (f_t + c_t), and of (g_t + c_t)
  Seconds after = 0;
  for (std::size_t d = 0; d < groups; ++d) {
    plan.slot = std::max({plan.slot, work[d], link[d]});
    plan.fill_drain = std::max(plan.fill_drain, before + work[d] + after);
    Seconds later = 0;
    for (std::size_t j = d; j < plan.stages.size(); j += groups) {
      const StageTimes& t = plan.stages[j].times;
      plan.exposed_allreduce = std::max(plan.exposed_allreduce, t.allreduce - later - after);
      later += static_cast<double>(groups) * t.backward;
    }
    const StageTimes& t = plan.stages[d].times;
    before += t.forward + t.send;
    after += t.backward + t.send;
  }
}

// The largest of: the bottleneck's share (M slots), the pipeline's fill and drain beyond
// one slot, and the all-reduce left after the drain.
Limiter limiter_of(const Plan& plan) {
  const Seconds steady = plan.micro_batches * plan.slot;
  const Seconds bubble = plan.fill_drain - plan.slot;
  if (plan.exposed_allreduce > steady && plan.exposed_allreduce > bubble) return Limiter::AllReduce;
  if (bubble > steady) return Limiter::Bubble;
  for (Seconds work : group_work(plan))
    if (work >= plan.slot) return Limiter::Compute;
  return Limiter::Transfer;
}

// Under 1F1B, stage s (with S - s < M stages from it to the end) starts micro-batch m + S - s
// only after micro-batch m's backward has come back through every later stage, so a slot
// lasts at least that round trip / (S - s).
Seconds round_trip_slot(const Plan& plan) {
  const int stages = static_cast<int>(plan.stages.size());
  Seconds slot = 0, round_trip = 0;
  for (int s = stages - 1; s >= 0; --s) {
    const StageTimes& t = plan.stages[s].times;
    round_trip += t.forward + t.backward + 2 * t.send;
    if (stages - s < plan.micro_batches) slot = std::max(slot, round_trip / (stages - s));
  }
  return slot;
}

Seconds slot_of(const Plan& plan) {
  Seconds both = 0, forward = 0, backward = 0;
  for (const PlanStage& stage : plan.stages) {
    const StageTimes& t = stage.times;
    both = std::max({both, t.forward + t.backward, t.send});
    forward = std::max({forward, t.forward, t.send});
    backward = std::max({backward, t.backward, t.send});
  }
  if (plan.schedule == Schedule::GPipe) return forward + backward;
  return std::max(both, round_trip_slot(plan));
}

}  // namespace

int spec_in_flight(const PipelineSpec& spec, int stage) {
  if (spec.schedule == Schedule::Interleaved) return 1;
  return in_flight(spec.schedule, stage, static_cast<int>(spec.stages.size()), spec.micro_batches);
}

Evaluation evaluate(const CostModel& cost, const PipelineSpec& spec, int global_batch) {
  const Layout layout = cost.layout(spec.replicas, spec.replica_width);
  Evaluation result;
  Plan& plan = result.plan;
  plan.global_batch = global_batch;
  plan.pipeline_replicas = spec.replicas;
  plan.micro_batch_size = spec.micro_batch;
  plan.micro_batches = spec.micro_batches;
  plan.schedule = spec.schedule;
  plan.chunks = spec.chunks;
  Seconds drained = 0;  // sum over earlier stages of (g + c)
  for (std::size_t i = 0; i < spec.stages.size(); ++i) {
    PlanStage stage = make_stage(cost, layout, spec, global_batch / spec.replicas, i);
    const StageTimes& t = stage.times;
    plan.fill_drain += t.forward + t.backward + 2 * t.send;
    plan.exposed_allreduce = std::max(plan.exposed_allreduce, t.allreduce - drained);
    drained += t.backward + t.send;
    plan.stages.push_back(std::move(stage));
  }
  if (plan.chunks > 1) share_device_memory(plan);
  for (const PlanStage& stage : plan.stages)
    result.fits = result.fits && stage.peak_memory() <= stage.device_memory;
  plan.slot = slot_of(plan);
  if (plan.chunks > 1) interleaved_estimate(plan);
  plan.estimate = (plan.micro_batches - 1) * plan.slot + plan.fill_drain + plan.exposed_allreduce;
  plan.lower_bound = path_lower_bound(plan.shape());
  plan.iteration_time = plan.estimate;
  plan.one_device_time = cost.whole_model_time(global_batch);
  plan.speedup = plan.one_device_time / plan.iteration_time;
  plan.limiter = limiter_of(plan);
  return result;
}

}  // namespace pe::detail
