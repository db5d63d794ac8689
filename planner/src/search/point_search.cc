#include "search/point_search.h"

#include <algorithm>
#include <utility>

#include "search/final_plan.h"
#include "search/runners_up.h"

namespace pe::detail {

SearchResult search_finished(const ModelProfile& model, const CostModel& cost, int global_batch,
                             const SearchOptions& options, const std::vector<Plan>& hints) {
  SearchResult found = search_with_runners_up(model, cost, global_batch, options, hints);
  if (found.plans.empty()) return found;
  FinalPlan last =
      finish_plan(cost, part_cost_of(model, cost.settings()), found.plans.front(), global_batch,
                  found.fastest, found.exact, options.max_stage_width, final_pairs(options.effort));
  found.plans.front() = std::move(last.plan);
  found.fastest = std::min(found.fastest, last.fastest);
  found.exact = found.exact || found.lower_bound >= last.fastest * (1 - kTie);
  return found;
}

SearchResult search_point(const ModelProfile& model, const CostModel& cost, int global_batch,
                          const SearchOptions& options, std::uint64_t first_effort) {
  if (options.effort <= first_effort) return search_finished(model, cost, global_batch, options);
  SearchOptions first_options = options;
  first_options.effort = first_effort;
  SearchResult first = search_finished(model, cost, global_batch, first_options);
  if (first.exact) return first;
  SearchResult more = search_finished(model, cost, global_batch, options, first.plans);
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
