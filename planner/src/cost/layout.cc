#include "cost/layout.h"

#include <algorithm>
#include <numeric>

namespace pe::detail {

int uniform_machine_size(const Cluster& cluster) {
  const bool uniform = !cluster.machine_gpus.empty() &&
                       std::all_of(cluster.machine_gpus.begin(), cluster.machine_gpus.end(),
                                   [&](int gpus) { return gpus == cluster.machine_gpus.front(); });
  return uniform ? cluster.machine_gpus.front() : 0;
}

Layout::Layout(const Cluster& cluster, int replicas, int width)
    : Layout(cluster, replicas, width, uniform_machine_size(cluster)) {}

Layout::Layout(const Cluster& cluster, int replicas, int width, int machine_size)
    : replicas_(replicas), width_(width) {
  if (machine_size > 0) {
    machine_size_ = machine_size;
    // Copy k starts at k * width; its position in a machine repeats every
    // machine_size / gcd(width, machine_size) copies.
    period_ = machine_size_ / std::gcd(width, machine_size_);
    return;  // machine_of needs no ends
  }
  int end = 0;
  for (int gpus : cluster.machine_gpus) ends_.push_back(end += gpus);
}

int Layout::machine_of(int device) const {
  if (machine_size_ > 0) return device / machine_size_;
  return static_cast<int>(std::upper_bound(ends_.begin(), ends_.end(), device) - ends_.begin());
}

bool Layout::compact(int offset, int count) const {
  // With machines of one size m, copy k's device `offset` sits at position
  // (k * width + offset) mod m of its machine, and the copies repeat their positions every
  // period_ = m / g copies (g = gcd(width, m)). Copies that fill a period take every position
  // congruent to `offset` mod g, the last m - g + offset mod g: the range fits from there on
  // when offset mod g + count <= g.
  if (machine_size_ > 0 && replicas_ >= period_) {
    const int g = machine_size_ / period_;
    return offset % g + count <= g;
  }
  const int copies = machine_size_ > 0 ? std::min(replicas_, period_) : replicas_;
  for (int k = 0; k < copies; ++k)
    if (machine(k, offset) != machine(k, offset + count - 1)) return false;
  return true;
}

bool Layout::groups_compact(int offset, int count, int t) const {
  if (t == 1) return true;
  // Machines of a size t divides, and every group starting at a multiple of t: none crosses.
  if (machine_size_ > 0 && machine_size_ % t == 0 && offset % t == 0 &&
      (replicas_ == 1 || width_ % t == 0))
    return true;
  for (int group = offset; group < offset + count; group += t)
    if (!compact(group, t)) return false;
  return true;
}

bool Layout::all_replicas_compact(int offset, int count) const {
  return machine(0, offset) == machine(replicas_ - 1, offset + count - 1);
}

}  // namespace pe::detail
