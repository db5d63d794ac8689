#include <algorithm>
#include <cmath>
#include <string>

#include "bound_graph.h"
#include "count_dp.h"
#include "pe/edge.h"
#include "pe/edge_cost.h"
#include "pe/error.h"
#include "pick_schedule.h"
#include "stage_tables.h"

namespace pe {
namespace {

using edge::BoundGraph;
using edge::CountDp;
using edge::StageTables;

/// The search state shared by the feasibility checks of one schedule_pipeline call.
struct Search {
  const EdgeCluster& cluster;
  const EdgeSettings& settings;
  const EdgeCostModel& cost;
  const StageTables& tables;
  EdgeSearchStats& stats;

  /// Whether some schedule has a bottleneck <= bound.
  bool feasible(Seconds bound) const {
    BoundGraph graph(tables, cost, cluster, bound);
    CountDp dp(graph, settings.search_memory_limit);
    note(dp);
    return dp.run(true);
  }

  void note(const CountDp& dp) const {
    ++stats.feasibility_checks;
    stats.largest_state_count = std::max(stats.largest_state_count, dp.states());
    stats.peak_table_bytes = std::max(stats.peak_table_bytes, dp.table_bytes());
  }
};

/// Index of the least feasible candidate; candidates.back() must be feasible.
std::size_t least_feasible(const Search& search, const std::vector<double>& candidates) {
  std::size_t low = 0;
  std::size_t high = candidates.size() - 1;
  while (low < high) {
    const std::size_t middle = low + (high - low) / 2;
    if (search.feasible(candidates[middle]))
      high = middle;
    else
      low = middle + 1;
  }
  return low;
}

/// The first layer that no memory-fitting stage on any host covers (0 when none).
std::size_t uncovered_layer(const StageTables& tables) {
  const std::size_t layers = tables.layers();
  std::vector<bool> covered(layers + 1, false);
  for (std::size_t type = 0; type < tables.type_count(); ++type) {
    if (!tables.used(type)) continue;
    for (std::size_t start = 0; start < layers; ++start)
      for (std::size_t end = start + 1; end <= tables.reach(type, start); ++end)
        if (tables.fits(type, start, end))
          std::fill(covered.begin() + static_cast<long>(start) + 1,
                    covered.begin() + static_cast<long>(end) + 1, true);
  }
  for (std::size_t layer = 1; layer <= layers; ++layer)
    if (!covered[layer]) return layer;
  return 0;
}

std::string infeasible_reason(const StageTables& tables, std::size_t hosts) {
  if (const std::size_t layer = uncovered_layer(tables))
    return "no stage containing layer " + std::to_string(layer) +
           " fits in the memory of any host (mem_MB must exceed weights plus buffers)";
  return "the " + std::to_string(tables.layers()) + " layers cannot be split over the " +
         std::to_string(hosts) +
         " hosts: each stage must need less memory than its host's mem_MB, each host runs at "
         "most one stage, and a cut needs hosts with bw_Mbps > 0";
}

void check_settings(const EdgeSettings& settings) {
  if (!std::isfinite(settings.element_bytes) || settings.element_bytes < 0)
    throw UsageError("element_bytes must be a finite number >= 0, got " +
                     std::to_string(settings.element_bytes));
}

}  // namespace

EdgeSchedule schedule_pipeline(const EdgeModel& model, const EdgeCluster& cluster,
                               const EdgeSettings& settings) {
  validate_edge_input(model, cluster);
  check_settings(settings);
  EdgeSchedule result;
  if (model.layers() == 0) {
    result.infeasible_reason = "model '" + model.name + "' has no layers";
    return result;
  }
  if (cluster.hosts.empty()) {
    result.infeasible_reason = "no hosts of a usable device type";
    return result;
  }
  const EdgeCostModel cost(model, cluster, settings);
  const StageTables tables(cost, cluster);
  const Search search{cluster, settings, cost, tables, result.stats};
  const std::vector<double>& candidates = tables.candidates();
  result.stats.candidate_bounds = candidates.size();
  if (candidates.empty() || !search.feasible(candidates.back())) {
    result.infeasible_reason = infeasible_reason(tables, cluster.hosts.size());
    return result;
  }
  const Seconds bound = candidates[least_feasible(search, candidates)];
  const BoundGraph graph(tables, cost, cluster, bound);
  CountDp dp(graph, settings.search_memory_limit);
  search.note(dp);
  dp.run(false);
  result.stages = edge::pick_schedule(graph, dp);
  cost.describe(result.stages);
  result.bottleneck = cost.bottleneck(result.stages);
  return result;
}

}  // namespace pe
