// The one search: for a fixed pipeline shape (replicas, micro-batch size and count,
// schedule) and a cap on the slot, the plan with the least fill_drain + exposed all-reduce.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "cost/cost_model.h"
#include "cost/pipeline_spec.h"

namespace pe::detail {

/// What one dynamic-programming pass optimizes over.
struct DpQuery {
  int replicas = 1;
  int replica_width = 1;  ///< Devices of one pipeline copy (W).
  int micro_batch = 1;    ///< Samples per micro-batch (b).
  int micro_batches = 1;  ///< M.
  Schedule schedule = Schedule::OneFOneB;
  /// 1F1B: only plans whose slot (evaluate.h) is at most slot_cap.
  Seconds slot_cap = std::numeric_limits<Seconds>::infinity();
  /// GPipe: only plans with max(f, c) <= forward_cap and max(g, c) <= backward_cap.
  Seconds forward_cap = std::numeric_limits<Seconds>::infinity();
  Seconds backward_cap = std::numeric_limits<Seconds>::infinity();
  /// Partial plans that cannot end below this iteration time are dropped (an upper bound
  /// from plans already found; infinity disables it).
  Seconds bound = std::numeric_limits<Seconds>::infinity();
  /// Work allowed to this pass, in steps (one step: a cell allocated, a stage tried, or a
  /// suffix entry extended). A pass that needs more stops without a plan.
  std::uint64_t step_limit = std::numeric_limits<std::uint64_t>::max();
  /// Most devices per stage (SearchOptions::max_stage_width); 0 = no limit.
  int max_stage_width = 0;
};

/// One pass's answer: the plan (empty when nothing fits the caps and the bound, or when
/// the pass stopped), the steps it took, and whether it stopped at step_limit.
struct DpResult {
  std::optional<PipelineSpec> spec;
  std::uint64_t steps = 0;
  bool stopped = false;
};

/// Exact over: stage cuts on the states (nested cut pairs, CostModel::stage), a width per stage,
/// stages packed in order from device 0 of each copy (devices at the end of a copy may stay idle),
/// memory per device. Minimizes fill_drain + exposed all-reduce (see evaluate.h) among plans within
/// the caps. Ties keep the first plan in enumeration order (fewer devices on the first stage, then
/// shorter first stage). Empty when nothing fits.
DpResult best_pipeline(const CostModel& cost, const DpQuery& query);

}  // namespace pe::detail
