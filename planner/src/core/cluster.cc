#include "pe/cluster.h"

#include <cmath>
#include <numeric>
#include <optional>
#include <sstream>

#include "core/whole_number.h"
#include "pe/error.h"

namespace pe {
namespace {

// The most GPUs a cluster may have in all, so that device ids and counts fit an int.
constexpr long long kMaxClusterDevices = 1000000;

const std::string kFromEnds = "cluster_from_machine_ends";
const std::string kParseEnds = "parse_machine_ends";

}  // namespace

int Cluster::device_count() const {
  return std::accumulate(machine_gpus.begin(), machine_gpus.end(), 0);
}

int Cluster::first_device(int machine) const {
  return std::accumulate(machine_gpus.begin(), machine_gpus.begin() + machine, 0);
}

int Cluster::machine_of(int device) const {
  int end = 0;
  for (int m = 0; m < machine_count(); ++m) {
    end += machine_gpus[m];
    if (device < end) return m;
  }
  return machine_count() - 1;
}

bool Cluster::one_machine(int first, int count) const {
  return count <= 1 || machine_of(first) == machine_of(first + count - 1);
}

void set_inter_machine_bandwidth(Network& network, BytesPerSecond allreduce,
                                 std::optional<BytesPerSecond> p2p) {
  network.inter_allreduce = allreduce;
  network.inter_p2p = p2p.value_or(allreduce);
}

Cluster cluster_from_machine_ends(const std::vector<int>& ends) {
  if (ends.empty())
    throw UsageError(kFromEnds, kFromEnds + " needs at least one machine end, e.g. {8, 16}");
  Cluster cluster;
  int previous = 0;
  for (int end : ends) {
    if (end <= previous)
      throw UsageError(kFromEnds, kFromEnds +
                                      ": machine ends must be strictly increasing "
                                      "positive GPU counts (cumulative), got " +
                                      std::to_string(end) + " after " + std::to_string(previous));
    cluster.machine_gpus.push_back(end - previous);
    previous = end;
  }
  return cluster;
}

std::vector<int> parse_machine_ends(const std::string& text) {
  std::vector<int> ends;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const std::optional<long> value = detail::whole_number(item, kMaxClusterDevices);
    if (!value)
      throw UsageError(kParseEnds,
                       kParseEnds + ": '" + item + "' is not a GPU count (expected e.g. 8,16)");
    ends.push_back(static_cast<int>(*value));
  }
  if (ends.empty() || text.back() == ',')
    throw UsageError(kParseEnds, kParseEnds + ": expected comma-separated machine ends, e.g. 8,16");
  return ends;
}

void validate(const Cluster& cluster, const std::string& where) {
  if (cluster.machine_gpus.empty()) throw InputError(where, "the cluster has no machines");
  long long total = 0;
  for (std::size_t m = 0; m < cluster.machine_gpus.size(); ++m) {
    if (cluster.machine_gpus[m] <= 0)
      throw InputError(where, "machine " + std::to_string(m) + " has no GPUs");
    total += cluster.machine_gpus[m];
    if (total > kMaxClusterDevices)
      throw InputError(where, "more than " + std::to_string(kMaxClusterDevices) +
                                  " GPUs in all (machines 0.." + std::to_string(m) + " have " +
                                  std::to_string(total) + ")");
  }
  auto positive = [&](double value, const std::string& key) {
    if (!std::isfinite(value) || value <= 0)
      throw InputError(where, key + " must be a finite positive number");
  };
  // At least one byte per second: a transfer then takes at most as many seconds as it has
  // bytes, where a subnormal bandwidth would make its time infinite.
  auto bandwidth = [&](double value, const std::string& key) {
    positive(value, key);
    if (value < 1)
      throw InputError(where, key + " must be at least 1 byte/s (1e-9 GB/s), got " +
                                  std::to_string(value) + " bytes/s");
  };
  bandwidth(cluster.network.intra, "intra-machine bandwidth");
  bandwidth(cluster.network.inter_allreduce, "inter-machine all-reduce bandwidth");
  bandwidth(cluster.network.inter_p2p, "inter-machine point-to-point bandwidth");
  positive(cluster.device_memory, "device memory");
  if (!cluster.machine_gpu.empty() && cluster.machine_gpu.size() != cluster.machine_gpus.size())
    throw InputError(where, "GPU types are given for " +
                                std::to_string(cluster.machine_gpu.size()) +
                                " machines, but the "
                                "cluster has " +
                                std::to_string(cluster.machine_gpus.size()));
  for (const GpuSpec& gpu : cluster.machine_gpu)
    if (gpu.peak_flops != 0) {
      positive(gpu.peak_flops, "peak FLOP/s of GPU " + gpu.name);
      positive(gpu.memory, "memory of GPU " + gpu.name);
    }
}

}  // namespace pe
