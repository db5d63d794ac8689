#include "search/machine_runs.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "search/candidate_pool.h"
#include "search/pipeline_shapes.h"

namespace pe::detail {
namespace {

// Whether machines i and j of `cluster` are of one kind: as many GPUs, of one type.
bool same_kind(const Cluster& cluster, std::size_t i, std::size_t j) {
  if (cluster.machine_gpus[i] != cluster.machine_gpus[j]) return false;
  if (cluster.machine_gpu.empty()) return true;
  const GpuSpec& a = cluster.machine_gpu[i];
  const GpuSpec& b = cluster.machine_gpu[j];
  return a.name == b.name && a.peak_flops == b.peak_flops && a.memory == b.memory;
}

// Whether the machines from `first` on, and then those before it, are, kind by kind, those
// from `earlier` on and then those before it: the same cluster (rotated).
bool repeats(const Cluster& cluster, std::size_t earlier, std::size_t first) {
  const std::size_t n = cluster.machine_gpus.size();
  for (std::size_t k = 0; k < n; ++k)
    if (!same_kind(cluster, (first + k) % n, (earlier + k) % n)) return false;
  return true;
}

// The lower bound a search proved over its plans: none where it proved that no plan fits.
Seconds bound_of(const SearchResult& r) {
  return r.plans.empty() && r.exact ? std::numeric_limits<Seconds>::infinity() : r.lower_bound;
}

}  // namespace

std::vector<int> machine_runs(const Cluster& cluster) {
  std::vector<int> firsts;
  int changes = 0;
  for (std::size_t m = 1; m < cluster.machine_gpus.size() && changes < kMaxMachineRuns; ++m) {
    if (same_kind(cluster, m, m - 1)) continue;
    ++changes;
    const bool covered =
        repeats(cluster, 0, m) || std::any_of(firsts.begin(), firsts.end(), [&](int f) {
          return repeats(cluster, static_cast<std::size_t>(f), m);
        });
    if (!covered) firsts.push_back(static_cast<int>(m));
  }
  return firsts;
}

Cluster rotated(const Cluster& cluster, int first) {
  Cluster around = cluster;
  const auto from = static_cast<std::ptrdiff_t>(first);
  std::rotate(around.machine_gpus.begin(), around.machine_gpus.begin() + from,
              around.machine_gpus.end());
  if (!around.machine_gpu.empty())
    std::rotate(around.machine_gpu.begin(), around.machine_gpu.begin() + from,
                around.machine_gpu.end());
  return around;
}

void move_to_machine(Plan& plan, const Cluster& cluster, int first) {
  const int offset = cluster.first_device(first), devices = cluster.device_count();
  for (PlanStage& stage : plan.stages)
    for (int& device : stage.devices) device = (device + offset) % devices;
  plan.cluster_devices = devices;
}

SearchResult merged(SearchResult a, SearchResult b, int top) {
  SearchResult m;
  m.fastest = std::min(a.fastest, b.fastest);
  std::vector<Candidate> all;
  for (std::vector<Plan>* plans : {&a.plans, &b.plans})
    for (Plan& plan : *plans) all.push_back(candidate(std::move(plan)));
  rank(all, m.fastest);
  for (Candidate& c : all) {
    if (static_cast<int>(m.plans.size()) == top) break;
    const PipelineShapeChoice shape = shape_of(c.plan);
    if (std::none_of(m.plans.begin(), m.plans.end(),
                     [&](const Plan& p) { return same_shape(shape_of(p), shape); }))
      m.plans.push_back(std::move(c.plan));
  }
  const Seconds bound = std::min(bound_of(a), bound_of(b));
  m.exact = m.plans.empty() ? a.exact && b.exact : bound >= m.fastest * (1 - kTie);
  m.lower_bound = m.plans.empty() ? std::min(a.lower_bound, b.lower_bound) : bound;
  return m;
}

}  // namespace pe::detail
