#include "pe/report.h"
#include "report/format.h"

namespace pe {
namespace {

using detail::format::csv_field;
using detail::format::json_number;

// The columns; each is named as the JSON field of the same quantity.
const std::vector<std::string> kCsvColumns{"gbs",
                                           "rank",
                                           "dp",
                                           "dp_overlap",
                                           "dp_p3",
                                           "speedup",
                                           "simulated_speedup",
                                           "micro_batches",
                                           "micro_batch_size",
                                           "pipeline_replicas",
                                           "schedule",
                                           "stages_string",
                                           "iteration_time_s",
                                           "simulated_time_s",
                                           "estimate_s",
                                           "lower_bound_s",
                                           "gap",
                                           "limiter",
                                           "peak_memory_bytes",
                                           "exact",
                                           "no_plan_reason",
                                           "tensor_parallel",
                                           "data_parallel",
                                           "recompute",
                                           "zero_stage",
                                           "working_memory_bytes",
                                           "tensor_parallel_time_s",
                                           "recompute_time_s",
                                           "chunks",
                                           "first_device",
                                           "copy_stride"};

// The per-stage columns (after no_plan_reason): one value per stage (interleaved: per chunk),
// in pipeline order, joined by ';'; each is the field of the same name of every JSON stage.
// The last three columns, chunks, first_device and copy_stride, are the plan's.
constexpr std::size_t kStageColumns = 7;

std::string row(const std::vector<std::string>& cells) {
  std::string text;
  for (const std::string& cell : cells) text += (text.empty() ? "" : ",") + csv_field(cell);
  return text + "\n";
}

// gbs, then the three data-parallel speedups: empty when plain data parallelism does not
// fit a GPU (Baselines::fits false).
std::vector<std::string> point_cells(const PointResult& p) {
  const Baselines& b = p.baselines;
  std::vector<std::string> cells{std::to_string(p.global_batch)};
  for (double speedup : {b.dp, b.dp_overlap, b.dp_p3})
    cells.push_back(b.fits ? json_number(speedup) : "");
  return cells;
}

std::vector<std::string> plan_cells(const PointResult& p, const Plan& plan) {
  const Baselines& b = p.baselines;
  return {json_number(plan.speedup),
          json_number(simulated_speedup(plan, b)),
          std::to_string(plan.micro_batches),
          std::to_string(plan.micro_batch_size),
          std::to_string(plan.pipeline_replicas),
          to_string(plan.schedule),
          stages_string(plan),
          json_number(plan.iteration_time),
          json_number(plan.simulated_time),
          json_number(plan.estimate),
          json_number(p.lower_bound),
          json_number(p.gap_of(plan)),
          to_string(plan.limiter),
          json_number(detail::format::peak_memory(plan))};
}

// The values of `field` over the plan's stages, joined by ';'.
template <typename Field>
std::string per_stage(const Plan& plan, Field field) {
  std::string text;
  for (const PlanStage& stage : plan.stages) text += (text.empty() ? "" : ";") + field(stage);
  return text;
}

std::vector<std::string> stage_cells(const Plan& plan) {
  const auto whole = [](int n) { return std::to_string(n); };
  return {per_stage(plan, [&](const PlanStage& s) { return whole(s.tensor_parallel); }),
          per_stage(plan, [&](const PlanStage& s) { return whole(s.data_parallel()); }),
          per_stage(plan,
                    [](const PlanStage& s) { return std::string(s.recompute ? "true" : "false"); }),
          per_stage(plan, [&](const PlanStage& s) { return whole(s.zero_stage); }),
          per_stage(plan, [](const PlanStage& s) { return json_number(s.working_memory); }),
          per_stage(plan, [](const PlanStage& s) { return json_number(s.tensor_parallel_time); }),
          per_stage(plan, [](const PlanStage& s) { return json_number(s.recompute_time); })};
}

std::string plan_row(const PointResult& p, std::size_t rank, const Plan* plan) {
  std::vector<std::string> cells = point_cells(p);
  cells.insert(cells.begin() + 1, plan ? std::to_string(rank) : "");
  const std::vector<std::string> rest = plan ? plan_cells(p, *plan) : std::vector<std::string>(14);
  cells.insert(cells.end(), rest.begin(), rest.end());
  cells.push_back(p.exact ? "true" : "false");
  cells.push_back(plan ? "" : p.no_plan_reason);
  const std::vector<std::string> stages =
      plan ? stage_cells(*plan) : std::vector<std::string>(kStageColumns);
  cells.insert(cells.end(), stages.begin(), stages.end());
  cells.push_back(plan ? std::to_string(plan->chunks) : "");
  cells.push_back(plan ? std::to_string(plan->first_device()) : "");
  cells.push_back(plan ? std::to_string(plan->copy_stride()) : "");
  return row(cells);
}

}  // namespace

std::string sweep_csv(const std::vector<PointResult>& points) {
  std::string text = row(kCsvColumns);
  for (const PointResult& p : points) {
    if (p.plans.empty()) text += plan_row(p, 0, nullptr);
    for (std::size_t i = 0; i < p.plans.size(); ++i) text += plan_row(p, i + 1, &p.plans[i]);
  }
  return text;
}

}  // namespace pe
