// The search over stage variants (tensor-parallel degree, recomputation, under each ZeRO
// stage) against exhaustive enumeration of the same space on small instances.
#include <gtest/gtest.h>

#include <random>

#include "cost/evaluate.h"
#include "pe/error.h"
#include "pe/planner.h"
#include "pe/transformer.h"
#include "random_trials.h"
#include "search/exhaustive.h"
#include "search/random_instances.h"

namespace pe {
namespace {

// A random chain (random_instance, activations up to 50 times heavier) whose layers can
// split 2, 4 or 8 ways and recompute (keeping 2-30% of their activations), with random
// tensor-parallel traffic, efficiency and ZeRO stage, and memory tight enough that splitting or
// recomputing is often what fits.
testing::Instance splittable_instance(std::mt19937& rng, int max_states, int devices) {
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<>(lo, hi)(rng);
  };
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng); };
  testing::Instance in = testing::random_instance(rng, max_states, devices);
  ModelProfile& m = in.model;
  double recomputed = 0, split = 0, before = 0;
  const double heavier = uniform(1, 50);  // activations that bind memory more often
  for (CutState& s : m.states) {
    s.activation *= heavier;
    recomputed += (s.activation - before) * uniform(0.02, 0.3);
    split += uniform(1e6, 1e8);
    before = s.activation;
    s.recomputed_activation = recomputed;
    s.tensor_parallel = split;
  }
  m.tensor_parallel_unit = 1 << pick(1, 3);
  m.recomputable = true;
  in.settings.optimizer_scaling = pick(0, 1) ? 2 : 8;
  in.settings.tensor_parallel_efficiency = uniform(0.6, 1);
  in.settings.zero_stage = pick(0, 3);
  in.cluster.device_memory *= uniform(0.1, 1);
  return in;
}

TEST(StageVariantSearch, MatchesExhaustiveEnumerationOnSmallInstances) {
  std::mt19937 rng(20261126);
  int feasible = 0, split = 0, recomputed = 0, exact = 0;
  for (int trial = 0; trial < random_trials(160); ++trial) {
    const int devices = trial % 2 ? 4 : 8;
    testing::Instance in = splittable_instance(rng, trial % 3 ? 4 : 5, devices);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    const testing::OracleCheck check = testing::search_and_oracle(cost, in.global_batch, trial);
    if (!testing::expect_search_meets_oracle(check, trial)) continue;
    ++feasible;
    exact += check.search.exact;
    for (const PlanStage& s : check.found()->stages) {
      split += s.tensor_parallel > 1;
      recomputed += s.recompute;
      EXPECT_EQ(s.width % s.tensor_parallel, 0) << "trial " << trial;
    }
  }
  // The instances must reach plans that split and plans that recompute.
  EXPECT_GT(feasible, random_trials(60));
  EXPECT_GT(split, random_trials(10));
  EXPECT_GE(recomputed, random_trials(5));
  EXPECT_GT(exact, feasible / 2);
}

// A small transformer built from its configuration, on memory that makes it split or
// recompute: the search meets the exhaustive optimum at each batch size.
TEST(StageVariantSearch, SmallTransformerMatchesExhaustiveEnumeration) {
  TransformerConfig c;
  c.name = "tiny";
  c.layers = 3;
  c.hidden = 256;
  c.heads = 8;
  c.kv_heads = 4;
  c.ffn = 1024;
  c.sequence = 2048;
  c.vocabulary = 1000;
  GpuSpec gpu{"toy", 1e12, 0, 1e11, "a test"};
  const ModelProfile model = transformer_model(c, gpu, 0.5);
  Cluster cluster = cluster_from_machine_ends({4, 8});
  cluster.network = {50e9, 5e9, 5e9};
  TrainingSettings settings;
  settings.optimizer_scaling = transformer_optimizer_scaling(c);
  int split = 0, recomputed = 0, trial = 0;
  for (double memory : {10e6, 16e6, 30e6})
    for (int gbs : {4, 8, 16}) {
      cluster.device_memory = memory;
      const detail::CostModel cost(model, cluster, settings);
      const testing::OracleCheck check = testing::search_and_oracle(cost, gbs, ++trial);
      if (!testing::expect_search_meets_oracle(check, trial)) continue;
      for (const PlanStage& s : check.found()->stages) {
        split += s.tensor_parallel > 1;
        recomputed += s.recompute;
      }
    }
  EXPECT_GT(split, 0);
  EXPECT_GT(recomputed, 0);
}

// Without the new fields (a graph.txt profile) the space has one variant per stage: the
// same instance plans the same with or without recomputation and splitting allowed.
TEST(StageVariantSearch, SettingsThatForbidVariantsGiveThePlainSpace) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < random_trials(40); ++trial) {
    testing::Instance in = splittable_instance(rng, 4, 4);
    in.settings.zero_stage = 0;
    TrainingSettings plain = in.settings;
    plain.max_tensor_parallel = 1;
    plain.recomputation = false;
    ModelProfile unsplittable = in.model;
    unsplittable.tensor_parallel_unit = 0;
    unsplittable.recomputable = false;
    const testing::SpaceOptimum a = testing::exhaustive_best(
        detail::CostModel(in.model, in.cluster, plain), in.global_batch, {Schedule::OneFOneB});
    const testing::SpaceOptimum b =
        testing::exhaustive_best(detail::CostModel(unsplittable, in.cluster, in.settings),
                                 in.global_batch, {Schedule::OneFOneB});
    EXPECT_EQ(a.time, b.time) << "trial " << trial;
  }
}

// Machines of two GPU types, faster or slower than the model's and with their own memory: the
// search meets the exhaustive optimum, stages run at their slowest GPU's speed and fit their
// smallest GPU's memory.
TEST(GpuTypes, MixedMachinesMatchExhaustiveEnumeration) {
  std::mt19937 rng(20261127);
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<>(lo, hi)(rng);
  };
  int feasible = 0, exact = 0;
  for (int trial = 0; trial < random_trials(120); ++trial) {
    testing::Instance in = splittable_instance(rng, 4, trial % 2 ? 4 : 8);
    in.model.gpu = {"model-gpu", 100e12, in.cluster.device_memory, 0, "test"};
    const Bytes memory = in.cluster.device_memory;
    const GpuSpec slow{"slow", uniform(30e12, 100e12), memory * uniform(0.5, 1.5), 0, "test"};
    const GpuSpec fast{"fast", uniform(100e12, 300e12), memory * uniform(0.5, 1.5), 0, "test"};
    for (int m = 0; m < in.cluster.machine_count(); ++m)
      in.cluster.machine_gpu.push_back(m % 2 ? slow : fast);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    const testing::OracleCheck check = testing::search_and_oracle(cost, in.global_batch, trial);
    if (!testing::expect_search_meets_oracle(check, trial)) continue;
    ++feasible;
    exact += check.search.exact;
    for (const PlanStage& s : check.found()->stages)
      EXPECT_LE(s.peak_memory(), s.device_memory) << "trial " << trial;
  }
  EXPECT_GT(feasible, random_trials(50));
  EXPECT_GT(exact, feasible / 2);
}

TEST(GpuTypes, AStageRunsAtItsSlowestGpu) {
  ModelProfile m = make_chain_model("two", 1, {{"a", 1, 2, 0, 0}, {"b", 1, 2, 0, 0}});
  m.gpu = {"base", 100e12, 1e9, 0, "test"};
  Cluster c = cluster_from_machine_ends({1, 2});
  c.machine_gpu = {{"fast", 400e12, 8e9, 0, "test"}, {"slow", 50e12, 2e9, 0, "test"}};
  const detail::CostModel cost(m, c, {});
  EXPECT_DOUBLE_EQ(cost.fastest(), 4);
  EXPECT_DOUBLE_EQ(cost.slowest(), 0.5);
  const detail::Layout layout(c, 1, 2);
  const detail::CostModel::Place first = cost.place(layout, 0, 1), both = cost.place(layout, 0, 2);
  EXPECT_DOUBLE_EQ(first.speed, 4);
  EXPECT_DOUBLE_EQ(first.memory, 8e9);
  EXPECT_EQ(first.gpu, "fast");
  EXPECT_DOUBLE_EQ(both.speed, 0.5);
  EXPECT_DOUBLE_EQ(both.memory, 2e9);
  EXPECT_EQ(both.gpu, "slow");
  // Two stages: 3 s of work on the fast GPU takes 0.75 s, on the slow one 6 s.
  detail::PipelineSpec spec{1, 2, 1, 1, Schedule::OneFOneB, {{0, 0, 0, 1, {}}, {1, 1, 1, 1, {}}}};
  const Plan plan = detail::evaluate(cost, spec, 1).plan;
  EXPECT_DOUBLE_EQ(plan.stages[0].times.forward + plan.stages[0].times.backward, 0.75);
  EXPECT_DOUBLE_EQ(plan.stages[1].times.forward + plan.stages[1].times.backward, 6);
  EXPECT_EQ(plan.stages[1].gpu, "slow");
}

TEST(GpuTypes, TypedMachinesNeedTheModelsGpu) {
  ModelProfile m = make_chain_model("two", 1, {{"a", 1, 2, 0, 0}});
  Cluster c = cluster_from_machine_ends({1, 2});
  c.machine_gpu = {{"fast", 400e12, 8e9, 0, "test"}, {}};
  EXPECT_THROW(Planner(m, c, {}), InputError);
  m.gpu = find_gpu("V100-16GB", "test");
  EXPECT_NO_THROW(Planner(m, c, {}));
  c.machine_gpu.pop_back();
  EXPECT_THROW(Planner(m, c, {}), InputError);  // one type for two machines
}

}  // namespace
}  // namespace pe
