// Fuzzes the PipeEdge device_types.yml importer. The first byte gives the model's layer
// count (0..15), the rest is the file; the query is model "m", batch 8, torch.float32.
// Usable types get one host each and schedule a synthetic model, which is then checked.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "pe/error.h"
#include "pe/importers/pipeedge.h"

namespace {

constexpr std::size_t kMaxScheduledTypes = 8;

pe::EdgeModel synthetic_model(std::size_t layers) {
  pe::EdgeModel model;
  model.name = "m";
  model.parameters_in = 3 * 224 * 224;
  for (std::size_t k = 0; k < layers; ++k) {
    model.weights_mib.push_back(10.0 * static_cast<double>(k % 4));
    model.parameters_out.push_back(1000 * (k % 7));
  }
  return model;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pe;
  fuzz::ByteReader in(data, size);
  const std::size_t layers = in.byte() % 16;
  const PipeEdgeQuery query{"m", 8, "torch.float32"};
  std::vector<std::string> warnings;
  PipeEdgeDeviceTypes types;
  try {
    types =
        parse_pipeedge_device_types(in.rest(), "fuzz/device_types.yml", query, layers, warnings);
  } catch (const InputError&) {
    return 0;
  }
  EdgeCluster cluster;
  for (const EdgeDeviceType& type : types.usable) {
    fuzz::require(type.layer_seconds.size() == layers, "a usable type has the wrong length");
    cluster.hosts.push_back({type.name + "-host", cluster.types.size()});
    cluster.types.push_back(type);
  }
  const EdgeModel model = synthetic_model(layers);
  try {
    validate_edge_input(model, cluster);
  } catch (const UsageError&) {
    fuzz::require(false, "the importer returned types that fail validate_edge_input()");
  }
  if (cluster.types.size() <= kMaxScheduledTypes) fuzz::schedule_and_check(model, cluster);
  return 0;
}
