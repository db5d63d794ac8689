// Compares the two pipeline schedules on GNMT-16 (GBS 256, 2 machines x 4 GPUs): the best
// 1F1B (DAPPLE) plan and the best GPipe plan with their analytic estimates and simulated
// times, then the 1F1B plan's own shape simulated under GPipe, with the bubble fraction of
// every timeline.
#include <exception>
#include <iostream>
#include <optional>
#include <string>

#include "pe/pe.h"

namespace {

// The best plan when the search may use only `schedule`; nullopt when none fits.
std::optional<pe::Plan> best_plan(const pe::ModelProfile& model,
                                  const pe::TrainingSettings& settings, pe::Schedule schedule) {
  pe::SearchOptions options;
  options.schedules = {schedule};
  const pe::Planner planner(model, pe::cluster_from_machine_ends({4, 8}), settings, options);
  const pe::PointResult point = planner.plan(256);
  if (const pe::Plan* best = point.best()) return *best;
  std::cout << pe::to_string(schedule) << ": " << point.no_plan_reason << "\n";
  return std::nullopt;
}

void print_timeline(const std::string& label, const pe::PipelineShape& shape) {
  const pe::BubbleReport report = pe::bubbles(pe::simulate(shape));
  std::cout << label << ": simulated " << report.makespan * 1e3 << " ms, mean bubble fraction "
            << report.mean_bubble_fraction << "\n";
}

}  // namespace

int main() try {
  const pe::ProfileEntry entry = pe::find_profile("gnmt_16");
  const pe::ModelProfile model = pe::import_pipedream_graph(entry.path, entry.profile_batch_size);
  pe::TrainingSettings settings;
  settings.min_micro_batch = entry.min_micro_batch;
  settings.optimizer_scaling = entry.optimizer_scaling;
  settings.activation_bytes_per_sample = entry.activation_bytes_per_sample;

  for (pe::Schedule schedule : {pe::Schedule::OneFOneB, pe::Schedule::GPipe}) {
    const std::optional<pe::Plan> plan = best_plan(model, settings, schedule);
    if (!plan) continue;
    std::cout << "best " << pe::to_string(schedule) << " plan " << pe::stages_string(*plan) << ", "
              << plan->micro_batches << " micro-batches: estimate " << plan->iteration_time * 1e3
              << " ms\n";
    print_timeline("  its timeline", plan->shape());
    if (schedule != pe::Schedule::OneFOneB) continue;
    // Same stages and micro-batches, other schedule (GPipe keeps every micro-batch's
    // activations, so this variant may not fit in memory; the simulation ignores memory).
    pe::PipelineShape as_gpipe = plan->shape();
    as_gpipe.schedule = pe::Schedule::GPipe;
    print_timeline("  same plan under gpipe", as_gpipe);
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "compare_schedules: " << e.what() << "\n";
  return 1;
}
