// Fuzzes the cluster YAML importer. Every input must give a valid cluster or an
// InputError; small clusters then plan a fixed four-layer chain and the plan is checked.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "pe/error.h"
#include "pe/importers/cluster_yaml.h"

namespace {

constexpr int kMaxPlannedDevices = 32;

const pe::ModelProfile& chain() {
  static const pe::ModelProfile model = pe::make_chain_model("chain", 8,
                                                             {{"a", 1e-3, 2e-3, 4e6, 1e6},
                                                              {"b", 2e-3, 4e-3, 2e6, 8e6},
                                                              {"c", 1e-3, 1e-3, 1e6, 0},
                                                              {"d", 4e-3, 8e-3, 1e5, 3e7}});
  return model;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pe;
  Cluster cluster;
  try {
    cluster = parse_cluster_yaml(std::string(reinterpret_cast<const char*>(data), size),
                                 "fuzz/cluster.yml");
  } catch (const InputError&) {
    return 0;
  }
  try {
    validate(cluster, "imported cluster");
  } catch (const InputError&) {
    fuzz::require(false, "the importer returned a cluster that fails validate()");
  }
  if (cluster.device_count() <= kMaxPlannedDevices) fuzz::plan_and_check(chain(), cluster, 16);
  return 0;
}
