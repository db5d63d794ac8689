#include "cost/layout.h"

namespace pe::detail {

Layout::Layout(const Cluster& cluster, int replicas, int width)
    : replicas_(replicas), width_(width) {
  for (int m = 0; m < cluster.machine_count(); ++m)
    machine_.insert(machine_.end(), cluster.machine_gpus[m], m);
}

bool Layout::compact(int offset, int count) const {
  for (int k = 0; k < replicas_; ++k)
    if (machine_[device(k, offset)] != machine_[device(k, offset + count - 1)]) return false;
  return true;
}

bool Layout::all_replicas_compact(int offset, int count) const {
  return machine_[device(0, offset)] == machine_[device(replicas_ - 1, offset + count - 1)];
}

}  // namespace pe::detail
