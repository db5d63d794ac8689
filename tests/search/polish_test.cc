// Local improvement of seeds (search/polish.h): only ever better, always a valid plan, and
// it finds the better boundary, width or number of stages next to a poor one; and the
// 1F1B twin of a GPipe plan.
#include "search/polish.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>

#include "cost/evaluate.h"
#include "pe/timeline.h"
#include "random_instances.h"
#include "random_trials.h"

namespace pe {
namespace {

using detail::CostedPlan;
using detail::CostModel;
using detail::PipelineSpec;

// A random chain on 8 devices whose memory never binds (memory is not what most of these
// tests are about).
testing::Instance roomy_instance(std::mt19937& rng) {
  testing::Instance in = testing::random_instance(rng, 12, 8);
  in.cluster.device_memory = 1e12;
  return in;
}

// Two equal stages of a random chain, one device each, one micro-batch per device pair.
PipelineSpec halves(const CostModel& cost, int devices, int micro_batch, int micro_batches) {
  const std::size_t n = cost.states();
  const std::size_t mid = n / 2 - 1;
  return {1,
          devices,
          micro_batch,
          micro_batches,
          Schedule::OneFOneB,
          {{0, mid, 0, devices / 2, {}}, {mid + 1, n - 1, devices / 2, devices / 2, {}}}};
}

TEST(Polish, OnlyBetterAndAlwaysAValidPlanOfTheModel) {
  std::mt19937 rng(17);
  int improved = 0, tried = 0;
  for (int trial = 0; trial < random_trials(200); ++trial) {
    const testing::Instance in = roomy_instance(rng);
    const CostModel cost(in.model, in.cluster, in.settings);
    if (cost.states() < 4) continue;
    const int devices = in.cluster.device_count();
    const PipelineSpec start = halves(cost, devices, 4, 4);
    detail::Evaluation first = detail::evaluate(cost, start, 16);
    ASSERT_TRUE(first.fits);
    const Seconds before = simulated_makespan(first.plan.shape());
    std::int64_t pairs = 1 << 20;
    std::optional<CostedPlan> polished = detail::polish(cost, start, 16, 0, pairs);
    ++tried;
    if (!polished) continue;  // no move improved the start
    ++improved;
    EXPECT_LT(polished->plan.iteration_time, before) << "trial " << trial;
    // The plan is its spec's: the same stages, and the time the simulator gives it.
    detail::Evaluation again = detail::evaluate(cost, polished->spec, 16);
    ASSERT_TRUE(again.fits);
    EXPECT_DOUBLE_EQ(simulated_makespan(again.plan.shape()), polished->plan.iteration_time);
    std::size_t next = 0;
    int width = 0;
    for (const detail::StageSpec& s : polished->spec.stages) {
      EXPECT_EQ(s.first, next);
      EXPECT_EQ(s.offset, width);
      next = s.last + 1, width += s.width;
    }
    EXPECT_EQ(next, cost.states());
    EXPECT_LE(width, devices);
    // Deterministic.
    std::int64_t same_pairs = 1 << 20;
    EXPECT_EQ(stages_string(detail::polish(cost, start, 16, 0, same_pairs)->plan),
              stages_string(polished->plan));
  }
  EXPECT_GT(tried, random_trials(100));
  EXPECT_GT(improved, tried / 4);  // halves are rarely the best cut
}

// A chain whose middle cut crosses a huge activation: moving the boundary past it wins.
TEST(Polish, MovesABoundaryOffAHeavyCut) {
  std::vector<Layer> layers;
  for (int i = 0; i < 8; ++i) layers.push_back({"l" + std::to_string(i), 0.01, 0.02, 1e6, 1e6});
  layers[3].activation = 4e9;  // the cut after layer 3 sends 4 GB
  const ModelProfile model = make_chain_model("heavy", 1, layers);
  Cluster cluster = cluster_from_machine_ends({1, 2});
  cluster.device_memory = 1e12;
  const CostModel cost(model, cluster, {});
  const PipelineSpec start = halves(cost, 2, 1, 4);
  ASSERT_EQ(start.stages[0].last, 3u);
  std::int64_t pairs = 1 << 20;
  std::optional<CostedPlan> polished = detail::polish(cost, start, 4, 0, pairs);
  ASSERT_TRUE(polished);
  EXPECT_NE(polished->spec.stages.front().last, 3u);
  EXPECT_LT(polished->plan.iteration_time,
            simulated_makespan(detail::evaluate(cost, start, 4).plan.shape()));
}

// Polishes `start` (micro-batches of 2, so that a stage of 2 devices can split one) on a
// chain of eight layers of 0.03 s a sample, with the given output and weight bytes each, on
// 4 single-GPU machines (every cut and every all-reduce crosses a slow link); checks that
// the plan got faster and returns its number of stages (0 when polishing found nothing).
std::size_t polished_stages(Bytes activation, Bytes parameters, const PipelineSpec& start) {
  std::vector<Layer> layers;
  for (int i = 0; i < 8; ++i)
    layers.push_back({"l" + std::to_string(i), 0.01, 0.02, activation, parameters});
  const ModelProfile model = make_chain_model("heavy", 1, layers);
  Cluster cluster = cluster_from_machine_ends({1, 2, 3, 4});
  cluster.device_memory = 1e12;
  const CostModel cost(model, cluster, {});
  std::int64_t pairs = 1 << 20;
  std::optional<CostedPlan> polished = detail::polish(cost, start, 8, 0, pairs);
  if (!polished) return 0;
  EXPECT_LT(polished->plan.iteration_time,
            simulated_makespan(detail::evaluate(cost, start, 8).plan.shape()));
  return polished->spec.stages.size();
}

// Layers with large weights: two stages of two devices all-reduce their weights across
// machines, four stages of one device do not, and no boundary or device move can give a
// stage of one device to each half.
TEST(Polish, SplitsStagesWhoseAllReduceCostsMoreThanAPipeline) {
  const PipelineSpec halves{1, 4, 2, 4, Schedule::OneFOneB, {{0, 3, 0, 2, {}}, {4, 7, 2, 2, {}}}};
  EXPECT_GT(polished_stages(1e5, 4e8, halves), 2u);
}

// Every cut sends 4 GB and the weights are small: fewer stages win, which only a merge can
// give.
TEST(Polish, MergesStagesWhenEveryCutIsExpensive) {
  const PipelineSpec quarters{
      1,
      4,
      2,
      4,
      Schedule::OneFOneB,
      {{0, 1, 0, 1, {}}, {2, 3, 1, 1, {}}, {4, 5, 2, 1, {}}, {6, 7, 3, 1, {}}}};
  const std::size_t stages = polished_stages(4e9, 1e3, quarters);
  EXPECT_GT(stages, 0u);
  EXPECT_LT(stages, 4u);
}

// Two stages of one device on four single-GPU machines, the first with most of the work in its
// last layer: no boundary, device move, split or merge reaches the idle devices, a peel does
// (the heavy layer on a device of its own), and so does a widening once its stage is alone.
TEST(Polish, PeelsPutAStateOnAnIdleDevice) {
  std::vector<Layer> layers;
  for (int i = 0; i < 8; ++i) layers.push_back({"l" + std::to_string(i), 0.01, 0.02, 1e5, 1e5});
  layers[3].forward = 0.2, layers[3].backward = 0.4;
  const ModelProfile model = make_chain_model("heavy", 1, layers);
  Cluster cluster = cluster_from_machine_ends({1, 2, 3, 4});
  cluster.device_memory = 1e12;
  const CostModel cost(model, cluster, {});
  const PipelineSpec start{1, 4, 2, 4, Schedule::OneFOneB, {{0, 3, 0, 1, {}}, {4, 7, 1, 1, {}}}};
  const Seconds before = simulated_makespan(detail::evaluate(cost, start, 8).plan.shape());
  std::int64_t pairs = 1 << 20;
  const std::optional<CostedPlan> local = detail::polish(cost, start, 8, 0, pairs);
  if (local) {
    EXPECT_EQ(local->plan.device_count(), 2);  // moves keep to the stages' devices
  }
  pairs = 1 << 20;
  const std::optional<CostedPlan> peeled = detail::polish(cost, start, 8, 0, pairs, true);
  ASSERT_TRUE(peeled);
  EXPECT_GT(peeled->plan.device_count(), 2);
  EXPECT_LT(peeled->plan.iteration_time, local ? local->plan.iteration_time : before);
  // The heavy layer's stage holds no other layer, or runs on more than one device.
  for (const detail::StageSpec& s : peeled->spec.stages)
    if (s.first <= 3 && 3 <= s.last) {
      EXPECT_TRUE(s.first == s.last || s.width > 1);
    }
}

TEST(Polish, StopsWhenItsBudgetIsSpent) {
  std::mt19937 rng(3);
  const testing::Instance in = roomy_instance(rng);
  const CostModel cost(in.model, in.cluster, in.settings);
  std::int64_t pairs = 0;  // not even the start can be simulated
  EXPECT_FALSE(detail::polish(cost, halves(cost, in.cluster.device_count(), 4, 4), 16, 0, pairs));
}

// A random pipeline of 2 to 4 stages of a chain on random widths, packed from device 0.
PipelineSpec random_pipeline(std::mt19937& rng, const CostModel& cost, int devices, int micro_batch,
                             int micro_batches, Schedule schedule) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng); };
  const int n = static_cast<int>(cost.states());
  const int stages = pick(2, std::min({4, n, devices}));
  std::vector<int> ends;  // last state of each stage but the last
  while (static_cast<int>(ends.size()) < stages - 1) {
    const int e = pick(0, n - 2);
    if (std::find(ends.begin(), ends.end(), e) == ends.end()) ends.push_back(e);
  }
  std::sort(ends.begin(), ends.end());
  ends.push_back(n - 1);
  PipelineSpec spec{1, devices, micro_batch, micro_batches, schedule, {}};
  std::size_t first = 0;
  int offset = 0;
  for (int k = 0; k < stages; ++k) {
    const int width = pick(1, std::min(micro_batch, devices - offset - (stages - 1 - k)));
    const std::size_t last = static_cast<std::size_t>(ends[static_cast<std::size_t>(k)]);
    spec.stages.push_back({first, last, offset, width, {}});
    first = last + 1, offset += width;
  }
  return spec;
}

// With two micro-batches 1F1B and GPipe differ only in the last stage's order (F0 B0 F1 B1,
// not F0 F1 B0 B1), whose backwards then end no later: the 1F1B twin of a GPipe plan is never
// slower.
TEST(OneFOneBTwin, NeverSlowerWithTwoMicroBatches) {
  std::mt19937 rng(29);
  int faster = 0, tried = 0;
  for (int trial = 0; trial < random_trials(300); ++trial) {
    const testing::Instance in = roomy_instance(rng);
    const CostModel cost(in.model, in.cluster, in.settings);
    if (cost.states() < 2) continue;
    const PipelineSpec gpipe =
        random_pipeline(rng, cost, in.cluster.device_count(), 4, 2, Schedule::GPipe);
    const detail::Evaluation plan = detail::evaluate(cost, gpipe, 8);
    ASSERT_TRUE(plan.fits);
    const std::optional<CostedPlan> twin = detail::one_f_one_b_twin(cost, gpipe, 8);
    ASSERT_TRUE(twin) << "trial " << trial;
    ++tried;
    EXPECT_EQ(twin->spec.schedule, Schedule::OneFOneB);
    EXPECT_EQ(twin->plan.schedule, Schedule::OneFOneB);
    EXPECT_EQ(stages_string(twin->plan), stages_string(plan.plan));
    EXPECT_EQ(twin->plan.micro_batches, 2);
    const Seconds gpipe_time = simulated_makespan(plan.plan.shape());
    const Seconds twin_time = simulated_makespan(twin->plan.shape());
    EXPECT_LE(twin_time, gpipe_time * (1 + 1e-12)) << "trial " << trial;
    faster += twin_time < gpipe_time * (1 - 1e-9);
  }
  EXPECT_GT(tried, random_trials(200));
  EXPECT_GT(faster, 0);  // the order matters on some
}

// It keeps no more activations in flight than the GPipe plan, so it fits wherever that
// does, also with the memory the GPipe plan peaks at; no twin where the schedules run the
// same operations (one stage, one micro-batch), nor of other schedules.
TEST(OneFOneBTwin, FitsWhereTheGPipePlanFitsAndOnlyForGPipePipelines) {
  std::mt19937 rng(31);
  testing::Instance in = roomy_instance(rng);
  while (CostModel(in.model, in.cluster, in.settings).states() < 4) in = roomy_instance(rng);
  const CostModel roomy(in.model, in.cluster, in.settings);
  const int devices = in.cluster.device_count();
  PipelineSpec gpipe = halves(roomy, devices, 4, 16);
  gpipe.schedule = Schedule::GPipe;
  const detail::Evaluation plan = detail::evaluate(roomy, gpipe, 64);
  ASSERT_TRUE(plan.fits);
  Bytes peak = 0;
  for (const PlanStage& s : plan.plan.stages) peak = std::max(peak, s.peak_memory());
  in.cluster.device_memory = peak;
  const CostModel tight(in.model, in.cluster, in.settings);
  ASSERT_TRUE(detail::evaluate(tight, gpipe, 64).fits);
  const std::optional<CostedPlan> twin = detail::one_f_one_b_twin(tight, gpipe, 64);
  ASSERT_TRUE(twin);
  Bytes twin_peak = 0;
  for (const PlanStage& s : twin->plan.stages) twin_peak = std::max(twin_peak, s.peak_memory());
  EXPECT_LT(twin_peak, peak);  // two stages keep 2 and 1 micro-batches, not 16

  EXPECT_FALSE(detail::one_f_one_b_twin(roomy, twin->spec, 64));  // already 1F1B
  PipelineSpec one_micro_batch = gpipe;
  one_micro_batch.micro_batches = 1;
  EXPECT_FALSE(detail::one_f_one_b_twin(roomy, one_micro_batch, 4));
  PipelineSpec one_stage = gpipe;
  one_stage.stages = {{0, roomy.states() - 1, 0, devices, {}}};
  EXPECT_FALSE(detail::one_f_one_b_twin(roomy, one_stage, 64));
  PipelineSpec interleaved = gpipe;
  interleaved.schedule = Schedule::Interleaved;
  EXPECT_FALSE(detail::one_f_one_b_twin(roomy, interleaved, 64));
}

}  // namespace
}  // namespace pe
