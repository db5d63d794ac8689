// Plans one bundled profile for one global batch size: ResNet-50 (PipeDream's profile),
// GBS 512 on 2 machines x 8 GPUs with HPGO's default links, and prints the best plan next
// to plain data parallelism. This is what `pe-plan --gbs 512` does, without the CLI.
#include <exception>
#include <iostream>

#include "pe/pe.h"

int main() {
  try {
    // The catalogue supplies the file and the planning defaults recorded for the profile.
    const pe::ProfileEntry entry = pe::find_profile("resnet50");
    pe::ModelProfile model = pe::import_pipedream_graph(entry.path, entry.profile_batch_size);
    model.name = entry.name;

    pe::TrainingSettings settings;
    settings.min_micro_batch = entry.min_micro_batch;
    settings.optimizer_scaling = entry.optimizer_scaling;
    settings.activation_bytes_per_sample = entry.activation_bytes_per_sample;

    // {8, 16}: machine ends in device ids, i.e. devices 0-7 and 8-15.
    const pe::Planner planner(model, pe::cluster_from_machine_ends({8, 16}), settings);
    const pe::PointResult point = planner.plan(512);

    std::cout << model.name << ": " << model.size() << " cut states, GBS " << point.global_batch
              << "\n"
              << "data parallel speedup " << point.baselines.dp << " (overlap "
              << point.baselines.dp_overlap << ", P3 " << point.baselines.dp_p3 << ")\n";
    if (const pe::Plan* best = point.best()) {
      std::cout << pe::plan_text(*best, model);
    } else {
      std::cout << point.no_plan_reason << "\n";  // A normal outcome, not an error.
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "plan_one_profile: " << e.what() << "\n";
    return 1;
  }
}
