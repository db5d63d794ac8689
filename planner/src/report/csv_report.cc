#include "pe/report.h"
#include "report/format.h"

namespace pe {

std::string sweep_csv(const std::vector<PointResult>& points) {
  using detail::format::json_number;
  std::string text =
      "gbs,dp,dp_overlap,dp_p3,hybrid,simulated,microbatches,micro_batch_size,replicas,"
      "schedule,stages,iteration_ms,simulated_ms,limiter,peak_memory_gb,exact\n";
  for (const PointResult& p : points) {
    const Baselines& b = p.baselines;
    // Plain data parallelism that does not fit a GPU (Baselines::fits false) has no
    // speedup: its three fields are left empty.
    text += std::to_string(p.global_batch) + ",";
    for (double speedup : {b.dp, b.dp_overlap, b.dp_p3})
      text += (b.fits ? json_number(speedup) : "") + ",";
    const Plan* plan = p.best();
    if (!plan) {
      text += std::string(",,,,,,,,,,,") + (p.exact ? "true" : "false") + "\n";
      continue;
    }
    Bytes peak = 0;
    for (const PlanStage& s : plan->stages) peak = std::max(peak, s.peak_memory());
    text += json_number(plan->speedup) + "," + json_number(simulated_speedup(*plan, b)) + "," +
            std::to_string(plan->micro_batches) + "," + std::to_string(plan->micro_batch_size) +
            "," + std::to_string(plan->pipeline_replicas) + "," + to_string(plan->schedule) + "," +
            stages_string(*plan) + "," + json_number(plan->iteration_time * 1e3) + "," +
            json_number(plan->simulated_time * 1e3) + "," + to_string(plan->limiter) + "," +
            json_number(peak / kGB) + "," + (p.exact ? "true" : "false") + "\n";
  }
  return text;
}

}  // namespace pe
