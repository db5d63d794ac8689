// The analytic estimate the search minimizes (evaluate.h) against the event-driven
// simulator (pe/timeline.h) that replays the same plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "cost/evaluate.h"
#include "pe/timeline.h"
#include "random_trials.h"
#include "search/hybrid_search.h"
#include "search/random_instances.h"

namespace pe {
namespace {

Seconds simulated(const Plan& plan) { return simulate(plan.shape()).makespan; }

// S equal stages with no transfers and one device each: both give (M + S - 1) x (f + g).
TEST(EstimateVsSimulation, EqualStagesAgreeExactly) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < random_trials(200); ++trial) {
    const int stages = std::uniform_int_distribution<>(1, 6)(rng);
    const int micro_batches = std::uniform_int_distribution<>(1, 12)(rng);
    const double f = std::uniform_real_distribution<>(0.01, 1)(rng);
    const double g = std::uniform_real_distribution<>(0.01, 2)(rng);
    const std::vector<Layer> layers(stages, Layer{"l", f, g, 0, 0});
    const detail::CostModel cost(make_chain_model("eq", 1, layers),
                                 cluster_from_machine_ends({stages}), {});
    for (Schedule schedule : {Schedule::OneFOneB, Schedule::GPipe}) {
      detail::PipelineSpec spec{1, stages, 1, micro_batches, schedule, {}};
      for (int s = 0; s < stages; ++s)
        spec.stages.push_back({std::size_t(s), std::size_t(s), s, 1, {}});
      const Plan plan = detail::evaluate(cost, spec, micro_batches).plan;
      EXPECT_NEAR(plan.iteration_time, (micro_batches + stages - 1) * (f + g), 1e-9);
      EXPECT_NEAR(simulated(plan), plan.iteration_time, 1e-9 * plan.iteration_time)
          << stages << " stages, " << micro_batches << " micro-batches, " << to_string(schedule);
    }
  }
}

// One stage (data parallelism with gradient accumulation and per-layer all-reduce overlap)
// on random models and clusters: the estimate is the simulation.
TEST(EstimateVsSimulation, OneStagePlansAgreeExactly) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < random_trials(200); ++trial) {
    const testing::Instance in = testing::random_instance(rng, 8, 8);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    const int width = std::min(in.cluster.device_count(), in.global_batch);
    for (int micro_batch = 1; micro_batch <= in.global_batch; ++micro_batch) {
      if (in.global_batch % micro_batch) continue;
      detail::PipelineSpec spec{1,
                                in.cluster.device_count(),
                                micro_batch,
                                in.global_batch / micro_batch,
                                Schedule::OneFOneB,
                                {{0, in.model.size() - 1, 0, std::min(width, micro_batch), {}}}};
      const Plan plan = detail::evaluate(cost, spec, in.global_batch).plan;
      EXPECT_NEAR(simulated(plan), plan.iteration_time, 1e-9 * plan.iteration_time);
    }
  }
}

// Any plan the search picks: the simulation can neither beat the time one micro-batch needs
// through every stage and cut and back, nor the busiest stage's compute.
TEST(EstimateVsSimulation, SimulationRespectsTheEstimatesLowerBounds) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < random_trials(150); ++trial) {
    const testing::Instance in = testing::random_instance(rng, 8, 8);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    for (const Plan& plan : detail::search_plans(cost, in.global_batch, {}).plans) {
      Seconds busiest = 0;
      for (const PlanStage& st : plan.stages)
        busiest = std::max(busiest, plan.micro_batches * (st.times.forward + st.times.backward));
      const Seconds sim = simulated(plan);
      EXPECT_GE(sim, plan.fill_drain * (1 - 1e-9)) << stages_string(plan);
      EXPECT_GE(sim, busiest * (1 - 1e-9)) << stages_string(plan);
    }
  }
}

}  // namespace
}  // namespace pe
