// The interleaved 1F1B schedule's part of the search space, enumerated.
#pragma once

#include <vector>

#include "cost/cost_model.h"
#include "cost/pipeline_spec.h"
#include "pe/planner.h"

namespace pe::detail {

/// Every interleaved plan of the search space for `global_batch` on the cluster of `cost`, in
/// a fixed order: for each copy count r (dividing the devices and the batch, at most
/// options.max_pipeline_copies), each group width w dividing a copy's W devices with
/// p = W / w >= 2 groups (w at most options.max_stage_width), each micro-batch size b of the
/// copy's share (at least the floor) whose M is a multiple of p, each chunk count v from 2
/// to options.max_chunks with p v <= the model's states, and each stage variant (tensor
/// parallelism t, recomputation) allowed on every group: the model cut into p v chunks of
/// about equal work (balanced_ends), chunk j on group j % p. Cuts that leave a chunk empty
/// are not in the space.
std::vector<PipelineSpec> interleaved_specs(const CostModel& cost, int global_batch,
                                            const SearchOptions& options);

}  // namespace pe::detail
