// Random pipelines for the property tests of the simulator's bounds and timings.
#pragma once

#include <random>

#include "pe/schedule.h"

namespace pe::testing {

/// A random pipeline of 1 to 9 stages and 1 to `max_micro_batches` micro-batches, GPipe a
/// third of the time: times drawn from a few scales (zero included), so that stages, links
/// and all-reduces each get to be the bottleneck.
inline PipelineShape random_pipeline(std::mt19937& rng, int max_micro_batches) {
  auto pick = [&] {
    static const double scales[] = {0, 0.01, 0.1, 1, 10};
    const double scale = scales[std::uniform_int_distribution<>(0, 4)(rng)];
    return scale * std::uniform_real_distribution<>(0.5, 1.5)(rng);
  };
  PipelineShape shape;
  shape.micro_batches = std::uniform_int_distribution<>(1, max_micro_batches)(rng);
  shape.schedule = rng() % 3 == 0 ? Schedule::GPipe : Schedule::OneFOneB;
  const int stages = std::uniform_int_distribution<>(1, 9)(rng);
  for (int s = 0; s < stages; ++s)
    shape.stages.push_back({pick(), pick(), s + 1 < stages ? pick() : 0, pick()});
  return shape;
}

}  // namespace pe::testing
