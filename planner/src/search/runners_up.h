// The best plan of a batch size and, on request, the runners-up of other shapes.
#pragma once

#include <vector>

#include "cost/cost_model.h"
#include "pe/model.h"
#include "pe/planner.h"
#include "search/hybrid_search.h"

namespace pe::detail {

/// search_with_spine with options.top 1, then, where options.top is K > 1, search_plans for
/// the K best shapes (the parts of the cluster too), with the first search's plan as a
/// candidate from the start. A search for K plans prunes with the K-th plan's time, so with
/// the same effort it may stop further from the optimum than one for the best alone
/// (NASNet-A large at GBS 32 on 2 x 8 GPUs: speedup 8.93 with top 3 against 9.16); this way
/// the best plan never depends on top. It is the first search's plan, unless the second finds
/// one faster by more than kSimpler; the runners-up are the second search's plans of other
/// shapes. The lower bound is the larger of the two (each covers every plan), the fastest time
/// the lesser. `hints`: search_with_spine's.
SearchResult search_with_runners_up(const ModelProfile& model, const CostModel& cost,
                                    int global_batch, const SearchOptions& options,
                                    const std::vector<Plan>& hints = {});

}  // namespace pe::detail
