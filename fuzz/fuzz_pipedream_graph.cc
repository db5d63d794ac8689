// Fuzzes the PipeDream graph.txt importer. Every input must give a valid model or an
// InputError; small models are then planned on a 2 x 2 cluster and the plan is checked.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "pe/error.h"
#include "pe/importers/pipedream_graph.h"

namespace {

constexpr std::size_t kMaxPlannedStates = 12;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pe;
  ModelProfile model;
  try {
    model = parse_pipedream_graph(std::string(reinterpret_cast<const char*>(data), size),
                                  "fuzz/graph.txt", 32);
  } catch (const InputError&) {
    return 0;
  }
  // One state per operator (a chain, or the prefixes of one order), or every cut: more
  // states, with the order's prefixes as a spine of one state per operator.
  if (model.chain())
    fuzz::require(model.size() == model.operator_count, "chain: states != operators");
  else
    fuzz::require(model.size() > model.operator_count && model.spine.size() == model.operator_count,
                  "every cut: fewer states than operators, or a spine of another length");
  try {
    validate(model, "imported model");
  } catch (const InputError&) {
    fuzz::require(false, "the importer returned a model that fails validate()");
  }
  if (model.size() <= kMaxPlannedStates)
    fuzz::plan_and_check(model, cluster_from_machine_ends({2, 4}), 8);
  return 0;
}
