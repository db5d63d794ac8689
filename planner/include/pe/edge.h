// Heterogeneous inference pipelines (PipeEdge's `sched-pipeline` problem).
//
// A model of L layers is cut into stages, each a contiguous range of layers run by one host.
// Hosts belong to device types; a type fixes a host's per-layer times, memory and NIC speed.
// Layers are numbered from 1 (as in PipeEdge's files and output); a "cut position" p in
// 0..L is the boundary after layer p, so a stage of layers a..b spans cuts (a-1, b].
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pe/error.h"
#include "pe/units.h"

namespace pe {

/// A model as sched-pipeline sees it: one entry of PipeEdge's `models.yml`.
/// Invariant (checked by schedule_pipeline): parameters_out has one value per layer.
struct EdgeModel {
  std::string name;                           ///< Its key in `models.yml`.
  std::vector<double> weights_mib;            ///< `mem_MB`: weight memory per layer, MiB.
  std::uint64_t parameters_in = 0;            ///< Elements per sample entering layer 1.
  std::vector<std::uint64_t> parameters_out;  ///< Elements per sample leaving each layer.

  /// Number of layers L.
  std::size_t layers() const { return weights_mib.size(); }
};

/// A device type with the profile selected for one model, micro-batch size and dtype.
/// Invariant: layer_seconds has one value per model layer; all numbers finite and >= 0.
struct EdgeDeviceType {
  std::string name;                    ///< Its key in `device_types.yml`.
  double bandwidth_mbps = 0;           ///< NIC speed in Mbit/s, 1 Mbit = 2^20 bit.
  double memory_mib = 0;               ///< Usable memory in MiB; a stage must need less.
  std::vector<Seconds> layer_seconds;  ///< Time of each layer for one micro-batch.
};

/// One host of `devices.yml`.
struct EdgeHost {
  std::string name;      ///< Host name, as written in `devices.yml`.
  std::size_t type = 0;  ///< Index into EdgeCluster::types.
};

/// The usable device types and their hosts. `hosts` keeps `devices.yml` order, which is
/// also the order in which hosts of one type are handed out.
struct EdgeCluster {
  std::vector<EdgeDeviceType> types;  ///< Device types; EdgeHost::type indexes this.
  std::vector<EdgeHost> hosts;        ///< All hosts, in `devices.yml` order.
};

/// Run-time settings of a schedule (sched-pipeline's -b, -i, -o; float32 elements).
struct EdgeSettings {
  std::uint64_t micro_batch = 8;  ///< Samples per micro-batch (`-b`); selects the profile.
  std::uint64_t buffers_in = 2;   ///< Receive-queue buffers of every stage but the first.
  std::uint64_t buffers_out = 2;  ///< Send-queue buffers of every stage.
  double element_bytes = 4;       ///< Bytes per tensor element (float32).
  /// Largest reachability table the exact search may allocate, in bytes. Instances that
  /// need more (many distinct device types) are searched over a restricted host pool
  /// (see restrict_on_limit) or throw SearchLimitError instead of thrashing.
  std::size_t search_memory_limit = std::size_t{64} << 20;
  /// When a feasibility check's exact table would pass search_memory_limit: true searches
  /// with fewer hosts of some device classes (the schedule stays valid, is marked
  /// EdgeSchedule::exact = false and may be slower than the optimum); false throws
  /// SearchLimitError.
  bool restrict_on_limit = true;
};

/// One stage of a schedule, with the cost-model terms that describe it.
struct EdgeStage {
  std::size_t host = 0;         ///< Index into EdgeCluster::hosts.
  std::size_t first_layer = 1;  ///< First layer, 1-based, inclusive.
  std::size_t last_layer = 1;   ///< Last layer, 1-based, inclusive.
  Seconds compute = 0;          ///< Sum of the host type's layer times.
  Seconds transfer_out = 0;     ///< Transfer across the cut after this stage (0 if last).
  Bytes memory = 0;             ///< Weights plus buffers (EdgeCostModel::memory_need).
};

/// Work done by the search (for benchmarks and reports).
struct EdgeSearchStats {
  /// Bottleneck values the search chose among (stage computes and one-sided cut times,
  /// counted with repeats; never listed, only sampled).
  std::size_t candidate_bounds = 0;
  std::size_t feasibility_checks = 0;   ///< Bounds tested by the binary search.
  std::size_t largest_state_count = 0;  ///< Most host-count vectors in one check.
  std::size_t peak_table_bytes = 0;     ///< Largest reachability table allocated.
  /// Most hosts left out of a check whose exact table would not fit (0: none).
  std::size_t hosts_left_out = 0;
};

/// The result of schedule_pipeline. An empty `stages` list is a normal outcome ("nothing
/// fits"); `infeasible_reason` then says why.
struct EdgeSchedule {
  std::vector<EdgeStage> stages;  ///< In pipeline order; layers 1..L covered contiguously.
  Seconds bottleneck = 0;         ///< Max over stage compute and cut transfer times.
  std::string infeasible_reason;  ///< Empty when a schedule exists.
  EdgeSearchStats stats;          ///< Work done by the search.
  /// False when some check searched a restricted host pool (EdgeSettings::restrict_on_limit):
  /// the schedule is valid but its bottleneck may not be the least possible.
  bool exact = true;

  /// True when no schedule fits.
  bool empty() const { return stages.empty(); }
};

/// The exact search would need more memory than EdgeSettings::search_memory_limit.
class SearchLimitError : public Error {
 public:
  /// `what` is the message.
  explicit SearchLimitError(const std::string& what) : Error(what) {}
};

/// Finds a schedule with the least bottleneck (the cost model of pe/edge_cost.h,
/// each type using its own data). Exact unless the memory limit forces a restricted host
/// pool (EdgeSchedule::exact). Among schedules with the least bottleneck it
/// returns the one with the fewest stages; among those, stage by stage from the first, the
/// one whose host comes first in `cluster.hosts`, then the one whose stage ends latest.
/// Hosts of one type are used in `cluster.hosts` order.
/// Throws UsageError when the model and cluster are inconsistent (lengths, negative or
/// non-finite numbers) and SearchLimitError (see EdgeSettings::search_memory_limit; with
/// restrict_on_limit only when not even a restricted pool fits or yields a schedule).
EdgeSchedule schedule_pipeline(const EdgeModel& model, const EdgeCluster& cluster,
                               const EdgeSettings& settings);

/// Checks the invariants listed on EdgeModel, EdgeDeviceType and EdgeHost; throws
/// UsageError naming the first violation.
void validate_edge_input(const EdgeModel& model, const EdgeCluster& cluster);

}  // namespace pe
