// The search over every cut of a graph, never worse than over the prefixes of one order.
#pragma once

#include "cost/cost_model.h"
#include "pe/model.h"
#include "pe/planner.h"
#include "search/hybrid_search.h"

namespace pe::detail {

/// The chain of `model`'s spine states (ModelProfile::spine): state k of the result is
/// state spine[k] of `model`. `model` must have a spine.
ModelProfile spine_model(const ModelProfile& model);

/// search_plans on `cost` (the model `model`), with the parts of the cluster. When the model
/// has a spine and that search is not exact, the spine's chain is searched too, and when its
/// best plan is faster by more than kSimpler, the search over every cut runs again with the
/// spine's plans (their states mapped back) as candidates from the start (search_plans'
/// hints): a search that stops at its effort limit on every cut then never does worse than one
/// on the spine's prefixes, whose stages cost the same in both models, and the second search
/// prunes with that plan's time. The lower bound is the larger of the two searches' over every
/// cut (each covers every plan of `model`); exact is recomputed against the best plan reported.
/// Only the search whose bound decides gets refining passes (HybridSearch::refined): the last
/// search over every cut, not the spine's chain's, nor the first where a second one follows.
SearchResult search_with_spine(const ModelProfile& model, const CostModel& cost, int global_batch,
                               const SearchOptions& options);

}  // namespace pe::detail
