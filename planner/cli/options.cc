#include "options.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <utility>

#include "flags.h"
#include "pe/error.h"
#include "pe/model.h"
#include "pe/settings.h"
#include "pe/units.h"

namespace pe::cli {
namespace {

// A whole decimal text read as a finite double (subnormals included; nan, inf and
// hexadecimal, which strtod would take, are not).
bool read_finite(const std::string& text, double& value) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  if (text.find_first_of("xX") != std::string::npos) return false;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(value);
}

double parse_number(const std::string& flag, const std::string& text, bool positive) {
  double value = 0;
  if (!read_finite(text, value) || value < 0 || (positive && value == 0))
    throw UsageError(flag + ": expected a " + (positive ? "positive" : "non-negative") +
                     " number, got '" + text + "'");
  return value;
}

// A number from `low` to `high`, both given as text for the message.
double parse_in_range(const std::string& flag, const std::string& text, double low, double high,
                      const std::string& range) {
  double value = 0;
  if (!read_finite(text, value) || value < low || value > high)
    throw UsageError(flag + ": expected a number from " + range + ", got '" + text + "'");
  return value;
}

// A positive number of GB (or GB/s) whose bytes (x 1e9) are still a finite double.
double parse_gigabytes(const std::string& flag, const std::string& text, const char* unit) {
  const double value = parse_number(flag, text, true);
  if (!std::isfinite(value * kGB))
    throw UsageError(flag + ": expected a number of " + unit + " below 1.7e299, got '" + text +
                     "' (too large to convert to bytes)");
  return value;
}

// A bandwidth in GB/s of at least one byte per second (a subnormal one makes times inf).
double parse_bandwidth(const std::string& flag, const std::string& text) {
  const double value = parse_gigabytes(flag, text, "GB/s");
  if (value * kGB < 1)
    throw UsageError(flag + ": expected at least 1e-9 GB/s (one byte per second), got '" + text +
                     "'");
  return value;
}

int parse_int(const std::string& flag, const std::string& text) {
  double value = parse_number(flag, text, true);
  if (value != std::floor(value) || value > 1e9)
    throw UsageError(flag + ": expected a whole number, got '" + text + "'");
  return static_cast<int>(value);
}

// A whole number of search steps, 0 (unlimited) to 10^18.
std::uint64_t parse_effort(const std::string& text) {
  const std::string expected =
      "--search-effort: expected a whole number of steps from 0 "
      "(unlimited) to 1e18, got '" +
      text + "'";
  double value = 0;
  try {
    value = parse_number("--search-effort", text, false);
  } catch (const UsageError&) {
    throw UsageError(expected);
  }
  if (value != std::floor(value) || value > 1e18) throw UsageError(expected);
  return static_cast<std::uint64_t>(value);
}

// A device id: a whole number from 0 (a cluster has at most 10^6 devices).
int parse_device(const std::string& flag, const std::string& text) {
  double value = 0;
  if (!read_finite(text, value) || value < 0 || value != std::floor(value) || value >= 1e6)
    throw UsageError(flag + ": expected a device id, a whole number from 0 to 999999, got '" +
                     text + "'");
  return static_cast<int>(value);
}

Format parse_format(const std::string& text) {
  if (text == "table") return Format::Table;
  if (text == "csv") return Format::Csv;
  if (text == "json") return Format::Json;
  throw UsageError("--format: expected table, csv or json, got '" + text + "'");
}

// The value of a flag that names a file; an empty one is bad usage.
std::string path_value(const std::string& flag, const std::string& text) {
  if (text.empty()) throw UsageError(flag + ": expected a file path, got ''");
  return text;
}

std::string schedule_value(const std::string& text) {
  if (text != "1f1b" && text != "gpipe" && text != "interleaved" && text != "best" && text != "all")
    throw UsageError("--schedule: expected 1f1b, gpipe, interleaved, best or all, got '" + text +
                     "'");
  return text;
}

using Set = std::function<void(const std::string&)>;

// A flag that takes a value: `set` checks and stores it when the flag is parsed.
void add(CLI::App& app, const std::string& name, const std::string& value, Set set,
         const std::string& description) {
  app.add_option_function<std::string>(name, std::move(set), description)
      ->type_name(value)
      ->trigger_on_parse();
}

// A flag that names a file.
void add_path(CLI::App& app, const std::string& name, std::optional<std::string>& member,
              const std::string& description) {
  add(
      app, name, "FILE", [name, &member](const std::string& v) { member = path_value(name, v); },
      description);
}

void declare_model_flags(CLI::App& app, Options& o) {
  app.option_defaults()->group("Model");
  add(
      app, "--profile", "NAME|PATH",
      [&o](const std::string& v) {
        o.profile = path_value("--profile", v);
        o.profile_given = true;
      },
      "bundled profile name (see profiles/README.md) or a PipeDream/HPGO\n"
      "graph.txt file (default resnet50)");
  add(
      app, "--model", "NAME|FILE",
      [&o](const std::string& v) { o.model = path_value("--model", v); },
      "a transformer from its configuration instead of a profile: bundled\n"
      "name (gpt3-*, llama2-*: profiles/transformers/) or a YAML file; the\n"
      "devices get its GPU's memory unless --memory-gb or --cluster says");
  add(
      app, "--pbs", "N",
      [&o](const std::string& v) {
        o.pbs = parse_in_range("--pbs", v, kMinProfileBatch, kMaxProfileBatch, "0.001 to 2^30");
      },
      "batch size the profile was taken at (default: from the catalogue or\n"
      "a '-pbs-N' file name; required for other files); 0.001 to 2^30");
  add(
      app, "--max-cuts", "N",
      [&o](const std::string& v) { o.max_cuts = parse_limit("--max-cuts", v); },
      "graph.txt: stages end at every cut of the graph when it has at most\n"
      "N (default 500), else at the prefixes of one topological order\n"
      "(0: always that order); the header says which");
  add(
      app, "--mbs", "N", [&o](const std::string& v) { o.mbs = parse_int("--mbs", v); },
      "smallest micro-batch size (default: catalogue, else 1)");
  add(
      app, "--optimizer-scaling", "X",
      [&o](const std::string& v) {
        o.optimizer_scaling =
            parse_in_range("--optimizer-scaling", v, 1, kMaxOptimizerScaling, "1 to 1e6");
      },
      "weight memory multiplier for weights+gradients+optimizer state\n"
      "(default: catalogue; 2 for SGD-momentum, 3 for Adam-like); 1 to 1e6");
  add(
      app, "--activation-bytes-per-sample", "B",
      [&o](const std::string& v) {
        o.activation_bytes_per_sample =
            parse_in_range("--activation-bytes-per-sample", v, 0, kMaxModelBytes, "0 to 1e18");
      },
      "activation memory one sample needs for the whole model\n"
      "(default: catalogue, else the profile's total); 0 to 1e18");
  add(
      app, "--tensor-parallel", "T",
      [&o](const std::string& v) { o.tensor_parallel = parse_limit("--tensor-parallel", v); },
      "--model: split each stage's layers over up to T GPUs of a machine\n"
      "(tensor parallelism; the search picks the degree per stage, one\n"
      "dividing the heads); default 0: a machine's GPUs; 1: never");
  add(
      app, "--tp-efficiency", "X",
      [&o](const std::string& v) {
        o.tp_efficiency = parse_in_range("--tp-efficiency", v, 1e-3, 1, "0.001 to 1");
      },
      "share of the ideal speed-up a T-way split keeps (its all-reduces\n"
      "are costed on top); default 1");
  app.add_flag_callback(
      "--no-recompute", [&o] { o.no_recompute = true; },
      "--model: never recompute activations (by default a stage recomputes\n"
      "its forward in the backward where its activations do not fit)");
  add(
      app, "--zero", "N", [&o](const std::string& v) { o.zero = parse_limit("--zero", v); },
      "ZeRO sharding of the training state over each stage's data-parallel\n"
      "GPUs: 1 optimizer state, 2 and gradients, 3 and weights (gathered\n"
      "for each micro-batch); default 0");
}

void declare_cluster_flags(CLI::App& app, Options& o) {
  app.option_defaults()->group("Cluster");
  add(
      app, "--devices", "ENDS", [&o](const std::string& v) { o.devices = v; },
      "cumulative GPU ids where machines end: 8,16 = 2 machines x 8 GPUs,\n"
      "1,2,...,16 = 16 single-GPU machines (default 8,16)");
  add_path(app, "--cluster", o.cluster_file,
           "cluster YAML (machines, bandwidths, memory); see README");
  add(
      app, "--intra-bw", "GBPS",
      [&o](const std::string& v) { o.intra_bw = parse_bandwidth("--intra-bw", v); },
      "bandwidth between GPUs of a machine, GB/s (default 25)");
  add(
      app, "--inter-bw", "GBPS",
      [&o](const std::string& v) { o.inter_bw = parse_bandwidth("--inter-bw", v); },
      "all-reduce bandwidth between machines, GB/s (default 3)");
  add(
      app, "--inter-p2p-bw", "GBPS",
      [&o](const std::string& v) { o.inter_p2p_bw = parse_bandwidth("--inter-p2p-bw", v); },
      "point-to-point bandwidth between machines, GB/s (default 1, or\n"
      "--inter-bw when only that is given)");
  add(
      app, "--memory-gb", "GB",
      [&o](const std::string& v) { o.memory_gb = parse_gigabytes("--memory-gb", v, "GB"); },
      "memory per GPU, GB = 1e9 bytes (default 16)");
}

void declare_search_flags(CLI::App& app, Options& o) {
  app.option_defaults()->group("Search");
  add(
      app, "--gbs", "LIST", [&o](const std::string& v) { o.gbs = v; },
      "global batch sizes: N, N,M,... or FIRST:LAST:STEP, which means\n"
      "FIRST then every multiple of STEP up to LAST (default 32:4096:64)");
  add(
      app, "--schedule", "S", [&o](const std::string& v) { o.schedule = schedule_value(v); },
      "1f1b, gpipe, interleaved, best (1f1b and gpipe, the default) or\n"
      "all (the three); with --plan, that plan's schedule (best: 1f1b;\n"
      "interleaved: groups list their chunks, 0-5,12-17:2;6-11,18-23:2)");
  add(
      app, "--max-chunks", "V",
      [&o](const std::string& v) { o.max_chunks = parse_int("--max-chunks", v); },
      "interleaved 1F1B: try 2 to V chunks per device group (default 4)");
  add(
      app, "--top", "K", [&o](const std::string& v) { o.top = parse_int("--top", v); },
      "also list the K best plans of distinct shapes (default 1); CSV\n"
      "and JSON give each its rank, 1 the best");
  add(
      app, "--search-effort", "N",
      [&o](const std::string& v) { o.search_effort = parse_effort(v); },
      "steps of the exact search per batch size (default 1e8: on 2 cores\n"
      "most batch sizes of the bundled profiles on 16 GPUs take under a\n"
      "second, a few up to about 25 s (NASNet-A large); up to a few\n"
      "minutes on 1,024 GPUs and more; 0 = unlimited, which on large\n"
      "graphs can take hours). When a batch size needs more, the best plan\n"
      "found is shown with its certified gap (CSV/JSON: exact false); it\n"
      "is never worse than data parallelism, nor, by more than 5 %, than\n"
      "the plan of the cluster's first 1, 2, 4, ... machines (planned too\n"
      "where the gap is above that). Above the default, the\n"
      "default's search runs first, so more effort never gives a slower\n"
      "plan or a wider gap than the default");
  add(
      app, "--search-memory-mb", "N",
      [&o](const std::string& v) { o.search_memory_mb = parse_limit("--search-memory-mb", v); },
      "most memory one search pass (one pipeline shape's) may hold, in MiB\n"
      "(default 4096; 0: no limit). A pass that needs more stops as one\n"
      "out of effort does: the gap grows, it is never wrong. Up to one\n"
      "pass a thread runs at once");
  add(
      app, "--max-stage-width", "N",
      [&o](const std::string& v) { o.max_stage_width = parse_limit("--max-stage-width", v); },
      "plan only stages of at most N devices per pipeline copy, one-stage\n"
      "plans included (default 0: no limit)");
  add(
      app, "--max-copies", "N",
      [&o](const std::string& v) { o.max_copies = parse_limit("--max-copies", v); },
      "plan at most N copies of the whole pipeline (default 0: no limit)");
  app.add_flag_callback(
      "--straight", [&o] { o.straight = true; },
      "--max-stage-width 1 --max-copies 1: one device per stage, one\n"
      "pipeline, the plans PipeEdge's runtime can run (--export-sched)");
}

void declare_given_plan_flags(CLI::App& app, Options& o) {
  app.option_defaults()->group("A plan of your own");
  add(
      app, "--plan", "STAGES", [&o](const std::string& v) { o.plan = v; },
      "also cost this plan: stages FIRST-LAST:WIDTH;... as pe-plan prints\n"
      "them (e.g. 0-20:15;21-24:1), at the --plan-gbs batch size; it is\n"
      "explained after the table and compared with the best plan found,\n"
      "and --trace, --svg, --fill and --export-sched show it instead");
  add(
      app, "--microbatches", "M",
      [&o](const std::string& v) { o.microbatches = parse_int("--microbatches", v); },
      "micro-batches per iteration of the --plan plan (default 1)");
  add(
      app, "--plan-copies", "R",
      [&o](const std::string& v) { o.plan_copies = parse_int("--plan-copies", v); },
      "copies of the whole --plan pipeline, data parallel (default 1)");
  add(
      app, "--plan-first-device", "D",
      [&o](const std::string& v) { o.plan_first_device = parse_device("--plan-first-device", v); },
      "the --plan plan runs on the machines from device D on, the first\n"
      "device of a machine, and then round on those before it (default 0;\n"
      "a plan found there says its own: CSV/JSON first_device)");
  add(
      app, "--plan-copy-stride", "N",
      [&o](const std::string& v) { o.plan_copy_stride = parse_device("--plan-copy-stride", v); },
      "--plan-copies start N devices apart, counted round past the last\n"
      "device (default 0: the devices from --plan-first-device on over\n"
      "the copies; a plan found says its own: CSV/JSON copy_stride)");
}

void declare_output_flags(CLI::App& app, Options& o) {
  app.option_defaults()->group("Output");
  add(
      app, "--format", "F", [&o](const std::string& v) { o.format = parse_format(v); },
      "table, csv or json (default table). CSV: one row per plan, ranked\n"
      "(--top), and a row with no_plan_reason where none fits; JSON: also\n"
      "the settings, version and command line, and --fill's results");
  add(
      app, "--plan-gbs", "N",
      [&o](const std::string& v) { o.plan_gbs = parse_int("--plan-gbs", v); },
      "the batch size whose plan is explained below the table and used\n"
      "by --trace, --svg, --fill and --export-sched (default: the last\n"
      "one of --gbs)");
  add_path(app, "--trace", o.trace,
           "write that plan's timeline as Chrome trace JSON (Perfetto).\n"
           "Output paths are checked before planning; an output that is an\n"
           "input (--profile, --cluster, --fill) or another output is refused");
  add_path(app, "--svg", o.svg, "write that plan's timeline as an SVG Gantt chart");
  add_path(app, "--plot", o.plot,
           "write speedup vs GBS of the sweep as an SVG chart: DP, DP + overlap,\n"
           "DP + P3 and the best plan, estimated and simulated");
  add_path(app, "--fill", o.fill,
           "place the extra work described in FILE into the plan's bubbles\n"
           "(results on stderr; in the report with --format json)");
  add_path(app, "--export-sched", o.export_sched,
           "write that plan as a PipeEdge schedule YAML (needs --hosts).\n"
           "PipeEdge runs one host per stage and one pipeline copy: a plan\n"
           "with a wider stage or more copies is refused (exit 2) before\n"
           "any file is written; --straight plans the best one it can run");
  add(
      app, "--hosts", "H1,H2,...", [&o](const std::string& v) { o.hosts = v; },
      "one host name per stage, in stage order, not device order: the\n"
      "first name runs stage 0 (states FIRST-LAST of the stages column),\n"
      "the second stage 1, ...; a comment line per host in the YAML\n"
      "names its device id and stage");
  add(
      app, "--export-graph", "DIR",
      [&o](const std::string& v) { o.export_graph = path_value("--export-graph", v); },
      "write the graph.txt profile (--profile must be one) to DIR/graph.txt\n"
      "with each node's stage_id set by that plan, for PipeDream's tools\n"
      "(DIR is created if missing; its parent must exist)");
  app.add_flag_callback(
      "--states", [&o] { o.states = true; },
      "print the profile's cut states instead of planning: index, cumulative\n"
      "times and bytes, bytes crossing a cut after each, the operator\n"
      "(read a plan's FIRST-LAST ranges with it); honours --format");
  app.add_flag_callback(
      "--list-profiles", [&o] { o.list_profiles = true; },
      "list the bundled profiles (name, states, profile batch, file) instead\n"
      "of planning; honours --format");
  app.add_flag_callback(
      "-h,--help", [&o] { o.help = true; }, "this text");
  app.add_flag_callback(
      "--version", [&o] { o.version = true; }, "the version");
}

// The arguments up to the first unknown option, ready for CLI11: "--flag=value" split in
// two, a unique prefix of a long flag replaced by its name. Flags are exact names or such
// prefixes (no "-hx" clusters, no "--"); the argument after a flag that takes one is its
// value, whatever it looks like.
struct Scan {
  std::vector<std::string> tokens;
  std::optional<std::string> unknown;      // the first argument that is no flag
  std::optional<std::string> ambiguous;    // or the first prefix of several long flags
  std::optional<std::string> needs_value;  // a last flag without its value
};

// The long flags that `name` ("--pro") is a prefix of, in declaration order.
std::vector<std::string> long_flags_starting(const CLI::App& app, const std::string& name) {
  std::vector<std::string> found;
  for (const CLI::Option* option : app.get_options())
    for (const std::string& long_name : option->get_lnames())
      if (("--" + long_name).rfind(name, 0) == 0) found.push_back("--" + long_name);
  return found;
}

// The flag `name` stands for: its exact name or, for a long option, the one flag it is a
// prefix of (getopt_long's rule, as sched-pipeline follows it). Sets `name` to the full
// name; nullptr when none or several match (`candidates` then lists the matches).
const CLI::Option* find_flag(const CLI::App& app, std::string& name,
                             std::vector<std::string>& candidates) {
  if (name.size() < 2 || name[0] != '-') return nullptr;
  if (const CLI::Option* exact = app.get_option_no_throw(name)) return exact;
  if (name.size() < 3 || name[1] != '-') return nullptr;
  candidates = long_flags_starting(app, name);
  if (candidates.size() != 1) return nullptr;
  name = candidates.front();
  return app.get_option_no_throw(name);
}

Scan scan(const CLI::App& app, const std::vector<std::string>& args) {
  Scan scan;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const std::size_t eq = arg.rfind("--", 0) == 0 ? arg.find('=') : std::string::npos;
    std::string name = arg.substr(0, eq);
    std::vector<std::string> candidates;
    const CLI::Option* flag = find_flag(app, name, candidates);
    const bool takes_value = flag && flag->get_items_expected_max() > 0;
    if (!flag && candidates.size() > 1) {
      std::string list;
      for (const std::string& c : candidates) list += (list.empty() ? "" : ", ") + c;
      scan.ambiguous = "option '" + arg.substr(0, eq) + "' is ambiguous: " + list;
      break;
    }
    if (!flag || (eq != std::string::npos && !takes_value)) {
      scan.unknown = arg;
      break;
    }
    if (takes_value && eq == std::string::npos && i + 1 == args.size()) {
      scan.needs_value = name;
      break;
    }
    scan.tokens.push_back(name);
    if (eq != std::string::npos)
      scan.tokens.push_back(arg.substr(eq + 1));
    else if (takes_value)
      scan.tokens.push_back(args[++i]);
  }
  return scan;
}

}  // namespace

int parse_limit(const std::string& flag, const std::string& text) {
  double value = 0;
  if (!read_finite(text, value) || value < 0 || value != std::floor(value) || value > 1e6)
    throw UsageError(flag + ": expected a whole number from 0 (no limit) to 1000000, got '" + text +
                     "'");
  return static_cast<int>(value);
}

void declare_flags(CLI::App& app, Options& options) {
  app.set_help_flag();  // -h, --help is declared with the other flags
  declare_model_flags(app, options);
  declare_cluster_flags(app, options);
  declare_search_flags(app, options);
  declare_given_plan_flags(app, options);
  declare_output_flags(app, options);
}

Options parse_options(const std::vector<std::string>& args) {
  Options options;
  CLI::App app("pe-plan", "pe-plan");
  declare_flags(app, options);
  Scan tokens = scan(app, args);
  std::reverse(tokens.tokens.begin(), tokens.tokens.end());  // CLI11 takes them last first
  try {
    app.parse(tokens.tokens);
  } catch (const CLI::Error& e) {  // not expected: scan() hands CLI11 only known flags
    throw UsageError(std::string(e.what()) + " (see pe-plan --help)");
  }
  if (tokens.unknown)
    throw UsageError("unknown option '" + *tokens.unknown + "' (see pe-plan --help)");
  if (tokens.ambiguous) throw UsageError(*tokens.ambiguous + " (see pe-plan --help)");
  if (tokens.needs_value)
    throw UsageError(*tokens.needs_value + " needs a value (see pe-plan --help)");
  if (options.devices && options.cluster_file)
    throw UsageError("give either --devices or --cluster, not both");
  if (!options.plan && (options.microbatches || options.plan_copies || options.plan_first_device ||
                        options.plan_copy_stride))
    throw UsageError(std::string(options.microbatches        ? "--microbatches"
                                 : options.plan_copies       ? "--plan-copies"
                                 : options.plan_first_device ? "--plan-first-device"
                                                             : "--plan-copy-stride") +
                     " describes a plan of your own: give its stages with --plan");
  if (options.straight) {
    for (const auto& [flag, value] :
         {std::pair<const char*, int>{"--max-stage-width", options.max_stage_width},
          {"--max-copies", options.max_copies}})
      if (value != 0 && value != 1)
        throw UsageError(std::string("--straight means --max-stage-width 1 --max-copies 1, "
                                     "but ") +
                         flag + " is " + std::to_string(value));
    options.max_stage_width = options.max_copies = 1;
    if (options.schedule == "interleaved" || options.schedule == "all")
      throw UsageError(
          "--straight plans what PipeEdge's runtime can run, one range of layers "
          "per host, so not --schedule " +
          options.schedule + " (interleaved 1F1B)");
  }
  if (options.plan && options.format == Format::Csv)
    throw UsageError("--plan is reported in --format table or json, not csv");
  return options;
}

}  // namespace pe::cli
