// Where the copies of a pipeline sit on the machines: Layout's answers against the device
// ids of every copy, checked one by one.
#include "cost/layout.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "pe/cluster.h"

namespace pe {
namespace {

// Whether devices [first, first + count) of the cluster share one machine.
bool one_machine(const std::vector<int>& machine_gpus, int first, int count) {
  int start = 0;
  for (int gpus : machine_gpus) {
    if (first < start + gpus) return first + count <= start + gpus;
    start += gpus;
  }
  return false;
}

// Every cluster of up to 4 machines of 1 to 12 GPUs (alike or not), every copy count that
// fits, every range of a copy: compact() is true exactly when each copy's range shares a
// machine, all_replicas_compact() when all copies' ranges share one.
TEST(Layout, CompactMatchesEveryCopysDevices) {
  std::mt19937 rng(7);
  int alike = 0, checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<int> gpus(1 + rng() % 4);
    const bool same = rng() % 2 == 0;
    gpus[0] = 1 + static_cast<int>(rng() % 12);
    for (std::size_t i = 1; i < gpus.size(); ++i)
      gpus[i] = same ? gpus[0] : 1 + static_cast<int>(rng() % 12);
    Cluster cluster;
    cluster.machine_gpus = gpus;
    const int devices = cluster.device_count();
    for (int replicas = 1; replicas <= devices; ++replicas) {
      const int width = devices / replicas - static_cast<int>(rng() % 2);  // some left idle
      if (width < 1) continue;
      const detail::Layout layout(cluster, replicas, width);
      alike += same;
      for (int offset = 0; offset < width; ++offset)
        for (int count = 1; offset + count <= width; ++count) {
          bool each = true;
          for (int k = 0; k < replicas; ++k)
            each = each && one_machine(gpus, k * width + offset, count);
          const int span = (replicas - 1) * width + count;
          ASSERT_EQ(layout.compact(offset, count), each)
              << "machines " << gpus.size() << " x " << gpus.front() << ", " << replicas
              << " copies of " << width << ", devices " << offset << " + " << count;
          ASSERT_EQ(layout.all_replicas_compact(offset, count), one_machine(gpus, offset, span));
          ++checked;
        }
    }
  }
  EXPECT_GT(alike, 100);
  EXPECT_GT(checked, 10000);
}

}  // namespace
}  // namespace pe
