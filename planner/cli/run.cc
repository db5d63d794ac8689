#include "run.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "field_flags.h"
#include "options.h"
#include "output_paths.h"
#include "outputs.h"
#include "pe/error.h"
#include "pe/importers/cluster_yaml.h"
#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "pe/importers/transformer_yaml.h"
#include "pe/planner.h"
#include "pe/report.h"
#include "pe/transformer.h"
#include "profile_list.h"
#include "progress.h"

namespace pe::cli {
namespace {

Cluster make_cluster(const Options& o) {
  Cluster cluster = o.cluster_file
                        ? load_cluster_yaml(*o.cluster_file)
                        : cluster_from_machine_ends(parse_machine_ends(o.devices.value_or("8,16")));
  Network& net = cluster.network;
  if (o.intra_bw) net.intra = *o.intra_bw * kGB;
  std::optional<BytesPerSecond> p2p;
  if (o.inter_p2p_bw) p2p = *o.inter_p2p_bw * kGB;
  if (o.inter_bw)
    set_inter_machine_bandwidth(net, *o.inter_bw * kGB, p2p);
  else if (p2p)
    net.inter_p2p = *p2p;
  if (o.memory_gb) cluster.device_memory = *o.memory_gb * kGB;
  return cluster;
}

// The --max-cuts limit of the graph.txt importer.
std::size_t max_cuts(const Options& o) {
  return o.max_cuts ? static_cast<std::size_t>(*o.max_cuts) : kDefaultMaxCuts;
}

struct Inputs {
  ModelProfile model;
  TrainingSettings settings;
  std::string path;                             // the file the model came from
  std::optional<TransformerInput> transformer;  // --model
};

void apply_setting_flags(const Options& o, TrainingSettings& settings) {
  if (o.mbs) settings.min_micro_batch = *o.mbs;
  if (o.optimizer_scaling) settings.optimizer_scaling = *o.optimizer_scaling;
  if (o.activation_bytes_per_sample)
    settings.activation_bytes_per_sample = o.activation_bytes_per_sample;
  if (o.tensor_parallel) settings.max_tensor_parallel = *o.tensor_parallel;
  if (o.tp_efficiency) settings.tensor_parallel_efficiency = *o.tp_efficiency;
  if (o.no_recompute) settings.recomputation = false;
  if (o.zero) settings.zero_stage = *o.zero;
}

// --model: a transformer; its samples are sequences, so the profile batch is 1.
Inputs load_transformer(const Options& o) {
  if (o.profile_given) throw UsageError("--model and --profile both name a model; give one");
  if (o.pbs) throw UsageError("--pbs applies to --profile; a --model's times are per sequence");
  if (o.export_graph)
    throw UsageError("--export-graph writes a graph.txt profile; --model is not one");
  TransformerInput t = load_transformer_yaml(find_transformer(*o.model));
  Inputs in{transformer_model(t.config, t.gpu, t.efficiency), TrainingSettings{}, t.path, t};
  in.settings.optimizer_scaling = transformer_optimizer_scaling(t.config);
  apply_setting_flags(o, in.settings);
  return in;
}

Inputs load_model(const Options& o, const ProfileEntry& entry) {
  const double pbs = o.pbs.value_or(entry.profile_batch_size);
  if (pbs <= 0)
    throw UsageError("the profile batch size of '" + o.profile +
                     "' is unknown: pass --pbs N (the batch size it was measured at)");
  Inputs in{import_pipedream_graph(entry.path, pbs, max_cuts(o)),
            training_settings(entry),
            entry.path,
            {}};
  in.model.name = entry.name;
  apply_setting_flags(o, in.settings);
  return in;
}

Inputs load_inputs(const Options& o) {
  return o.model ? load_transformer(o) : load_model(o, find_profile(o.profile));
}

// A transformer's devices have its GPU's memory unless the command line or cluster file
// says otherwise.
Cluster make_cluster(const Options& o, const Inputs& in) {
  Cluster cluster = make_cluster(o);
  if (in.transformer && !o.memory_gb && !o.cluster_file)
    cluster.device_memory = in.transformer->gpu.memory;
  return cluster;
}

// For a transformer: the model FLOP/s per device of the shown plan and its share of the
// GPU's peak (MFU), as one line; empty otherwise.
std::string utilization_line(const Inputs& in, const Plan* plan) {
  if (!in.transformer || !plan || plan->iteration_time <= 0) return "";
  const TransformerInput& t = *in.transformer;
  const double per_device = model_flops_per_gpu(*plan, in.model);
  return fmt::format(
      "{} at GBS {}: {:.1f} TFLOP/s of model FLOPs per GPU, MFU {:.1f}% of {}'s "
      "{:.0f} TFLOP/s peak (efficiency {:.2f} assumed per operation)\n",
      t.config.name, plan->global_batch, per_device / 1e12, 100 * per_device / t.gpu.peak_flops,
      t.gpu.name, t.gpu.peak_flops / 1e12, t.efficiency);
}

SearchOptions search_options(const Options& o) {
  SearchOptions s;
  if (o.schedule == "1f1b") s.schedules = {Schedule::OneFOneB};
  if (o.schedule == "gpipe") s.schedules = {Schedule::GPipe};
  if (o.schedule == "interleaved") s.schedules = {Schedule::Interleaved};
  if (o.schedule == "all")
    s.schedules = {Schedule::OneFOneB, Schedule::GPipe, Schedule::Interleaved};
  s.max_chunks = o.max_chunks;
  s.top = o.top;
  s.effort = o.search_effort;
  s.pass_memory = static_cast<std::uint64_t>(o.search_memory_mb) * kMebibyte;
  s.max_stage_width = o.max_stage_width;
  s.max_pipeline_copies = o.max_copies;
  return s;
}

// Where the progress line goes: `err`, when there are several points and stderr is a
// terminal; nowhere otherwise.
std::ostream* progress_stream(std::size_t points, std::ostream& err) {
  return points >= 2 && isatty(fileno(stderr)) ? &err : nullptr;
}

// Throws CancelledError when the run was asked to stop.
void check(const Interruption& stop, const std::string& what) {
  if (stop.requested()) throw CancelledError(what);
}

std::size_t planned(const std::vector<PointResult>& points) {
  return static_cast<std::size_t>(std::count_if(
      points.begin(), points.end(), [](const PointResult& p) { return p.global_batch != 0; }));
}

std::string render(const Options& o, const std::vector<PointResult>& points,
                   const ReportContext& context) {
  switch (o.format) {
    case Format::Csv:
      return sweep_csv(points);
    case Format::Json:
      return sweep_json(points, context);
    case Format::Table:
      break;
  }
  return cli_wording(sweep_table(points, context, o.plan_gbs));
}

// The --plan plan, costed at the --plan-gbs batch size (before the sweep, so that a plan
// that does not match the model is reported at once).
std::optional<LayoutCost> cost_given_plan(const Options& o, const Planner& planner,
                                          const std::vector<int>& batches) {
  if (!o.plan) return std::nullopt;
  // Groups that list several chunks make an interleaved layout; --schedule may say otherwise
  // (best and all keep what the stages say), and Planner::evaluate checks that they agree.
  PlanLayout layout = parse_plan_layout(*o.plan);
  layout.micro_batches = o.microbatches.value_or(1);
  layout.pipeline_replicas = o.plan_copies.value_or(1);
  layout.first_device = o.plan_first_device.value_or(0);
  layout.copy_stride = o.plan_copy_stride.value_or(0);
  if (o.schedule == "gpipe") layout.schedule = Schedule::GPipe;
  if (o.schedule == "1f1b") layout.schedule = Schedule::OneFOneB;
  if (o.schedule == "interleaved") layout.schedule = Schedule::Interleaved;
  return planner.evaluate(layout, o.plan_gbs.value_or(batches.back()));
}

int plan(const Options& o, const std::vector<std::string>& args, std::ostream& out,
         std::ostream& err, const Interruption& stop) {
  const std::vector<int> batches = parse_batch_sizes(o.gbs);
  check_plan_gbs(o, batches);
  Inputs in = load_inputs(o);
  const SearchOptions search = search_options(o);
  const Planner planner(in.model, make_cluster(o, in), in.settings, search);
  check_output_paths(o, in.path);  // before the sweep, so that a bad path fails at once
  check_hosts(o);
  const std::optional<LayoutCost> given = cost_given_plan(o, planner, batches);
  std::vector<PointResult> points =
      sweep_with_progress(planner, batches, stop.cancel, progress_stream(batches.size(), err));
  check(stop, "stopped after planning " + std::to_string(planned(points)) + " of " +
                  std::to_string(batches.size()) + " batch sizes; nothing written");
  for (PointResult& point : points) point.no_plan_reason = cli_wording(point.no_plan_reason);
  const Plan* shown = shown_plan(o, points, given ? &given->plan : nullptr);
  // Exports that cannot be made fail here, before the report or any file is written.
  const PlanExports exports = make_exports(o, shown, given.has_value(), in.path, max_cuts(o));
  const std::optional<FillResult> fill = fill_plan(o, shown);
  ReportContext context{&planner.model(), &planner.cluster(), given ? &*given : nullptr};
  context.settings = &planner.settings();
  context.search = &search;
  context.program_version = "pe-plan " PE_VERSION;
  context.command_line = args;
  if (o.format == Format::Json && fill) context.fill = &*fill;
  const std::string report = render(o, points, context);
  check(stop, "stopped before the report; nothing written");
  out << report;
  if (o.format == Format::Table) out << utilization_line(in, shown);
  if (fill && o.format != Format::Json) err << fill_text(*fill);
  out << std::flush;  // before any output file that is this same stream (/dev/stdout)
  const ChartContext chart{planner.model(), planner.cluster(), given.has_value()};
  write_extra_outputs(o, points, shown, fill ? &*fill : nullptr, exports, chart, stop.cancel, err);
  check(stop, "stopped after writing the report and its files");
  return 0;
}

// --states: the model's cut states in the chosen format.
int print_states(const Options& o, std::ostream& out) {
  const Inputs in = load_inputs(o);
  switch (o.format) {
    case Format::Csv:
      out << states_csv(in.model);
      break;
    case Format::Json:
      out << states_json(in.model);
      break;
    case Format::Table:
      out << states_table(in.model);
      break;
  }
  return 0;
}

}  // namespace

int report_error(const Error& error, std::ostream& err) {
  const auto* usage = dynamic_cast<const UsageError*>(&error);
  err << "pe-plan: " << (usage ? usage_message(*usage) : error.what()) << "\n";
  return usage ? 2 : 1;
}

int run_pe_plan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                const Interruption& stop) {
  try {
    const Options o = parse_options(args);
    if (o.help) return out << help_text(), 0;
    if (o.version) return out << "pe-plan " PE_VERSION "\n", 0;
    if (o.list_profiles) return out << profile_list(o.format), 0;
    if (o.states) return print_states(o, out);
    return plan(o, args, out, err, stop);
  } catch (const CancelledError& e) {
    err << "pe-plan: interrupted by " << stop.cause() << ": " << e.what() << "\n";
    return stop.exit_code();
  } catch (const Error& e) {
    return report_error(e, err);
  }
}

}  // namespace pe::cli
