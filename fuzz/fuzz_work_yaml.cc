// Fuzzes the work-list YAML importer. Every input must give a work list or an InputError;
// small lists are then placed into the bubbles of a fixed 3-stage, 4-micro-batch 1F1B
// timeline, which must end in a result or a documented error.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "pe/error.h"
#include "pe/fill.h"
#include "pe/importers/work_yaml.h"
#include "pe/timeline.h"

namespace {

constexpr int kStages = 3, kMicroBatches = 4;
constexpr long kMaxPieces = 512;

const pe::Timeline& fixed_timeline() {
  static const pe::Timeline timeline =
      pe::simulate({{{1e-3, 2e-3, 1e-4, 5e-4}, {2e-3, 3e-3, 2e-4, 5e-4}, {1e-3, 1e-3, 0, 1e-3}},
                    kMicroBatches,
                    pe::Schedule::OneFOneB});
  return timeline;
}

long piece_count(const pe::WorkList& work) {
  long pieces = 0;
  for (const pe::WorkItem& item : work.items) {
    const long stages = item.stages.empty() ? kStages : static_cast<long>(item.stages.size());
    const bool per_micro_batch =
        item.after == pe::WorkAfter::Forward || item.after == pe::WorkAfter::Backward;
    pieces += stages * (per_micro_batch ? kMicroBatches : item.chunks);
  }
  return pieces;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pe;
  WorkList work;
  try {
    work = parse_work_yaml(std::string(reinterpret_cast<const char*>(data), size), "fuzz/work.yml");
  } catch (const InputError&) {
    return 0;
  }
  for (const WorkItem& item : work.items)
    fuzz::require(item.duration > 0 && item.chunks >= 1, "an item without length or pieces");
  if (piece_count(work) > kMaxPieces) return 0;
  try {
    const FillResult result = fill_bubbles(fixed_timeline(), work);
    fuzz::require(result.items.size() == work.items.size(), "an item has no outcome");
    fuzz::require(result.stages.size() == static_cast<std::size_t>(kStages), "a stage is missing");
  } catch (const InputError&) {
  }
  return 0;
}
