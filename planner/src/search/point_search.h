// The search for one global batch size on one cluster, with its last local moves, and where the
// effort is above the default, after a search with the default effort.
#pragma once

#include <cstdint>
#include <vector>

#include "cost/cost_model.h"
#include "pe/model.h"
#include "pe/plan.h"
#include "pe/planner.h"
#include "search/hybrid_search.h"

namespace pe::detail {

/// The search for the best plan on the cluster of `cost` (search_with_spine, with options.top 1
/// whatever it is: runners-up come from a search after it, with_runners_up, so they never change
/// the best plan; the parts of the cluster are searched too, so more machines never give a
/// slower plan where it finishes; a model with every cut is also searched on its spine), then
/// local moves to a faster plan where it stopped short, and ties to the simpler plan, also where
/// the passes never offered it (finish_plan). `hints`: search_with_spine's.
SearchResult search_finished(const ModelProfile& model, const CostModel& cost, int global_batch,
                             const SearchOptions& options, const std::vector<Plan>& hints = {});

/// The gap above which search_point also searches the cluster's first machines: 5 %. Below it
/// that search did not pay on the bundled profiles, and on large clusters it recurses over many
/// parts: GNMT-16 at GBS 512 on 128 machines of 8 GPUs (gap 1.72 %; its first 64, 32, ...
/// machines searched in turn) took 161 s instead of 34 with a 1 % threshold, for a plan 0.01 %
/// faster.
inline constexpr double kFirstMachinesGap = 0.05;

/// The best plan alone (options.top is not used: search_finished): search_finished, where
/// options.effort is above `first_effort` (the default effort; 0, unlimited, is not above it)
/// after a search with `first_effort`, unless that one is exact:
/// the second starts from the first's plans (candidates from the start, so it prunes with
/// them), the answer is the faster of the two searches' best plans (the second's within
/// kSimpler of the first's), and its lower bound the larger of theirs (each holds over the whole
/// space). So more effort never gives a slower plan or a wider gap than the default. A search
/// spreads its effort over its passes by fixed shares, and larger shares can go to passes that
/// then run out: ResNet-101's graph at GBS 64 on 8 machines of 8 GPUs has gap 0.20 % at the
/// default effort, and had 4.86 %, with a plan 0.17 % slower, at 30 times the default;
/// NASNet-A large at GBS 64 on 2 x 8 GPUs 5.44 % at the default, 6.1 % at 4 times it.
///
/// Where a search_finished answer's gap is above kFirstMachinesGap, on a cluster of two machines or
/// more, its first machines (the largest power of two fewer than all) are searched the same way on
/// their own, unless their work over their devices cannot beat the plan found, and their plans
/// compete with the cluster's (the simplest within kSimpler of the fastest leads); where theirs is
/// faster (beyond kSimpler), the cluster is searched again from it (a candidate from the start, so
/// it prunes), and that search's plans compete too and its bound counts. The lower bound is the
/// cluster's, which holds over the part's plans too. The search of the whole cluster covers those
/// plans, but where it stops short it can miss what theirs finds, and the plan then prunes it: a
/// random chain of 300 layers at GBS 256 (tools/random-profile.py, seed 20) got 852.8 ms (gap 73 %)
/// on 8 machines of 8 GPUs and 566.8 ms on their first 4, and from that plan the 8 machines' search
/// finds 377.4 ms (gap 18 %). So a cluster's plan is never slower than the plan search_point gives
/// its first 2^k machines, for every 2^k below its machine count, by more than kFirstMachinesGap
/// (below it, its bound shows that), ties to the simpler plan aside.
SearchResult search_point(const ModelProfile& model, const CostModel& cost, int global_batch,
                          const SearchOptions& options,
                          std::uint64_t first_effort = kDefaultSearchEffort);

}  // namespace pe::detail
