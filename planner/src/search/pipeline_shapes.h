// The pipeline shapes the search runs over (copies, micro-batch size and count, schedule),
// and how a plan relates to one.
#pragma once

#include <vector>

#include "pe/plan.h"
#include "pe/schedule.h"

namespace pe::detail {

/// One pipeline shape to search: copies, micro-batch size and count, schedule.
struct PipelineShapeChoice {
  int replicas = 1;
  int micro_batch = 1;
  int micro_batches = 1;
  Schedule schedule = Schedule::OneFOneB;
};

/// Every shape for `global_batch` on `devices` devices: replicas dividing the device count
/// and the batch, micro-batch sizes dividing a copy's share and at least the floor (or the
/// whole share when it is below the floor), each schedule; GPipe is left out for one
/// micro-batch when 1F1B is searched (the same plan); with max_copies > 0 only replicas up to
/// it (SearchOptions::max_pipeline_copies). Fixed order.
std::vector<PipelineShapeChoice> pipeline_shapes(int global_batch, int devices, int min_micro_batch,
                                                 const std::vector<Schedule>& schedules,
                                                 int max_copies = 0);

/// Whether `schedules` holds schedule s (the search searches it).
bool searches(const std::vector<Schedule>& schedules, Schedule s);

/// The divisors of n >= 1, ascending.
std::vector<int> divisors(int n);

/// Whether a plan is one of a shape's: its copies, micro-batch size and schedule (the
/// micro-batch count follows from them, except for accumulation plans).
bool matches(const Plan& plan, const PipelineShapeChoice& shape);
/// The shape of a plan.
PipelineShapeChoice shape_of(const Plan& plan);
/// Whether two shapes have the same copies, micro-batches and schedule.
bool same_shape(const PipelineShapeChoice& a, const PipelineShapeChoice& b);

}  // namespace pe::detail
