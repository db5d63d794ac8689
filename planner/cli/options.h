// pe-plan's command-line options.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pe/planner.h"

namespace pe::cli {

enum class Format { Table, Csv, Json };

/// Everything the command line can say. Empty optionals mean "use the default".
struct Options {
  bool help = false, version = false;
  bool states = false, list_profiles = false;  // print these instead of planning
  std::string profile = "resnet50";
  bool profile_given = false;        // --profile was on the command line
  std::optional<std::string> model;  // a transformer configuration (--model)
  std::optional<double> pbs;
  std::optional<int> max_cuts;  // graph.txt: every cut up to this many (--max-cuts)
  std::string gbs = "32:4096:64";
  std::optional<std::string> devices;  // machine ends, e.g. "8,16"
  std::optional<std::string> cluster_file;
  std::optional<double> intra_bw, inter_bw, inter_p2p_bw, memory_gb;  // GB/s, GB
  std::optional<int> mbs;
  std::optional<double> optimizer_scaling, activation_bytes_per_sample;
  std::optional<int> tensor_parallel, zero;  // --tensor-parallel, --zero
  std::optional<double> tp_efficiency;       // --tp-efficiency
  bool no_recompute = false;                 // --no-recompute
  std::string schedule = "best";
  int top = 1;
  int max_chunks = 4;                                                       // --max-chunks
  std::uint64_t search_effort = kDefaultSearchEffort;                       // 0 = unlimited
  int search_memory_mb = static_cast<int>(kDefaultPassMemory / kMebibyte);  // 0 = no limit
  int max_stage_width = 0, max_copies = 0;  // 0 = no limit; --straight sets both to 1
  bool straight = false;
  Format format = Format::Table;
  std::optional<std::string> trace, svg, plot, fill, export_sched, hosts;
  std::optional<std::string> export_graph;  // a directory for graph.txt with stage ids
  std::optional<int> plan_gbs;              // which point --trace/--svg/--export-sched show
  std::optional<std::string> plan;          // a hand-written plan's stages, to cost
  std::optional<int> microbatches, plan_copies, plan_first_device, plan_copy_stride;  // of it
};

/// Parses argv[1..] with the flags declared once in options.cc (CLI11): a flag's exact name
/// or a unique prefix of a long one (`--prof` for `--profile`, as getopt_long and
/// sched-pipeline take them; `--p` is ambiguous), a value as the next argument (whatever it
/// looks like) or after '=', the last of a repeated flag winning. Throws UsageError with a message
/// for the user, for the first fault in command-line order.
Options parse_options(const std::vector<std::string>& args);

/// A limit of the search as its flag takes it: a whole number from 0 (no limit) to 10^6.
/// Throws UsageError naming the flag otherwise.
int parse_limit(const std::string& flag, const std::string& text);

/// The --help text, generated from the flags' declarations.
std::string help_text();

}  // namespace pe::cli
