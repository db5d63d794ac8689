#include "search/runners_up.h"

#include <algorithm>
#include <utility>

#include "search/pipeline_shapes.h"
#include "search/spine_search.h"

namespace pe::detail {

SearchResult search_with_runners_up(const ModelProfile& model, const CostModel& cost,
                                    int global_batch, const SearchOptions& options,
                                    const std::vector<Plan>& hints) {
  SearchOptions best_only = options;
  best_only.top = 1;
  SearchResult best = search_with_spine(model, cost, global_batch, best_only, hints);
  if (options.top <= 1 || best.plans.empty()) return best;
  SearchResult more =
      search_plans(cost, global_batch, options, part_cost_of(model, cost.settings()), best.plans);
  const Seconds lower = std::max(best.lower_bound, more.lower_bound);
  const bool faster = !more.plans.empty() && more.plans.front().iteration_time <
                                                 best.plans.front().iteration_time * (1 - kSimpler);
  SearchResult answer = faster ? std::move(more) : std::move(best);
  if (!faster) {  // the best plan, then the second search's of other shapes
    const PipelineShapeChoice shape = shape_of(answer.plans.front());
    for (Plan& plan : more.plans)
      if (static_cast<int>(answer.plans.size()) < options.top && !matches(plan, shape))
        answer.plans.push_back(std::move(plan));
    answer.fastest = std::min(answer.fastest, more.fastest);
  }
  answer.lower_bound = lower;
  answer.exact =
      answer.exact || answer.plans.front().iteration_time <= answer.lower_bound * (1 + kTie);
  return answer;
}

}  // namespace pe::detail
