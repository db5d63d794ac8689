#include "search/final_plan.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "cost/pipeline_spec.h"
#include "search/candidate_pool.h"
#include "search/polish.h"

namespace pe::detail {
namespace {

// The budget of simulated (stage, micro-batch) pairs of each local search, each plan tried
// counting 8,192 more (polish.h). On NASNet-A large at GBS 32, 2^22 pairs stopped short of the
// plan 2^24 reach (speedup 9.17 against 9.20 on 2 x 8 GPUs, 7.19 against 7.23 on 16
// single-GPU machines; 2^26 gave the same), at no cost to the point's time that could be
// measured beside the search's (29 s on one thread).
constexpr std::int64_t kFinalPairs = std::int64_t{1} << 24;

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

// The plan of `found`, simulated.
Plan simulated(const CostedPlan& found) {
  Plan plan = found.plan;
  plan.simulated_time = plan.iteration_time;
  plan.speedup = plan.one_device_time / plan.iteration_time;
  return plan;
}

}  // namespace

FinalPlan finish_plan(const CostModel& cost, const PartCostModel& part, const Plan& plan,
                      int global_batch, Seconds fastest, bool exact, int width_limit) {
  FinalPlan answer{plan, std::min(fastest, plan.iteration_time)};
  if (plan.chunks > 1 || plan.stages.empty() || plan.stages.front().devices.empty()) return answer;
  const PlanStage& first = plan.stages.front();
  const int replicas = plan.pipeline_replicas;
  // Copy k's devices of a stage follow copy k - 1's (PlanStage::devices).
  const int copy =
      replicas > 1 ? first.devices[static_cast<std::size_t>(first.width)] - first.devices.front()
                   : cost.cluster().device_count();
  const std::optional<Cluster> on = cluster_of(cost.cluster(), replicas, copy);
  const bool whole = on && on->device_count() == cost.cluster().device_count();
  if (!on || (!whole && !part)) return answer;
  const std::optional<CostModel> own = whole ? std::nullopt : std::optional<CostModel>(part(*on));
  const CostModel& model = own ? *own : cost;
  PipelineSpec spec = spec_of(plan, copy);
  std::int64_t pairs = kFinalPairs;
  if (!exact)
    if (const std::optional<CostedPlan> faster =
            polish(model, spec, global_batch, width_limit, pairs, true)) {
      answer.fastest = std::min(answer.fastest, faster->plan.iteration_time);
      const bool keep = plan.iteration_time <= answer.fastest * (1 + kSimpler) &&
                        !(simplicity(faster->plan) < simplicity(plan));
      if (!keep) {
        answer.plan = simulated(*faster);
        spec = faster->spec;
      }
    }
  pairs = kFinalPairs;
  if (const std::optional<CostedPlan> simpler =
          simplify(model, spec, global_batch, answer.fastest, kSimpler, width_limit, pairs))
    answer.plan = simulated(*simpler);
  return answer;
}

}  // namespace pe::detail
