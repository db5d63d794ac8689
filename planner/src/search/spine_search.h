// The search over every cut of a graph, never worse than over the prefixes of one order.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cost/cost_model.h"
#include "pe/model.h"
#include "pe/planner.h"
#include "search/hybrid_search.h"

namespace pe::detail {

/// The chain of `model`'s spine states (ModelProfile::spine): state k of the result is
/// state spine[k] of `model`. `model` must have a spine.
ModelProfile spine_model(const ModelProfile& model);

/// `plan`, a plan of a model with a spine, as a plan of spine_model's chain, where each of its
/// stages ends at a spine state (state k of the chain for spine[k]); none otherwise. The
/// chain's stages are the model's, so the plan costs the same there.
std::optional<Plan> spine_plan(const Plan& plan, const std::vector<std::uint32_t>& spine);

/// search_plans on `cost` (the model `model`), with the parts of the cluster. When the model
/// has a spine and that search is not exact, the spine's chain is searched too (search_plans,
/// as a search over the prefixes alone would, with the first search's plans whose stages end
/// on the spine as hints: spine_plan). When its best plan is faster by more than
/// kSimpler, the search over every cut runs again with the spine's plans (their states mapped
/// back) as candidates from the start (search_plans' hints), and prunes with that plan's time,
/// from the bounds the first proved of each shape (HybridSearch::shape_bounds: a shape the
/// first search settled is not searched again);
/// otherwise the spine's plans join the first search's candidates before its refining passes
/// (HybridSearch::refined). Either way a search that stops at its effort limit on every cut
/// reports a plan no slower than the spine's best but for the simplicity margin (the simplest
/// plan within kSimpler of the fastest leads), since the spine's stages cost the same in both
/// models. The lower bound is the larger of the two searches' over every cut (each covers
/// every plan of `model`); exact is recomputed against the best plan reported. Of the
/// searches over every cut, only the one whose bound decides gets refining passes: the second
/// where there is one. `hints` (plans of the same model, cluster and batch found another way)
/// are the first search's (search_plans').
SearchResult search_with_spine(const ModelProfile& model, const CostModel& cost, int global_batch,
                               const SearchOptions& options, const std::vector<Plan>& hints = {});

}  // namespace pe::detail
