#include "outputs.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "pe/edge_export.h"
#include "pe/error.h"
#include "pe/fill.h"
#include "pe/importers/pipedream_graph.h"
#include "pe/importers/work_yaml.h"
#include "pe/output_file.h"
#include "pe/render.h"
#include "pe/report.h"
#include "pe/timeline.h"

namespace pe::cli {
namespace {

bool wants_plan_outputs(const Options& o) {
  return o.trace || o.svg || o.fill || o.export_sched || o.export_graph;
}

// The point --plan-gbs names (check_plan_gbs made sure it is there), else the last one.
const PointResult& chosen_point(const Options& o, const std::vector<PointResult>& points) {
  if (!o.plan_gbs) return points.back();
  return *std::find_if(points.begin(), points.end(),
                       [&](const PointResult& p) { return p.global_batch == *o.plan_gbs; });
}

std::vector<std::string> split_hosts(const std::string& text) {
  std::vector<std::string> hosts;
  std::stringstream in(text);
  for (std::string host; std::getline(in, host, ',');) hosts.push_back(host);
  return hosts;
}

std::string plural(long long n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// "vgg19 on 16 GPUs (16 machines)": what every chart and trace title starts with.
std::string setup_title(const ChartContext& context) {
  return context.model.name + " on " + plural(context.cluster.device_count(), "GPU") + " (" +
         plural(context.cluster.machine_count(), "machine") + ")";
}

// "GBS 512: 1 pipeline copy x 2 stages, 4 micro-batches of 128, 1f1b", the first line of
// plan_text.
std::string plan_title(const Plan& plan, const ModelProfile& model) {
  const std::string text = plan_text(plan, model);
  return text.substr(0, text.find('\n'));
}

void write_plot(const std::string& path, const std::vector<PointResult>& points,
                const ChartContext& context, const std::atomic<bool>* cancel) {
  std::vector<SpeedupCurve> curves{{"DP", {}},
                                   {"DP + overlap", {}},
                                   {"DP + P3", {}},
                                   {"best hybrid (estimate)", {}},
                                   {"best hybrid (simulated)", {}}};
  int low = 0, high = 0;
  for (const PointResult& p : points) {
    const double x = p.global_batch;
    low = low == 0 ? p.global_batch : std::min(low, p.global_batch);
    high = std::max(high, p.global_batch);
    if (p.baselines.fits) {  // no DP point where data parallelism does not fit a GPU
      curves[0].points.emplace_back(x, p.baselines.dp);
      curves[1].points.emplace_back(x, p.baselines.dp_overlap);
      curves[2].points.emplace_back(x, p.baselines.dp_p3);
    }
    if (const Plan* plan = p.best()) {
      curves[3].points.emplace_back(x, plan->speedup);
      curves[4].points.emplace_back(x, simulated_speedup(*plan, p.baselines));
    }
  }
  PlotOptions plot;
  plot.title = setup_title(context) + ": speedup over one GPU, GBS " + std::to_string(low) +
               (high > low ? " to " + std::to_string(high) : "");
  write_file_atomically(path, sweep_svg(curves, plot), cancel);
}

// The plan as a PipeEdge schedule: refused, naming --export-sched, when PipeEdge cannot run
// it; a host list that does not match names --hosts.
std::string schedule_for_hosts(const Plan& plan, bool given, const std::string& hosts) {
  const std::string obstacles = pipeedge_obstacles(plan);
  if (!obstacles.empty()) {
    const std::string which =
        given ? "the --plan plan (" + stages_string(plan) + ", --plan-copies " +
                    std::to_string(plan.pipeline_replicas) + ")"
              : "the plan for GBS " + std::to_string(plan.global_batch) + " (" +
                    stages_string(plan) + ", " + std::to_string(plan.pipeline_replicas) +
                    (plan.pipeline_replicas == 1 ? " pipeline copy)" : " pipeline copies)");
    const std::string fix = given ? "give stages of width 1 and --plan-copies 1"
                                  : "--straight (--max-stage-width 1 --max-copies 1) plans the "
                                    "best plan it can run";
    throw UsageError(
        "--export-sched: PipeEdge's runtime runs one host per stage and one "
        "pipeline copy, so it cannot run " +
        which + ": " + obstacles + "; " + fix + "; nothing was written");
  }
  try {
    return schedule_yaml(plan, split_hosts(hosts));
  } catch (const UsageError& e) {
    throw UsageError(std::string("--hosts: ") + e.what());
  }
}

// Where --export-graph writes: DIR/graph.txt.
std::string graph_file(const std::string& directory) {
  return (std::filesystem::path(directory) / "graph.txt").string();
}

void write_plan_outputs(const Options& o, const PointResult& point, const Plan* plan,
                        const FillResult* fill, const PlanExports& exports,
                        const ChartContext& context, const std::atomic<bool>* cancel,
                        std::ostream& err) {
  if (!plan) {
    err << "pe-plan: GBS " << point.global_batch << ": " << point.no_plan_reason
        << "; no timeline, schedule or graph written\n";
    return;
  }
  const Timeline& timeline = fill ? fill->timeline : plan->simulation->timeline;
  const std::string title = setup_title(context) + (context.given_plan ? ", your plan at " : ", ") +
                            plan_title(*plan, context.model) + (fill ? ", bubbles filled" : "");
  if (o.trace)
    write_file_atomically(*o.trace, chrome_trace_json(timeline, {title, stage_labels(*plan)}),
                          cancel);
  if (o.svg) {
    SvgOptions svg;
    svg.title = title;
    svg.stage_names = stage_labels(*plan);
    write_file_atomically(*o.svg, gantt_svg(timeline, svg), cancel);
  }
  if (exports.schedule) {
    write_file_atomically(*o.export_sched, *exports.schedule, cancel);
    err << "pe-plan: PipeEdge partition (-pt): " << partition_string(*plan) << "\n";
  }
  if (exports.graph) {
    std::error_code error;
    std::filesystem::create_directory(*o.export_graph, error);
    if (error)
      throw OutputError("--export-graph: cannot create directory '" + *o.export_graph +
                        "': " + error.message());
    write_file_atomically(graph_file(*o.export_graph), *exports.graph);
  }
}

}  // namespace

void check_plan_gbs(const Options& o, const std::vector<int>& batches) {
  if (!o.plan_gbs) return;
  if (std::find(batches.begin(), batches.end(), *o.plan_gbs) == batches.end())
    throw UsageError("--plan-gbs " + std::to_string(*o.plan_gbs) + " is not one of --gbs '" +
                     o.gbs + "'");
}

const Plan* shown_plan(const Options& o, const std::vector<PointResult>& points,
                       const Plan* given) {
  if (given || points.empty()) return given;
  return chosen_point(o, points).best();
}

std::optional<FillResult> fill_plan(const Options& o, const Plan* plan) {
  if (!o.fill || !plan) return std::nullopt;
  return fill_bubbles(plan->simulation->timeline, load_work_yaml(*o.fill));
}

void check_hosts(const Options& o) {
  if (o.export_sched && !o.hosts)
    throw UsageError("--export-sched needs --hosts with one name per stage");
}

PlanExports make_exports(const Options& o, const Plan* plan, bool given,
                         const std::string& profile_path, std::size_t max_cuts) {
  check_hosts(o);
  PlanExports exports;
  if (!plan) return exports;
  if (o.export_sched) exports.schedule = schedule_for_hosts(*plan, given, *o.hosts);
  if (o.export_graph) {
    try {
      exports.graph = pipedream_graph_file_with_stages(profile_path, *plan, max_cuts);
    } catch (const UsageError& e) {
      throw UsageError(std::string("--export-graph: ") + e.what());
    }
  }
  return exports;
}

void write_extra_outputs(const Options& o, const std::vector<PointResult>& points, const Plan* plan,
                         const FillResult* fill, const PlanExports& exports,
                         const ChartContext& context, const std::atomic<bool>* cancel,
                         std::ostream& err) {
  if (points.empty()) return;
  if (o.plot) write_plot(*o.plot, points, context, cancel);
  if (wants_plan_outputs(o))
    write_plan_outputs(o, chosen_point(o, points), plan, fill, exports, context, cancel, err);
}

}  // namespace pe::cli
