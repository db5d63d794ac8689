// The last steps on the plan a search reports: local moves to a faster plan where the search
// stopped short, and ties to the simpler plan.
#pragma once

#include <cstdint>
#include <optional>

#include "cost/cost_model.h"
#include "pe/plan.h"
#include "search/hybrid_search.h"

namespace pe::detail {

/// The plan to report and the fastest time known once it is chosen.
struct FinalPlan {
  Plan plan;
  Seconds fastest = 0;
};

/// `plan`, the plan a search reports (found on the cluster of `cost` or on one of its parts,
/// whose cost models `part` makes), after two local searches (search/polish.h):
/// - where the search was not exact, polish() with peels, within `budget` simulated (stage,
///   micro-batch) pairs (final_pairs): the search polishes its seeds, but not the plans its passes
///   find, and never peels states off. A plan it finds faster than `fastest` (the fastest the
///   search simulated) becomes the fastest; it is reported unless `plan` is within kSimpler
///   of it and no less simple. On 16 single-GPU machines: NASNet-A large at GBS 32, gap 5.4 %
///   -> 2.5 %; DAPPLE's simplified GNMT-32 at GBS 192, 7.8 % -> 6.4 %.
/// - simplify(), while the plan stays within kSimpler of the fastest: a pass returns a few
///   plans of least bound a shape, so a simpler plan of the same shape within the margin need
///   never have been a candidate (BERT-48 at GBS 2 on 2 x 8 GPUs: the search reported the
///   input state, 10 us, on two GPUs of its own, 0.0008 % faster than with it on the
///   embeddings' one GPU).
/// Both keep the plan's shape and its first device. `plan` as it is where its layout is not
/// one they can rebuild (interleaved plans, copies that match no part of the cluster).
FinalPlan finish_plan(const CostModel& cost, const PartCostModel& part, const Plan& plan,
                      int global_batch, Seconds fastest, bool exact, int width_limit,
                      std::int64_t budget);

/// The budget of each of finish_plan's local searches for a search of `effort` steps
/// (SearchOptions::effort; 0 = unlimited): effort / 4 simulated (stage, micro-batch) pairs, each
/// plan tried counting 8,192 more, and at most 2^24, which the default effort gives. On
/// NASNet-A large at GBS 32, 2^22 pairs stopped short of the plan 2^24 reach (speedup 9.17
/// against 9.20 on 2 x 8 GPUs, 7.19 against 7.23 on 16 single-GPU machines; 2^26 gave the
/// same), at no cost to the point's time that could be measured beside the search's (29 s on
/// one thread). A search of little effort gets a small one: with 2^24 pairs whatever the
/// effort, the never-worse suite's sweeps at 20,000 steps a point took up to 5 times as long
/// (GNMT-32 on 2 x 8 GPUs: 2.2 -> 12.1 s).
std::int64_t final_pairs(std::uint64_t effort);

/// `plan`, the plan of another batch size, at `global_batch`: the same copies, stages,
/// devices, micro-batch size and schedule, with global_batch / (copies x micro-batch size)
/// micro-batches, costed and simulated on the cluster of `cost` or on the part of it that
/// holds its copies (`part`, as finish_plan places it: the machines from the plan's first
/// device on, for a plan that leaves the first machines idle). Empty where that is no plan of the
/// search space at `global_batch`: the micro-batches are not whole, the search takes no such
/// shape there (pipeline_shapes, under `options` and the minimum micro-batch), the plan is
/// interleaved or of one stage (gradient accumulation: the search's own seeds), it does not
/// fit memory, or it has more pairs than the search simulates (kMaxSimulatedPairs).
std::optional<Plan> rescaled_plan(const CostModel& cost, const PartCostModel& part,
                                  const Plan& plan, int global_batch, const SearchOptions& options);

}  // namespace pe::detail
