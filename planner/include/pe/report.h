// Reporters: render planner results as text. The library never prints; callers write the
// strings wherever they like.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pe/bubbles.h"
#include "pe/cluster.h"
#include "pe/fill.h"
#include "pe/model.h"
#include "pe/planner.h"

namespace pe {

/// What a sweep report says about its inputs.
struct ReportContext {
  const ModelProfile* model = nullptr;  ///< The model planned; null: not described.
  const Cluster* cluster = nullptr;     ///< The cluster planned on; null: not described.
  /// A hand-written plan costed at one of the points (Planner::evaluate); null: none. The
  /// table explains it after the best plan of its batch size and compares the two; JSON
  /// adds it as "given_plan".
  const LayoutCost* given_plan = nullptr;
  /// The training settings planned with; null: not described.
  const TrainingSettings* settings = nullptr;
  /// What the search was allowed (schedules, effort, top); null: not described.
  const SearchOptions* search = nullptr;
  /// The program and its version, e.g. "pe-plan 1.0"; empty: not described.
  std::string program_version{};
  /// The arguments the program was run with (argv[1..]), so that a saved report can be
  /// reproduced; JSON writes them as "command_line" when not empty.
  std::vector<std::string> command_line{};
  /// Bubble filling of the explained plan (fill_bubbles); null: none. JSON adds it as "fill".
  const FillResult* fill = nullptr;
};

/// A human-readable table, one row per batch size, then the best plan of one point spelled
/// out stage by stage: the point of batch size `explained`, or the last one when that is
/// empty or not among the points. The plan's bubbles are those of its stored simulation
/// (Plan::simulation; none when it has none).
std::string sweep_table(const std::vector<PointResult>& points, const ReportContext& context,
                        std::optional<int> explained = std::nullopt);

/// CSV (RFC 4180) with header `gbs,rank,dp,dp_overlap,dp_p3,speedup,...,no_plan_reason` (see
/// README; columns are named as the JSON fields of the same quantities): one row per plan,
/// rank 1 the best, or one row with an empty rank and the reason for a point without plans.
/// The dp columns are empty where plain data parallelism does not fit (Baselines::fits).
std::string sweep_csv(const std::vector<PointResult>& points);

/// JSON: the context (inputs, settings, program and command line, as far as given), and for
/// each point the baselines (dp fields null when Baselines::fits is false) and every field
/// of every plan ("rank" from 1; "bubbles" from Plan::simulation, null when a plan has none).
std::string sweep_json(const std::vector<PointResult>& points, const ReportContext& context);

/// The model's cut states, one row each: index, cumulative forward and backward time,
/// activation and parameter bytes up to the state, the bytes crossing a cut right after it,
/// and the operator that closes it (all at the profile batch size). A plan's stage
/// FIRST-LAST holds states FIRST..LAST. Text with times in ms and sizes in MB (1e6 bytes),
/// then CSV and JSON with seconds and bytes.
std::string states_table(const ModelProfile& model);
std::string states_csv(const ModelProfile& model);
std::string states_json(const ModelProfile& model);

/// One plan spelled out: shape, estimate, then a line per stage.
std::string plan_text(const Plan& plan, const ModelProfile& model);

/// Per-stage bubbles of a simulated plan: idle time, fraction, and where it is.
std::string bubble_text(const BubbleReport& report);

/// JSON object for a bubble report ({"makespan_s": ..., "stages": [...]}).
std::string bubble_json(const BubbleReport& report);

/// Outcome of bubble filling: per item status and per stage utilization.
std::string fill_text(const FillResult& result);

/// The same as one line of JSON ({"complete": ..., "items": [...], "stages": [...]}).
std::string fill_json(const FillResult& result);

/// Speedup of a plan over one device, from its simulated time.
double simulated_speedup(const Plan& plan, const Baselines& baselines);
/// The speedup by the analytic estimate: Plan::one_device_time / Plan::estimate (0 when
/// there is no estimate).
double estimate_speedup(const Plan& plan);
/// Model FLOP/s per GPU of a plan: the model's training FLOPs per sample x the global batch
/// / the iteration time / the devices used; 0 when the model does not know its FLOPs
/// (ModelProfile::training_flops_per_sample) or the plan has no time. Over the model GPU's
/// peak it is the MFU.
double model_flops_per_gpu(const Plan& plan, const ModelProfile& model);

}  // namespace pe
