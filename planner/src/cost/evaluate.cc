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
  stage.cut_intra_machine =
      !last && layout.compact(s.offset, spec.stages[index + 1].offset +
                                            spec.stages[index + 1].width - s.offset);
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

// The largest of: the bottleneck's share (M slots), the pipeline's fill and drain beyond
// one slot, and the all-reduce left after the drain.
Limiter limiter_of(const Plan& plan) {
  const Seconds steady = plan.micro_batches * plan.slot;
  const Seconds bubble = plan.fill_drain - plan.slot;
  if (plan.exposed_allreduce > steady && plan.exposed_allreduce > bubble) return Limiter::AllReduce;
  if (bubble > steady) return Limiter::Bubble;
  for (const PlanStage& s : plan.stages)
    if (s.times.forward + s.times.backward >= plan.slot) return Limiter::Compute;
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
  return in_flight(spec.schedule, stage, static_cast<int>(spec.stages.size()), spec.micro_batches);
}

Evaluation evaluate(const CostModel& cost, const PipelineSpec& spec, int global_batch) {
  const Layout layout(cost.cluster(), spec.replicas, spec.replica_width);
  Evaluation result;
  Plan& plan = result.plan;
  plan.global_batch = global_batch;
  plan.pipeline_replicas = spec.replicas;
  plan.micro_batch_size = spec.micro_batch;
  plan.micro_batches = spec.micro_batches;
  plan.schedule = spec.schedule;
  Seconds drained = 0;  // sum over earlier stages of (g + c)
  for (std::size_t i = 0; i < spec.stages.size(); ++i) {
    PlanStage stage = make_stage(cost, layout, spec, global_batch / spec.replicas, i);
    const StageTimes& t = stage.times;
    plan.fill_drain += t.forward + t.backward + 2 * t.send;
    plan.exposed_allreduce = std::max(plan.exposed_allreduce, t.allreduce - drained);
    drained += t.backward + t.send;
    result.fits = result.fits && stage.peak_memory() <= stage.device_memory;
    plan.stages.push_back(std::move(stage));
  }
  plan.slot = slot_of(plan);
  plan.estimate = (plan.micro_batches - 1) * plan.slot + plan.fill_drain + plan.exposed_allreduce;
  plan.lower_bound = path_lower_bound(plan.shape());
  plan.iteration_time = plan.estimate;
  plan.one_device_time = cost.whole_model_time(global_batch);
  plan.speedup = plan.one_device_time / plan.iteration_time;
  plan.limiter = limiter_of(plan);
  return result;
}

}  // namespace pe::detail
