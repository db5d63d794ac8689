#include "pe/edge.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "pe/edge_cost.h"
#include "pe/error.h"
#include "pipeedge/bound_graph.h"
#include "pipeedge/bound_search.h"
#include "pipeedge/count_dp.h"
#include "pipeedge/pick_schedule.h"
#include "pipeedge/sampler.h"
#include "pipeedge/stage_tables.h"

namespace pe {
namespace {

using detail::edge::BoundGraph;
using detail::edge::BoundSearch;
using detail::edge::CountDp;
using detail::edge::EndsByType;
using detail::edge::Sampler;
using detail::edge::StageTables;

/// Candidate values sampled to choose the trial bounds. While the candidates between the
/// bounds are fewer, the trials are their exact medians (a plain binary search); before
/// that, the medians of an evenly spaced sample, which halve them about as well.
constexpr std::size_t kSampleSize = std::size_t{1} << 16;

/// The search state shared by the feasibility checks of one schedule_pipeline call.
struct Search {
  const EdgeCluster& cluster;
  const EdgeSettings& settings;
  const StageTables& tables;
  EdgeSearchStats& stats;

  /// Whether some schedule has a bottleneck <= bound; `ends` are the ends under bound.
  bool feasible(Seconds bound, const EndsByType& ends) const {
    BoundGraph graph(tables, cluster, ends, bound);
    bool found = false;
    fill(graph, true, found);
    return found;
  }

  /// The table of `graph`, run with `stop_at_first`; `found` says whether it covers all
  /// layers. When the exact table would pass the memory limit, the graph's capacities are
  /// first restricted to what fits (if the settings allow).
  CountDp fill(BoundGraph& graph, bool stop_at_first, bool& found) const {
    try {
      CountDp dp(graph, settings.search_memory_limit);
      found = dp.run(stop_at_first);
      note(dp);
      return dp;
    } catch (const SearchLimitError&) {
      if (!settings.restrict_on_limit) throw;
    }
    const std::size_t left_out = graph.restrict_capacities(
        CountDp::most_vectors_within(tables.layers(), settings.search_memory_limit));
    stats.hosts_left_out = std::max(stats.hosts_left_out, left_out);
    CountDp dp(graph, settings.search_memory_limit);
    found = dp.run(stop_at_first);
    note(dp);
    return dp;
  }

  void note(const CountDp& dp) const {
    ++stats.feasibility_checks;
    stats.largest_state_count = std::max(stats.largest_state_count, dp.states());
    stats.peak_table_bytes = std::max(stats.peak_table_bytes, dp.table_bytes());
  }
};

/// Sampled candidate values to choose trial bounds from: all of those between the bounds
/// when the sample is complete (then sorted and distinct), else an evenly spaced sample.
struct Pending {
  std::vector<double> values;
  bool complete = true;

  explicit Pending(const Sampler& sampler)
      : values(sampler.values()), complete(sampler.complete()) {
    if (!complete) return;
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
  }

  /// The next bound to try, one strictly between `low` and `high`, or false when no
  /// value is left there. Complete: the median of the distinct values left (log2 of their
  /// number trials in all, as a binary search); otherwise the median of the sample.
  bool next_bound(Seconds low, Seconds high, Seconds& bound) {
    if (complete) {
      const auto first = std::upper_bound(values.begin(), values.end(), low);
      const auto last = std::lower_bound(first, values.end(), high);
      if (first == last) return false;
      bound = *(first + (last - first) / 2);
      return true;
    }
    std::erase_if(values, [&](double value) { return !(value > low && value < high); });
    if (values.empty()) return false;
    const auto middle = values.begin() + static_cast<long>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    bound = *middle;
    return true;
  }
};

/// The first layer that no memory-fitting stage on any host covers (0 when none).
std::size_t uncovered_layer(const StageTables& tables) {
  const std::size_t layers = tables.layers();
  std::vector<std::size_t> covered_to(layers + 1, 0);  // stages from i cover layers i+1..last
  for (std::size_t type = 0; type < tables.type_count(); ++type) {
    if (!tables.used(type)) continue;
    for (std::size_t start = 0; start < layers; ++start)
      covered_to[start] = std::max(covered_to[start], tables.last(type, start));
  }
  std::size_t reach = 0;  // layers 1..reach are covered so far
  for (std::size_t layer = 1; layer <= layers; ++layer) {
    reach = std::max(reach, covered_to[layer - 1]);
    if (reach < layer) return layer;
  }
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

[[noreturn]] void throw_restricted_infeasible(const EdgeSearchStats& stats) {
  throw SearchLimitError(
      "no schedule found with " + std::to_string(stats.hosts_left_out) +
      " hosts left out of the search, and the exact search over all of them needs more than "
      "the memory limit; raise it (EdgeSettings::search_memory_limit)");
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
  if (model.layers() > CountDp::kMostLayers)
    throw SearchLimitError("the exact search handles at most " +
                           std::to_string(CountDp::kMostLayers) + " layers");
  const EdgeCostModel cost(model, cluster, settings);
  Sampler sampler(kSampleSize);
  const StageTables tables(cost, cluster, sampler);
  for (double seconds : tables.transfer_candidates()) sampler.add(seconds);
  result.stats.candidate_bounds = tables.candidate_count();
  const Search search{cluster, settings, tables, result.stats};
  if (!tables.has_candidates()) {
    result.infeasible_reason = infeasible_reason(tables, cluster.hosts.size());
    return result;
  }
  BoundSearch bounds(tables);
  if (!search.feasible(bounds.high(), bounds.high_ends())) {
    if (result.stats.hosts_left_out > 0) throw_restricted_infeasible(result.stats);
    result.infeasible_reason = infeasible_reason(tables, cluster.hosts.size());
    return result;
  }
  // Trials follow the sample until no sampled value is left between the bounds; then a
  // new sample of what is left (far fewer values) is taken, until none is left at all.
  Pending pending(sampler);
  Seconds trial = 0;
  while (true) {
    if (!pending.next_bound(bounds.low(), bounds.high(), trial)) {
      if (pending.complete) break;
      Sampler rest(kSampleSize);
      bounds.sample(rest);
      pending = Pending(rest);
      continue;
    }
    bounds.try_bound(trial);
    if (search.feasible(trial, bounds.trial_ends()))
      bounds.keep_as_high();
    else
      bounds.keep_as_low();
  }
  BoundGraph graph(tables, cluster, bounds.high_ends(), bounds.high());
  bool found = false;
  const CountDp dp = search.fill(graph, false, found);
  // The full table can outgrow the limit where the check at this bound stopped early.
  if (!found) throw_restricted_infeasible(result.stats);
  result.exact = result.stats.hosts_left_out == 0;
  result.stages = detail::edge::pick_schedule(graph, dp);
  cost.describe(result.stages);
  result.bottleneck = cost.bottleneck(result.stages);
  return result;
}

}  // namespace pe
