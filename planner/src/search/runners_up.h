// The runners-up of other shapes, after the search for the best plan alone.
#pragma once

#include <vector>

#include "cost/cost_model.h"
#include "pe/model.h"
#include "pe/planner.h"
#include "search/hybrid_search.h"

namespace pe::detail {

/// `best`, the answer of the search for the best plan alone (options.top 1 throughout, so the
/// best plan never depends on top), with the runners-up of other shapes where options.top is
/// K > 1: search_plans for the K best shapes (the parts of the cluster too), with `best`'s plans
/// that start on device 0 as candidates from the start, and the same on the machines from each
/// of `runs` on (machine_runs: the runs `best` searched), whose plans move there
/// (move_to_machine). A search for K plans prunes with the K-th plan's time, so with the same
/// effort it may stop further from the optimum than one for the best alone (NASNet-A large at
/// GBS 32 on 2 x 8 GPUs: speedup 8.93 with top 3 against 9.16). The best plan stays `best`'s,
/// unless the second search finds one faster by more than kSimpler (finished: finish_plan); the
/// runners-up are that search's plans of other shapes. The lower bound is the larger of the
/// two (the runs `best` left out cannot beat its plan), at most the fastest time, the lesser.
SearchResult with_runners_up(const ModelProfile& model, const CostModel& cost, int global_batch,
                             const SearchOptions& options, SearchResult best,
                             const std::vector<int>& runs);

}  // namespace pe::detail
