// Files pe-plan writes besides its report: trace, charts, schedules.
#pragma once

#include <ostream>
#include <vector>

#include "options.h"
#include "pe/planner.h"

namespace pe::cli {

/// --plan-gbs picks the plan the table explains and the per-plan outputs (--trace, --svg,
/// --fill, --export-sched) use; a batch size outside `batches` has none. Throws UsageError
/// for it, so that it is found before the sweep runs.
void check_plan_gbs(const Options& o, const std::vector<int>& batches);

/// Writes --trace, --svg, --plot, --fill and --export-sched outputs (atomically); the
/// options have passed check_plan_gbs. The per-plan outputs show `given` (the --plan plan)
/// when there is one, else the best plan of the chosen point.
/// Throws UsageError or InputError.
void write_extra_outputs(const Options& o, const std::vector<PointResult>& points,
                         const Plan* given, std::ostream& err);

}  // namespace pe::cli
