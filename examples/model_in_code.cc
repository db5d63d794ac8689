// Builds a model and a cluster in code, without any input file, and plans them: a chain of
// 12 transformer-like blocks between an embedding and a head, on 2 machines of 4 GPUs with
// 40 GB each, 100 Gbit/s between machines and 200 GB/s inside one.
#include <exception>
#include <iostream>
#include <vector>

#include "pe/pe.h"

namespace {

// Times and bytes are for one batch of the profile batch size (8 samples).
pe::ModelProfile transformer_chain() {
  std::vector<pe::Layer> layers;
  //                 name       forward  backward  activation  parameters
  layers.push_back({"embedding", 0.004, 0.008, 25e6, 200e6});
  for (int block = 0; block < 12; ++block)
    layers.push_back({"block" + std::to_string(block), 0.012, 0.024, 50e6, 400e6});
  layers.push_back({"head", 0.006, 0.012, 4e6, 200e6});
  return pe::make_chain_model("transformer-12", 8, layers);
}

pe::Cluster two_machines() {
  pe::Cluster cluster;
  cluster.machine_gpus = {4, 4};          // Device ids 0-3 and 4-7.
  cluster.network.intra = 200 * pe::kGB;  // Bytes per second inside a machine.
  cluster.network.inter_allreduce = 12.5 * pe::kGB;
  cluster.network.inter_p2p = 12.5 * pe::kGB;
  cluster.device_memory = 40 * pe::kGB;
  pe::validate(cluster, "two_machines()");  // Throws InputError when inconsistent.
  return cluster;
}

}  // namespace

int main() try {
  const pe::ModelProfile model = transformer_chain();
  pe::TrainingSettings settings;
  settings.optimizer_scaling = 3;  // Adam-like: weights, gradients and two moments.

  const pe::Planner planner(model, two_machines(), settings);
  const pe::PointResult point = planner.plan(128);
  if (const pe::Plan* best = point.best()) {
    std::cout << "stages (FIRST-LAST:WIDTH): " << pe::stages_string(*best) << "\n"
              << pe::plan_text(*best, model);
  } else {
    std::cout << point.no_plan_reason << "\n";
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "model_in_code: " << e.what() << "\n";
  return 1;
}
