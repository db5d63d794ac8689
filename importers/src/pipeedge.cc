// Reads the three sched-pipeline input files in the original's order.
#include "pe/importers/pipeedge.h"

#include "yaml_input.h"

namespace pe {

PipeEdgeInput load_pipeedge_input(const PipeEdgeFiles& files, const PipeEdgeQuery& query) {
  PipeEdgeInput input;
  input.model = parse_pipeedge_model(yaml_input::read_text(files.models), files.models,
                                     query.model_name, input.warnings);
  const PipeEdgeDeviceTypes types = parse_pipeedge_device_types(
      yaml_input::read_text(files.device_types), files.device_types, query,
      input.model.layers(), input.warnings);
  input.cluster.hosts = parse_pipeedge_devices(yaml_input::read_text(files.devices), files.devices,
                                               types, input.warnings);
  input.cluster.types = types.usable;
  return input;
}

}  // namespace pe
