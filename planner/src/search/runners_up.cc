#include "search/runners_up.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "search/final_plan.h"
#include "search/machine_runs.h"
#include "search/pipeline_shapes.h"

namespace pe::detail {

SearchResult with_runners_up(const ModelProfile& model, const CostModel& cost, int global_batch,
                             const SearchOptions& options, SearchResult best,
                             const std::vector<int>& runs) {
  if (options.top <= 1 || best.plans.empty()) return best;
  std::vector<Plan> hints;
  for (const Plan& plan : best.plans)
    if (plan.first_device() == 0) hints.push_back(plan);
  const PartCostModel part = part_cost_of(model, cost.settings());
  SearchResult more = search_plans(cost, global_batch, options, part, hints);
  for (int first : runs) {
    const CostModel run(model, rotated(cost.cluster(), first), cost.settings());
    SearchResult there = search_plans(run, global_batch, options, part);
    for (Plan& plan : there.plans) move_to_machine(plan, cost.cluster(), first);
    more = merged(std::move(more), std::move(there), options.top);
  }
  // `more` bounds the plans of the places it searched; the runs `best` did not search cannot
  // beat a plan it found (part_cannot_beat), so with the fastest plan it bounds them all.
  const Seconds lower = std::max(best.lower_bound, more.lower_bound);
  const Seconds fastest = std::min(best.fastest, more.fastest);
  const bool faster = !more.plans.empty() && more.plans.front().iteration_time <
                                                 best.plans.front().iteration_time * (1 - kSimpler);
  SearchResult answer = faster ? std::move(more) : std::move(best);
  if (faster) {
    FinalPlan last =
        finish_plan(cost, part, answer.plans.front(), global_batch, fastest, answer.exact,
                    options.max_stage_width, final_pairs(options.effort));
    answer.plans.front() = std::move(last.plan);
    answer.fastest = std::min(fastest, last.fastest);
  } else {  // the best plan, then the second search's of other shapes
    const PipelineShapeChoice shape = shape_of(answer.plans.front());
    for (Plan& plan : more.plans)
      if (static_cast<int>(answer.plans.size()) < options.top && !matches(plan, shape))
        answer.plans.push_back(std::move(plan));
    answer.fastest = fastest;
  }
  answer.lower_bound = std::min(lower, answer.fastest);
  answer.exact =
      answer.exact || answer.plans.front().iteration_time <= answer.lower_bound * (1 + kTie);
  return answer;
}

}  // namespace pe::detail
