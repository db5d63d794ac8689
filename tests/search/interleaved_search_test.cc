// The interleaved 1F1B schedule in the search: against exhaustive enumeration of its space
// (interleaved_specs' definition, restated here), together with the other schedules, and
// where it wins.
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <random>

#include "cost/evaluate.h"
#include "cost/layout.h"
#include "cost/stage_variants.h"
#include "pe/planner.h"
#include "pe/timeline.h"
#include "random_trials.h"
#include "search/balanced_ends.h"
#include "search/exhaustive.h"
#include "search/hybrid_search.h"
#include "search/random_instances.h"

namespace pe {
namespace {

// The fastest interleaved plan that fits, enumerating the space as README states it: copies
// r, group width w (p = W / w >= 2 groups), micro-batch size b >= the floor with M a multiple
// of p, chunks v = 2..max_chunks with p v <= states, chunks cut at equal work, and each
// variant every group allows. Every plan is simulated.
std::optional<Seconds> interleaved_optimum(const detail::CostModel& cost, int gbs, int max_chunks) {
  std::optional<Seconds> best;
  const int devices = cost.cluster().device_count();
  const int states = static_cast<int>(cost.states());
  for (int r = 1; r <= devices; ++r) {
    if (devices % r != 0 || gbs % r != 0) continue;
    const int copy = devices / r, share = gbs / r;
    const detail::Layout layout(cost.cluster(), r, copy);
    for (int w = 1; w <= copy / 2; ++w) {
      if (copy % w != 0) continue;
      const int p = copy / w;
      for (int b = std::min(cost.settings().min_micro_batch, share); b <= share; ++b) {
        if (share % b != 0 || (share / b) % p != 0) continue;
        for (int v = 2; v <= max_chunks && p * v <= states; ++v) {
          const std::vector<std::size_t> ends = detail::balanced_ends(
              cost, std::vector<double>(static_cast<std::size_t>(p * v), 1), b);
          if (static_cast<int>(ends.size()) != p * v) continue;
          for (const detail::StageVariant& variant :
               detail::stage_variants(cost, layout, 0, w, b)) {
            detail::PipelineSpec spec{r, copy, b, share / b, Schedule::Interleaved, {}, v};
            bool allowed = true;
            std::size_t first = 0;
            for (int j = 0; j < p * v; ++j) {
              const int offset = (j % p) * w;
              const auto here = detail::stage_variants(cost, layout, offset, w, b);
              allowed = allowed && std::any_of(here.begin(), here.end(), [&](const auto& h) {
                          return h.tensor_parallel == variant.tensor_parallel &&
                                 h.recompute == variant.recompute;
                        });
              spec.stages.push_back({first, ends[j], offset, w, variant});
              first = ends[j] + 1;
            }
            if (!allowed) continue;
            const detail::Evaluation ev = detail::evaluate(cost, spec, gbs);
            if (!ev.fits) continue;
            const Seconds time = simulated_makespan(ev.plan.shape());
            if (!best || time < *best) best = time;
          }
        }
      }
    }
  }
  return best;
}

SearchOptions interleaved_only(int max_chunks) {
  SearchOptions o;
  o.schedules = {Schedule::Interleaved};
  o.effort = 0;
  o.max_chunks = max_chunks;
  return o;
}

TEST(InterleavedSearch, MatchesExhaustiveEnumerationOfItsSpace) {
  std::mt19937 rng(4242);
  int found = 0;
  for (int trial = 0; trial < random_trials(120); ++trial) {
    testing::Instance in = testing::random_instance(rng, 12, trial % 2 ? 4 : 8);
    const int max_chunks = 2 + trial % 3;
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    const std::optional<Seconds> optimum = interleaved_optimum(cost, in.global_batch, max_chunks);
    const detail::SearchResult result =
        detail::search_plans(cost, in.global_batch, interleaved_only(max_chunks));
    ASSERT_EQ(optimum.has_value(), !result.plans.empty()) << "trial " << trial;
    if (!optimum) continue;
    ++found;
    const Plan& plan = result.plans.front();
    EXPECT_EQ(plan.schedule, Schedule::Interleaved);
    EXPECT_GE(plan.chunks, 2);
    EXPECT_LE(plan.chunks, max_chunks);
    EXPECT_TRUE(result.exact) << "trial " << trial;
    EXPECT_GE(plan.iteration_time, *optimum * (1 - 1e-9)) << "trial " << trial;
    EXPECT_LE(plan.iteration_time, *optimum * (1 + detail::kSimpler + 1e-9)) << "trial " << trial;
    EXPECT_LE(result.lower_bound, *optimum * (1 + 1e-9)) << "trial " << trial;
    EXPECT_DOUBLE_EQ(plan.iteration_time, simulated_makespan(plan.shape()));
    EXPECT_LE(plan.lower_bound, plan.iteration_time * (1 + 1e-12));
    for (const PlanStage& s : plan.stages) EXPECT_LE(s.peak_memory(), s.device_memory);
  }
  EXPECT_GT(found, random_trials(30));
}

TEST(InterleavedSearch, AddingTheScheduleNeverGivesASlowerPlan) {
  std::mt19937 rng(77);
  for (int trial = 0; trial < random_trials(60); ++trial) {
    testing::Instance in = testing::random_instance(rng, 10, 4);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    SearchOptions classic;
    classic.effort = 0;
    SearchOptions all = classic;
    all.schedules = {Schedule::OneFOneB, Schedule::GPipe, Schedule::Interleaved};
    const detail::SearchResult a = detail::search_plans(cost, in.global_batch, classic);
    const detail::SearchResult b = detail::search_plans(cost, in.global_batch, all);
    if (a.plans.empty()) continue;
    ASSERT_FALSE(b.plans.empty()) << "trial " << trial;
    // The certificate covers both spaces: never above either's best plan.
    EXPECT_LE(b.lower_bound, a.plans.front().iteration_time * (1 + 1e-9)) << "trial " << trial;
    EXPECT_LE(b.lower_bound, b.plans.front().iteration_time * (1 + 1e-9)) << "trial " << trial;
    EXPECT_LE(b.plans.front().iteration_time,
              a.plans.front().iteration_time * (1 + detail::kSimpler + 1e-9))
        << "trial " << trial;
    const std::optional<Seconds> interleaved = interleaved_optimum(cost, in.global_batch, 4);
    if (interleaved) {
      EXPECT_LE(b.lower_bound, *interleaved * (1 + 1e-9)) << "trial " << trial;
      // Every interleaved plan whose bound could beat the incumbent is simulated.
      EXPECT_LE(b.plans.front().iteration_time, *interleaved * (1 + detail::kSimpler + 1e-9))
          << "trial " << trial;
    }
  }
}

// Sixteen equal layers on four single-GPU machines, one device per stage, fast links: the
// fill and drain of 1F1B cost (p - 1) stage times, interleaving shrinks them v-fold, so it
// wins (1F1B at best (16 + 3) x 4 layers; interleaved 4 ways (64 + 3) x 1 layer).
TEST(InterleavedSearch, WinsWhereTheBubbleDominates) {
  std::vector<Layer> layers;
  for (int i = 0; i < 16; ++i) layers.push_back({"l" + std::to_string(i), 0.01, 0.02, 1e6, 1e6});
  const ModelProfile model = make_chain_model("even", 4, layers);
  Cluster cluster = cluster_from_machine_ends({1, 2, 3, 4});
  cluster.network = {100e9, 100e9, 100e9};
  cluster.device_memory = 16e9;
  TrainingSettings settings;
  const detail::CostModel cost(model, cluster, settings);
  SearchOptions classic;
  classic.effort = 0;
  classic.max_pipeline_copies = 1;
  classic.max_stage_width = 1;
  SearchOptions all = classic;
  all.schedules = {Schedule::OneFOneB, Schedule::GPipe, Schedule::Interleaved};
  const detail::SearchResult a = detail::search_plans(cost, 16, classic);
  const detail::SearchResult b = detail::search_plans(cost, 16, all);
  ASSERT_FALSE(a.plans.empty());
  ASSERT_FALSE(b.plans.empty());
  const Plan& plan = b.plans.front();
  EXPECT_EQ(plan.schedule, Schedule::Interleaved);
  EXPECT_LT(plan.iteration_time, a.plans.front().iteration_time * 0.95);
  EXPECT_EQ(plan.device_count(), 4);
  EXPECT_EQ(plan.micro_batches % plan.device_groups(), 0);
  EXPECT_EQ(static_cast<int>(plan.stages.size()), plan.device_groups() * plan.chunks);
  // Chunk j runs on group j % p: the same devices.
  for (std::size_t j = 0; j < plan.stages.size(); ++j)
    EXPECT_EQ(plan.stages[j].devices,
              plan.stages[j % static_cast<std::size_t>(plan.device_groups())].devices);
}

}  // namespace
}  // namespace pe
