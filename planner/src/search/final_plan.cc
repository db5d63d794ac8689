#include "search/final_plan.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "cost/evaluate.h"
#include "cost/pipeline_spec.h"
#include "search/candidate_pool.h"
#include "search/machine_runs.h"
#include "search/pipeline_shapes.h"
#include "search/polish.h"

namespace pe::detail {
namespace {

// The cluster `plan` was laid out on: its copies are `copy` devices wide, and start copy
// devices apart from device 0, so they fill the first machines of `cluster` that hold
// replicas x copy devices (all of them for one copy: its stages start at device 0 either
// way). Empty when no first machines hold exactly that many.
std::optional<Cluster> cluster_of(const Cluster& cluster, int replicas, int copy) {
  if (replicas == 1 || replicas * copy == cluster.device_count()) return cluster;
  Cluster part = cluster;
  int devices = 0;
  for (std::size_t m = 0; m < cluster.machine_gpus.size(); ++m) {
    devices += cluster.machine_gpus[m];
    if (devices == replicas * copy) {
      part.machine_gpus.resize(m + 1);
      return part;
    }
  }
  return std::nullopt;
}

// The spec of `plan` on a cluster whose copies are `copy` devices wide.
PipelineSpec spec_of(const Plan& plan, int copy) {
  PipelineSpec spec{plan.pipeline_replicas,
                    copy,
                    plan.micro_batch_size,
                    plan.micro_batches,
                    plan.schedule,
                    {},
                    plan.chunks};
  int offset = 0;
  for (const PlanStage& s : plan.stages) {
    spec.stages.push_back(
        {s.first_state, s.last_state, offset, s.width, {s.tensor_parallel, s.recompute}});
    offset += s.width;
  }
  return spec;
}

// Where `plan`, laid out by a search on the cluster of a cost model or on one of its parts,
// sits: its copies' width (copy k's devices of a stage follow copy k - 1's,
// PlanStage::devices; one copy counts every device, from its first round to the one before
// it), the machine its first device starts (the machines before it idle, or after the last:
// machine_runs.h) and the cluster they fill (cluster_of those machines, from that one on and
// round), which is `whole` or a part whose cost model `part` makes, its device 0 the plan's
// first device.
struct Placement {
  int copy = 0;
  int machine = 0;
  Cluster on;
  bool whole = true;
};
// Empty where the local searches cannot rebuild the plan's layout: interleaved plans, a
// first device inside a machine, copies that match no part of the cluster, or a part with
// no `part` to cost it.
std::optional<Placement> placement(const CostModel& cost, const PartCostModel& part,
                                   const Plan& plan) {
  if (plan.chunks > 1 || plan.stages.empty() || plan.stages.front().devices.empty())
    return std::nullopt;
  const Cluster& cluster = cost.cluster();
  const int machine = cluster.machine_of(plan.first_device());
  if (cluster.first_device(machine) != plan.first_device()) return std::nullopt;
  const Cluster from = rotated(cluster, machine);
  const int copy = plan.pipeline_replicas > 1 ? plan.copy_stride() : from.device_count();
  std::optional<Cluster> on = cluster_of(from, plan.pipeline_replicas, copy);
  if (!on) return std::nullopt;
  const bool whole = machine == 0 && on->device_count() == cost.device_count();
  if (!whole && !part) return std::nullopt;
  return Placement{copy, machine, std::move(*on), whole};
}

// A plan laid out on the placement's cluster, on the whole cluster.
Plan placed(Plan plan, const CostModel& cost, const Placement& at) {
  if (at.machine > 0) move_to_machine(plan, cost.cluster(), at.machine);
  return plan;
}

}  // namespace

std::int64_t final_pairs(std::uint64_t effort) {
  constexpr std::int64_t most = std::int64_t{1} << 24;
  return effort == 0 || effort / 4 >= static_cast<std::uint64_t>(most)
             ? most
             : static_cast<std::int64_t>(effort / 4);
}

FinalPlan finish_plan(const CostModel& cost, const PartCostModel& part, const Plan& plan,
                      int global_batch, Seconds fastest, bool exact, int width_limit,
                      std::int64_t budget) {
  FinalPlan answer{plan, std::min(fastest, plan.iteration_time)};
  const std::optional<Placement> at = placement(cost, part, plan);
  if (!at) return answer;
  const std::optional<CostModel> own =
      at->whole ? std::nullopt : std::optional<CostModel>(part(at->on));
  const CostModel& model = own ? *own : cost;
  PipelineSpec spec = spec_of(plan, at->copy);
  std::int64_t pairs = budget;
  if (!exact)
    if (const std::optional<CostedPlan> faster =
            polish(model, spec, global_batch, width_limit, pairs, true)) {
      answer.fastest = std::min(answer.fastest, faster->plan.iteration_time);
      const bool keep = plan.iteration_time <= answer.fastest * (1 + kSimpler) &&
                        !(simplicity(faster->plan) < simplicity(plan));
      if (!keep) {
        answer.plan = placed(faster->plan, cost, *at);
        spec = faster->spec;
      }
    }
  pairs = budget;
  if (const std::optional<CostedPlan> simpler =
          simplify(model, spec, global_batch, answer.fastest, kSimpler, width_limit, pairs))
    answer.plan = placed(simpler->plan, cost, *at);
  return answer;
}

std::optional<Plan> rescaled_plan(const CostModel& cost, const PartCostModel& part,
                                  const Plan& plan, int global_batch,
                                  const SearchOptions& options) {
  const int replicas = plan.pipeline_replicas, micro_batch = plan.micro_batch_size;
  if (plan.stages.size() < 2 || global_batch % (replicas * micro_batch) != 0) return std::nullopt;
  const std::optional<Placement> at = placement(cost, part, plan);
  if (!at) return std::nullopt;
  // A shape the search takes at `global_batch` on those devices: its bound covers the plan.
  const PipelineShapeChoice shape{replicas, micro_batch, global_batch / (replicas * micro_batch),
                                  plan.schedule};
  const std::vector<PipelineShapeChoice> shapes =
      pipeline_shapes(global_batch, at->on.device_count(), cost.settings().min_micro_batch,
                      options.schedules, options.max_pipeline_copies);
  if (std::none_of(shapes.begin(), shapes.end(),
                   [&](const PipelineShapeChoice& s) { return same_shape(s, shape); }))
    return std::nullopt;
  const std::optional<CostModel> own =
      at->whole ? std::nullopt : std::optional<CostModel>(part(at->on));
  PipelineSpec spec = spec_of(plan, at->copy);
  spec.micro_batches = shape.micro_batches;
  if (too_large_to_simulate(spec.stages.size(), spec.micro_batches)) return std::nullopt;
  std::optional<Plan> simulated = simulated_plan(own ? *own : cost, spec, global_batch);
  if (!simulated) return std::nullopt;
  return placed(std::move(*simulated), cost, *at);
}

}  // namespace pe::detail
