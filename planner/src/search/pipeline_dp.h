// The one search: for a fixed pipeline shape (replicas, micro-batch size and count,
// schedule) and a cap on the slot, the plan with the least fill_drain + exposed all-reduce.
#pragma once

#include <limits>
#include <optional>

#include "cost/cost_model.h"
#include "search/pipeline_spec.h"

namespace pe {

/// What one dynamic-programming pass optimizes over.
struct DpQuery {
  int replicas = 1;
  int replica_width = 1;   ///< Devices of one pipeline copy (W).
  int micro_batch = 1;     ///< Samples per micro-batch (b).
  int micro_batches = 1;   ///< M.
  Schedule schedule = Schedule::OneFOneB;
  /// 1F1B: only plans whose slot (evaluate.h) is at most slot_cap.
  Seconds slot_cap = std::numeric_limits<Seconds>::infinity();
  /// GPipe: only plans with max(f, c) <= forward_cap and max(g, c) <= backward_cap.
  Seconds forward_cap = std::numeric_limits<Seconds>::infinity();
  Seconds backward_cap = std::numeric_limits<Seconds>::infinity();
  /// Partial plans that cannot end below this iteration time are dropped (an upper bound
  /// from plans already found; infinity disables it).
  Seconds bound = std::numeric_limits<Seconds>::infinity();
};

/// Exact over: stage cuts on the states, a width per stage, stages packed in order from
/// device 0 of each copy (devices at the end of a copy may stay idle), memory per device.
/// Minimizes fill_drain + exposed all-reduce (see evaluate.h) among plans within the caps. Ties keep the first plan in enumeration order (fewer devices on the
/// first stage, then shorter first stage). Empty when nothing fits.
std::optional<PipelineSpec> best_pipeline(const CostModel& cost, const DpQuery& query);

}  // namespace pe
