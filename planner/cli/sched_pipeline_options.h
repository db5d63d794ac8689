// Command-line options of sched-pipeline, spelled exactly as PipeEdge's original.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pe {

/// Parsed sched-pipeline options with the original's defaults.
struct SchedPipelineOptions {
  std::uint64_t batch_size = 8;         ///< -b/--batch-size: the micro-batch size, >= 1.
  std::uint64_t buffers_in = 2;         ///< -i/--buffers-in, >= 0.
  std::uint64_t buffers_out = 2;        ///< -o/--buffers-out, >= 0.
  std::string dtype = "torch.float32";  ///< -d/--dtype
  std::string model_name = "google/vit-base-patch16-224";  ///< -m/--model-name
  std::string models_file = "models.yml";                  ///< -M/--models-file
  std::string dev_types_file = "device_types.yml";         ///< -T/--dev-types-file
  std::string dev_file = "devices.yml";                    ///< -D/--dev-file
  /// --search-memory-mb (an addition to the original's options): the exact search's table
  /// limit in MiB; beyond it a restricted host pool is searched (EdgeSettings).
  std::uint64_t search_memory_mb = 64;
  bool help = false;  ///< -h/--help was given (parsing stops there, as getopt would).
};

/// Parses the arguments after the program name, getopt_long style: `-b 8`, `-b8`,
/// `--batch-size 8`, `--batch-size=8` and unique prefixes of long names (`--batch=8`).
/// Numbers must be plain decimal digits (no sign, no trailing text; leading zeros are fine)
/// up to 2^32 - 1.
/// Throws UsageError for unknown or ambiguous options, missing or malformed values and
/// positional arguments.
SchedPipelineOptions parse_sched_pipeline_options(const std::vector<std::string>& args);

/// The usage text printed by -h (ends with a newline).
std::string sched_pipeline_usage();

}  // namespace pe
