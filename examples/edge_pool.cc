// Schedules inference of ViT-Base on a heterogeneous pool of edge hosts (PipeEdge's
// sched-pipeline problem). The model and the device types come from PipeEdge's example
// files; the host list is then completed in code: the example's devices.yml names its RCC
// hosts with a type that device_types.yml does not define, which the importer reports as
// a warning. Usage: edge_pool DIR   (DIR holds models.yml, device_types.yml, devices.yml)
#include <exception>
#include <iostream>
#include <string>

#include "pe/pe.h"

namespace {

// Adds hosts rcc-0..rcc-3 of type `type_name`, when the files defined it.
void add_rcc_hosts(pe::EdgeCluster& cluster, const std::string& type_name) {
  for (std::size_t type = 0; type < cluster.types.size(); ++type) {
    if (cluster.types[type].name != type_name) continue;
    for (int i = 0; i < 4; ++i) cluster.hosts.push_back({"rcc-" + std::to_string(i), type});
  }
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 2) {
    std::cerr << "usage: edge_pool DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  const pe::PipeEdgeQuery query;  // ViT-Base, micro-batch 8, float32.
  pe::PipeEdgeInput input = pe::load_pipeedge_input(
      {dir + "/models.yml", dir + "/device_types.yml", dir + "/devices.yml"}, query);
  for (const std::string& warning : input.warnings) std::cout << "warning: " << warning << "\n";
  add_rcc_hosts(input.cluster, "RCC-VE-C2000");

  pe::EdgeSettings settings;
  settings.micro_batch = query.micro_batch;
  const pe::EdgeSchedule schedule = pe::schedule_pipeline(input.model, input.cluster, settings);
  if (schedule.empty()) {
    std::cout << "no schedule: " << schedule.infeasible_reason << "\n";
    return 0;
  }
  std::cout << input.model.name << " on " << input.cluster.hosts.size() << " hosts, bottleneck "
            << schedule.bottleneck << " s per micro-batch\n"
            << pe::schedule_yaml(pe::host_layers(schedule, input.cluster));
  return 0;
} catch (const std::exception& e) {
  std::cerr << "edge_pool: " << e.what() << "\n";
  return 1;
}
