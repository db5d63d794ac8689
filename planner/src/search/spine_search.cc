#include "search/spine_search.h"

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

SearchResult search_with_spine(const ModelProfile& model, const CostModel& cost, int global_batch,
                               const SearchOptions& options) {
  const TrainingSettings& settings = cost.settings();
  SearchResult found = search_plans(cost, global_batch, options, [&](const Cluster& part) {
    return CostModel(model, part, settings);
  });
  // An exact answer is already the best of every cut, the spine's plans among them.
  if (model.spine.empty() || found.exact) return found;
  const ModelProfile chain = spine_model(model);
  const CostModel chain_cost(chain, cost.cluster(), settings);
  SearchResult on_spine = search_plans(chain_cost, global_batch, options, [&](const Cluster& part) {
    return CostModel(chain, part, settings);
  });
  if (on_spine.plans.empty()) return found;
  const bool faster =
      found.plans.empty() ||
      on_spine.plans.front().iteration_time < found.plans.front().iteration_time * (1 - kSimpler);
  if (!faster) return found;
  for (Plan& plan : on_spine.plans) map_to_model(plan, model.spine);
  found.plans = std::move(on_spine.plans);
  found.exact = found.plans.front().iteration_time <= found.lower_bound * (1 + kTie);
  return found;
}

}  // namespace pe::detail
