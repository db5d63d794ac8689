#include "pe/plan.h"

#include <utility>

#include "report/format.h"

namespace pe {

std::string to_string(Limiter limiter) {
  switch (limiter) {
    case Limiter::Compute:
      return "compute";
    case Limiter::Transfer:
      return "transfer";
    case Limiter::AllReduce:
      return "allreduce";
    case Limiter::Bubble:
      return "bubble";
  }
  return "compute";
}

bool Plan::uneven_micro_batches() const {
  return static_cast<long long>(micro_batch_size) * micro_batches * pipeline_replicas !=
         global_batch;
}

int Plan::device_count() const {
  int count = 0;
  for (const PlanStage& stage : stages) count += stage.width;
  return count * pipeline_replicas;
}

PipelineShape Plan::shape() const {
  PipelineShape shape;
  shape.micro_batches = micro_batches;
  shape.schedule = schedule;
  for (const PlanStage& stage : stages) shape.stages.push_back(stage.times);
  return shape;
}

void simulate_plan(Plan& plan) {
  Timeline timeline = simulate(plan.shape());
  BubbleReport idle = bubbles(timeline);
  plan.simulated_time = timeline.makespan;
  plan.iteration_time = timeline.makespan;
  if (timeline.makespan > 0) plan.speedup = plan.one_device_time / timeline.makespan;
  plan.simulation =
      std::make_shared<const Simulation>(Simulation{std::move(timeline), std::move(idle)});
}

std::string stages_string(const Plan& plan) {
  std::string text;
  for (const PlanStage& stage : plan.stages) {
    if (!text.empty()) text += ';';
    text += std::to_string(stage.first_state) + "-" + std::to_string(stage.last_state) + ":" +
            std::to_string(stage.width);
    if (stage.tensor_parallel > 1) text += "t" + std::to_string(stage.tensor_parallel);
    if (stage.recompute) text += "r";
  }
  return text;
}

std::vector<std::string> stage_labels(const Plan& plan) {
  std::vector<std::string> labels;
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const PlanStage& stage = plan.stages[s];
    labels.push_back("stage " + std::to_string(s) + " (states " +
                     std::to_string(stage.first_state) + "-" + std::to_string(stage.last_state) +
                     ", " + detail::format::counted(stage.width, "GPU") +
                     (stage.tensor_parallel > 1
                          ? ", " + std::to_string(stage.tensor_parallel) + "-way tensor parallel"
                          : "") +
                     (stage.recompute ? ", recomputed" : "") + ")");
  }
  return labels;
}

}  // namespace pe
