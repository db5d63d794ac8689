// Ties go to the simpler plan: the simplest plan of the reported plan's shape within the tie
// margin of the fastest.
#pragma once

#include "cost/cost_model.h"
#include "pe/plan.h"
#include "search/hybrid_search.h"

namespace pe::detail {

/// `plan` (found on the cluster of `cost` or on one of its parts, whose cost models `part`
/// makes), made simpler by simplify() (search/polish.h) while its simulated time stays within
/// kSimpler of `fastest`, the fastest plan the search simulated. The passes return a few plans
/// of least bound a shape, so a simpler plan of the same shape within the margin need never
/// have been a candidate: on BERT-48 at GBS 2 on 2 x 8 GPUs the search reported the input state
/// (10 us) on two GPUs of its own, 0.0008 % faster than with it on the embeddings' one GPU.
/// `plan` itself where no move is taken, or where its layout is not one simplify() can
/// rebuild (interleaved plans, copies that match no part of the cluster).
Plan simplest_plan(const CostModel& cost, const PartCostModel& part, const Plan& plan,
                   int global_batch, Seconds fastest, int width_limit);

}  // namespace pe::detail
