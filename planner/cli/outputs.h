// Files pe-plan writes besides its report: trace, charts, schedules.
#pragma once

#include <atomic>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "options.h"
#include "pe/fill.h"
#include "pe/planner.h"

namespace pe::cli {

/// --plan-gbs picks the plan the table explains and the per-plan outputs (--trace, --svg,
/// --fill, --export-sched) use; a batch size outside `batches` has none. Throws UsageError
/// for it, so that it is found before the sweep runs.
void check_plan_gbs(const Options& o, const std::vector<int>& batches);

/// The plan the per-plan outputs show: `given` (the --plan plan) when there is one, else
/// the best plan of the --plan-gbs point (the last point without it); null when none fits.
/// The options have passed check_plan_gbs.
const Plan* shown_plan(const Options& o, const std::vector<PointResult>& points, const Plan* given);

/// Bubble filling of `plan`'s timeline with the --fill work list; empty without --fill or
/// a plan. Throws InputError for a bad work list.
std::optional<FillResult> fill_plan(const Options& o, const Plan* plan);

/// Throws UsageError for --export-sched without --hosts (before planning).
void check_hosts(const Options& o);

/// The --export-sched schedule of `plan` (shown_plan) for the --hosts names, made before any
/// file is written so that host names that do not match the plan (count, repeats, empty
/// names) are a UsageError naming --hosts while nothing is written yet; empty without
/// --export-sched or a plan.
std::optional<std::string> export_schedule(const Options& o, const std::vector<PointResult>& points,
                                           const Plan* plan);

/// What the titles of the charts and the trace name besides the plan.
struct ChartContext {
  const ModelProfile& model;
  const Cluster& cluster;
  bool given_plan = false;  ///< The plan shown is the --plan one.
};

/// Writes --trace, --svg, --plot and --export-sched outputs (atomically; `schedule` is what
/// export_schedule made). The per-plan outputs show `plan` (shown_plan), with the work of
/// `fill` placed when it is not null; their titles name the model, the cluster, the batch
/// size and the plan's shape, and the plot's the model, the cluster and the batch sizes. Once
/// `*cancel` is true a file being written keeps its old content and CancelledError is thrown.
/// Throws UsageError, OutputError or CancelledError.
void write_extra_outputs(const Options& o, const std::vector<PointResult>& points, const Plan* plan,
                         const FillResult* fill, const std::optional<std::string>& schedule,
                         const ChartContext& context, const std::atomic<bool>* cancel,
                         std::ostream& err);

}  // namespace pe::cli
