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
/// has a spine and that search is not exact, the spine's chain is searched too (search_plans,
/// as a search over the prefixes alone would). When its best plan is faster by more than
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
/// where there is one.
SearchResult search_with_spine(const ModelProfile& model, const CostModel& cost, int global_batch,
                               const SearchOptions& options);

}  // namespace pe::detail
