#include "search/simplest_plan.h"

#include <optional>
#include <utility>

#include "cost/pipeline_spec.h"
#include "search/polish.h"

namespace pe::detail {
namespace {

// simplify()'s budget of simulated (stage, micro-batch) pairs (polish's, kPolishPairs).
constexpr std::int64_t kSimplifyPairs = std::int64_t{1} << 22;

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

}  // namespace

Plan simplest_plan(const CostModel& cost, const PartCostModel& part, const Plan& plan,
                   int global_batch, Seconds fastest, int width_limit) {
  if (plan.chunks > 1 || plan.stages.empty() || plan.stages.front().devices.empty()) return plan;
  const PlanStage& first = plan.stages.front();
  const int replicas = plan.pipeline_replicas;
  // Copy k's devices of a stage follow copy k - 1's (PlanStage::devices).
  const int copy =
      replicas > 1 ? first.devices[static_cast<std::size_t>(first.width)] - first.devices.front()
                   : cost.cluster().device_count();
  const std::optional<Cluster> on = cluster_of(cost.cluster(), replicas, copy);
  if (!on || (on->device_count() != cost.cluster().device_count() && !part)) return plan;
  const std::optional<CostModel> own = on->device_count() == cost.cluster().device_count()
                                           ? std::nullopt
                                           : std::optional<CostModel>(part(*on));
  const CostModel& model = own ? *own : cost;
  std::int64_t pairs = kSimplifyPairs;
  const std::optional<CostedPlan> found = simplify(model, spec_of(plan, copy), global_batch,
                                                   fastest * (1 + kSimpler), width_limit, pairs);
  if (!found) return plan;
  Plan simpler = found->plan;
  simpler.simulated_time = simpler.iteration_time;
  simpler.speedup = simpler.one_device_time / simpler.iteration_time;
  return simpler;
}

}  // namespace pe::detail
