#include "pe/edge_cost.h"

#include <algorithm>

namespace pe {
namespace {

/// Bytes per second of a link of `mbps` Mbit/s (Mbit = 2^20 bit), as the original computes.
double link_bytes_per_second(double mbps) { return mbps * 1024 * 1024 / 8; }

}  // namespace

EdgeCostModel::EdgeCostModel(const EdgeModel& model, const EdgeCluster& cluster,
                             const EdgeSettings& settings)
    : model_(model), cluster_(cluster), settings_(settings) {}

Bytes EdgeCostModel::output_bytes(std::size_t layer) const {
  return settings_.element_bytes * static_cast<double>(model_.parameters_out[layer - 1]) *
         static_cast<double>(settings_.micro_batch);
}

Bytes EdgeCostModel::input_bytes(std::size_t first_layer) const {
  if (first_layer > 1) return output_bytes(first_layer - 1);
  return settings_.element_bytes * static_cast<double>(model_.parameters_in) *
         static_cast<double>(settings_.micro_batch);
}

Bytes EdgeCostModel::layer_weight_bytes(std::size_t layer) const {
  return model_.weights_mib[layer - 1] * 1024 * 1024;
}

Bytes EdgeCostModel::buffer_bytes(std::size_t first_layer, std::size_t last_layer) const {
  return buffer_bytes(first_layer == 1, input_bytes(first_layer), output_bytes(last_layer),
                      static_cast<double>(settings_.buffers_in),
                      static_cast<double>(settings_.buffers_out));
}

Bytes EdgeCostModel::memory_need(std::size_t first_layer, std::size_t last_layer) const {
  Bytes weights = 0.0;
  for (std::size_t k = first_layer; k <= last_layer; ++k) weights += layer_weight_bytes(k);
  return weights + buffer_bytes(first_layer, last_layer);
}

Bytes EdgeCostModel::capacity_bytes(std::size_t type) const {
  return cluster_.types[type].memory_mib * 1024 * 1024;
}

bool EdgeCostModel::fits(std::size_t type, std::size_t first_layer, std::size_t last_layer) const {
  return capacity_bytes(type) > memory_need(first_layer, last_layer);
}

Seconds EdgeCostModel::compute(std::size_t type, std::size_t first_layer,
                               std::size_t last_layer) const {
  const std::vector<Seconds>& times = cluster_.types[type].layer_seconds;
  Seconds total = 0.0;
  for (std::size_t k = first_layer; k <= last_layer; ++k) total += times[k - 1];
  return total;
}

Seconds EdgeCostModel::transfer(std::size_t last_layer, double bandwidth_mbps) const {
  const Bytes bytes = output_bytes(last_layer);
  if (bytes == 0) return 0.0;
  return bytes / link_bytes_per_second(bandwidth_mbps);
}

Seconds EdgeCostModel::transfer(std::size_t last_layer, std::size_t from_type,
                                std::size_t to_type) const {
  return transfer(last_layer, std::min(cluster_.types[from_type].bandwidth_mbps,
                                       cluster_.types[to_type].bandwidth_mbps));
}

void EdgeCostModel::describe(std::vector<EdgeStage>& stages) const {
  for (std::size_t s = 0; s < stages.size(); ++s) {
    EdgeStage& stage = stages[s];
    const std::size_t type = cluster_.hosts[stage.host].type;
    stage.compute = compute(type, stage.first_layer, stage.last_layer);
    stage.memory = memory_need(stage.first_layer, stage.last_layer);
    stage.transfer_out = 0.0;
    if (s + 1 < stages.size())
      stage.transfer_out =
          transfer(stage.last_layer, type, cluster_.hosts[stages[s + 1].host].type);
  }
}

Seconds EdgeCostModel::bottleneck(const std::vector<EdgeStage>& stages) const {
  std::vector<EdgeStage> described = stages;
  describe(described);
  Seconds worst = 0.0;
  for (const EdgeStage& stage : described)
    worst = std::max({worst, stage.compute, stage.transfer_out});
  return worst;
}

}  // namespace pe
