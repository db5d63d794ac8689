// Random small models and clusters for property tests (fixed seeds).
#pragma once

#include <random>
#include <string>
#include <vector>

#include "pe/cluster.h"
#include "pe/model.h"
#include "pe/settings.h"

namespace pe::testing {

struct Instance {
  ModelProfile model;
  Cluster cluster;
  TrainingSettings settings;
  int global_batch = 1;
};

/// A chain of 1..max_states layers with times, activations and parameters spread over two
/// orders of magnitude, on one of two machine shapes, with memory that sometimes binds.
/// With `free_layers`, a third of the layers (up to max_states in all) have no output bytes
/// and are followed by a layer of no time, bytes or parameters (an identity): a cut on
/// either side of it gives the same stages.
inline Instance random_instance(std::mt19937& rng, int max_states, int devices,
                                bool free_layers = false) {
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<>(lo, hi)(rng);
  };
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng); };
  std::vector<Layer> layers;
  const int n = pick(1, max_states);
  for (int i = 0; i < n; ++i) {
    layers.push_back({"l" + std::to_string(i), uniform(0.001, 0.1), uniform(0.001, 0.2),
                      uniform(1e6, 1e8), uniform(0, 1) < 0.2 ? 0 : uniform(1e6, 4e8)});
    if (free_layers && static_cast<int>(layers.size()) < max_states && uniform(0, 1) < 1.0 / 3) {
      layers.back().activation = 0;
      layers.push_back({"free" + std::to_string(i), 0, 0, 0, 0});
    }
  }
  Instance in;
  in.model = make_chain_model("random", 8, layers);
  const int per_machine = pick(0, 1) ? devices / 2 : 1;
  std::vector<int> ends;
  for (int end = per_machine; end <= devices; end += per_machine) ends.push_back(end);
  in.cluster = cluster_from_machine_ends(ends);
  in.cluster.network = {uniform(5e9, 50e9), uniform(0.5e9, 5e9), uniform(0.2e9, 2e9)};
  Bytes weights = in.model.whole().parameters * 2;
  in.cluster.device_memory = weights * uniform(0.3, 1.5) + uniform(1e8, 2e9);
  in.settings.min_micro_batch = pick(1, 4);
  in.settings.optimizer_scaling = 2;
  const int batches[] = {1, 2, 4, 6, 8, 12, 16, 24, 32};
  in.global_batch = batches[pick(0, 8)];
  return in;
}

}  // namespace pe::testing
