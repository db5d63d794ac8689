// Fuzzes the PipeEdge devices.yml importer against fixed device types: "A" and "B" usable,
// "C" skipped. Every input must give hosts of usable types or an InputError; small host
// lists then schedule a fixed six-layer model, which is checked.
#include <cstddef>
#include <cstdint>
#include <set>

#include "fuzz_support.h"
#include "pe/error.h"
#include "pe/importers/pipeedge.h"

namespace {

constexpr std::size_t kMaxScheduledHosts = 12;

const pe::PipeEdgeDeviceTypes& fixed_types() {
  static const pe::PipeEdgeDeviceTypes types{{{"A", 1000, 2048, {0.1, 0.2, 0.1, 0.3, 0.2, 0.1}},
                                              {"B", 100, 512, {0.05, 0.1, 0.05, 0.1, 0.1, 0.05}}},
                                             {"C"}};
  return types;
}

pe::EdgeModel fixed_model() {
  return {"m", {20, 30, 20, 40, 30, 10}, 150528, {302592, 151296, 756480, 151296, 302592, 1000}};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pe;
  std::vector<std::string> warnings;
  EdgeCluster cluster;
  try {
    cluster.hosts = parse_pipeedge_devices(std::string(reinterpret_cast<const char*>(data), size),
                                           "fuzz/devices.yml", fixed_types(), warnings);
  } catch (const InputError&) {
    return 0;
  }
  cluster.types = fixed_types().usable;
  std::set<std::string> names;
  for (const EdgeHost& host : cluster.hosts) {
    fuzz::require(host.type < cluster.types.size(), "a host of an unusable type");
    fuzz::require(!host.name.empty() && names.insert(host.name).second,
                  "an empty or repeated host name");
  }
  if (cluster.hosts.size() <= kMaxScheduledHosts) fuzz::schedule_and_check(fixed_model(), cluster);
  return 0;
}
