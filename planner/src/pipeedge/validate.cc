#include "pe/edge.h"

#include <cmath>
#include <string>

#include "pe/error.h"

namespace pe {
namespace {

void require_values(const std::vector<double>& values, const std::string& what) {
  for (std::size_t k = 0; k < values.size(); ++k)
    if (!std::isfinite(values[k]) || values[k] < 0)
      throw UsageError(what + "[" + std::to_string(k) + "] is " + std::to_string(values[k]) +
                       "; expected a finite number >= 0");
}

void require_value(double value, const std::string& what) { require_values({value}, what); }

void validate_type(const EdgeDeviceType& type, std::size_t layers) {
  const std::string name = "device type '" + type.name + "'";
  if (type.layer_seconds.size() != layers)
    throw UsageError(name + " has " + std::to_string(type.layer_seconds.size()) +
                     " layer times; the model has " + std::to_string(layers) + " layers");
  require_values(type.layer_seconds, name + " layer_seconds");
  require_value(type.bandwidth_mbps, name + " bandwidth_mbps");
  require_value(type.memory_mib, name + " memory_mib");
}

}  // namespace

void validate_edge_input(const EdgeModel& model, const EdgeCluster& cluster) {
  const std::string name = "model '" + model.name + "'";
  if (model.parameters_out.size() != model.layers())
    throw UsageError(name + " has " + std::to_string(model.parameters_out.size()) +
                     " parameters_out values for " + std::to_string(model.layers()) + " layers");
  require_values(model.weights_mib, name + " weights_mib");
  for (const EdgeDeviceType& type : cluster.types) validate_type(type, model.layers());
  for (const EdgeHost& host : cluster.hosts)
    if (host.type >= cluster.types.size())
      throw UsageError("host '" + host.name + "' has device type index " +
                       std::to_string(host.type) + " but there are only " +
                       std::to_string(cluster.types.size()) + " types");
}

}  // namespace pe
