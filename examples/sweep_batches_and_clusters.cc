// Sweeps a list of global batch sizes over two clusters (the second with a slow network)
// and prints one CSV row per (cluster, batch size). Shows SweepControl: a progress
// callback, and a cancellation flag that a user (here: the callback itself, once a point
// budget is spent) can raise to skip the points not yet started. Which points are skipped
// depends on timing (points already running finish); the rows of those that ran do not.
#include <atomic>
#include <cstddef>
#include <exception>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "pe/pe.h"

namespace {

// One CSV row; skipped points (cancelled before they started) have global_batch == 0.
void print_row(const std::string& cluster, int requested, const pe::PointResult& point) {
  std::cout << cluster << "," << requested << ",";
  if (point.global_batch == 0) {
    std::cout << "skipped,,\n";
    return;
  }
  const pe::Plan* best = point.best();
  std::cout << point.baselines.dp << "," << (best ? best->speedup : 0.0) << ","
            << (best ? pe::stages_string(*best) : "none") << "\n";
}

}  // namespace

int main() try {
  const pe::ProfileEntry entry = pe::find_profile("resnet50");
  const pe::ModelProfile model = pe::import_pipedream_graph(entry.path, entry.profile_batch_size);
  pe::TrainingSettings settings;  // The catalogue's defaults; the micro-batch floor bounds
  settings.min_micro_batch = entry.min_micro_batch;  // how many micro-batches are tried.
  settings.optimizer_scaling = entry.optimizer_scaling;
  settings.activation_bytes_per_sample = entry.activation_bytes_per_sample;
  const std::vector<int> batches = pe::parse_batch_sizes("64,256,1024");
  pe::Cluster slow = pe::cluster_from_machine_ends({4, 8, 12, 16});
  slow.network.inter_allreduce = slow.network.inter_p2p = 0.5 * pe::kGB;  // 4 Gbit/s.
  const std::vector<std::pair<std::string, pe::Cluster>> clusters = {
      {"2x8", pe::cluster_from_machine_ends({8, 16})}, {"4x4-slow", slow}};

  // Cancel once this many points have finished in all: the second cluster's later points
  // are skipped unless they are already running.
  const std::size_t budget = batches.size() + 1;
  std::size_t finished = 0;
  std::atomic<bool> cancel{false};

  std::cout << "cluster,gbs,dp_speedup,hybrid_speedup,stages\n";
  for (const auto& [name, cluster] : clusters) {
    pe::SweepControl control;
    control.cancel = &cancel;
    // Called once per finished point, never concurrently with itself.
    control.progress = [&, &cluster_name = name](std::size_t done, std::size_t all) {
      std::cerr << cluster_name << ": " << done << "/" << all << " points\n";
      if (++finished >= budget) cancel = true;
    };
    const pe::Planner planner(model, cluster, settings);
    const std::vector<pe::PointResult> points = planner.sweep(batches, control);
    for (std::size_t i = 0; i < points.size(); ++i) print_row(name, batches[i], points[i]);
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "sweep_batches_and_clusters: " << e.what() << "\n";
  return 1;
}
