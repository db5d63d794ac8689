// The devices a plan may use: machines of GPUs and the links between them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pe/gpu.h"
#include "pe/units.h"

namespace pe {

/// Bandwidths of the two levels of the machine hierarchy. Defaults are HPGO's V100
/// constants (NVLink 25 GB/s; Ethernet 3 GB/s for all-reduce, 1 GB/s point-to-point).
struct Network {
  BytesPerSecond intra = 25 * kGB;           ///< Between GPUs of one machine.
  BytesPerSecond inter_allreduce = 3 * kGB;  ///< All-reduce bandwidth across machines.
  BytesPerSecond inter_p2p = 1 * kGB;        ///< Point-to-point across machines.
};

/// A cluster of machines, each with a number of identical GPUs. Device ids are global and
/// consecutive: machine k owns ids [first_device(k), first_device(k) + gpus(k)).
struct Cluster {
  std::vector<int> machine_gpus;   ///< GPUs of each machine, in id order.
  Network network;                 ///< Link bandwidths.
  Bytes device_memory = 16 * kGB;  ///< Memory of each GPU (of machines without a GPU type).
  /// Empty, or the GPU type of each machine, in id order: an entry with peak_flops 0 is the
  /// model's own GPU (ModelProfile::gpu) with device_memory; any other runs the model
  /// peak_flops / the model GPU's peak_flops times as fast and has its own memory.
  std::vector<GpuSpec> machine_gpu;

  /// Total GPUs over all machines.
  int device_count() const;
  /// Number of machines.
  int machine_count() const { return static_cast<int>(machine_gpus.size()); }
  /// Global id of the first GPU of `machine` (0-based, in [0, machine_count())).
  int first_device(int machine) const;
  /// Machine holding a device id; id must be in [0, device_count()).
  int machine_of(int device) const;
  /// True when devices [first, first + count) all sit on one machine.
  bool one_machine(int first, int count) const;
};

/// Sets the bandwidth between machines: `allreduce` for all-reduce, and `p2p` for
/// point-to-point transfers when given, else `allreduce` for those too (one number given
/// for the link between machines means both).
void set_inter_machine_bandwidth(Network& network, BytesPerSecond allreduce,
                                 std::optional<BytesPerSecond> p2p = std::nullopt);

/// HPGO's "seps" shorthand: cumulative exclusive machine ends, so {8, 16} is 2 machines of
/// 8 GPUs and {1, 2, ..., 16} is 16 single-GPU machines. Throws UsageError unless the ends
/// are strictly increasing positive integers.
Cluster cluster_from_machine_ends(const std::vector<int>& ends);

/// Parses "8,16" into machine ends (UsageError on anything else).
std::vector<int> parse_machine_ends(const std::string& text);

/// Checks a cluster: at least one machine, positive GPU counts, finite bandwidths of at
/// least 1 byte/s, finite positive memory. Throws InputError naming `where`.
void validate(const Cluster& cluster, const std::string& where);

}  // namespace pe
