// Lookup of a timeline's events by (stage, kind, micro-batch) in constant time.
#pragma once

#include <vector>

#include "pe/timeline.h"

namespace pe::detail {

/// Index over the events of a timeline that are tied to one micro-batch. The timeline
/// must outlive the index. Construction checks the events and throws InputError
/// (where "timeline") for out-of-range stages or micro-batch ids and bad times.
class EventIndex {
 public:
  explicit EventIndex(const Timeline& timeline);
  /// The first event of that kind, stage and micro-batch, or nullptr; on an interleaved
  /// timeline, of the stage's chunks the one that ends last (the stage is then done with
  /// the micro-batch).
  const Event* find(int stage, EventKind kind, int micro_batch) const;
  /// One more than the largest micro-batch id in the timeline.
  int micro_batches() const { return micro_batches_; }

 private:
  const Timeline& timeline_;
  int micro_batches_ = 0;
  std::vector<int> slots_;  // [kind][stage][micro-batch] -> event position, or -1.
};

/// Checks one event against a timeline's stage count (InputError on failure).
void check_event(const Event& event, int stage_count, std::size_t event_count);

}  // namespace pe::detail
