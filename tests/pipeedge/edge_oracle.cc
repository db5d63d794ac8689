#include "pipeedge/edge_oracle.h"

#include <limits>
#include <utility>

#include "pe/edge_cost.h"

namespace pe::edge_test {
namespace {

/// Per-stage sort key: smaller host first, then the later last layer.
std::vector<std::pair<std::size_t, long>> key_of(const std::vector<EdgeStage>& stages) {
  std::vector<std::pair<std::size_t, long>> key;
  for (const EdgeStage& stage : stages)
    key.emplace_back(stage.host, -static_cast<long>(stage.last_layer));
  return key;
}

struct Enumeration {
  const EdgeCluster& cluster;
  const EdgeCostModel& cost;
  std::vector<std::vector<std::size_t>> hosts_of_type;
  std::vector<std::size_t> used;
  std::vector<EdgeStage> current;
  std::vector<EdgeStage> best;
  Seconds best_bottleneck = std::numeric_limits<double>::infinity();

  void consider() {
    const Seconds bottleneck = cost.bottleneck(current);
    if (!(bottleneck < std::numeric_limits<double>::infinity())) return;
    const bool better = best.empty() || bottleneck < best_bottleneck ||
                        (bottleneck == best_bottleneck &&
                         (current.size() < best.size() ||
                          (current.size() == best.size() && key_of(current) < key_of(best))));
    if (!better) return;
    best = current;
    best_bottleneck = bottleneck;
  }

  void extend(std::size_t done) {
    if (done == cost.layers()) return consider();
    for (std::size_t type = 0; type < hosts_of_type.size(); ++type) {
      if (used[type] == hosts_of_type[type].size()) continue;
      for (std::size_t last = done + 1; last <= cost.layers(); ++last) {
        if (!cost.fits(type, done + 1, last)) continue;
        current.push_back(EdgeStage{hosts_of_type[type][used[type]], done + 1, last, 0, 0, 0});
        ++used[type];
        extend(last);
        --used[type];
        current.pop_back();
      }
    }
  }
};

}  // namespace

std::vector<EdgeStage> brute_force_schedule(const EdgeModel& model, const EdgeCluster& cluster,
                                            const EdgeSettings& settings) {
  const EdgeCostModel cost(model, cluster, settings);
  Enumeration walk{cluster, cost, {}, {}, {}, {}};
  walk.hosts_of_type.resize(cluster.types.size());
  for (std::size_t host = 0; host < cluster.hosts.size(); ++host)
    walk.hosts_of_type[cluster.hosts[host].type].push_back(host);
  walk.used.assign(cluster.types.size(), 0);
  if (model.layers() > 0) walk.extend(0);
  cost.describe(walk.best);
  return walk.best;
}

}  // namespace pe::edge_test
