// Reads the three sched-pipeline input files in the original's order.
#include "pe/importers/pipeedge.h"

#include <filesystem>
#include <system_error>

#include "pe/error.h"
#include "yaml_input.h"

namespace pe {
namespace {

/// The text of an input file; `what` names it when its path is empty.
std::string file_text(const std::string& path, const std::string& what) {
  if (path.empty())
    throw InputError("", "the path of the " + what + " is empty, expected a file name");
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw InputError(path, "is a directory; expected a YAML file");
  return detail::yaml_input::read_text(path);
}

}  // namespace

PipeEdgeInput load_pipeedge_input(const PipeEdgeFiles& files, const PipeEdgeQuery& query) {
  PipeEdgeInput input;
  input.model = parse_pipeedge_model(file_text(files.models, "models file"), files.models,
                                     query.model_name, input.warnings);
  const PipeEdgeDeviceTypes types =
      parse_pipeedge_device_types(file_text(files.device_types, "device types file"),
                                  files.device_types, query, input.model.layers(), input.warnings);
  input.cluster.hosts = parse_pipeedge_devices(file_text(files.devices, "devices file"),
                                               files.devices, types, input.warnings);
  input.cluster.types = types.usable;
  return input;
}

}  // namespace pe
