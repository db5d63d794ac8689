#include "search/point_search.h"

#include <algorithm>
#include <utility>

#include "search/final_plan.h"
#include "search/machine_runs.h"
#include "search/spine_search.h"

namespace pe::detail {

SearchResult search_finished(const ModelProfile& model, const CostModel& cost, int global_batch,
                             const SearchOptions& options, const std::vector<Plan>& hints) {
  SearchOptions best_only = options;
  best_only.top = 1;
  SearchResult found = search_with_spine(model, cost, global_batch, best_only, hints);
  if (found.plans.empty()) return found;
  FinalPlan last =
      finish_plan(cost, part_cost_of(model, cost.settings()), found.plans.front(), global_batch,
                  found.fastest, found.exact, options.max_stage_width, final_pairs(options.effort));
  found.plans.front() = std::move(last.plan);
  found.fastest = std::min(found.fastest, last.fastest);
  found.exact = found.exact || found.lower_bound >= last.fastest * (1 - kTie);
  return found;
}

namespace {

// The largest power of two below `machines` (2 or more).
int first_machines(int machines) {
  int part = 1;
  while (part * 2 < machines) part *= 2;
  return part;
}

// The search at options.effort from `hints` (search_finished) and, where its gap is above
// kFirstMachinesGap, the search_point of the cluster's first machines, whose plans compete; where
// one of those is faster, the cluster is searched again from it, and that search's plans compete
// too.
SearchResult grown(const ModelProfile& model, const CostModel& cost, int global_batch,
                   const SearchOptions& options, std::uint64_t first_effort,
                   const std::vector<Plan>& hints) {
  SearchResult whole = search_finished(model, cost, global_batch, options, hints);
  const Cluster& cluster = cost.cluster();
  // Within kFirstMachinesGap of its bound, no part's plan is faster by more than that.
  if (whole.exact || cluster.machine_count() < 2 ||
      (!whole.plans.empty() &&
       whole.lower_bound >= whole.plans.front().iteration_time * (1 - kFirstMachinesGap)))
    return whole;
  const CostModel part(model, part_cluster(cluster, first_machines(cluster.machine_count())),
                       cost.settings());
  if (part_cannot_beat(part, global_batch, whole)) return whole;
  SearchResult first = search_point(model, part, global_batch, options, first_effort);
  Seconds bound = whole.lower_bound;  // over every plan, the part's among them
  if (!first.plans.empty() && first.fastest < whole.fastest * (1 - kSimpler)) {
    std::vector<Plan> from = first.plans;
    from.insert(from.end(), whole.plans.begin(), whole.plans.end());
    SearchResult again = search_finished(model, cost, global_batch, options, from);
    bound = std::max(bound, again.lower_bound);
    whole = merged(std::move(whole), std::move(again), 1);
  }
  SearchResult both = merged(std::move(whole), std::move(first), 1);
  if (both.plans.empty()) return both;
  both.lower_bound = std::min(bound, both.fastest);
  both.exact = bound >= both.fastest * (1 - kTie);
  return both;
}

}  // namespace

SearchResult search_point(const ModelProfile& model, const CostModel& cost, int global_batch,
                          const SearchOptions& options, std::uint64_t first_effort) {
  if (options.effort <= first_effort)
    return grown(model, cost, global_batch, options, first_effort, {});
  SearchOptions first_options = options;
  first_options.effort = first_effort;
  SearchResult first = grown(model, cost, global_batch, first_options, first_effort, {});
  if (first.exact) return first;
  SearchResult more = grown(model, cost, global_batch, options, first_effort, first.plans);
  const Seconds bound = std::max(first.lower_bound, more.lower_bound);
  const Seconds fastest = std::min(first.fastest, more.fastest);
  // (Where the first found no plan, the second's answer stands, a proof that none fits too.)
  const bool keep_first =
      !first.plans.empty() &&
      (more.plans.empty() ||
       first.plans.front().iteration_time < more.plans.front().iteration_time * (1 - kSimpler));
  SearchResult answer = keep_first ? std::move(first) : std::move(more);
  answer.lower_bound = bound;
  answer.fastest = fastest;
  answer.exact = answer.exact || (!answer.plans.empty() &&
                                  answer.plans.front().iteration_time <= bound * (1 + kTie));
  return answer;
}

}  // namespace pe::detail
