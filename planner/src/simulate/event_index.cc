#include "simulate/event_index.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "pe/error.h"

namespace pe::detail {
namespace {

constexpr int kKinds = static_cast<int>(EventKind::Filler) + 1;

std::string describe(const Event& event) {
  std::ostringstream out;
  out << to_string(event.kind) << " event of stage " << event.stage << ", micro-batch "
      << event.micro_batch << " [" << event.start << ", " << event.end << "]";
  return out.str();
}

}  // namespace

void check_event(const Event& event, int stage_count, std::size_t event_count) {
  if (event.stage < 0 || event.stage >= stage_count)
    throw InputError(
        "timeline", describe(event) + ": stage is not in [0, " + std::to_string(stage_count) + ")");
  if (event.micro_batch < -1 || static_cast<std::size_t>(event.micro_batch + 1) > event_count)
    throw InputError("timeline", describe(event) + ": micro-batch id out of range");
  if (!std::isfinite(event.start) || !std::isfinite(event.end) || event.end < event.start)
    throw InputError("timeline", describe(event) + ": expected finite times, start <= end");
}

EventIndex::EventIndex(const Timeline& timeline) : timeline_(timeline) {
  if (timeline.stage_count < 0)
    throw InputError("timeline", "negative stage count " + std::to_string(timeline.stage_count));
  for (const Event& event : timeline.events) {
    check_event(event, timeline.stage_count, timeline.events.size());
    micro_batches_ = std::max(micro_batches_, event.micro_batch + 1);
  }
  if (static_cast<long long>(timeline.stage_count) * micro_batches_ > (1LL << 27))
    throw InputError("timeline", "stage_count x micro-batches exceeds 2^27; too large to index");
  slots_.assign(static_cast<std::size_t>(kKinds) * timeline.stage_count * micro_batches_, -1);
  for (std::size_t i = timeline.events.size(); i-- > 0;) {
    const Event& event = timeline.events[i];
    if (event.micro_batch < 0) continue;
    int& slot = slots_[(static_cast<std::size_t>(event.kind) * timeline.stage_count + event.stage) *
                           micro_batches_ +
                       static_cast<std::size_t>(event.micro_batch)];
    // Walking backwards, an earlier event of the same chunk replaces a later one; of
    // another chunk (interleaved), the one that ends last stays.
    const bool other_chunk = slot >= 0 && timeline.events[slot].chunk != event.chunk;
    if (!other_chunk || event.end > timeline.events[slot].end) slot = static_cast<int>(i);
  }
}

const Event* EventIndex::find(int stage, EventKind kind, int micro_batch) const {
  if (stage < 0 || stage >= timeline_.stage_count || micro_batch < 0 ||
      micro_batch >= micro_batches_)
    return nullptr;
  const std::size_t slot =
      (static_cast<std::size_t>(kind) * timeline_.stage_count + stage) * micro_batches_ +
      micro_batch;
  return slots_[slot] < 0 ? nullptr : &timeline_.events[slots_[slot]];
}

}  // namespace pe::detail
