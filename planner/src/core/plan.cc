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
  for (int g = 0; g < device_groups(); ++g) count += stages[static_cast<std::size_t>(g)].width;
  return count * pipeline_replicas;
}

int Plan::first_device() const {
  return stages.empty() || stages.front().devices.empty() ? 0 : stages.front().devices.front();
}

int Plan::copy_stride() const {
  if (pipeline_replicas < 2 || stages.empty()) return 0;
  const PlanStage& first = stages.front();
  const auto width = static_cast<std::size_t>(first.width);
  if (first.devices.size() <= width) return 0;
  const int apart = first.devices[width] - first.devices.front();
  return apart > 0 ? apart : apart + cluster_devices;
}

PipelineShape Plan::shape() const {
  PipelineShape shape;
  shape.micro_batches = micro_batches;
  shape.schedule = schedule;
  shape.chunks = chunks;
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

namespace {

// The ranges of device group g's chunks, joined by `sep`.
std::string group_ranges(const Plan& plan, std::size_t g, const std::string& sep) {
  const auto groups = static_cast<std::size_t>(plan.device_groups());
  std::string text;
  for (std::size_t j = g; j < plan.stages.size(); j += groups)
    text += (text.empty() ? "" : sep) + std::to_string(plan.stages[j].first_state) + "-" +
            std::to_string(plan.stages[j].last_state);
  return text;
}

}  // namespace

std::string stages_string(const Plan& plan) {
  std::string text;
  for (std::size_t g = 0; g < static_cast<std::size_t>(plan.device_groups()); ++g) {
    const PlanStage& stage = plan.stages[g];
    if (!text.empty()) text += ';';
    text += group_ranges(plan, g, ",") + ":" + std::to_string(stage.width);
    if (stage.tensor_parallel > 1) text += "t" + std::to_string(stage.tensor_parallel);
    if (stage.recompute) text += "r";
  }
  return text;
}

std::vector<std::string> stage_labels(const Plan& plan) {
  std::vector<std::string> labels;
  for (std::size_t s = 0; s < static_cast<std::size_t>(plan.device_groups()); ++s) {
    const PlanStage& stage = plan.stages[s];
    labels.push_back("stage " + std::to_string(s) + " (states " + group_ranges(plan, s, ", ") +
                     ", " + detail::format::counted(stage.width, "GPU") +
                     (stage.tensor_parallel > 1
                          ? ", " + std::to_string(stage.tensor_parallel) + "-way tensor parallel"
                          : "") +
                     (stage.recompute ? ", recomputed" : "") + ")");
  }
  return labels;
}

}  // namespace pe
