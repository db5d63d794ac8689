#include "pe/importers/cluster_yaml.h"

#include <algorithm>
#include <cmath>

#include "yaml_input.h"

namespace pe {
namespace {

using namespace detail::yaml_input;

// The most GPUs a cluster file may describe in all (as for --devices).
constexpr long long kMaxGpus = 1000000;
// The most machines in one group, and GPUs per machine.
constexpr long long kMaxPerGroup = 100000;
// The most YAML nodes a cluster file may hold (some 20,000 machine groups written out one
// by one; `count` describes more): checked before the tree is built, which keeps a runaway
// file from taking gigabytes.
constexpr std::size_t kMaxClusterNodes = 100000;

void read_machines(const YAML::Node& list, const std::string& file, Cluster& cluster) {
  if (!list.IsSequence() || list.size() == 0)
    throw InputError(where(file, list, "machines"), "expected a non-empty list of machines");
  long long total = 0;
  std::vector<GpuSpec> types;
  for (const YAML::Node& group : list) {
    if (!group.IsMap()) throw InputError(where(file, group, "machines"), "expected a map");
    only_keys(group, {"count", "gpus", "type", "gpu"}, file, "a machine group");
    if (YAML::Node type = child(group, "type", file, false)) text(type, file, "type");
    GpuSpec gpu;  // peak 0: the model's own GPU
    if (YAML::Node g = child(group, "gpu", file, false)) gpu = read_gpu(g, file);
    long long count_of = 1;
    if (YAML::Node c = child(group, "count", file, false))
      count_of = count_in(c, file, "count", 1, kMaxPerGroup, "machines");
    const long long gpus =
        count_in(child(group, "gpus", file, true), file, "gpus", 1, kMaxPerGroup, "GPUs");
    total += count_of * gpus;
    if (total > kMaxGpus)
      throw InputError(where(file, group, "machines"),
                       std::to_string(count_of) + " machines of " + std::to_string(gpus) +
                           " GPUs bring the cluster to " + std::to_string(total) +
                           " GPUs, expected at most " + std::to_string(kMaxGpus) + " in all");
    cluster.machine_gpus.insert(cluster.machine_gpus.end(), static_cast<std::size_t>(count_of),
                                static_cast<int>(gpus));
    types.insert(types.end(), static_cast<std::size_t>(count_of), gpu);
  }
  // GPU types only when some group names one.
  if (std::any_of(types.begin(), types.end(), [](const GpuSpec& g) { return g.peak_flops > 0; }))
    cluster.machine_gpu = std::move(types);
}

// A positive number of GB (or GB/s) in bytes; throws when the bytes overflow a double.
double positive_gigabytes(const YAML::Node& node, const std::string& file, const std::string& key,
                          const std::string& unit = "GB") {
  const double bytes = non_negative(node, file, key, true) * kGB;
  if (!std::isfinite(bytes))
    throw InputError(where(file, node, key), "expected a number of " + unit +
                                                 " below 1.7e299, got '" + node.Scalar() + "'");
  return bytes;
}

// A bandwidth in GB/s as bytes/s, at least one byte per second: a transfer then takes
// at most as many seconds as it has bytes (a subnormal bandwidth would make times inf).
double bandwidth(const YAML::Node& node, const std::string& file, const std::string& key) {
  const double bytes = positive_gigabytes(node, file, key, "GB/s");
  if (bytes < 1)
    throw InputError(where(file, node, key),
                     "expected at least 1e-9 GB/s (one byte per "
                     "second), got '" +
                         node.Scalar() + "'");
  return bytes;
}

void read_bandwidth(const YAML::Node& map, const std::string& file, Network& network) {
  if (!map.IsMap()) throw InputError(where(file, map, "bandwidth_GBps"), "expected a map");
  only_keys(map, {"intra", "inter_allreduce", "inter_p2p"}, file, "bandwidth_GBps");
  auto read = [&](const char* key, BytesPerSecond& into) {
    if (YAML::Node v = child(map, key, file, false))
      into = bandwidth(v, file, std::string("bandwidth_GBps.") + key);
  };
  read("intra", network.intra);
  read("inter_allreduce", network.inter_allreduce);
  read("inter_p2p", network.inter_p2p);
}

}  // namespace

Cluster parse_cluster_yaml(const std::string& text, const std::string& file) {
  YAML::Node root = parse(text, file, kMaxClusterNodes);
  if (!root.IsMap()) throw InputError(file, "expected a map with a 'machines' key");
  only_keys(root, {"machines", "bandwidth_GBps", "memory_GB"}, file, "the cluster file");
  Cluster cluster;
  read_machines(child(root, "machines", file, true), file, cluster);
  if (YAML::Node b = child(root, "bandwidth_GBps", file, false))
    read_bandwidth(b, file, cluster.network);
  if (YAML::Node m = child(root, "memory_GB", file, false))
    cluster.device_memory = positive_gigabytes(m, file, "memory_GB");
  validate(cluster, file);
  return cluster;
}

Cluster load_cluster_yaml(const std::string& path) {
  return parse_cluster_yaml(read_text(path), path);
}

}  // namespace pe
