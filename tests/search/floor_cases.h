// The floors' property tests' cases: random instances (varied chains here) and, for each
// shape, the least path bound of its plans on the cluster and on its first machines.
#pragma once

#include <functional>
#include <random>

#include "search/exhaustive.h"
#include "search/random_instances.h"

namespace pe::testing {

/// One shape of one trial: its copies' width, the least path bound of its plans, and that of
/// its plans on the cluster's first machines (null where none fits there).
struct FloorCase {
  int trial = 0;
  const detail::CostModel* cost = nullptr;
  detail::PipelineShapeChoice shape;
  int width = 0;
  Seconds bound = 0;
  const Seconds* on_first = nullptr;
};

/// The work floor of copies of `width` devices: M micro-batches of the whole model's work over
/// a copy's devices (shape_floor's first term), which the floors' tests count how often
/// another floor rises above.
inline Seconds copies_work_floor(const detail::CostModel& cost,
                                 const detail::PipelineShapeChoice& shape, int width) {
  return shape.micro_batches * cost.whole_model_time(shape.micro_batch) / (width * cost.fastest());
}

/// For each shape of instance `in` (on `devices` devices; `cost` its cost model) with a plan
/// that fits, visit(case).
inline void visit_floor_cases(int trial, const detail::CostModel& cost, const Instance& in,
                              int devices, const std::function<void(const FloorCase&)>& visit) {
  const auto least_first =
      least_bound_on_first_machines(in.model, in.cluster, in.settings, in.global_batch);
  for (const auto& [key, bound] : least_bound_by_shape(cost, in.global_batch)) {
    const auto& [replicas, micro_batch, micro_batches, schedule] = key;
    const auto first = least_first.find(key);
    visit({trial,
           &cost,
           {replicas, micro_batch, micro_batches, schedule},
           devices / replicas,
           bound,
           first == least_first.end() ? nullptr : &first->second});
  }
}

/// For each of `trials` trials of `rng`, a varied chain (varied_instance: 8 devices on odd
/// trials, 6 on even; up to 7 states every third trial, 5 otherwise), and for each shape with
/// a plan that fits, visit(case).
inline void for_each_floor_case(std::mt19937& rng, int trials,
                                const std::function<void(const FloorCase&)>& visit) {
  for (int trial = 0; trial < trials; ++trial) {
    const int devices = trial % 2 ? 8 : 6;
    const Instance in = varied_instance(rng, trial, trial % 3 ? 5 : 7, devices);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    visit_floor_cases(trial, cost, in, devices, visit);
  }
}

}  // namespace pe::testing
