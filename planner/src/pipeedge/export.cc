#include "pe/edge_export.h"

#include <set>
#include <string>

#include "pe/error.h"

namespace pe {

std::string schedule_yaml(const std::vector<HostLayers>& lines) {
  if (lines.empty()) return "[]\n";
  std::string out;
  for (const HostLayers& line : lines)
    out += "- " + yaml_scalar(line.host) + ": [" + std::to_string(line.first_layer) + ", " +
           std::to_string(line.last_layer) + "]\n";
  return out;
}

std::vector<HostLayers> host_layers(const EdgeSchedule& schedule, const EdgeCluster& cluster) {
  std::vector<HostLayers> lines;
  for (const EdgeStage& stage : schedule.stages)
    lines.push_back(
        HostLayers{cluster.hosts.at(stage.host).name, stage.first_layer, stage.last_layer});
  return lines;
}

namespace {

void check_widths(const Plan& plan) {
  if (plan.pipeline_replicas < 1)
    throw UsageError("the plan has " + std::to_string(plan.pipeline_replicas) +
                     " pipeline replicas; expected at least 1");
  for (const PlanStage& stage : plan.stages)
    if (stage.width < 1 || stage.last_state < stage.first_state)
      throw UsageError("plan stage " + std::to_string(stage.first_state) + "-" +
                       std::to_string(stage.last_state) + " has width " +
                       std::to_string(stage.width) + "; expected a non-empty range and width >= 1");
}

// One stage per host: PipeEdge runs one stage per host, so a name given twice (or an empty
// one) would be a schedule the runtime cannot follow.
void check_host_names(const std::vector<std::string>& hosts) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (hosts[i].empty())
      throw UsageError("host name " + std::to_string(i + 1) +
                       " is empty; expected a name per stage");
    if (!seen.insert(hosts[i]).second)
      throw UsageError("host '" + hosts[i] + "' is named twice (again as name " +
                       std::to_string(i + 1) + "); each stage needs its own host");
  }
}

}  // namespace

std::string pipeedge_obstacles(const Plan& plan) {
  std::string obstacles;
  auto add = [&obstacles](const std::string& text) {
    obstacles += (obstacles.empty() ? "" : "; ") + text;
  };
  for (std::size_t s = 0; s < plan.stages.size(); ++s)
    if (plan.stages[s].width > 1)
      add("stage " + std::to_string(s) + " is replicated on " +
          std::to_string(plan.stages[s].width) + " devices");
  if (plan.pipeline_replicas > 1)
    add("the plan has " + std::to_string(plan.pipeline_replicas) + " pipeline copies");
  if (plan.chunks > 1)
    add("the plan interleaves " + std::to_string(plan.chunks) +
        " chunks on each device (a host runs one range of layers)");
  return obstacles;
}

std::string schedule_yaml(const Plan& plan, const std::vector<std::string>& hosts) {
  check_widths(plan);
  const std::string obstacles = pipeedge_obstacles(plan);
  if (!obstacles.empty())
    throw UsageError("schedule_yaml",
                     "PipeEdge runs one host per stage and one pipeline copy, "
                     "which this plan is not: " +
                         obstacles);
  const std::size_t stages = plan.stages.size();  // one device each (no obstacles)
  if (hosts.size() != stages)
    throw UsageError("the schedule export needs one host name per stage of the plan: got " +
                     std::to_string(hosts.size()) + (hosts.size() == 1 ? " name" : " names") +
                     " for " + std::to_string(stages) + (stages == 1 ? " stage" : " stages"));
  check_host_names(hosts);
  std::string comments =
      "# pe-plan training plan " + stages_string(plan) +
      " as a PipeEdge schedule; the hosts, in stage order, stand for these devices:\n";
  std::vector<HostLayers> lines;
  int next_device = 0;  // where the plan lists no devices, stages are packed from device 0
  for (const PlanStage& stage : plan.stages) {
    const int device = stage.devices.empty() ? next_device : stage.devices.front();
    next_device = device + 1;
    comments += "# " + yaml_scalar(hosts[lines.size()]) + ": device " + std::to_string(device) +
                ", stage " + std::to_string(lines.size()) + ", states " +
                std::to_string(stage.first_state) + "-" + std::to_string(stage.last_state) + "\n";
    lines.push_back(HostLayers{hosts[lines.size()], stage.first_state + 1, stage.last_state + 1});
  }
  return comments + schedule_yaml(lines);
}

std::string partition_string(const Plan& plan) {
  std::string out;
  for (const PlanStage& stage : plan.stages) {
    if (!out.empty()) out += ',';
    out += std::to_string(stage.first_state + 1) + "," + std::to_string(stage.last_state + 1);
  }
  return out;
}

}  // namespace pe
