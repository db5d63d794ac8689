// Uses the installed pe package: a model defined in code, a cluster described in YAML
// text (so that pe::importers and its yaml-cpp dependency are linked), one planned batch.
#include <iostream>
#include <vector>

#include "pe/pe.h"

namespace {

// Eight equal layers of 10 ms forward, 20 ms backward at batch 32; 4 MB of weights and
// 8 MB of activations each.
pe::ModelProfile eight_layer_model() {
  std::vector<pe::Layer> layers;
  for (int i = 0; i < 8; ++i)
    layers.push_back({"layer" + std::to_string(i), 0.010, 0.020, 8e6, 4e6});
  return pe::make_chain_model("consumer-chain", 32, layers);
}

constexpr const char* kCluster =
    "machines:\n"
    "  - count: 2\n"
    "    gpus: 4\n"
    "memory_GB: 16\n";

}  // namespace

int main() {
  try {
    const pe::Planner planner(eight_layer_model(),
                              pe::parse_cluster_yaml(kCluster, "consumer cluster"));
    const pe::PointResult point = planner.plan(256);
    if (const pe::Plan* best = point.best()) {
      std::cout << "best plan: " << pe::stages_string(*best) << " speedup " << best->speedup
                << "\n";
      return 0;
    }
    std::cout << "no plan: " << point.no_plan_reason << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "consumer: " << e.what() << "\n";
    return 1;
  }
}
