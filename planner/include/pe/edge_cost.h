// The cost model of heterogeneous inference pipelines (PipeEdge's, per type).
//
// For a stage of layers a..b (1-based, inclusive) on device type u, micro-batch B, element
// size s (4 bytes), buffers Bi (in) and Bo (out):
//   compute      = t_u[a] + ... + t_u[b], added left to right from 0.0 (seconds)
//   out(k)       = s * parameters_out[k] * B                       (bytes)
//   in(a)        = a == 1 ? s * parameters_in * B : out(a - 1)     (bytes)
//   memory need  = sum of mem_MB[k] * 2^20 for k = a..b (left to right from 0.0)
//                  + (a > 1 ? in(a) * Bi : 0) + out(b) * Bo + in(a) + out(b)   (bytes)
//   fits         iff memory_mib_u * 2^20 > memory need (strictly)
//   transfer     across the cut after b between types u and v:
//                  out(b) / (min(bw_u, bw_v) * 2^20 / 8) seconds; 0 when out(b) == 0
//                  (the original's 0/0 NaN, which its max() ignores), +inf when bw == 0.
//   bottleneck   = max over stage compute times and cut transfer times.
// Byte counts are doubles: exact below 2^53 bytes (the original wraps 64-bit integers).
#pragma once

#include <cstddef>
#include <vector>

#include "pe/edge.h"
#include "pe/units.h"

namespace pe {

/// Evaluates the cost terms above on its own copy of the model, cluster and settings.
/// Layer arguments are 1-based with 1 <= first <= last <= L; type arguments
/// index EdgeCluster::types. Arguments out of range are a programming error.
class EdgeCostModel {
 public:
  /// Copies `model`, `cluster` and `settings`; does not validate them.
  EdgeCostModel(const EdgeModel& model, const EdgeCluster& cluster, const EdgeSettings& settings);

  /// Number of layers L.
  std::size_t layers() const { return model_.layers(); }
  /// Bytes leaving `layer` for one micro-batch.
  Bytes output_bytes(std::size_t layer) const;
  /// Bytes entering a stage that starts at `first_layer`.
  Bytes input_bytes(std::size_t first_layer) const;
  /// Weight bytes of one layer: mem_MB * 2^20.
  Bytes layer_weight_bytes(std::size_t layer) const;
  /// Input, queue and output buffers of the stage first..last, in bytes.
  Bytes buffer_bytes(std::size_t first_layer, std::size_t last_layer) const;
  /// buffer_bytes from the stage's input and output bytes (`first_stage`: it starts at
  /// layer 1, so it has no receive queue); the one place the formula is written.
  static Bytes buffer_bytes(bool first_stage, Bytes in, Bytes out, double buffers_in,
                            double buffers_out) {
    const Bytes queued_in = first_stage ? 0.0 : in * buffers_in;
    return queued_in + out * buffers_out + in + out;
  }
  /// The settings the costs use.
  const EdgeSettings& settings() const { return settings_; }
  /// Weights plus buffers of the stage first..last, in bytes: the weights summed left to
  /// right from 0.0, then buffer_bytes added.
  Bytes memory_need(std::size_t first_layer, std::size_t last_layer) const;
  /// Memory of `type` in bytes; a stage fits iff its need is strictly below this.
  Bytes capacity_bytes(std::size_t type) const;
  /// Whether the stage first..last fits (strictly) in the memory of `type`.
  bool fits(std::size_t type, std::size_t first_layer, std::size_t last_layer) const;
  /// Compute seconds of the stage first..last on `type`.
  Seconds compute(std::size_t type, std::size_t first_layer, std::size_t last_layer) const;
  /// Seconds to send the output of `last_layer` over a link of `bandwidth_mbps`.
  Seconds transfer(std::size_t last_layer, double bandwidth_mbps) const;
  /// Seconds across the cut after `last_layer` from a host of `from_type` to `to_type`.
  Seconds transfer(std::size_t last_layer, std::size_t from_type, std::size_t to_type) const;
  /// The bottleneck of a schedule (stages in order, hosts index EdgeCluster::hosts).
  Seconds bottleneck(const std::vector<EdgeStage>& stages) const;
  /// Fills compute, transfer_out and memory of each stage from its host and layers.
  void describe(std::vector<EdgeStage>& stages) const;

 private:
  EdgeModel model_;
  EdgeCluster cluster_;
  EdgeSettings settings_;
};

}  // namespace pe
