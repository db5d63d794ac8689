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

/// The exports of the shown plan, made before any output is written so that an export
/// that cannot be made leaves no file behind: the --export-sched schedule and the
/// --export-graph graph.txt; empty where not asked for or where no plan fits.
struct PlanExports {
  std::optional<std::string> schedule;
  std::optional<std::string> graph;
};

/// Makes the exports of `plan` (shown_plan; `given` when it is the --plan plan).
/// `profile_path` is the graph.txt the model came from, imported with `max_cuts`. Throws
/// UsageError naming the flag:
/// --export-sched without --hosts, a plan PipeEdge cannot run (a stage on several
/// devices, several pipeline copies), a --hosts list that does not name one host per
/// stage; InputError when the profile cannot be read again.
PlanExports make_exports(const Options& o, const Plan* plan, bool given,
                         const std::string& profile_path, std::size_t max_cuts);

/// What the titles of the charts and the trace name besides the plan.
struct ChartContext {
  const ModelProfile& model;
  const Cluster& cluster;
  bool given_plan = false;  ///< The plan shown is the --plan one.
};

/// Writes --trace, --svg, --plot, --export-sched and --export-graph outputs (atomically;
/// --export-graph creates its directory when missing). The per-plan outputs show `plan`
/// (shown_plan), with the work of `fill` placed when it is not null; the exports are
/// `exports` (make_exports). Titles name the model, the cluster, the batch size and the
/// plan's shape, and the plot's the model, the cluster and the batch sizes. Once `*cancel`
/// is true a file being written keeps its old content and CancelledError is thrown.
/// Throws OutputError or CancelledError.
void write_extra_outputs(const Options& o, const std::vector<PointResult>& points, const Plan* plan,
                         const FillResult* fill, const PlanExports& exports,
                         const ChartContext& context, const std::atomic<bool>* cancel,
                         std::ostream& err);

}  // namespace pe::cli
