// The sweep and bubble reports as JSON.
#include "pe/report.h"

#include <nlohmann/json.hpp>

#include "pe/timeline.h"
#include "report/format.h"

namespace pe {
namespace {

using Json = nlohmann::ordered_json;

// One line per value: ", " and ": " between items, numbers in full (null when not finite).
constexpr detail::format::JsonStyle kStyle{", ", ": ", detail::format::json_number};

std::string line(const Json& value) { return detail::format::json_line(value, kStyle); }

Json bubbles_value(const BubbleReport& r) {
  Json stages = Json::array();
  for (const StageBubbles& s : r.stages)
    stages.push_back({{"stage", s.stage},
                      {"busy_s", s.busy},
                      {"idle_s", s.idle},
                      {"bubble_fraction", s.bubble_fraction},
                      {"warmup_s", s.warmup},
                      {"wait_transfer_s", s.wait_transfer},
                      {"wait_stage_s", s.wait_stage},
                      {"drain_s", s.drain},
                      {"allreduce_s", s.allreduce}});
  return {{"makespan_s", r.makespan},
          {"mean_bubble_fraction", r.mean_bubble_fraction},
          {"stages", stages}};
}

// The operators of a stage, one value per state from `field` (the name or the source id),
// when the model is known and its states are a chain (each state adds one operator); else null.
Json stage_operators(const PlanStage& s, const ModelProfile* model,
                     const std::string CutState::*field) {
  if (!model || !model->chain() || s.last_state >= model->size() || s.first_state > s.last_state)
    return Json();
  Json names = Json::array();
  for (std::size_t i = s.first_state; i <= s.last_state; ++i) {
    const std::string& value = model->states[i].*field;
    if (value.empty()) return Json();  // a model without source ids
    names.push_back(value);
  }
  return names;
}

Json stage_value(const PlanStage& s, const ModelProfile* model) {
  return {{"first_state", s.first_state},
          {"last_state", s.last_state},
          {"operators", stage_operators(s, model, &CutState::name)},
          {"operator_ids", stage_operators(s, model, &CutState::operator_id)},
          {"width", s.width},
          {"tensor_parallel", s.tensor_parallel},
          {"data_parallel", s.data_parallel()},
          {"recompute", s.recompute},
          {"zero_stage", s.zero_stage},
          {"devices", s.devices},
          {"forward_s", s.times.forward},
          {"backward_s", s.times.backward},
          {"tensor_parallel_time_s", s.tensor_parallel_time},
          {"recompute_time_s", s.recompute_time},
          {"send_s", s.times.send},
          {"allreduce_total_s", s.allreduce_total},
          {"allreduce_exposed_s", s.times.allreduce},
          {"cut_intra_machine", s.cut_intra_machine},
          {"allreduce_intra_machine", s.allreduce_intra_machine},
          {"weight_memory_bytes", s.weight_memory},
          {"activation_memory_bytes", s.activation_memory},
          {"working_memory_bytes", s.working_memory},
          {"peak_memory_bytes", s.peak_memory()},
          {"device_memory_bytes", s.device_memory},
          {"gpu", s.gpu.empty() ? Json() : Json(s.gpu)}};
}

// Model FLOP/s per GPU of a plan and its share of the model GPU's peak (MFU); nulls when the
// model's FLOPs or GPU are unknown.
std::pair<Json, Json> utilization(const Plan& p, const ModelProfile* model) {
  const double per_gpu = model ? model_flops_per_gpu(p, *model) : 0;
  if (!(per_gpu > 0)) return {Json(), Json()};
  return {Json(per_gpu),
          model->gpu.peak_flops > 0 ? Json(per_gpu / model->gpu.peak_flops) : Json()};
}

Json plan_value(const Plan& p, const Baselines& b, const ModelProfile* model) {
  const auto [flops, mfu] = utilization(p, model);
  Json stages = Json::array();
  for (const PlanStage& s : p.stages) stages.push_back(stage_value(s, model));
  return {{"global_batch", p.global_batch},
          {"pipeline_replicas", p.pipeline_replicas},
          {"micro_batch_size", p.micro_batch_size},
          {"micro_batches", p.micro_batches},
          {"uneven_micro_batches", p.uneven_micro_batches()},
          {"schedule", to_string(p.schedule)},
          {"chunks", p.chunks},
          {"stages_string", stages_string(p)},
          {"devices_used", p.device_count()},
          {"first_device", p.first_device()},
          {"copy_stride", p.copy_stride()},
          {"slot_s", p.slot},
          {"fill_drain_s", p.fill_drain},
          {"exposed_allreduce_s", p.exposed_allreduce},
          {"iteration_time_s", p.iteration_time},
          {"simulated_time_s", p.simulated_time},
          {"estimate_s", p.estimate},
          {"path_bound_s", p.lower_bound},
          {"estimate_minus_simulated_s", p.estimate - p.simulated_time},
          {"speedup", p.speedup},
          {"estimate_speedup", estimate_speedup(p)},
          {"simulated_speedup", simulated_speedup(p, b)},
          {"limiter", to_string(p.limiter)},
          {"model_flops_per_gpu", flops},
          {"mfu", mfu},
          {"peak_memory_bytes", detail::format::peak_memory(p)},
          {"stages", stages},
          {"bubbles", p.simulation ? bubbles_value(p.simulation->bubbles) : Json()}};
}

Json baselines_value(const Baselines& b) {
  return {{"single_device_time_s", b.single_device_time},
          {"allreduce_time_s", b.allreduce_time},
          {"per_device_batch", b.per_device_batch},
          {"max_device_batch", b.max_device_batch},
          {"accumulation_steps", b.accumulation_steps},
          {"fits", b.fits},
          {"dp", b.fits ? Json(b.dp) : Json()},
          {"dp_overlap", b.fits ? Json(b.dp_overlap) : Json()},
          {"dp_p3", b.fits ? Json(b.dp_p3) : Json()}};
}

// A plan of a point, with its rank (1: the best), the point's lower bound and the plan's gap.
Json ranked_plan_value(const PointResult& point, std::size_t rank, const ModelProfile* model) {
  const Plan& plan = point.plans[rank - 1];
  Json value{{"rank", rank}};
  value.update(plan_value(plan, point.baselines, model));
  value["lower_bound_s"] = point.lower_bound;
  value["gap"] = point.gap_of(plan);
  return value;
}

// A point on one line but for its plans, which start a line each.
std::string point_text(const PointResult& p, const ModelProfile* model) {
  std::string plans;
  for (std::size_t i = 0; i < p.plans.size(); ++i)
    plans += (plans.empty() ? "" : ",\n      ") + line(ranked_plan_value(p, i + 1, model));
  const Json reason = p.plans.empty() ? Json(p.no_plan_reason) : Json();
  return "{\"gbs\": " + line(p.global_batch) +
         ", \"baselines\": " + line(baselines_value(p.baselines)) + ",\n     \"plans\": [" + plans +
         "], \"exact\": " + line(p.exact) +
         ", \"lower_bound_s\": " + line(p.best() ? Json(p.lower_bound) : Json()) +
         ", \"gap\": " + line(p.best() ? Json(p.gap()) : Json()) +
         ", \"no_plan_reason\": " + line(reason) + "}";
}

Json search_value(const SearchOptions& s) {
  Json schedules = Json::array();
  for (Schedule schedule : s.schedules) schedules.push_back(to_string(schedule));
  return {{"schedules", schedules},
          {"search_effort", s.effort},
          {"search_memory_mb", s.pass_memory % kMebibyte
                                   ? Json(static_cast<double>(s.pass_memory) / kMebibyte)
                                   : Json(s.pass_memory / kMebibyte)},
          {"top", s.top},
          {"max_stage_width", s.max_stage_width},
          {"max_pipeline_copies", s.max_pipeline_copies}};
}

Json settings_value(const TrainingSettings& s) {
  const auto& activation = s.activation_bytes_per_sample;
  return {{"min_micro_batch", s.min_micro_batch},
          {"optimizer_scaling", s.optimizer_scaling},
          {"activation_bytes_per_sample", activation ? Json(*activation) : Json()},
          {"max_tensor_parallel", s.max_tensor_parallel},
          {"tensor_parallel_efficiency", s.tensor_parallel_efficiency},
          {"recomputation", s.recomputation},
          {"zero_stage", s.zero_stage}};
}

Json context_value(const ReportContext& c) {
  Json context = Json::object();
  if (!c.program_version.empty()) context["program_version"] = c.program_version;
  if (!c.command_line.empty()) context["command_line"] = c.command_line;
  if (c.model) {
    context["model"] = c.model->name;
    context["source"] = c.model->source;
    context["states"] = c.model->size();
    context["states_cover"] = c.model->states_cover();
    context["profile_batch_size"] = c.model->profile_batch_size;
    context["model_gpu"] = c.model->gpu.name.empty() ? Json() : Json(c.model->gpu.name);
  }
  if (c.cluster) {
    context["machine_gpus"] = c.cluster->machine_gpus;
    // Each machine's GPU type (null: the model's own GPU), null when the cluster names none.
    Json types = Json();
    for (const GpuSpec& g : c.cluster->machine_gpu)
      types.push_back(g.peak_flops > 0 ? Json(g.name) : Json());
    context["machine_gpu_types"] = types;
    context["device_memory_bytes"] = c.cluster->device_memory;
    context["intra_bw"] = c.cluster->network.intra;
    context["inter_allreduce_bw"] = c.cluster->network.inter_allreduce;
    context["inter_p2p_bw"] = c.cluster->network.inter_p2p;
  }
  if (c.settings) context.update(settings_value(*c.settings));
  if (c.search) context.update(search_value(*c.search));
  return context;
}

// The hand-written plan, as a plan plus whether it fits and how it compares with the best
// plan found at its batch size (its time over the best plan's: 1.2 means 20 % slower).
Json given_value(const std::vector<PointResult>& points, const LayoutCost& given,
                 const ModelProfile* model) {
  const PointResult* point = nullptr;
  for (const PointResult& p : points)
    if (p.global_batch == given.plan.global_batch) point = &p;
  Json value = plan_value(given.plan, point ? point->baselines : Baselines{}, model);
  value["fits"] = given.fits;
  value["memory_note"] = given.fits ? Json() : Json(given.memory_note);
  const Plan* best = point ? point->best() : nullptr;
  value["time_over_best"] = best ? Json(given.plan.iteration_time / best->iteration_time) : Json();
  value["simulated_time_over_best"] =
      best ? Json(given.plan.simulated_time / best->simulated_time) : Json();
  return value;
}

Json fill_value(const FillResult& r) {
  Json items = Json::array();
  for (const ItemFill& item : r.items)
    items.push_back({{"name", item.name},
                     {"status", to_string(item.status)},
                     {"pieces", item.pieces},
                     {"placed", item.placed},
                     {"iteration", item.iteration >= 0 ? Json(item.iteration + 1) : Json()},
                     {"finish_s", item.iteration >= 0 ? Json(item.finish) : Json()}});
  Json stages = Json::array();
  for (const StageFill& s : r.stages)
    stages.push_back({{"stage", s.stage},
                      {"compute_s", s.compute},
                      {"filler_first_s", s.filler_first},
                      {"filler_total_s", s.filler_total},
                      {"utilization_before", s.utilization_before},
                      {"utilization_first", s.utilization_first},
                      {"utilization_mean", s.utilization_mean}});
  return {
      {"complete", r.complete}, {"iterations", r.iterations}, {"items", items}, {"stages", stages}};
}

}  // namespace

std::string bubble_json(const BubbleReport& report) { return line(bubbles_value(report)); }

std::string fill_json(const FillResult& result) { return line(fill_value(result)); }

std::string sweep_json(const std::vector<PointResult>& points, const ReportContext& context) {
  std::string body;
  for (const PointResult& p : points)
    body += (body.empty() ? "\n    " : ",\n    ") + point_text(p, context.model);
  const std::string given =
      context.given_plan
          ? ",\n  \"given_plan\": " + line(given_value(points, *context.given_plan, context.model))
          : "";
  const std::string fill = context.fill ? ",\n  \"fill\": " + fill_json(*context.fill) : "";
  return "{\n  \"context\": " + line(context_value(context)) + ",\n  \"points\": [" + body +
         "\n  ]" + given + fill + "\n}\n";
}

}  // namespace pe
