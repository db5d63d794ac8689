// Brute-force enumeration of the plan space of the hybrid search, for small instances.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "cost/cost_model.h"
#include "cost/evaluate.h"
#include "cost/layout.h"
#include "cost/path_bound.h"
#include "cost/stage_samples.h"
#include "cost/stage_variants.h"
#include "pe/plan.h"
#include "pe/timeline.h"
#include "search/hybrid_search.h"
#include "search/seeds.h"

namespace pe::testing {

/// Calls `visit` with every feasible plan of every shape: all chains of nested cuts (every
/// cut set of a chain model), all widths
/// (each stage at least one device, at most max_stage_width: the micro-batch unless it is
/// the only stage; in total at most a copy's devices), stages packed from device 0 of each
/// copy, each stage in every variant stage_variants allows (tensor-parallel degrees,
/// recomputation). Each plan's cost is evaluate()'s, so the stage samples are
/// stage_samples'.
/// `max_width` and `max_copies` (0 = no limit) are SearchOptions' max_stage_width and
/// max_pipeline_copies: plans with a wider stage or more copies are left out.
inline void for_each_plan(const detail::CostModel& cost, int global_batch,
                          const std::vector<Schedule>& schedules,
                          const std::function<void(const Plan&)>& visit, int max_width = 0,
                          int max_copies = 0) {
  const int devices = cost.cluster().device_count();
  const std::size_t n = cost.states();
  for (const detail::PipelineShapeChoice& shape :
       detail::pipeline_shapes(global_batch, devices, cost.settings().min_micro_batch, schedules)) {
    if (max_copies > 0 && shape.replicas > max_copies) continue;
    const int width = devices / shape.replicas;
    detail::PipelineSpec spec{shape.replicas,      width,          shape.micro_batch,
                              shape.micro_batches, shape.schedule, {}};
    const detail::Layout layout(cost.cluster(), shape.replicas, width);
    std::function<void(std::size_t, int)> place = [&](std::size_t first, int offset) {
      if (first == n) {
        detail::Evaluation ev = detail::evaluate(cost, spec, global_batch);
        if (ev.fits) visit(ev.plan);
        return;
      }
      for (std::size_t last = first; last < n; ++last) {
        if (!cost.stage(first, last)) continue;  // state first - 1's cut is not inside last's
        const bool one_stage = first == 0 && last + 1 == n;
        int widest = width - offset;
        if (max_width > 0) widest = std::min(widest, max_width);
        for (int r = 1; r <= widest; ++r)
          for (const detail::StageVariant& v :
               detail::stage_variants(cost, layout, offset, r, one_stage ? r : shape.micro_batch)) {
            spec.stages.push_back({first, last, offset, r, v});
            place(last + 1, offset + r);
            spec.stages.pop_back();
          }
      }
    };
    place(0, 0);
  }
  // Accumulation plans, whose micro-batch count need not divide the batch.
  if (std::count(schedules.begin(), schedules.end(), Schedule::OneFOneB) == 0) return;
  for (int r = 1; r <= devices; ++r)
    if (devices % r == 0 && global_batch % r == 0 && (max_copies == 0 || r <= max_copies) &&
        (max_width == 0 || devices / r <= max_width))
      if (std::optional<detail::PipelineSpec> spec =
              detail::accumulation_spec(cost, global_batch, r)) {
        detail::Evaluation ev = detail::evaluate(cost, *spec, global_batch);
        if (ev.fits) visit(ev.plan);
      }
}

/// A shape: copies, micro-batch size, micro-batches, schedule.
using ShapeKey = std::tuple<int, int, int, Schedule>;

/// The least of value(plan) over the plans of each shape (even micro-batches), both
/// schedules, enumerated exhaustively.
template <typename Value>
std::map<ShapeKey, Seconds> least_by_shape(const detail::CostModel& cost, int global_batch,
                                           Value value) {
  std::map<ShapeKey, Seconds> least;
  for_each_plan(cost, global_batch, {Schedule::OneFOneB, Schedule::GPipe}, [&](const Plan& p) {
    if (p.uneven_micro_batches()) return;
    const ShapeKey key{p.pipeline_replicas, p.micro_batch_size, p.micro_batches, p.schedule};
    const Seconds v = value(p);
    const auto it = least.find(key);
    if (it == least.end() || v < it->second) least[key] = v;
  });
  return least;
}

/// The least path bound of the plans of each shape.
inline std::map<ShapeKey, Seconds> least_bound_by_shape(const detail::CostModel& cost,
                                                        int global_batch) {
  return least_by_shape(cost, global_batch, [](const Plan& p) { return p.lower_bound; });
}

/// The fastest simulated plan of each shape.
inline std::map<ShapeKey, Seconds> fastest_by_shape(const detail::CostModel& cost,
                                                    int global_batch) {
  return least_by_shape(cost, global_batch,
                        [](const Plan& p) { return simulate(p.shape()).makespan; });
}

/// The same on the cluster's first machines (all but its last; none when it has one).
inline std::map<ShapeKey, Seconds> least_bound_on_first_machines(const ModelProfile& model,
                                                                 Cluster cluster,
                                                                 const TrainingSettings& settings,
                                                                 int global_batch) {
  cluster.machine_gpus.pop_back();
  if (!cluster.machine_gpu.empty()) cluster.machine_gpu.pop_back();
  if (cluster.machine_gpus.empty()) return {};
  return least_bound_by_shape(detail::CostModel(model, cluster, settings), global_batch);
}

/// The least simulated iteration time over the whole space and the least of the path bound
/// without the window cycles, which the search's first exact passes minimize (both empty
/// when nothing fits), within the search limits.
struct SpaceOptimum {
  std::optional<Seconds> time;
  std::optional<Seconds> plain_bound;
};
inline SpaceOptimum exhaustive_best(const detail::CostModel& cost, int global_batch,
                                    const std::vector<Schedule>& schedules, int max_width = 0,
                                    int max_copies = 0) {
  SpaceOptimum best;
  for_each_plan(
      cost, global_batch, schedules,
      [&](const Plan& p) {
        const Seconds time = simulate(p.shape()).makespan;
        if (!best.time || time < *best.time) best.time = time;
        const Seconds plain = p.schedule == Schedule::Interleaved
                                  ? p.lower_bound
                                  : detail::path_lower_bound(p.shape(), {.windows = false});
        if (!best.plain_bound || plain < *best.plain_bound) best.plain_bound = plain;
      },
      max_width, max_copies);
  return best;
}

/// The search's answer (one plan asked for, unlimited effort) and the exhaustive optimum of
/// one randomized trial: GPipe alone every fourth trial, both schedules otherwise.
struct OracleCheck {
  detail::SearchResult search;
  SpaceOptimum oracle;
  const Plan* found() const { return search.plans.empty() ? nullptr : &search.plans.front(); }
};
inline OracleCheck search_and_oracle(const detail::CostModel& cost, int global_batch, int trial) {
  const std::vector<Schedule> schedules =
      trial % 4 == 0 ? std::vector<Schedule>{Schedule::GPipe}
                     : std::vector<Schedule>{Schedule::OneFOneB, Schedule::GPipe};
  return {detail::search_plans(cost, global_batch, {schedules, 1, 0}),
          exhaustive_best(cost, global_batch, schedules)};
}

/// What the search promises against the exhaustive optimum (gtest assertions):
/// - its plan is feasible exactly when some plan is;
/// - its lower bound is at least the least bound of the space without window cycles (which
///   the first exact passes minimize; closing passes may raise it), or the time of the
///   fastest plan it simulated when that is lower (the passes drop plans whose bound cannot
///   beat it), so the dynamic program is exact for the bound it minimizes (that plan lies
///   between the optimum and the reported plan, which may be a simpler one within the
///   margin); it may be above the least bound with the window cycles where an enumerating
///   pass (DpQuery::enumerate) simulated every plan of a shape below the fastest plan;
/// - the lower bound is never above the true optimum (the certificate is valid);
/// - when it says exact, its plan is within the simplicity margin of the true optimum.
/// Returns whether a plan was found.
inline bool expect_search_meets_oracle(const OracleCheck& check, int trial) {
  const Plan* found = check.found();
  EXPECT_EQ(check.oracle.time.has_value(), found != nullptr) << "trial " << trial;
  if (!found || !check.oracle.time) return false;
  const Seconds optimum = *check.oracle.time;
  EXPECT_LE(check.search.lower_bound, found->iteration_time * (1 + 1e-9)) << "trial " << trial;
  EXPECT_GE(check.search.lower_bound, std::min(*check.oracle.plain_bound, optimum) * (1 - 1e-9))
      << "trial " << trial;
  EXPECT_LE(check.search.lower_bound, optimum * (1 + 1e-9)) << "trial " << trial;
  EXPECT_GE(found->iteration_time, optimum * (1 - 1e-9)) << "trial " << trial;
  if (check.search.exact) {
    EXPECT_LE(found->iteration_time, optimum * (1 + detail::kSimpler + 1e-9)) << "trial " << trial;
  }
  return true;
}

}  // namespace pe::testing
