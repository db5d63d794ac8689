// Test helper: finds a timeline's events by (stage, kind, micro-batch).
#pragma once

#include <map>
#include <tuple>

#include <gtest/gtest.h>

#include "pe/timeline.h"

namespace pe::testing {

/// Index of a simulated timeline. Records duplicates so tests can assert uniqueness.
class TimelineIndex {
 public:
  explicit TimelineIndex(const Timeline& timeline) {
    for (const Event& e : timeline.events) {
      auto key = std::make_tuple(e.stage, e.kind, e.micro_batch);
      if (!events_.emplace(key, &e).second) ++duplicates_;
    }
  }
  /// The event, or nullptr when the timeline has none.
  const Event* find(int stage, EventKind kind, int micro_batch = -1) const {
    auto it = events_.find(std::make_tuple(stage, kind, micro_batch));
    return it == events_.end() ? nullptr : it->second;
  }
  /// The event; fails the current test when it is missing.
  const Event& get(int stage, EventKind kind, int micro_batch = -1) const {
    const Event* e = find(stage, kind, micro_batch);
    if (e == nullptr) {
      ADD_FAILURE() << "no " << to_string(kind) << " event for stage " << stage << " micro-batch "
                    << micro_batch;
      return missing_;
    }
    return *e;
  }
  int duplicates() const { return duplicates_; }

 private:
  std::map<std::tuple<int, EventKind, int>, const Event*> events_;
  int duplicates_ = 0;
  Event missing_;
};

/// A shape of `stages` identical stages.
inline PipelineShape uniform_shape(int stages, int micro_batches, Schedule schedule,
                                   StageTimes times) {
  PipelineShape shape;
  shape.micro_batches = micro_batches;
  shape.schedule = schedule;
  shape.stages.assign(static_cast<std::size_t>(stages), times);
  shape.stages.back().send = 0;
  return shape;
}

}  // namespace pe::testing
