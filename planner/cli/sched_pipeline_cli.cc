#include "sched_pipeline_cli.h"

#include <exception>
#include <string>
#include <vector>

#include "pe/edge.h"
#include "pe/edge_export.h"
#include "pe/error.h"
#include "pe/importers/pipeedge.h"
#include "sched_pipeline_options.h"

namespace pe {
namespace {

constexpr const char* kProgram = "sched-pipeline";

PipeEdgeFiles files_of(const SchedPipelineOptions& options) {
  return PipeEdgeFiles{options.models_file, options.dev_types_file, options.dev_file};
}

PipeEdgeQuery query_of(const SchedPipelineOptions& options) {
  return PipeEdgeQuery{options.model_name, options.batch_size, options.dtype};
}

EdgeSettings settings_of(const SchedPipelineOptions& options) {
  EdgeSettings settings;
  settings.micro_batch = options.batch_size;
  settings.buffers_in = options.buffers_in;
  settings.buffers_out = options.buffers_out;
  settings.search_memory_limit = static_cast<std::size_t>(options.search_memory_mb) << 20;
  return settings;
}

/// Loads the files, schedules and prints; throws on bad input.
int schedule(const SchedPipelineOptions& options, std::ostream& out, std::ostream& err) {
  const PipeEdgeInput input = load_pipeedge_input(files_of(options), query_of(options));
  for (const std::string& warning : input.warnings)
    err << kProgram << ": warning: " << warning << '\n';
  const EdgeSchedule result = schedule_pipeline(input.model, input.cluster, settings_of(options));
  if (result.empty()) err << kProgram << ": no schedule: " << result.infeasible_reason << '\n';
  if (!result.exact)
    err << kProgram << ": warning: the exact search needs more than --search-memory-mb="
        << options.search_memory_mb << " MiB of tables for these device types, so up to "
        << result.stats.hosts_left_out
        << " hosts were left out of some checks; the schedule is valid but may not be "
           "optimal (raise --search-memory-mb for the exact answer)\n";
  out << schedule_yaml(host_layers(result, input.cluster));
  return 0;
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const SchedPipelineOptions options = parse_sched_pipeline_options(args);
  if (options.help) {
    out << sched_pipeline_usage();
    return 0;
  }
  if (options.dtype != "torch.float32") {
    err << kProgram << ": unsupported dtype: " << options.dtype << " (only torch.float32)\n"
        << sched_pipeline_usage();
    return 1;
  }
  return schedule(options, out, err);
}

}  // namespace

int sched_pipeline_main(int argc, char** argv, std::ostream& out, std::ostream& err) {
  try {
    std::vector<std::string> args;
    for (int k = 1; k < argc; ++k) args.emplace_back(argv[k]);
    return run(args, out, err);
  } catch (const UsageError& e) {
    err << kProgram << ": " << e.what() << '\n' << sched_pipeline_usage();
  } catch (const InputError& e) {
    err << kProgram << ": error: " << e.what() << '\n';
  } catch (const SearchLimitError& e) {
    // The library names the API setting; this program's flag sets it.
    std::string message = e.what();
    const std::string field = "EdgeSettings::search_memory_limit";
    if (const std::size_t at = message.find(field); at != std::string::npos)
      message.replace(at, field.size(), "sched-pipeline --search-memory-mb");
    err << kProgram << ": error: " << message << '\n';
  } catch (const std::exception& e) {
    err << kProgram << ": internal error: " << e.what() << '\n';
  }
  return 1;
}

}  // namespace pe
