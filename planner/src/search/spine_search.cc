#include "search/spine_search.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

namespace pe::detail {
namespace {

// A plan of the spine's chain as a plan of the model: chain state k is model state spine[k].
void map_to_model(Plan& plan, const std::vector<std::uint32_t>& spine) {
  for (PlanStage& stage : plan.stages) {
    stage.first_state = stage.first_state == 0 ? 0 : spine[stage.first_state - 1] + 1;
    stage.last_state = spine[stage.last_state];
  }
}

}  // namespace

ModelProfile spine_model(const ModelProfile& model) {
  ModelProfile chain = model;
  chain.states.clear();
  for (std::uint32_t state : model.spine) chain.states.push_back(model.states[state]);
  chain.later.clear();
  chain.spine.clear();
  return chain;
}

std::optional<Plan> spine_plan(const Plan& plan, const std::vector<std::uint32_t>& spine) {
  Plan chain = plan;
  std::size_t next = 0;  // the chain state the next stage starts at
  for (PlanStage& stage : chain.stages) {
    const auto from = spine.begin() + static_cast<std::ptrdiff_t>(next);
    const auto at = std::find(from, spine.end(), stage.last_state);
    if (at == spine.end()) return std::nullopt;
    stage.first_state = next;
    stage.last_state = static_cast<std::size_t>(at - spine.begin());
    next = stage.last_state + 1;
  }
  return chain;
}

SearchResult search_with_spine(const ModelProfile& model, const CostModel& cost, int global_batch,
                               const SearchOptions& options, const std::vector<Plan>& hints) {
  const TrainingSettings& settings = cost.settings();
  const PartCostModel part = part_cost_of(model, settings);
  HybridSearch first(cost, global_batch, options, part, hints);
  const SearchResult found = first.result();
  // An exact answer is already the best of every cut, the spine's plans among them.
  if (model.spine.empty() || found.exact) return first.refined();
  const ModelProfile chain = spine_model(model);
  const CostModel chain_cost(chain, cost.cluster(), settings);
  // The search over the prefixes alone, as search_plans gives it: the plans of its refining
  // passes too (without them a random graph's every-cut search could end 2 % slower).
  // The first search's plans that end their stages on the spine prune the spine's search
  // from the start.
  std::vector<Plan> on_chain;
  for (const Plan& plan : found.plans)
    if (std::optional<Plan> mapped = spine_plan(plan, model.spine))
      on_chain.push_back(std::move(*mapped));
  SearchResult on_spine =
      search_plans(chain_cost, global_batch, options, part_cost_of(chain, settings), on_chain);
  if (on_spine.plans.empty()) return first.refined();
  for (Plan& plan : on_spine.plans) map_to_model(plan, model.spine);
  const bool faster =
      found.plans.empty() ||
      on_spine.plans.front().iteration_time < found.plans.front().iteration_time * (1 - kSimpler);
  // The spine's refining phase bounds only the prefixes; the effort it left goes to the
  // refining phase whose bound is the answer's. ResNet-101 at GBS 512 on 1,024 GPUs: the
  // spine's left 160 M steps, while the graph's ran out with the shapes that held the gap
  // (relaxed passes of 3 to 55 M steps each) still open.
  const std::uint64_t unused = on_spine.refine_left;
  // Otherwise the spine's plans are candidates of the first search's refining passes, and
  // the simplest of all within kSimpler of the fastest leads.
  if (!faster) return first.refined(on_spine.plans, unused);
  // The search over every cut again, from the spine's plans: it prunes with their time from
  // the start, so more of its passes finish, and its bound is often far closer (DAPPLE's
  // simplified GNMT-32 at GBS 192 on 2 x 8 GPUs: the first search found a plan 34 % slower
  // than the spine's, and left a 3 % gap to it).
  // Its refining passes are left out of the first search: this one's bound, pruned with the
  // spine's plans, is the tighter.
  // It does not search again the shapes the first search settled: their bounds are above the
  // spine plans' cutoff, which is below the first search's.
  HybridSearch second(cost, global_batch, options, part, on_spine.plans, first.shape_bounds());
  SearchResult again = second.refined({}, unused);
  if (again.plans.empty()) {  // none it could simulate
    again.plans = std::move(on_spine.plans);
    again.fastest = on_spine.fastest;
  }
  again.lower_bound = std::max(again.lower_bound, found.lower_bound);
  again.exact = again.exact || again.plans.front().iteration_time <= again.lower_bound * (1 + kTie);
  return again;
}

}  // namespace pe::detail
