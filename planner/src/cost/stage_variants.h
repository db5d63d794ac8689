// Which ways of running a stage (pipeline_spec.h, StageVariant) a plan may use where the
// stage sits. The search and the tests' exhaustive oracle both take the space from here.
#pragma once

#include <vector>

#include "cost/cost_model.h"
#include "cost/layout.h"
#include "cost/pipeline_spec.h"

namespace pe::detail {

/// The variants of a stage on devices [offset, offset + width) of every copy: each
/// tensor-parallel degree t that CostModel allows, divides `width`, leaves at most
/// `max_replicas` data-parallel replicas (width / t) and puts each group of t GPUs on one
/// machine in every copy; each without recomputation, then with it when the model can.
/// Ascending t; t = 1 (no split) first when it is allowed.
std::vector<StageVariant> stage_variants(const CostModel& cost, const Layout& layout, int offset,
                                         int width, int max_replicas);
/// The same into `out` (cleared first), which keeps its memory for the next call.
void stage_variants(const CostModel& cost, const Layout& layout, int offset, int width,
                    int max_replicas, std::vector<StageVariant>& out);

}  // namespace pe::detail
