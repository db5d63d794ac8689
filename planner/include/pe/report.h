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
};

/// A human-readable table, one row per batch size, then the best plan of one point spelled
/// out stage by stage: the point of batch size `explained`, or the last one when that is
/// empty or not among the points. The plan's bubbles are those of its stored simulation
/// (Plan::simulation; none when it has none).
std::string sweep_table(const std::vector<PointResult>& points, const ReportContext& context,
                        std::optional<int> explained = std::nullopt);

/// CSV with header `gbs,dp,dp_overlap,dp_p3,hybrid,...` (see README), one row per point.
std::string sweep_csv(const std::vector<PointResult>& points);

/// JSON: the context, and for each point the baselines and every field of every plan
/// ("bubbles" from Plan::simulation, null when a plan has none).
std::string sweep_json(const std::vector<PointResult>& points, const ReportContext& context);

/// One plan spelled out: shape, estimate, then a line per stage.
std::string plan_text(const Plan& plan, const ModelProfile& model);

/// Per-stage bubbles of a simulated plan: idle time, fraction, and where it is.
std::string bubble_text(const BubbleReport& report);

/// JSON object for a bubble report ({"makespan_s": ..., "stages": [...]}).
std::string bubble_json(const BubbleReport& report);

/// Outcome of bubble filling: per item status and per stage utilization.
std::string fill_text(const FillResult& result);

/// Speedup of a plan over one device, from its simulated time.
double simulated_speedup(const Plan& plan, const Baselines& baselines);

}  // namespace pe
