// Where the copies of a pipeline sit on the machine hierarchy.
#pragma once

#include <vector>

#include "pe/cluster.h"

namespace pe::detail {

/// `replicas` blocks of `width` consecutive device ids; block k starts at k * width.
/// Offsets below are relative to the start of a block.
class Layout {
 public:
  Layout(const Cluster& cluster, int replicas, int width);

  int replicas() const { return replicas_; }
  int width() const { return width_; }
  /// Global id of device `offset` of replica `replica`.
  int device(int replica, int offset) const { return replica * width_ + offset; }
  /// Machine of device `offset` of replica `replica`.
  int machine(int replica, int offset) const { return machine_[device(replica, offset)]; }
  /// True when, in every replica, devices [offset, offset + count) share one machine.
  bool compact(int offset, int count) const;
  /// True when the devices [offset, offset + count) of all replicas share one machine.
  bool all_replicas_compact(int offset, int count) const;

 private:
  int replicas_, width_;
  std::vector<int> machine_;  // machine of each global device id
};

}  // namespace pe::detail
