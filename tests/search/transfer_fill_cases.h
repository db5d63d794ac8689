// The transfer fill's property tests' check (search/transfer_fill.h), on chains
// (transfer_fill_test.cc) and on graphs (cut_search_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "search/exhaustive.h"
#include "search/shape_pass.h"
#include "search/transfer_fill.h"

namespace pe::testing {

/// The transfer fill check of `shape` on copies of `width` devices at `time`, without a step
/// limit.
inline detail::FillCheck fill_check_at(const detail::CostModel& cost,
                                       const detail::PipelineShapeChoice& shape, int width,
                                       Seconds time) {
  std::uint64_t steps = 0;
  return detail::transfer_fill_check(cost, shape, width, width, time,
                                     std::numeric_limits<std::uint64_t>::max(), steps);
}

/// For each shape of the cluster of `cost` (`devices` devices) with a plan of two stages or
/// more: the check at the least path bound of those plans (exhaustive) is never Impossible;
/// counts the shapes (`shapes`) and those where it is Impossible halfway between the shape's
/// floor and that bound (`ruled_out`).
inline void expect_fill_never_rules_out_a_pipeline(const detail::CostModel& cost, int global_batch,
                                                   int devices, int trial, int& shapes,
                                                   int& ruled_out) {
  const auto pipelines = least_by_shape(cost, global_batch, [](const Plan& plan) {
    return plan.stages.size() > 1 ? plan.lower_bound : std::numeric_limits<Seconds>::infinity();
  });
  for (const auto& [key, bound] : pipelines) {
    if (bound == std::numeric_limits<Seconds>::infinity()) continue;
    const auto& [replicas, micro_batch, micro_batches, schedule] = key;
    const detail::PipelineShapeChoice shape{replicas, micro_batch, micro_batches, schedule};
    const int width = devices / replicas;
    EXPECT_EQ(fill_check_at(cost, shape, width, bound * (1 + 1e-9)), detail::FillCheck::Possible)
        << "trial " << trial << ", " << replicas << " copies of " << micro_batches << " x "
        << micro_batch;
    ++shapes;
    const Seconds floor = detail::shape_floor(cost, shape, width).own;
    ruled_out += floor < bound && fill_check_at(cost, shape, width, (floor + bound) / 2) ==
                                      detail::FillCheck::Impossible;
  }
}

}  // namespace pe::testing
