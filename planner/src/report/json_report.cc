#include "pe/report.h"
#include "pe/timeline.h"
#include "report/format.h"

namespace pe {
namespace {

using detail::format::json_number;
using detail::format::json_string;

std::string field(const std::string& key, const std::string& value) {
  return json_string(key) + ": " + value;
}

std::string ints(const std::vector<int>& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

std::string stage_json(const PlanStage& s) {
  return "{" + field("first_state", std::to_string(s.first_state)) + ", " +
         field("last_state", std::to_string(s.last_state)) + ", " +
         field("width", std::to_string(s.width)) + ", " + field("devices", ints(s.devices)) +
         ", " + field("forward_s", json_number(s.times.forward)) + ", " +
         field("backward_s", json_number(s.times.backward)) + ", " +
         field("send_s", json_number(s.times.send)) + ", " +
         field("allreduce_total_s", json_number(s.allreduce_total)) + ", " +
         field("allreduce_exposed_s", json_number(s.times.allreduce)) + ", " +
         field("cut_intra_machine", s.cut_intra_machine ? "true" : "false") + ", " +
         field("allreduce_intra_machine", s.allreduce_intra_machine ? "true" : "false") + ", " +
         field("weight_memory_bytes", json_number(s.weight_memory)) + ", " +
         field("activation_memory_bytes", json_number(s.activation_memory)) + ", " +
         field("peak_memory_bytes", json_number(s.peak_memory())) + "}";
}

std::string plan_json(const Plan& p, const Baselines& b) {
  std::string stages;
  for (const PlanStage& s : p.stages) stages += (stages.empty() ? "" : ", ") + stage_json(s);
  return "{" + field("global_batch", std::to_string(p.global_batch)) + ", " +
         field("pipeline_replicas", std::to_string(p.pipeline_replicas)) + ", " +
         field("micro_batch_size", std::to_string(p.micro_batch_size)) + ", " +
         field("micro_batches", std::to_string(p.micro_batches)) + ", " +
         field("uneven_micro_batches", p.uneven_micro_batches() ? "true" : "false") + ", " +
         field("schedule", json_string(to_string(p.schedule))) + ", " +
         field("stages_string", json_string(stages_string(p))) + ", " +
         field("devices_used", std::to_string(p.device_count())) + ", " +
         field("slot_s", json_number(p.slot)) + ", " +
         field("fill_drain_s", json_number(p.fill_drain)) + ", " +
         field("exposed_allreduce_s", json_number(p.exposed_allreduce)) + ", " +
         field("iteration_time_s", json_number(p.iteration_time)) + ", " +
         field("simulated_time_s", json_number(p.simulated_time)) + ", " +
         field("estimate_minus_simulated_s", json_number(p.iteration_time - p.simulated_time)) +
         ", " + field("speedup", json_number(p.speedup)) + ", " +
         field("simulated_speedup", json_number(simulated_speedup(p, b))) + ", " +
         field("limiter", json_string(to_string(p.limiter))) + ", " +
         field("stages", "[" + stages + "]") + ", " +
         field("bubbles", p.simulation ? bubble_json(p.simulation->bubbles) : "null") + "}";
}

std::string baselines_json(const Baselines& b) {
  return "{" + field("single_device_time_s", json_number(b.single_device_time)) + ", " +
         field("allreduce_time_s", json_number(b.allreduce_time)) + ", " +
         field("per_device_batch", std::to_string(b.per_device_batch)) + ", " +
         field("max_device_batch", std::to_string(b.max_device_batch)) + ", " +
         field("accumulation_steps", std::to_string(b.accumulation_steps)) + ", " +
         field("fits", b.fits ? "true" : "false") + ", " + field("dp", json_number(b.dp)) +
         ", " + field("dp_overlap", json_number(b.dp_overlap)) + ", " +
         field("dp_p3", json_number(b.dp_p3)) + "}";
}

std::string point_json(const PointResult& p) {
  std::string plans;
  for (const Plan& plan : p.plans)
    plans += (plans.empty() ? "" : ",\n      ") + plan_json(plan, p.baselines);
  return "{" + field("gbs", std::to_string(p.global_batch)) + ", " +
         field("baselines", baselines_json(p.baselines)) + ",\n     " +
         field("plans", "[" + plans + "]") + ", " +
         field("exact", p.exact ? "true" : "false") + ", " +
         field("no_plan_reason", p.plans.empty() ? json_string(p.no_plan_reason) : "null") + "}";
}

std::string context_json(const ReportContext& c) {
  std::string text = "{";
  if (c.model)
    text += field("model", json_string(c.model->name)) + ", " +
            field("source", json_string(c.model->source)) + ", " +
            field("states", std::to_string(c.model->size())) + ", " +
            field("profile_batch_size", json_number(c.model->profile_batch_size));
  if (c.cluster)
    text += std::string(c.model ? ", " : "") +
            field("machine_gpus", ints(c.cluster->machine_gpus)) + ", " +
            field("device_memory_bytes", json_number(c.cluster->device_memory)) + ", " +
            field("intra_bw", json_number(c.cluster->network.intra)) + ", " +
            field("inter_allreduce_bw", json_number(c.cluster->network.inter_allreduce)) +
            ", " + field("inter_p2p_bw", json_number(c.cluster->network.inter_p2p));
  return text + "}";
}

}  // namespace

std::string sweep_json(const std::vector<PointResult>& points, const ReportContext& context) {
  std::string body;
  for (const PointResult& p : points) body += (body.empty() ? "\n    " : ",\n    ") + point_json(p);
  return "{\n  " + field("context", context_json(context)) + ",\n  " +
         field("points", "[" + body + "\n  ]") + "\n}\n";
}

}  // namespace pe
