// Random small models and clusters for property tests (fixed seeds).
#pragma once

#include <random>
#include <string>
#include <utility>
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

/// A random instance (random_instance) with, at most trials, tensor parallelism, recomputation,
/// ZeRO and tighter memory, links either way round (trial % 5 == 1) and mixed GPU types (trial % 3
/// == 2).
inline Instance varied_instance(std::mt19937& rng, int trial, int max_states, int devices) {
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<>(lo, hi)(rng);
  };
  Instance in = random_instance(rng, max_states, devices);
  if (trial % 4 != 0) {
    double recomputed = 0, split = 0;
    for (CutState& s : in.model.states) {
      recomputed += s.activation * uniform(0.01, 0.1);
      split += uniform(1e6, 1e8);
      s.recomputed_activation = recomputed;
      s.tensor_parallel = split;
    }
    in.model.tensor_parallel_unit = 2;
    in.model.recomputable = true;
    in.settings.tensor_parallel_efficiency = uniform(0.6, 1);
    in.settings.zero_stage = trial % 4;
    in.cluster.device_memory *= uniform(0.2, 1);
  }
  if (trial % 5 == 1) std::swap(in.cluster.network.intra, in.cluster.network.inter_allreduce);
  if (trial % 3 == 2) {
    in.model.gpu = {"model-gpu", 100e12, in.cluster.device_memory, 0, "test"};
    for (int m = 0; m < in.cluster.machine_count(); ++m)
      in.cluster.machine_gpu.push_back({"other", uniform(30e12, 300e12),
                                        in.cluster.device_memory * uniform(0.5, 1.5), 0, "test"});
  }
  return in;
}

}  // namespace pe::testing
