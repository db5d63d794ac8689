#include "cost/evaluate.h"

#include <gtest/gtest.h>

namespace pe {
namespace {

// Two layers, profile batch 1: l0 (f 1 s, b 2 s, 1e9 bytes out), l1 (f 0.5 s, b 1 s).
ModelProfile two_layers(Bytes p0, Bytes p1) {
  return make_chain_model("two", 1, {{"l0", 1, 2, 1e9, p0}, {"l1", 0.5, 1, 1e6, p1}});
}

TEST(Evaluate, TwoStagePipelineByHand) {
  Cluster c = cluster_from_machine_ends({1, 2});  // two single-GPU machines
  c.network.inter_p2p = 1e9;
  const detail::CostModel cost(two_layers(0, 0), c, {});
  detail::PipelineSpec spec{1, 2, 1, 4, Schedule::OneFOneB, {{0, 0, 0, 1, {}}, {1, 1, 1, 1, {}}}};
  detail::Evaluation ev = detail::evaluate(cost, spec, 4);
  ASSERT_TRUE(ev.fits);
  const Plan& p = ev.plan;
  // Stage 0: 3 s, stage 1: 1.5 s, cut: 1e9 B / 1e9 B/s = 1 s across machines.
  EXPECT_DOUBLE_EQ(p.stages[0].times.send, 1.0);
  EXPECT_FALSE(p.stages[0].cut_intra_machine);
  EXPECT_DOUBLE_EQ(p.fill_drain, 3 + 1.5 + 2 * 1);
  // 1F1B keeps 2 micro-batches in flight on stage 0, whose round trip is
  // 1 + 1 + 0.5 + 1 + 1 + 2 = 6.5 s, so a slot lasts 3.25 s (more than stage 0's 3 s).
  EXPECT_DOUBLE_EQ(p.slot, 3.25);
  EXPECT_DOUBLE_EQ(p.exposed_allreduce, 0);
  EXPECT_DOUBLE_EQ(p.iteration_time, 3 * 3.25 + 6.5);
  EXPECT_DOUBLE_EQ(p.speedup, (1.5 + 3) * 4 / 16.25);
  EXPECT_EQ(p.stages[1].devices, std::vector<int>{1});
  // GPipe: forward wave max(f, c) = 1 s, backward wave max(g, c) = 2 s.
  spec.schedule = Schedule::GPipe;
  const Plan g = detail::evaluate(cost, spec, 4).plan;
  EXPECT_DOUBLE_EQ(g.slot, 1 + 2);
  EXPECT_DOUBLE_EQ(g.iteration_time, 3 * 3 + 6.5);
}

TEST(Evaluate, EqualStagesMatchTheTextbookPipeline) {
  // S equal stages, no communication: (M - 1) * t + S * t for both schedules.
  std::vector<Layer> layers(4, Layer{"l", 0.25, 0.5, 0, 0});
  const detail::CostModel cost(make_chain_model("eq", 1, layers), cluster_from_machine_ends({4}),
                               {});
  for (Schedule schedule : {Schedule::OneFOneB, Schedule::GPipe}) {
    detail::PipelineSpec spec{1, 4, 1, 6, schedule, {}};
    for (int s = 0; s < 4; ++s) spec.stages.push_back({std::size_t(s), std::size_t(s), s, 1, {}});
    const Plan p = detail::evaluate(cost, spec, 6).plan;
    EXPECT_DOUBLE_EQ(p.iteration_time, (6 - 1) * 0.75 + 4 * 0.75) << to_string(schedule);
  }
}

TEST(Evaluate, AllReduceOverlapsTheStagesOwnBackward) {
  Cluster c = cluster_from_machine_ends({2});
  c.network.intra = 10e9;  // ring over 2 devices: 1e-10 s per byte
  const detail::CostModel cost(two_layers(10e9, 40e9), c, {});
  detail::PipelineSpec spec{1, 2, 2, 1, Schedule::OneFOneB, {{0, 1, 0, 2, {}}}};
  const Plan p = detail::evaluate(cost, spec, 2).plan;
  // Gradients of l1 are ready after 1 s and take 4 s, l0's after 3 s and take 1 s: the
  // link ends at 6 s, 3 s after the backward.
  EXPECT_DOUBLE_EQ(p.stages[0].allreduce_total, 5.0);
  EXPECT_DOUBLE_EQ(p.stages[0].times.allreduce, 3.0);
  EXPECT_DOUBLE_EQ(p.iteration_time, 4.5 + 3.0);
  EXPECT_TRUE(p.stages[0].allreduce_intra_machine);
}

TEST(Evaluate, MemoryCountsActivationsInFlight) {
  Cluster c = cluster_from_machine_ends({2});
  const detail::CostModel cost(two_layers(1e9, 1e9), c, {});
  detail::PipelineSpec spec{1, 2, 1, 8, Schedule::OneFOneB, {{0, 0, 0, 1, {}}, {1, 1, 1, 1, {}}}};
  const Plan one_f_one_b = detail::evaluate(cost, spec, 8).plan;
  spec.schedule = Schedule::GPipe;
  const Plan gpipe = detail::evaluate(cost, spec, 8).plan;
  // 1F1B: stage 0 keeps min(8, 2) = 2 micro-batches, stage 1 keeps 1; GPipe keeps 8.
  EXPECT_DOUBLE_EQ(one_f_one_b.stages[0].activation_memory, 2 * 1e9);
  EXPECT_DOUBLE_EQ(one_f_one_b.stages[1].activation_memory, 1e6);
  EXPECT_DOUBLE_EQ(gpipe.stages[0].activation_memory, 8 * 1e9);
  EXPECT_DOUBLE_EQ(one_f_one_b.stages[0].weight_memory, 2 * 1e9);
  EXPECT_DOUBLE_EQ(one_f_one_b.iteration_time, gpipe.iteration_time);
}

TEST(Evaluate, InfeasibleWhenAStageExceedsMemory) {
  Cluster c = cluster_from_machine_ends({2});
  c.device_memory = 2.5e9;
  const detail::CostModel cost(two_layers(1e9, 1e9), c, {});
  detail::PipelineSpec spec{1, 2, 1, 8, Schedule::GPipe, {{0, 0, 0, 1, {}}, {1, 1, 1, 1, {}}}};
  EXPECT_FALSE(detail::evaluate(cost, spec, 8).fits);
  spec.schedule = Schedule::OneFOneB;  // 2e9 weights + 2 x 1e9 activations > 2.5e9
  EXPECT_FALSE(detail::evaluate(cost, spec, 8).fits);
  c.device_memory = 4e9;
  EXPECT_TRUE(detail::evaluate(detail::CostModel(two_layers(1e9, 1e9), c, {}), spec, 8).fits);
}

}  // namespace
}  // namespace pe
