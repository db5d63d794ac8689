// A shape's bounding passes (search/shape_pass.h): on copies of 128 devices and more, a
// screen (the first class pass) may run before the relaxed pass. It settles wide shapes for a
// fraction of a relaxed pass's steps, and where it does not settle a shape it only raises
// the bound the relaxed pass proves.
#include "search/shape_pass.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "cost/evaluate.h"
#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "pe/timeline.h"
#include "random_trials.h"

namespace pe {
namespace {

// No stage-width limit and the default memory a pass.
const detail::PassLimits kLimits{};

// A bundled profile as the catalog plans it, on `machines` machines of 8 GPUs.
detail::CostModel profile_on(const std::string& name, int machines, int gpus = 8) {
  const ProfileEntry e = find_profile(name);
  const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
  std::vector<int> ends;
  for (int m = 1; m <= machines; ++m) ends.push_back(gpus * m);
  return detail::CostModel(model, cluster_from_machine_ends(ends), training_settings(e));
}

detail::CostModel bert_48_on(int machines) { return profile_on("bert_48", machines); }

// The best plan of BERT-48 at GBS 512 on 1,024 GPUs takes 0.832 s; no plan of one copy of 32
// micro-batches of 16 makes 0.8 s. Without the screen, the relaxed pass settles the shape in
// about 0.6 M steps (about 1 M before it pruned by the pace of the stages in front,
// cost/suffix_timing.h's InFront; it ran out of 2 M, about the search's share there, and the class
// passes after it settled the shape, until its cells that no plan reaches went unfilled); the
// screen does alone, in a fifth of the steps or less (59,000).
TEST(ShapePass, ScreenSettlesAWideShapeForAFractionOfARelaxedPass) {
  const detail::CostModel cost = bert_48_on(128);
  const detail::PipelineShapeChoice shape{1, 16, 32, Schedule::OneFOneB};
  const std::uint64_t effort = 2'000'000;
  const detail::RelaxedBound plain = detail::relaxed_bound(cost, shape, 0.8, effort, kLimits);
  const detail::RelaxedBound screened =
      detail::relaxed_bound(cost, shape, 0.8, effort, kLimits, true);
  EXPECT_FALSE(plain.screened);
  ASSERT_TRUE(plain.settled);
  ASSERT_TRUE(screened.screened);
  EXPECT_TRUE(screened.screen_settled);
  EXPECT_TRUE(screened.settled);
  EXPECT_DOUBLE_EQ(screened.lower_bound, plain.lower_bound);
  EXPECT_GE(screened.anywhere, plain.anywhere);
  EXPECT_LT(5 * screened.steps, plain.steps);
}

// Where the screen leaves a shape open, the relaxed pass runs as it would have: its bound
// and its steps are the plain pass's, raised by the screen's bound and steps only. Shapes of
// 8 to 1 copies on 1,024 GPUs at GBS 512, the cutoff a little below the best plan (one, one
// copy of micro-batches of 4, its floor settles: each operator's 128 micro-batches).
TEST(ShapePass, ScreenThatLeavesAShapeOpenOnlyRaisesItsBound) {
  if (trials_reduced()) GTEST_SKIP() << "seconds under the sanitizers";
  const detail::CostModel cost = bert_48_on(128);
  int open = 0, settled = 0, floored = 0;
  for (int replicas : {1, 2, 4, 8})
    for (int micro_batch : {4, 16, 64}) {
      const detail::PipelineShapeChoice shape{replicas, micro_batch, 512 / replicas / micro_batch,
                                              Schedule::OneFOneB};
      const std::uint64_t effort = 4'000'000;
      const detail::RelaxedBound plain = detail::relaxed_bound(cost, shape, 0.82, effort, kLimits);
      const detail::RelaxedBound with =
          detail::relaxed_bound(cost, shape, 0.82, effort, kLimits, true);
      if (!with.screened) {  // its floor settles it: neither pass runs
        ++floored;
        EXPECT_TRUE(with.settled && plain.settled) << replicas << " x " << micro_batch;
        EXPECT_EQ(with.steps, 0u) << replicas << " x " << micro_batch;
        continue;
      }
      if (with.screen_settled) {
        ++settled;
        EXPECT_TRUE(with.settled);
        continue;
      }
      ++open;
      EXPECT_GE(with.lower_bound, plain.lower_bound) << replicas << " x " << micro_batch;
      EXPECT_GE(with.anywhere, plain.anywhere) << replicas << " x " << micro_batch;
      EXPECT_TRUE(with.settled || !plain.settled) << replicas << " x " << micro_batch;
      EXPECT_GE(with.steps, plain.steps) << replicas << " x " << micro_batch;
    }
  EXPECT_GT(open, 0);
  EXPECT_GT(settled, 0);
  EXPECT_LT(floored, 12);
}

// A relaxed pass that finishes below the cutoff returns real plans of the shape, which the
// search takes as candidates, also where the shape's exact pass runs out. ResNet-101 at GBS
// 512 on 32 machines of 8 GPUs, 32 copies of 16 micro-batches of 1 under GPipe: the relaxed
// pass finishes in under 1 M steps, its exact pass needs about 260 M; with a cutoff of
// 67.7 ms (the plan the search reported when it took only exact passes' plans), a plan of
// the relaxed pass simulates below it.
TEST(ShapePass, RelaxedPassOffersPlansOfItsShapeWhereTheExactPassRunsOut) {
  const detail::CostModel cost = profile_on("resnet101", 32);
  const detail::PipelineShapeChoice shape{32, 1, 16, Schedule::GPipe};
  const Seconds cutoff = 0.0677;
  const detail::RelaxedBound relaxed =
      detail::relaxed_bound(cost, shape, cutoff, 10'000'000, kLimits);
  ASSERT_FALSE(relaxed.ran_out);
  ASSERT_FALSE(relaxed.settled);
  ASSERT_FALSE(relaxed.plans.empty());
  EXPECT_LE(relaxed.plans.size(), 4U);
  for (const detail::DpPlan& plan : relaxed.plans) {
    EXPECT_EQ(plan.spec.replicas, 32);
    EXPECT_EQ(plan.spec.micro_batches, 16);
    EXPECT_EQ(plan.spec.stages.front().first, 0U);
    EXPECT_EQ(plan.spec.stages.back().last + 1, cost.states());
    EXPECT_LE(plan.lower_bound,
              detail::evaluate(cost, plan.spec, 512).plan.lower_bound * (1 + 1e-9));
  }
  const detail::ShapeResult found =
      detail::search_shape(cost, 512, shape, cutoff, 1'000'000, 10'000'000, kLimits);
  EXPECT_FALSE(found.complete);
  Seconds fastest = std::numeric_limits<Seconds>::infinity();
  for (const detail::CostedPlan& plan : found.plans)
    fastest = std::min(fastest, simulated_makespan(plan.plan.shape()));
  EXPECT_LT(fastest, cutoff);
}

// Block passes on a chain of fewer than 128 states (block_bound's `least_states`, which the
// refining phase sets to 0: Search::blocks_first): GNMT-16 (77 states) at GBS 512 on 32
// machines of 8 GPUs, one copy of 16 micro-batches of 32, whose relaxed passes run out in the
// search (they need about 19 M steps at the best plan's 100.1 ms). Blocks of 3 states settle
// it at that cutoff in a fraction of those steps; with 128 states required, none run. (That
// block passes bound every plan: PipelineDp.BlockPassNeverAboveAnyPlansBound.)
TEST(ShapePass, BlockPassesSettleAShapeOfAShortChainForAFractionOfARelaxedPass) {
  if (trials_reduced()) GTEST_SKIP() << "seconds under the sanitizers";
  const detail::CostModel cost = profile_on("gnmt_16", 32);
  ASSERT_TRUE(cost.chain());
  ASSERT_LT(cost.states(), 128U);
  const detail::PipelineShapeChoice shape{1, 32, 16, Schedule::OneFOneB};
  const Seconds cutoff = 0.1001;
  const std::uint64_t effort = 100'000'000;
  const detail::PassBound none = detail::block_bound(cost, shape, cutoff, effort, kLimits, 128);
  EXPECT_FALSE(none.finished);
  EXPECT_EQ(none.steps, 0U);
  const detail::PassBound blocks = detail::block_bound(cost, shape, cutoff, effort, kLimits, 0);
  ASSERT_TRUE(blocks.finished);
  EXPECT_GT(blocks.least_bound, cutoff);  // settled
  EXPECT_TRUE(blocks.plans.empty());
  const detail::RelaxedBound relaxed = detail::relaxed_bound(cost, shape, cutoff, effort, kLimits);
  ASSERT_FALSE(relaxed.ran_out);
  EXPECT_TRUE(relaxed.settled);
  EXPECT_LT(3 * blocks.steps, relaxed.steps);
}

// GNMT-16 at GBS 512 on 1,024 GPUs: its best plan takes 100.1 ms, as on 64 GPUs, and no
// plan of one copy of 8 micro-batches of 64 makes 100.1 ms, however many devices it uses. The
// relaxed pass runs out (with 20 M steps; the search's ran out at 4 to 47 M), its floor is 38 ms,
// and its class passes bound it at 63 ms. The free-width pass (positions inside a machine,
// not devices) settles it in a fraction of those steps. It runs only on machines of one size
// and GPU type, and on copies wider than two machines. (That it bounds every plan:
// PipelineDp.FreeWidthPassNeverAboveAnyPlansBound.)
TEST(ShapePass, FreeWidthPassSettlesAShapeOfOneCopyWhoseRelaxedPassRunsOut) {
  if (trials_reduced()) GTEST_SKIP() << "seconds under the sanitizers";
  const detail::CostModel cost = profile_on("gnmt_16", 128);
  const detail::PipelineShapeChoice shape{1, 64, 8, Schedule::OneFOneB};
  const Seconds cutoff = 0.1001;
  const std::uint64_t effort = 20'000'000;
  ASSERT_TRUE(detail::free_widths_apply(cost, shape));
  const detail::RelaxedBound relaxed = detail::relaxed_bound(cost, shape, cutoff, effort, kLimits);
  EXPECT_TRUE(relaxed.ran_out);
  EXPECT_LT(relaxed.lower_bound, 0.7 * cutoff);
  const detail::PassBound free = detail::free_bound(cost, shape, cutoff, effort, kLimits);
  ASSERT_TRUE(free.finished);
  EXPECT_GT(free.least_bound, cutoff);  // settled
  EXPECT_LT(4 * free.steps, effort);
  // Copies of two machines, or machines of several sizes: none.
  EXPECT_FALSE(detail::free_widths_apply(cost, {64, 8, 1, Schedule::OneFOneB}));
  Cluster uneven = cluster_from_machine_ends({8, 24, 32, 40, 48});
  const ProfileEntry e = find_profile("gnmt_16");
  const detail::CostModel mixed(import_pipedream_graph(e.path, e.profile_batch_size), uneven,
                                training_settings(e));
  EXPECT_FALSE(detail::free_bound(mixed, shape, cutoff, effort, kLimits).finished);
  EXPECT_EQ(detail::free_bound(mixed, shape, cutoff, effort, kLimits).steps, 0U);
}

// On one copy of 128 devices or more, a free-width pass follows the class screen in
// relaxed_bound (kFreeScreenShare): VGG-19 at GBS 512 on 128 machines of 8 GPUs, whose best plan
// (118.5 ms) uses 136 of them. One copy of 8 micro-batches of 64 is settled by it, within a
// quarter of the effort, where the relaxed pass alone runs out.
TEST(ShapePass, FreeWidthScreenSettlesAOneCopyShapeBeforeItsRelaxedPass) {
  if (trials_reduced()) GTEST_SKIP() << "seconds under the sanitizers";
  const detail::CostModel cost = profile_on("vgg19", 128);
  const detail::PipelineShapeChoice shape{1, 64, 8, Schedule::OneFOneB};
  const Seconds cutoff = 0.11865;
  const std::uint64_t effort = 8'000'000;
  const detail::RelaxedBound screened =
      detail::relaxed_bound(cost, shape, cutoff, effort, kLimits, /*screen=*/true);
  EXPECT_TRUE(screened.settled);
  EXPECT_TRUE(screened.screen_settled);
  EXPECT_GE(screened.lower_bound, cutoff);
  EXPECT_LT(screened.steps, effort / 2);
  const detail::RelaxedBound plain = detail::relaxed_bound(cost, shape, cutoff, effort, kLimits);
  // Without the screens the relaxed pass runs out, and the class passes after it settle the
  // shape, for several times the steps.
  EXPECT_GT(plain.steps, 4 * screened.steps) << plain.steps << " against " << screened.steps;
}

// Where the screens bound a shape at the fastest plan's time, only a simpler plan of it can
// still matter (search_shape's `meets` and `lead`): VGG-19 at GBS 512 on 32 machines of 8
// GPUs, whose best plan (two stages, one copy of 4 micro-batches of 128, 118.52 ms) is of that
// shape. Its free-width screen bounds the shape at that time; the exact pass then looks at plans
// of at most two stages, finishes, and finds the best plan, where without `meets` the relaxed
// and exact passes run out with the same effort.
TEST(ShapePass, ShapeBoundedAtTheFastestPlanLooksOnlyForSimplerPlans) {
  if (trials_reduced()) GTEST_SKIP() << "seconds under the sanitizers";
  const detail::CostModel cost = profile_on("vgg19", 32);
  const detail::PipelineShapeChoice shape{1, 128, 4, Schedule::OneFOneB};
  const Seconds fastest = 0.1185239;  // a little below the best plan: `meets` is a bound
  const Seconds cutoff = 0.118643;    // the fastest plan with the simplicity margin
  const std::uint64_t effort = 8'000'000, relaxed_effort = 16'000'000;
  const detail::ShapeResult simpler =
      detail::search_shape(cost, 512, shape, cutoff, effort, relaxed_effort, kLimits, 0, 0, 0,
                           /*screen=*/true, false, 0, fastest, /*lead=*/2);
  ASSERT_TRUE(simpler.complete);
  EXPECT_GE(simpler.lower_bound, fastest);
  EXPECT_LE(simpler.lower_bound, cutoff);
  ASSERT_FALSE(simpler.plans.empty());
  Seconds best = std::numeric_limits<Seconds>::infinity();
  for (const detail::CostedPlan& p : simpler.plans) {
    EXPECT_LE(p.plan.stages.size(), 2U);
    best = std::min(best, simulate(p.plan.shape()).makespan);
  }
  EXPECT_NEAR(best, 0.118524, 1e-6);
  const detail::ShapeResult plain = detail::search_shape(
      cost, 512, shape, cutoff, effort, relaxed_effort, kLimits, 0, 0, 0, /*screen=*/true);
  EXPECT_FALSE(plain.complete);
  EXPECT_GT(plain.steps + plain.relaxed_steps, 10 * (simpler.steps + simpler.relaxed_steps));
}

// The refining phase's class screen (Search::classes_first) on a graph: ResNet-101 (410 cuts,
// not a chain, so no block passes) at GBS 512 on 32 machines of 8 GPUs, whose best plan takes
// 52.8 ms; two copies of 4 micro-batches of 64 are at their floor (29.4 ms) after the search.
// The first class pass, pruned by the best plan, settles them in a few million steps, where
// the relaxed pass needs about 190 M: with ten times the class pass's steps it runs out. On
// copies of fewer than 4 devices nothing runs (classes of 2 would be the relaxed pass).
TEST(ShapePass, FirstClassPassSettlesAGraphsShapeForAFractionOfARelaxedPass) {
  if (trials_reduced()) GTEST_SKIP() << "seconds under the sanitizers";
  const detail::CostModel cost = profile_on("resnet101", 32);
  ASSERT_FALSE(cost.chain());
  const detail::PipelineShapeChoice shape{2, 64, 4, Schedule::OneFOneB};
  const Seconds cutoff = 0.0528;
  EXPECT_LT(detail::shape_floor(cost, shape, 128).own, 0.6 * cutoff);
  const detail::PassBound classes =
      detail::first_class_bound(cost, shape, cutoff, 100'000'000, kLimits);
  ASSERT_TRUE(classes.finished);
  EXPECT_GT(classes.least_bound, cutoff);  // settled
  const detail::PassBound relaxed =
      detail::refined_bound(cost, shape, cutoff, 10 * classes.steps, kLimits, 0);
  EXPECT_FALSE(relaxed.finished);
  const detail::PassBound narrow =
      detail::first_class_bound(cost, {128, 1, 4, Schedule::OneFOneB}, cutoff, 1'000'000, kLimits);
  EXPECT_FALSE(narrow.finished);
  EXPECT_EQ(narrow.steps, 0U);
}

// Block passes on a long chain, as the refining phase gives them (with the wave's whole part:
// Search::refine): NASNet-A large (1,250 states) at GBS 512 on 32 machines of 8 GPUs, whose
// best plan takes 106.4 ms; two copies of 4 micro-batches of 64 are at their floor (47 ms)
// after the search. Blocks settle them in a few million steps, where the relaxed pass, with
// four times as many, runs out.
TEST(ShapePass, BlockPassesSettleAShapeOfALongChainWhoseRelaxedPassRunsOut) {
  if (trials_reduced()) GTEST_SKIP() << "seconds under the sanitizers";
  const detail::CostModel cost = profile_on("nasnetalarge", 32);
  ASSERT_TRUE(cost.chain());
  const detail::PipelineShapeChoice shape{2, 64, 4, Schedule::OneFOneB};
  const Seconds cutoff = 0.1064;
  EXPECT_LT(detail::shape_floor(cost, shape, 128).own, 0.5 * cutoff);
  const detail::PassBound blocks =
      detail::block_bound(cost, shape, cutoff, 100'000'000, kLimits, 0);
  ASSERT_TRUE(blocks.finished);
  EXPECT_GT(blocks.least_bound, cutoff);  // settled
  const detail::PassBound relaxed =
      detail::refined_bound(cost, shape, cutoff, 4 * blocks.steps, kLimits, 0);
  EXPECT_FALSE(relaxed.finished);
}

// A pass offers plans, and its least bound is below the simulated time of each that fits.
void expect_below_its_plans(const detail::CostModel& cost, const detail::PassBound& pass,
                            int global_batch) {
  ASSERT_FALSE(pass.plans.empty());
  for (const detail::DpPlan& plan : pass.plans) {
    const detail::Evaluation ev = detail::evaluate(cost, plan.spec, global_batch);
    if (ev.fits) {
      EXPECT_LE(pass.least_bound, simulate(ev.plan.shape()).makespan);
    }
  }
}

// Buckets of worst term where those of round trip stall (Search::refine switches to them):
// NASNet-A large at GBS 512 on 8 machines of 8 GPUs, 8 copies of 64 micro-batches of 1 under
// GPipe. Its suffixes share few round trips, so 1,024 buckets of round trip bound it no higher
// than 64 do; 64 buckets of the worst term (under GPipe, of its forward and backward waves)
// bound it higher, within 0.5 % of the best plan known (227.7 ms; with buckets of round trip
// and y + e, 226.3 ms: 0.6 %), and still below every plan the pass returns (simulated).
TEST(ShapePass, WorstTermBucketsRaiseAShapeWhereRoundTripBucketsStall) {
  if (trials_reduced()) GTEST_SKIP() << "seconds under the sanitizers";
  const detail::CostModel cost = profile_on("nasnetalarge", 8);
  const detail::PipelineShapeChoice shape{8, 1, 64, Schedule::GPipe};
  const Seconds cutoff = 0.2311;
  const detail::PassBound round_trips_64 =
      detail::refined_bound(cost, shape, cutoff, 100'000'000, kLimits, 64);
  const detail::PassBound round_trips_1024 =
      detail::refined_bound(cost, shape, cutoff, 100'000'000, kLimits, 1024);
  const detail::PassBound worst_64 =
      detail::refined_bound(cost, shape, cutoff, 100'000'000, kLimits, 64, true);
  ASSERT_TRUE(round_trips_64.finished && round_trips_1024.finished && worst_64.finished);
  EXPECT_LT(round_trips_1024.least_bound, round_trips_64.least_bound * (1 + 1e-3));
  EXPECT_GT(worst_64.least_bound, round_trips_1024.least_bound * (1 + 1e-2));
  EXPECT_GT(worst_64.least_bound, 0.2277 * (1 - 0.005));
  expect_below_its_plans(cost, worst_64, 512);
}

// A merged pass (merged_bound: suffixes undominated in round trip, worst and all-reduce terms,
// the other fields merged) bounds a shape whose refining passes keep only the least window
// field of a bucket above them, in fewer steps. GNMT-16 at GBS 64 on 8 machines of 8 GPUs, one
// copy of 16 micro-batches of 4, cut off at 24.17 ms (a plan the search finds with more
// effort): 23.49 ms in 45 M steps, where 256 buckets of round trip reach 22.86 ms in 38 M
// (1,024 buckets 22.92 ms in 126 M); with the round trip alone undominated, 21.27 ms.
TEST(ShapePass, MergedPassBoundsAShapeOfSixteenMicroBatchesAboveItsRefiningPasses) {
  if (trials_reduced()) GTEST_SKIP() << "seconds under the sanitizers";
  const detail::CostModel cost = profile_on("gnmt_16", 8);
  const detail::PipelineShapeChoice shape{1, 4, 16, Schedule::OneFOneB};
  const Seconds cutoff = 0.02417;
  const detail::PassBound merged = detail::merged_bound(cost, shape, cutoff, 100'000'000, kLimits);
  const detail::PassBound buckets_256 =
      detail::refined_bound(cost, shape, cutoff, 100'000'000, kLimits, 256);
  ASSERT_TRUE(merged.finished && buckets_256.finished);
  EXPECT_GT(merged.least_bound, buckets_256.least_bound * (1 + 1e-2));
  EXPECT_GT(merged.least_bound, 0.02349 * (1 - 1e-3));
  EXPECT_LT(merged.steps, 2 * buckets_256.steps);
  expect_below_its_plans(cost, merged, 64);
}

// More fields undominated raise a merged pass's bound (Search::refine_merged). GNMT-16 at GBS 32
// on 8 machines of 8 GPUs, one copy of 16 micro-batches of 2 cut off at its best plan found
// before (16.45 ms): three fields bound it at 15.83 ms, five at 16.04; each below every plan of
// the shape the passes offer.
TEST(ShapePass, MoreMergedFieldsRaiseTheBoundOfASixteenMicroBatchShape) {
  if (trials_reduced()) GTEST_SKIP() << "seconds under the sanitizers";
  const detail::CostModel cost = profile_on("gnmt_16", 8);
  const detail::PipelineShapeChoice shape{1, 2, 16, Schedule::OneFOneB};
  const Seconds cutoff = 0.01645;
  const detail::PassBound three = detail::merged_bound(cost, shape, cutoff, 100'000'000, kLimits);
  const detail::PassBound five =
      detail::merged_bound(cost, shape, cutoff, 100'000'000, kLimits, detail::kMergedFields + 2);
  ASSERT_TRUE(three.finished && five.finished);
  EXPECT_GT(five.least_bound, three.least_bound * (1 + 1e-2));
  expect_below_its_plans(cost, three, 32);
  expect_below_its_plans(cost, five, 32);
}

// A refining pass enumerates the plans below `enumerate_within` only where its own least bound
// lies within `enumerate_band` of it. NASNet-A large at GBS 32 on 16 single-GPU machines, two
// copies of 16 micro-batches of 1 under GPipe, whose best plan takes 89.868 ms: 64 buckets of
// worst term bound the shape 0.6 % below it. Within a band of 1 % the pass enumerates, finishes,
// and its bound is the plan's (no plan of the shape is faster); within 0.5 % it does not, and
// its bound is its own, below.
TEST(ShapePass, RefiningPassEnumeratesOnlyWhereItsOwnBoundIsWithinTheBand) {
  if (trials_reduced()) GTEST_SKIP() << "seconds under the sanitizers";
  const detail::CostModel cost = profile_on("nasnetalarge", 16, 1);
  const detail::PipelineShapeChoice shape{2, 1, 16, Schedule::GPipe};
  const Seconds best = 0.0898678;
  const detail::PassBound near =
      detail::refined_bound(cost, shape, best, 400'000'000, kLimits, 64, true, best, false, 0.01);
  const detail::PassBound far =
      detail::refined_bound(cost, shape, best, 400'000'000, kLimits, 64, true, best, false, 0.005);
  ASSERT_TRUE(near.finished && far.finished);
  EXPECT_EQ(near.least_bound, best);
  EXPECT_LT(far.least_bound, best * (1 - 0.005));
  EXPECT_GT(far.least_bound, best * (1 - 0.01));
  EXPECT_GT(near.steps, far.steps);  // the enumeration's, on top of the same pass
}

// Under 1F1B a bucket of worst term is also one of the head's f + g (M / 2 x head_work), which
// the cycles of the stage in front take: merged entries no longer lend a small head to a
// suffix whose cycles a large one paces. GNMT-16 at GBS 384 on 8 machines of 8 GPUs, one copy
// of 96 micro-batches of 4: the search's best plan took 95.0 ms, and the passes with buckets
// of round trip and y + e alone returned none faster; the pass of 16 such buckets returns
// plans near 78.8 ms (a 21 % faster answer for the search), and bounds the shape below each
// of them (simulated).
TEST(ShapePass, HeadBucketsFindTheFastPlansOfAShapeWhoseCyclesTheHeadsPace) {
  if (trials_reduced()) GTEST_SKIP() << "seconds under the sanitizers";
  const detail::CostModel cost = profile_on("gnmt_16", 8);
  const detail::PipelineShapeChoice shape{1, 4, 96, Schedule::OneFOneB};
  const detail::PassBound pass =
      detail::refined_bound(cost, shape, 0.0950, 100'000'000, kLimits, 16, true);
  ASSERT_TRUE(pass.finished);
  ASSERT_FALSE(pass.plans.empty());
  Seconds fastest = std::numeric_limits<Seconds>::infinity();
  for (const detail::DpPlan& plan : pass.plans) {
    const detail::Evaluation ev = detail::evaluate(cost, plan.spec, 384);
    ASSERT_TRUE(ev.fits);
    const Seconds time = simulate(ev.plan.shape()).makespan;
    EXPECT_LE(pass.least_bound, time);
    fastest = std::min(fastest, time);
  }
  EXPECT_LT(fastest, 0.0800);
}

// The transfers across the cut in front of a suffix, both ways, count in the round trip of
// every plan it ends (Dp::prefix_bound). On 16 single-GPU machines every cut crosses
// machines: PipeDream's simplified GNMT-32 at GBS 256, one copy of 4 micro-batches of 64,
// whose best plan takes 501.6 ms (transfers of 8 to 26 ms a cut). A timed pass with a cutoff a
// little below settles the shape in about 70 M steps, within a batch size's default effort;
// without the transfers it took 134 M, and the point stayed open (gap 0.14 %).
TEST(ShapePass, TransfersInFrontOfASuffixBoundThePlansItEnds) {
  if (trials_reduced()) GTEST_SKIP() << "seconds under the sanitizers";
  const ProfileEntry e = find_profile("gnmt_32_simplified");
  const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
  std::vector<int> ends;
  for (int m = 1; m <= 16; ++m) ends.push_back(m);
  const detail::CostModel cost(model, cluster_from_machine_ends(ends), training_settings(e));
  const detail::PipelineShapeChoice shape{1, 64, 4, Schedule::OneFOneB};
  const Seconds cutoff = 0.5010;
  const std::uint64_t effort = 100'000'000;
  const detail::ShapeResult found =
      detail::search_shape(cost, 256, shape, cutoff, effort, 0, kLimits, 0, 0, 0, false, true);
  ASSERT_TRUE(found.complete);
  EXPECT_GE(found.lower_bound, cutoff);
  EXPECT_TRUE(found.plans.empty());
  EXPECT_LT(found.steps, effort);
}

}  // namespace
}  // namespace pe
