// Fuzzes the PipeEdge models.yml importer (model "m"). Every input must give a model or an
// InputError; small models are then scheduled on three hosts of two synthetic types.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "pe/error.h"
#include "pe/importers/pipeedge.h"

namespace {

constexpr std::size_t kMaxScheduledLayers = 64;

// Two types whose per-layer times and memory follow the layer index, one host of the
// first, two of the second.
pe::EdgeCluster synthetic_cluster(std::size_t layers) {
  pe::EdgeCluster cluster;
  cluster.types = {{"fast", 1000, 4096, {}}, {"slow", 100, 1024, {}}};
  for (std::size_t k = 0; k < layers; ++k) {
    cluster.types[0].layer_seconds.push_back(0.01 * static_cast<double>(k % 3));
    cluster.types[1].layer_seconds.push_back(0.03 * static_cast<double>(k % 5));
  }
  cluster.hosts = {{"f0", 0}, {"s0", 1}, {"s1", 1}};
  return cluster;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pe;
  std::vector<std::string> warnings;
  EdgeModel model;
  try {
    model = parse_pipeedge_model(std::string(reinterpret_cast<const char*>(data), size),
                                 "fuzz/models.yml", "m", warnings);
  } catch (const InputError&) {
    return 0;
  }
  fuzz::require(model.parameters_out.size() == model.layers(),
                "parameters_out was not expanded to one value per layer");
  try {
    validate_edge_input(model, synthetic_cluster(model.layers()));
  } catch (const UsageError&) {
    fuzz::require(false, "the importer returned a model that fails validate_edge_input()");
  }
  if (model.layers() <= kMaxScheduledLayers)
    fuzz::schedule_and_check(model, synthetic_cluster(model.layers()));
  return 0;
}
