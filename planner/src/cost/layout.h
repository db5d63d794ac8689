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
  /// The same, given uniform_machine_size(cluster) (CostModel::layout, which keeps it).
  Layout(const Cluster& cluster, int replicas, int width, int machine_size);

  int replicas() const { return replicas_; }
  int width() const { return width_; }
  /// Global id of device `offset` of replica `replica`.
  int device(int replica, int offset) const { return replica * width_ + offset; }
  /// Machine of device `offset` of replica `replica`.
  int machine(int replica, int offset) const { return machine_of(device(replica, offset)); }
  /// True when, in every replica, devices [offset, offset + count) share one machine.
  bool compact(int offset, int count) const;
  /// True when, in every replica, each group of `t` consecutive devices of [offset, offset +
  /// count) (t dividing count) shares one machine.
  bool groups_compact(int offset, int count, int t) const;
  /// True when the devices [offset, offset + count) of all replicas share one machine.
  bool all_replicas_compact(int offset, int count) const;

 private:
  int machine_of(int device) const;

  int replicas_, width_;
  std::vector<int> ends_;  // machines of unequal sizes: cumulative ends of their device ids
  int machine_size_ = 0;   // the GPUs of every machine when they are all alike, else 0
  int period_ = 1;         // copies after which positions in a machine repeat (alike only)
};

/// The GPUs of every machine of `cluster` when they all have as many, else 0.
int uniform_machine_size(const Cluster& cluster);

}  // namespace pe::detail
