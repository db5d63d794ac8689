// Files pe-plan writes besides its report: trace, charts, schedules.
#pragma once

#include <ostream>
#include <vector>

#include "options.h"
#include "pe/planner.h"

namespace pe::cli {

/// Writes --trace, --svg, --plot, --fill and --export-sched outputs (atomically).
/// Throws UsageError or InputError.
void write_extra_outputs(const Options& o, const Planner& planner,
                         const std::vector<PointResult>& points, std::ostream& err);

}  // namespace pe::cli
