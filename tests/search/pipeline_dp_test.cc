// The relaxed pass of the pipeline dynamic program (DpQuery::relaxed) is a proven lower
// bound: on random instances, for every shape, it is never above the least path bound of
// any plan of the shape (enumerated exhaustively), and it is not vacuous. The exact pass with
// the window cycles (BoundTerms::windows) finds that least bound, and without them one no
// larger; its plans are plans of the shape. Coarse and greedy passes return plans of the shape
// with their bounds.
#include "search/pipeline_dp.h"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include "cost/suffix_timing.h"
#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "pe/timeline.h"
#include "random_trials.h"
#include "search/exhaustive.h"
#include "search/hybrid_search.h"
#include "search/random_instances.h"
#include "search/shape_pass.h"

namespace pe {
namespace {

using testing::fastest_by_shape;
using testing::least_bound_by_shape;
using testing::ShapeKey;

// A relaxed pass's plans (DpQuery::relaxed) are plans of the shape `key`, least merged bound
// first, each merged bound no more than the plan's own, which is no less than `least` (the
// least of the shape's); true when the first is a plan of the least bound.
bool expect_plans_of_shape(const detail::DpResult& pass, const detail::CostModel& cost,
                           int global_batch, const ShapeKey& key, Seconds least, int trial) {
  EXPECT_FALSE(pass.plans.empty()) << "trial " << trial;
  if (pass.plans.empty()) return false;
  EXPECT_EQ(pass.plans.front().lower_bound, pass.least_bound) << "trial " << trial;
  bool reaches = false;
  for (std::size_t i = 0; i < pass.plans.size(); ++i) {
    const detail::DpPlan& plan = pass.plans[i];
    const detail::Evaluation ev = detail::evaluate(cost, plan.spec, global_batch);
    EXPECT_TRUE(ev.fits) << "trial " << trial;
    EXPECT_EQ((ShapeKey{ev.plan.pipeline_replicas, ev.plan.micro_batch_size, ev.plan.micro_batches,
                        ev.plan.schedule}),
              key)
        << "trial " << trial;
    EXPECT_LE(plan.lower_bound, ev.plan.lower_bound * (1 + 1e-12)) << "trial " << trial;
    EXPECT_GE(ev.plan.lower_bound, least * (1 - 1e-12)) << "trial " << trial;
    if (i > 0) {
      EXPECT_LE(pass.plans[i - 1].lower_bound, plan.lower_bound) << "trial " << trial;
    }
    reaches = reaches || (i == 0 && ev.plan.lower_bound <= least * (1 + 1e-12));
  }
  return reaches;
}

// One shape of a random instance: the fastest simulated plan of the shape and the least path
// bound of its plans (every term), both over every plan enumerated.
struct ShapeCase {
  int trial = 0, devices = 0, global_batch = 0;
  const detail::CostModel* cost = nullptr;
  ShapeKey key;
  Seconds fastest = 0, least_bound = 0;
};

// Calls visit(c) for each shape of `trials` random chains of 6 or 8 states on 4 or 8 GPUs
// drawn from `seed`.
template <typename Visit>
void each_shape(std::uint32_t seed, int trials, Visit visit) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    const int devices = trial % 2 ? 8 : 4;
    const testing::Instance in = testing::random_instance(rng, trial % 3 ? 6 : 8, devices);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    const std::map<ShapeKey, Seconds> bounds = least_bound_by_shape(cost, in.global_batch);
    for (const auto& [key, time] : fastest_by_shape(cost, in.global_batch))
      visit(ShapeCase{trial, devices, in.global_batch, &cost, key, time, bounds.at(key)});
  }
}

// A bounding pass (block, timed block or free-width) that finished, returned no plans and is
// no more than `bound`; counted in `shapes`, and in `close` where it keeps half of `bound`.
void expect_bounding_pass(const detail::DpResult& pass, Seconds bound, const std::string& where,
                          int& shapes, int& close, bool with_plans = false) {
  ASSERT_FALSE(pass.stopped) << where;
  if (!with_plans) {
    EXPECT_TRUE(pass.plans.empty()) << where;
  }
  EXPECT_LE(pass.least_bound, bound * (1 + 1e-12)) << where;
  ++shapes;
  close += pass.least_bound >= 0.5 * bound;
}

// A block pass's plans (DpQuery::state_block) are plans of the shape `key` that their entries
// stand for: least bound first, none below the pass's, and each bound (in a timed pass, a
// bound of the simulated time) no more than the plan's own (its path bound; its simulated
// time). Memory aside: an entry takes the least of the stages it stands for. Returns how many
// plans the pass returned.
int expect_block_plans(const detail::DpResult& pass, const detail::CostModel& cost,
                       const ShapeKey& key, bool timed, const std::string& where) {
  const auto& [replicas, micro_batch, micro_batches, schedule] = key;
  const int global_batch = replicas * micro_batch * micro_batches;
  Seconds before = pass.least_bound;
  for (const detail::DpPlan& plan : pass.plans) {
    EXPECT_GE(plan.lower_bound, before * (1 - 1e-12)) << where;
    before = plan.lower_bound;
    detail::Evaluation ev = detail::evaluate(cost, plan.spec, global_batch);
    EXPECT_EQ((ShapeKey{ev.plan.pipeline_replicas, ev.plan.micro_batch_size, ev.plan.micro_batches,
                        ev.plan.schedule}),
              key)
        << where;
    simulate_plan(ev.plan);
    const Seconds own = timed ? ev.plan.simulated_time : ev.plan.lower_bound;
    // The whole model on one stage is also the pass's whole-model entry (offer_whole_model),
    // with its own costs: a block pass's stage from the first block to the last costs it as a
    // stage of a pipeline, no less.
    if (plan.spec.stages.size() > 1) {
      EXPECT_LE(plan.lower_bound, own * (1 + 1e-12)) << where;
    }
  }
  return static_cast<int>(pass.plans.size());
}

// Calls visit(cost, trial, devices, key, value) for each shape of `trials` varied random chains
// (varied_instance: up to 6 or 8 states on 6 or 8 GPUs) drawn from `seed`, with `value` the
// shape's entry of by_shape(cost, global batch): least_bound_by_shape or fastest_by_shape.
template <typename ByShape, typename Visit>
void each_varied_shape(std::uint32_t seed, int trials, ByShape by_shape, Visit visit) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    const int devices = trial % 2 ? 8 : 6;
    const testing::Instance in = testing::varied_instance(rng, trial, trial % 3 ? 6 : 8, devices);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    for (const auto& [key, value] : by_shape(cost, in.global_batch))
      visit(cost, trial, devices, key, value);
  }
}

TEST(PipelineDp, RelaxedPassNeverAboveAnyPlansBound) {
  std::mt19937 rng(20261125);
  int shapes = 0, close = 0, represented = 0;
  for (int trial = 0; trial < random_trials(200); ++trial) {
    const int devices = trial % 2 ? 8 : 4;
    const testing::Instance in = testing::random_instance(rng, trial % 3 ? 6 : 8, devices);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    for (const auto& [key, bound] : least_bound_by_shape(cost, in.global_batch)) {
      const auto& [replicas, micro_batch, micro_batches, schedule] = key;
      detail::DpQuery query{replicas, devices / replicas, micro_batch, micro_batches, schedule};
      // Without the window cycles, a bound no larger.
      const detail::DpResult plain = detail::best_pipeline(cost, query);
      EXPECT_LE(plain.least_bound, bound * (1 + 1e-12)) << "trial " << trial;
      query.terms.windows = true;
      // Without the chains that end with the last stage's pairs, a bound no larger.
      const detail::DpResult windowed = detail::best_pipeline(cost, query);
      EXPECT_LE(windowed.least_bound, bound * (1 + 1e-12)) << "trial " << trial;
      // With every chain, as a plan's lower_bound (path_lower_bound) has them.
      query.terms = {};
      const detail::DpResult exact = detail::best_pipeline(cost, query);
      query.relaxed = true;
      const detail::DpResult relaxed = detail::best_pipeline(cost, query);
      ASSERT_FALSE(relaxed.stopped);
      EXPECT_LE(relaxed.least_bound, bound * (1 + 1e-12)) << "trial " << trial;
      represented += expect_plans_of_shape(relaxed, cost, in.global_batch, key, bound, trial);
      // The exact pass finds the least bound itself.
      EXPECT_NEAR(exact.least_bound, bound, bound * 1e-12) << "trial " << trial;
      ++shapes;
      close += relaxed.least_bound >= 0.9 * bound;
    }
  }
  EXPECT_GT(shapes, random_trials(500));
  // Most shapes keep most of their bound.
  EXPECT_GT(close, shapes / 2);
  // The plan of the least merged bound is mostly one of least bound (on 93 % of shapes).
  EXPECT_GT(represented, shapes * 3 / 4);
}

// A timed pass (DpQuery::timed) finds the fastest simulated plan of each shape of a few
// micro-batches (kTimedMicroBatches; a closing pass's up to kClosingTimedMicroBatches: timed_most),
// which the path bound may rank below others, and ranks its plans by their simulated times; a
// shape of more micro-batches gets the exact pass.
TEST(PipelineDp, TimedPassFindsTheFastestSimulatedPlanOfEachShape) {
  int timed = 0, below = 0, closing = 0;
  each_shape(20261201, random_trials(120), [&](const ShapeCase& c) {
    const detail::CostModel& cost = *c.cost;
    const int trial = c.trial;
    const Seconds time = c.fastest;
    const auto& [replicas, micro_batch, micro_batches, schedule] = c.key;
    detail::DpQuery query{replicas, c.devices / replicas, micro_batch, micro_batches, schedule};
    query.timed = true;
    // Odd trials as a closing pass times them (search_shape): up to kClosingTimedMicroBatches.
    if (trial % 2) query.timed_most = detail::kClosingTimedMicroBatches;
    const detail::DpResult pass = detail::best_pipeline(cost, query);
    ASSERT_FALSE(pass.stopped);
    if (micro_batches > query.timed_most) {
      // The first passes' terms (kFirstPassTerms): a bound no larger than every plan's.
      EXPECT_LE(pass.least_bound, c.least_bound * (1 + 1e-12)) << "trial " << trial;
      return;
    }
    ++timed;
    closing += micro_batches > detail::kTimedMicroBatches;
    // The first exact passes' bound (kFirstPassTerms, untimed): no larger.
    query.timed = false;
    const Seconds plain = detail::best_pipeline(cost, query).least_bound;
    EXPECT_LE(plain, time * (1 + 1e-12)) << "trial " << trial;
    below += plain < time * (1 - 1e-9);
    query.timed = true;
    EXPECT_NEAR(pass.least_bound, time, time * 1e-12) << "trial " << trial;
    ASSERT_FALSE(pass.plans.empty()) << "trial " << trial;
    for (std::size_t i = 0; i < pass.plans.size(); ++i) {
      const detail::DpPlan& plan = pass.plans[i];
      const detail::Evaluation ev = detail::evaluate(cost, plan.spec, c.global_batch);
      EXPECT_TRUE(ev.fits) << "trial " << trial;
      EXPECT_NEAR(plan.lower_bound, simulate(ev.plan.shape()).makespan, time * 1e-12)
          << "trial " << trial;
      if (i > 0) {
        EXPECT_LE(pass.plans[i - 1].lower_bound, plan.lower_bound) << "trial " << trial;
      }
    }
    // Within a cutoff at the fastest plan it finds that plan; below it, none.
    query.bound = time;
    EXPECT_NEAR(detail::best_pipeline(cost, query).least_bound, time, time * 1e-12);
    query.bound = time * (1 - 1e-6);
    EXPECT_GT(detail::best_pipeline(cost, query).least_bound, time * (1 - 1e-6));
  });
  EXPECT_GT(timed, random_trials(120));
  // On some shapes the first passes' least bound lies below every plan's simulated time,
  // where the timed pass settles the shape; and some are timed only as a closing pass times
  // them (a few of each: not among the tenth of the trials drawn under the sanitizers).
  if (!trials_reduced()) {
    EXPECT_GT(below, 0);
    EXPECT_GT(closing, 10);
  }
}

// A relaxed timed pass (DpQuery::timed with DpQuery::relaxed) bounds the simulated time itself:
// for every shape of up to kRelaxedTimedMicroBatches micro-batches, with one entry a group or
// with buckets of its timings, its least bound is never above the fastest simulated plan of
// the shape (enumerated exhaustively), its plans are plans of the shape whose bounds are no
// more than their simulated times, enumerating within 1 % above that plan it finds it, and on
// some shapes it is above the path bound's least, which bounds every untimed pass.
TEST(PipelineDp, RelaxedTimedPassNeverAboveTheFastestSimulatedPlan) {
  int shapes = 0, above_path = 0, many = 0, close = 0, enumerated = 0;
  each_shape(20261204, random_trials(120), [&](const ShapeCase& c) {
    const detail::CostModel& cost = *c.cost;
    const int trial = c.trial, devices = c.devices;
    const Seconds time = c.fastest;
    const ShapeKey& key = c.key;
    const auto& [replicas, micro_batch, micro_batches, schedule] = key;
    if (!detail::relaxed_timeable(micro_batches, schedule)) return;
    ++shapes;
    many += micro_batches > detail::kTimedMicroBatches;
    detail::DpQuery query{replicas, devices / replicas, micro_batch, micro_batches, schedule};
    query.relaxed = true;
    query.timed = true;
    query.terms.arrivals = true;
    Seconds tightest = 0;
    for (const int buckets : {0, 16, 256}) {
      query.buckets = buckets;
      query.bound = buckets > 0 ? time * 1.5 : std::numeric_limits<Seconds>::infinity();
      const detail::DpResult pass = detail::best_pipeline(cost, query);
      ASSERT_FALSE(pass.stopped);
      EXPECT_LE(pass.least_bound, time * (1 + 1e-12))
          << "trial " << trial << " buckets " << buckets << " M " << micro_batches;
      tightest = std::max(tightest, pass.least_bound);
      for (const detail::DpPlan& plan : pass.plans) {
        const detail::Evaluation ev = detail::evaluate(cost, plan.spec, c.global_batch);
        EXPECT_TRUE(ev.fits) << "trial " << trial;
        EXPECT_EQ((ShapeKey{ev.plan.pipeline_replicas, ev.plan.micro_batch_size,
                            ev.plan.micro_batches, ev.plan.schedule}),
                  key)
            << "trial " << trial;
        EXPECT_LE(plan.lower_bound, simulate(ev.plan.shape()).makespan * (1 + 1e-12))
            << "trial " << trial;
      }
    }
    above_path += tightest > c.least_bound * (1 + 1e-9);
    close += tightest >= 0.9 * time;
    // Enumerating within 1 % of the fastest plan (Search::refine_timed), it finds that plan:
    // a merged timing never hides a plan.
    query.buckets = 16;
    query.bound = time * 1.01;
    query.enumerate = 16;
    query.enumerate_bound = query.bound;
    query.enumerate_plans = 100000;
    const detail::DpResult listed = detail::best_pipeline(cost, query);
    ASSERT_TRUE(listed.enumerated) << "trial " << trial;
    Seconds found = std::numeric_limits<Seconds>::infinity();
    for (const detail::DpPlan& plan : listed.plans)
      found = std::min(
          found, simulate(detail::evaluate(cost, plan.spec, c.global_batch).plan.shape()).makespan);
    EXPECT_NEAR(found, time, time * 1e-12) << "trial " << trial;
    ++enumerated;
  });
  EXPECT_GT(shapes, random_trials(300));
  EXPECT_GT(many, 0);
  EXPECT_EQ(enumerated, shapes);
  // Every shape keeps at least 90 % of its fastest plan's time (all 1,172 of them).
  EXPECT_EQ(close, shapes);
  // Where the path bound lies below the simulated time, the timings see past it (on 2 of the
  // 1,172 shapes; none among the tenth of the trials drawn under the sanitizers).
  if (!trials_reduced()) {
    EXPECT_GT(above_path, 0);
  }
}

// A pass limited to plans of at most L stages (DpQuery::max_stages, L below M) is exact over
// them: its least bound is the least path bound of the shape's plans of at most L stages, a
// timed pass's the fastest simulated of them, and every plan it returns has at most L stages.
// The search looks for simpler plans this way once a shape's bound meets the best plan.
TEST(PipelineDp, StageLimitedPassIsExactOverThePlansOfThatManyStages) {
  std::mt19937 rng(20261203);
  using Key = std::tuple<ShapeKey, std::size_t>;  // shape and stage count
  int limited = 0, binding = 0;
  for (int trial = 0; trial < random_trials(80); ++trial) {
    const int devices = trial % 2 ? 8 : 4;
    const testing::Instance in = testing::random_instance(rng, trial % 3 ? 6 : 8, devices);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    std::map<Key, Seconds> least, fastest;
    testing::for_each_plan(
        cost, in.global_batch, {Schedule::OneFOneB, Schedule::GPipe}, [&](const Plan& p) {
          if (p.uneven_micro_batches()) return;
          const Key key{{p.pipeline_replicas, p.micro_batch_size, p.micro_batches, p.schedule},
                        p.stages.size()};
          const Seconds time = simulate(p.shape()).makespan;
          if (!least.count(key) || p.lower_bound < least[key]) least[key] = p.lower_bound;
          if (!fastest.count(key) || time < fastest[key]) fastest[key] = time;
        });
    // The least over at most `most` stages of one shape (infinity for none).
    auto within = [](const std::map<Key, Seconds>& of, const ShapeKey& shape, std::size_t most) {
      Seconds best = std::numeric_limits<Seconds>::infinity();
      for (const auto& [key, value] : of)
        if (std::get<0>(key) == shape && std::get<1>(key) <= most) best = std::min(best, value);
      return best;
    };
    for (const auto& [shape, bound] : least_bound_by_shape(cost, in.global_batch)) {
      const auto& [replicas, micro_batch, micro_batches, schedule] = shape;
      for (int most = 1; most < std::min(micro_batches, 4); ++most) {
        detail::DpQuery query{replicas, devices / replicas, micro_batch, micro_batches, schedule};
        query.terms = {};  // every chain, as a plan's lower_bound has them
        query.max_stages = most;
        const bool timed = micro_batches <= detail::kTimedMicroBatches && trial % 2 == 0;
        query.timed = timed;
        const detail::DpResult pass = detail::best_pipeline(cost, query);
        ASSERT_FALSE(pass.stopped);
        const Seconds expected = within(timed ? fastest : least, shape, most);
        ++limited;
        binding += expected > (timed ? within(fastest, shape, 99) : bound) * (1 + 1e-9);
        if (!std::isfinite(expected)) {
          EXPECT_TRUE(pass.plans.empty()) << "trial " << trial;
          continue;
        }
        EXPECT_NEAR(pass.least_bound, expected, expected * 1e-12) << "trial " << trial;
        ASSERT_FALSE(pass.plans.empty()) << "trial " << trial;
        for (const detail::DpPlan& plan : pass.plans)
          EXPECT_LE(plan.spec.stages.size(), static_cast<std::size_t>(most)) << "trial " << trial;
        if (timed) continue;
        // Enumerated within 10 % of it: the plans of at most L stages alone.
        query.enumerate = 1000;
        query.enumerate_bound = expected * 1.1;
        query.enumerate_plans = 1 << 20;
        const detail::DpResult all = detail::best_pipeline(cost, query);
        ASSERT_TRUE(all.enumerated) << "trial " << trial;
        ASSERT_FALSE(all.plans.empty()) << "trial " << trial;
        EXPECT_NEAR(all.plans.front().lower_bound, expected, expected * 1e-12);
        for (const detail::DpPlan& plan : all.plans)
          EXPECT_LE(plan.spec.stages.size(), static_cast<std::size_t>(most)) << "trial " << trial;
      }
    }
  }
  EXPECT_GT(limited, random_trials(80));
  // On many shapes the limit leaves out every plan of the least bound.
  EXPECT_GT(binding, limited / 10) << binding << " of " << limited;
}

// A refining pass (DpQuery::buckets) is a lower bound too, between the relaxed pass and the
// least path bound of the shape's plans, whatever the buckets (each a valid bound, none
// nested in another), of round trip alone or also of worst term (DpQuery::worst_buckets);
// and with more buckets it is tighter than the relaxed pass on some shapes and reaches the
// least bound on some where the relaxed pass does not (on about 7 % and 5 % of them). Its
// plans are plans of the shape.
TEST(PipelineDp, RefiningPassBetweenRelaxedPassAndEveryPlansBound) {
  std::mt19937 rng(20261129);
  int shapes = 0, tighter = 0, reached = 0, by_worst_only = 0;
  for (int trial = 0; trial < random_trials(150); ++trial) {
    const int devices = trial % 2 ? 8 : 4;
    const testing::Instance in = testing::random_instance(rng, trial % 3 ? 6 : 8, devices);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    for (const auto& [key, bound] : least_bound_by_shape(cost, in.global_batch)) {
      const auto& [replicas, micro_batch, micro_batches, schedule] = key;
      // Buckets are a share of a finite bound: the plans' within twice the least.
      detail::DpQuery query{replicas,      devices / replicas, micro_batch,
                            micro_batches, schedule,           2 * bound};
      query.relaxed = true;
      query.terms = {};  // every term, as path_lower_bound
      const Seconds relaxed = detail::best_pipeline(cost, query).least_bound;
      bool any_tighter = false, any_reached = false, worst_reached = false;
      for (const bool by_worst : {false, true})
        for (const int buckets : {4, 16, 64}) {
          query.buckets = buckets;
          query.worst_buckets = by_worst;
          const detail::DpResult refined = detail::best_pipeline(cost, query);
          ASSERT_FALSE(refined.stopped);
          expect_plans_of_shape(refined, cost, in.global_batch, key, bound, trial);
          EXPECT_GE(refined.least_bound, relaxed * (1 - 1e-12)) << "trial " << trial;
          EXPECT_LE(refined.least_bound, bound * (1 + 1e-12)) << "trial " << trial;
          const bool reaches =
              relaxed < bound * (1 - 1e-9) && refined.least_bound >= bound * (1 - 1e-9);
          (by_worst ? worst_reached : any_reached) |= reaches;
          any_tighter |= refined.least_bound > relaxed * (1 + 1e-9);
        }
      ++shapes, tighter += any_tighter, reached += any_reached;
      by_worst_only += worst_reached && !any_reached;
    }
  }
  EXPECT_GT(shapes, random_trials(300));
  EXPECT_GT(tighter, shapes / 50);
  EXPECT_GT(reached, shapes / 100);
  // Buckets of the worst term too reach the least bound where round trips alone do not.
  EXPECT_GT(by_worst_only, 0);
}

// A merged pass (DpQuery::merged_fields: an exact pass that keeps the suffixes undominated
// in their first n fields and merges the others into the entry that drops them) is a lower
// bound too, never above the least path bound of the shape's plans, for every n; with every
// field it is the exact pass. With the first three (the search's: round trip, worst and
// all-reduce terms) it is tighter than the relaxed pass on some shapes and reaches the least
// bound on some where the relaxed pass does not. (It may also lie below the relaxed pass: its
// groups are the exact pass's, which put the stage counts of GPipe together, and the heads
// where no cut stays inside a machine, so an entry may take in fields of suffixes the relaxed
// pass keeps apart.) Its plans are plans of the shape.
TEST(PipelineDp, MergedPassNeverAboveAnyPlansBound) {
  int shapes = 0, tighter = 0, reached = 0;
  each_shape(20261206, random_trials(150), [&](const ShapeCase& c) {
    const auto& [replicas, micro_batch, micro_batches, schedule] = c.key;
    const Seconds bound = c.least_bound;
    detail::DpQuery query{replicas, c.devices / replicas, micro_batch, micro_batches, schedule,
                          2 * bound};
    query.relaxed = true;
    query.terms = {};  // every term, as path_lower_bound
    const Seconds relaxed = detail::best_pipeline(*c.cost, query).least_bound;
    query.relaxed = false;
    for (const int fields : {1, 2, 3, 8, detail::kMergedAll}) {
      query.merged_fields = fields;
      const detail::DpResult merged = detail::best_pipeline(*c.cost, query);
      ASSERT_FALSE(merged.stopped);
      expect_plans_of_shape(merged, *c.cost, c.global_batch, c.key, bound, c.trial);
      EXPECT_LE(merged.least_bound, bound * (1 + 1e-12)) << "trial " << c.trial;
      if (fields == detail::kMergedAll) {
        EXPECT_NEAR(merged.least_bound, bound, bound * 1e-12) << "trial " << c.trial;
      }
      if (fields != 3) continue;
      tighter += merged.least_bound > relaxed * (1 + 1e-9);
      reached += relaxed < bound * (1 - 1e-9) && merged.least_bound >= bound * (1 - 1e-9);
    }
    ++shapes;
  });
  EXPECT_GT(shapes, random_trials(300));
  EXPECT_GT(tighter, shapes / 50);
  EXPECT_GT(reached, shapes / 100);
}

// A class pass (DpQuery::device_class) is a lower bound too: on random instances with
// tensor parallelism, recomputation, ZeRO, mixed GPU types and links either way round, for
// every shape and classes of 2 and 3 devices, it is never above the least path bound of any
// plan of the shape, nor of any plan of the same copies, micro-batches and schedule on the
// cluster's first machines (it does not look at where devices sit); and it is not vacuous. (It may
// be above the relaxed pass on single devices: the two group the same plans' fields differently.)
TEST(PipelineDp, ClassPassNeverAboveAnyPlansBound) {
  std::mt19937 rng(20261128);
  int shapes = 0, close = 0, on_parts = 0;
  for (int trial = 0; trial < random_trials(80); ++trial) {
    const int devices = trial % 2 ? 8 : 6;
    const testing::Instance in = testing::varied_instance(rng, trial, trial % 3 ? 4 : 6, devices);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    // The plans of the cluster's first machines (looked up for the shapes the cluster has).
    const auto least_first =
        testing::least_bound_on_first_machines(in.model, in.cluster, in.settings, in.global_batch);
    const int first_devices = in.cluster.device_count() - in.cluster.machine_gpus.back();
    for (const auto& [key, bound] : least_bound_by_shape(cost, in.global_batch)) {
      const auto& [replicas, micro_batch, micro_batches, schedule] = key;
      detail::DpQuery query{replicas, devices / replicas, micro_batch, micro_batches, schedule};
      query.relaxed = query.terms.windows = true;
      const auto on_first = least_first.find(key);
      for (const int c : {2, 3}) {
        query.device_class = c;
        const detail::DpResult classes = detail::best_pipeline(cost, query);
        ASSERT_FALSE(classes.stopped);
        EXPECT_TRUE(classes.plans.empty());
        EXPECT_LE(classes.least_bound, bound * (1 + 1e-12)) << "trial " << trial << ", c " << c;
        if (on_first != least_first.end()) {
          EXPECT_LE(classes.least_bound, on_first->second * (1 + 1e-12))
              << "trial " << trial << ", c " << c << ", first machines";
          // Knowing how wide the copies there are.
          query.narrowest_copy = first_devices / replicas;
          const detail::DpResult apart = detail::best_pipeline(cost, query);
          query.narrowest_copy = 0;
          EXPECT_LE(apart.least_bound, on_first->second * (1 + 1e-12))
              << "trial " << trial << ", c " << c << ", first machines, copies apart";
          EXPECT_GE(apart.least_bound, classes.least_bound * (1 - 1e-12)) << "trial " << trial;
          ++on_parts;
        }
        ++shapes;
        close += classes.least_bound >= 0.5 * bound;
      }
    }
  }
  EXPECT_GT(on_parts, random_trials(100));
  EXPECT_GT(shapes, random_trials(400));
  // Most shapes keep half their bound, with classes as wide as half a copy.
  EXPECT_GT(close, shapes / 2);
}

// One copy across two machines of four GPUs, classes a machine wide: the copy starts on
// device 0, so the class pass knows which of its stages cross a machine's end, and slower
// links across machines raise its bound (it took every stage of a class for one that fits a
// machine, and the bound did not move). It stays below the relaxed pass on single devices.
TEST(PipelineDp, OneCopysClassPassSeesWhereMachinesEnd) {
  std::vector<Layer> layers;
  for (int i = 0; i < 8; ++i) layers.push_back({"l" + std::to_string(i), 0.02, 0.04, 2e7, 1e7});
  const ModelProfile model = make_chain_model("chain", 8, layers);
  Cluster cluster = cluster_from_machine_ends({4, 8});
  auto bound_with = [&](BytesPerSecond across, int device_class) {
    cluster.network = {50e9, across, across};
    const detail::CostModel cost(model, cluster, {});
    detail::DpQuery query{1, 8, 8, 4, Schedule::OneFOneB};
    query.relaxed = query.terms.windows = true;
    query.device_class = device_class;
    const detail::DpResult pass = detail::best_pipeline(cost, query);
    EXPECT_FALSE(pass.stopped);
    return pass.least_bound;
  };
  const Seconds fast = bound_with(50e9, 4), slow = bound_with(0.5e9, 4);
  EXPECT_GT(slow, fast * 1.01);
  EXPECT_LE(slow, bound_with(0.5e9, 1) * (1 + 1e-12));
}

// A block pass (DpQuery::state_block) is a lower bound too: on the same random instances, for
// every shape and blocks of 2 and 3 states, it is never above the least path bound of any plan
// of the shape; and it is not vacuous. Its plans are plans its entries stand for
// (expect_block_plans). With classes of devices it is the class pass.
TEST(PipelineDp, BlockPassNeverAboveAnyPlansBound) {
  int shapes = 0, close = 0, blocked = 0, with_plans = 0;
  auto check = [&](const detail::CostModel& cost, int trial, int devices, const ShapeKey& key,
                   Seconds bound) {
    const auto& [replicas, micro_batch, micro_batches, schedule] = key;
    detail::DpQuery query{replicas, devices / replicas, micro_batch, micro_batches, schedule};
    query.relaxed = query.terms.windows = true;
    query.device_class = 2;
    const Seconds classes = detail::best_pipeline(cost, query).least_bound;
    for (const int block : {2, 3}) {
      query.state_block = block;
      query.device_class = 2;
      EXPECT_EQ(detail::best_pipeline(cost, query).least_bound, classes) << "trial " << trial;
      query.device_class = 1;
      const std::string where =
          "trial " + std::to_string(trial) + ", block " + std::to_string(block);
      const detail::DpResult pass = detail::best_pipeline(cost, query);
      expect_bounding_pass(pass, bound, where, shapes, close, true);
      with_plans += expect_block_plans(pass, cost, key, false, where) > 0;
      blocked += cost.states() > static_cast<std::size_t>(block);
    }
  };
  each_varied_shape(20261129, random_trials(80), least_bound_by_shape, check);
  EXPECT_GT(shapes, random_trials(400));
  EXPECT_GT(blocked, shapes / 2);
  EXPECT_GT(with_plans, shapes / 2);
  // A third of the shapes keep half their bound (about half do; a block is up to half of
  // these models, and the pass loses about a block's work at each cut).
  EXPECT_GT(close, shapes / 3);
}

// A timed block pass (DpQuery::timed with state_block) bounds the simulated time itself: on
// varied random chains (tensor parallelism, recomputation, ZeRO, mixed GPU types), for every
// shape of up to kRelaxedTimedMicroBatches micro-batches and blocks of 2 and 3 states, with one
// entry a group or 16 buckets, it is never above the fastest simulated plan of the shape
// (enumerated exhaustively), its plans are plans its entries stand for (expect_block_plans), and
// on some shapes it is above the untimed block pass, whose bound lies below the path bound's
// least (BlockPassNeverAboveAnyPlansBound).
TEST(PipelineDp, TimedBlockPassNeverAboveTheFastestSimulatedPlan) {
  int shapes = 0, above_untimed = 0, close = 0, beyond_relaxed = 0, with_plans = 0;
  auto check = [&](const detail::CostModel& cost, int trial, int devices, const ShapeKey& key,
                   Seconds time) {
    const auto& [replicas, micro_batch, micro_batches, schedule] = key;
    if (!detail::block_timeable(micro_batches, schedule)) return;
    // Block passes time up to 16 micro-batches, more than relaxed passes over every state.
    beyond_relaxed += !detail::relaxed_timeable(micro_batches, schedule);
    detail::DpQuery query{replicas,      devices / replicas, micro_batch,
                          micro_batches, schedule,           time * 1.5};
    query.relaxed = query.terms.windows = query.terms.arrivals = true;
    for (const int block : {2, 3})
      for (const int buckets : {0, 16}) {
        query.state_block = block;
        query.buckets = buckets;
        query.timed = false;
        const Seconds untimed = detail::best_pipeline(cost, query).least_bound;
        query.timed = true;
        const detail::DpResult pass = detail::best_pipeline(cost, query);
        const std::string where = "trial " + std::to_string(trial) + ", block " +
                                  std::to_string(block) + ", buckets " + std::to_string(buckets);
        expect_bounding_pass(pass, time, where, shapes, close, true);
        with_plans += expect_block_plans(pass, cost, key, true, where) > 0;
        above_untimed += pass.least_bound > untimed * (1 + 1e-9);
      }
  };
  each_varied_shape(20261204, random_trials(40), fastest_by_shape, check);
  EXPECT_GT(shapes, random_trials(1000));
  // About 3 % of them (43 of 1,548; none among the tenth drawn under the sanitizers), and
  // 12 shapes of 11 to 16 micro-batches, beyond what relaxed passes time (none in that tenth).
  if (!trials_reduced()) {
    EXPECT_GT(above_untimed, shapes / 50);
    EXPECT_GE(beyond_relaxed, 10);
  }
  EXPECT_GT(close, shapes / 3);
  EXPECT_GT(with_plans, shapes / 2);
}

// A free-width pass (DpQuery::free_widths) is a lower bound too: on random instances whose
// machines have one size and GPU type (1, 2 or 4 GPUs each on 8 devices), for every shape,
// it is never above the least path bound of any plan of the shape, though its stages run as
// they would at their position on the first machine and may use more devices than a copy has;
// and it is not vacuous.
TEST(PipelineDp, FreeWidthPassNeverAboveAnyPlansBound) {
  std::mt19937 rng(20261201);
  int shapes = 0, close = 0, periods = 0;
  for (int trial = 0; trial < random_trials(80); ++trial) {
    const int devices = 8;
    testing::Instance in = testing::varied_instance(rng, trial, trial % 3 ? 6 : 8, devices);
    if (trial % 3 == 0) in.cluster.machine_gpus.assign(4, 2);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    const int machine = detail::uniform_machines(cost);
    if (machine == 0) continue;  // GPUs of several types
    periods += machine > 1;
    for (const auto& [key, bound] : least_bound_by_shape(cost, in.global_batch)) {
      const auto& [replicas, micro_batch, micro_batches, schedule] = key;
      detail::DpQuery query{replicas, devices / replicas, micro_batch, micro_batches, schedule};
      query.relaxed = query.terms.windows = true;
      query.free_widths = machine;
      const std::string where =
          "trial " + std::to_string(trial) + ", machines of " + std::to_string(machine);
      expect_bounding_pass(detail::best_pipeline(cost, query), bound, where, shapes, close);
    }
  }
  EXPECT_GT(periods, random_trials(30));
  EXPECT_GT(shapes, random_trials(300));
  EXPECT_GT(close, shapes / 2);
}

}  // namespace
}  // namespace pe

namespace pe {
namespace {

// Whether a plan is one a coarse pass of granule g searches: every stage starts at a
// multiple of g of its copy, and every stage but the last is a multiple of g wide.
bool on_granules(const Plan& p, int g) {
  int offset = 0;
  for (std::size_t i = 0; i < p.stages.size(); ++i) {
    if (offset % g != 0) return false;
    if (i + 1 < p.stages.size() && p.stages[i].width % g != 0) return false;
    offset += p.stages[i].width;
  }
  return true;
}

// A coarse pass (DpQuery::granule) is exact over the plans on its granules: on random
// instances its least bound is the least plain path bound of those plans (enumerated
// exhaustively), never below the exact pass's over the whole shape, and every plan it returns
// is one of them, with the bound it was ranked by.
TEST(PipelineDp, CoarsePassIsExactOverThePlansOnItsGranules) {
  std::mt19937 rng(20261127);
  int shapes = 0, narrower = 0;
  for (int trial = 0; trial < random_trials(120); ++trial) {
    const int devices = 8, g = trial % 2 ? 2 : 4;
    const testing::Instance in = testing::random_instance(rng, trial % 3 ? 4 : 6, devices);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    std::map<ShapeKey, Seconds> least;
    testing::for_each_plan(
        cost, in.global_batch, {Schedule::OneFOneB, Schedule::GPipe}, [&](const Plan& p) {
          if (p.uneven_micro_batches() || !on_granules(p, g)) return;
          const ShapeKey key{p.pipeline_replicas, p.micro_batch_size, p.micro_batches, p.schedule};
          const Seconds plain = detail::path_lower_bound(p.shape(), {.windows = false});
          const auto it = least.find(key);
          if (it == least.end() || plain < it->second) least[key] = plain;
        });
    for (const auto& [key, bound] : least) {
      const auto& [replicas, micro_batch, micro_batches, schedule] = key;
      detail::DpQuery query{replicas, devices / replicas, micro_batch, micro_batches, schedule};
      const detail::DpResult exact = detail::best_pipeline(cost, query);
      query.granule = g;
      const detail::DpResult coarse = detail::best_pipeline(cost, query);
      ASSERT_FALSE(coarse.stopped);
      for (const detail::DpPlan& plan : coarse.plans) {
        const detail::Evaluation ev = detail::evaluate(cost, plan.spec, in.global_batch);
        ASSERT_TRUE(ev.fits);
        EXPECT_TRUE(on_granules(ev.plan, g)) << "trial " << trial;
        EXPECT_NEAR(detail::path_lower_bound(ev.plan.shape(), {.windows = false}), plan.lower_bound,
                    plan.lower_bound * 1e-12);
      }
      EXPECT_NEAR(coarse.least_bound, bound, bound * 1e-12) << "trial " << trial;
      EXPECT_GE(coarse.least_bound, exact.least_bound * (1 - 1e-12)) << "trial " << trial;
      ++shapes;
      narrower += coarse.least_bound > exact.least_bound * (1 + 1e-9);
    }
  }
  EXPECT_GT(shapes, random_trials(200));
  EXPECT_GT(narrower, 0);  // the granules do leave plans out
}

}  // namespace
}  // namespace pe

namespace pe {
namespace {

// A greedy pass (DpQuery::greedy) returns plans of the shape, every stage a power of two
// devices wide, ranked by their own path bound, never below the least bound of the shape
// (the exact pass's); it finds that least bound on most shapes of random instances, with
// fewer steps than the exact passes in all.
TEST(PipelineDp, GreedyPassFindsPlansOfTheShapeWithTheirBounds) {
  std::mt19937 rng(20261128);
  int shapes = 0, optimal = 0;
  std::uint64_t greedy_steps = 0, exact_steps = 0;
  for (int trial = 0; trial < random_trials(120); ++trial) {
    const int devices = 8;
    const testing::Instance in = testing::random_instance(rng, trial % 3 ? 6 : 9, devices);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    for (const detail::PipelineShapeChoice& shape : detail::pipeline_shapes(
             in.global_batch, devices, 1, {Schedule::OneFOneB, Schedule::GPipe}, 0)) {
      detail::DpQuery query{shape.replicas, devices / shape.replicas, shape.micro_batch,
                            shape.micro_batches, shape.schedule};
      const detail::DpResult exact = detail::best_pipeline(cost, query);
      query.greedy = true;
      const detail::DpResult greedy = detail::best_pipeline(cost, query);
      ASSERT_FALSE(greedy.stopped);
      if (exact.plans.empty()) {
        EXPECT_TRUE(greedy.plans.empty()) << "trial " << trial;
        continue;
      }
      if (greedy.plans.empty()) continue;
      // A greedy pass ranks by the bound without the later stages' pacing (`paced`); the
      // exact pass minimizes the paced one over every plan.
      Seconds paced = std::numeric_limits<Seconds>::infinity();
      for (const detail::DpPlan& plan : greedy.plans) {
        const detail::Evaluation ev = detail::evaluate(cost, plan.spec, in.global_batch);
        ASSERT_TRUE(ev.fits) << "trial " << trial;
        for (std::size_t s = 0; s + 1 < ev.plan.stages.size(); ++s)
          EXPECT_TRUE(std::has_single_bit(static_cast<unsigned>(ev.plan.stages[s].width)))
              << "trial " << trial;
        EXPECT_NEAR(detail::path_lower_bound(ev.plan.shape(), {.windows = false, .paced = false}),
                    plan.lower_bound, plan.lower_bound * 1e-12);
        paced = std::min(paced, detail::path_lower_bound(ev.plan.shape(), {.windows = false}));
      }
      EXPECT_NEAR(greedy.least_bound, greedy.plans.front().lower_bound, greedy.least_bound * 1e-12);
      EXPECT_GE(paced, exact.least_bound * (1 - 1e-12)) << "trial " << trial;
      ++shapes;
      optimal += paced <= exact.least_bound * (1 + 1e-12);
      greedy_steps += greedy.steps;
      exact_steps += exact.steps;
    }
  }
  EXPECT_GT(shapes, random_trials(300));
  EXPECT_GT(optimal, shapes / 2);
  EXPECT_LT(greedy_steps, exact_steps);
}

// A plan of the enumeration tests' exhaustive lists: its stages, bound and simulated time,
// and whether it recomputes a stage.
struct Listed {
  std::string stages;
  Seconds bound;
  Seconds time;
  bool recomputes;
};

// The enumeration tests' random instance of trial `trial` (5 or 7 layers on 4 or 8 devices,
// half of them with identity layers, which give twins), and every plan of it with micro-batches
// of one size, by shape.
struct EnumerationInstance {
  int devices;
  testing::Instance in;
  std::map<ShapeKey, std::vector<Listed>> by_shape;
};
EnumerationInstance enumeration_instance(std::mt19937& rng, int trial) {
  const int devices = trial % 2 ? 8 : 4;
  EnumerationInstance e{
      devices, testing::random_instance(rng, trial % 3 ? 5 : 7, devices, trial % 2 == 0), {}};
  const detail::CostModel cost(e.in.model, e.in.cluster, e.in.settings);
  testing::for_each_plan(
      cost, e.in.global_batch, {Schedule::OneFOneB, Schedule::GPipe}, [&](const Plan& p) {
        if (p.uneven_micro_batches()) return;
        const bool recomputes = std::any_of(p.stages.begin(), p.stages.end(),
                                            [](const PlanStage& st) { return st.recompute; });
        e.by_shape[{p.pipeline_replicas, p.micro_batch_size, p.micro_batches, p.schedule}]
            .push_back({stages_string(p), p.lower_bound, simulate(p.shape()).makespan, recomputes});
      });
  return e;
}

// The least bound of `plans`.
Seconds least_of(const std::vector<Listed>& plans) {
  Seconds least = std::numeric_limits<Seconds>::infinity();
  for (const Listed& plan : plans) least = std::min(least, plan.bound);
  return least;
}

// An enumerating pass (DpQuery::enumerate) finds every plan of the shape whose bound is
// within its bound: on random instances (half of them with identity layers, which give
// twins), each plan it returns is one of the shape with that bound, and every plan of the
// shape within it (enumerated exhaustively) is among them or has a twin there of the same
// simulated time, but for plans that recompute a stage (the pass, like the others, leaves
// out recomputation where the stage fits without it); so the fastest plan within the bound
// is among them. With one plan fewer allowed it does not finish, and the pass's own answer
// stands, with at most as many of the plans it found. With step_limit just the pass's steps
// it does not finish, and with enumerate_step_limit at the steps it took, it does.
TEST(PipelineDp, EnumeratingPassFindsEveryPlanWithinItsBound) {
  std::mt19937 rng(20261129);
  int shapes = 0, several = 0, twins = 0, limited = 0;
  for (int trial = 0; trial < random_trials(60); ++trial) {
    const auto [devices, in, by_shape] = enumeration_instance(rng, trial);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    for (const auto& [key, plans] : by_shape) {
      const auto& [replicas, micro_batch, micro_batches, schedule] = key;
      std::set<std::string> names;
      for (const Listed& plan : plans) names.insert(plan.stages);
      const Seconds within = least_of(plans) * (1 + 0.1 * (trial % 4));
      // The cells keep every suffix (no bound); the enumeration stops at its own.
      detail::DpQuery query{replicas, devices / replicas, micro_batch, micro_batches, schedule};
      query.terms = {};  // every term
      query.enumerate = 1000;
      query.enumerate_bound = within;
      query.enumerate_plans = 1 << 20;
      const detail::DpResult all = detail::best_pipeline(cost, query);
      ASSERT_TRUE(all.enumerated) << "trial " << trial;
      std::set<std::string> found;
      int beyond = 0;
      for (const detail::DpPlan& plan : all.plans) {
        const detail::Evaluation ev = detail::evaluate(cost, plan.spec, in.global_batch);
        ASSERT_TRUE(ev.fits) << "trial " << trial;
        EXPECT_NEAR(ev.plan.lower_bound, plan.lower_bound, plan.lower_bound * 1e-12);
        const std::string name = stages_string(ev.plan);
        EXPECT_TRUE(names.count(name)) << "trial " << trial << " " << name;
        EXPECT_TRUE(found.insert(name).second) << "trial " << trial << " twice: " << name;
        // Beyond the bound: the pass's own plans (at most query.plans).
        if (plan.lower_bound > within * (1 + 1e-12)) ++beyond;
      }
      EXPECT_LE(beyond, query.plans);
      // A plan left out has a twin found: the same stage times, so the same simulation.
      std::set<Seconds> simulated;
      for (const detail::DpPlan& plan : all.plans)
        simulated.insert(
            simulate(detail::evaluate(cost, plan.spec, in.global_batch).plan.shape()).makespan);
      for (const Listed& plan : plans) {
        if (plan.bound <= within * (1 - 1e-12) && !plan.recomputes && !found.count(plan.stages)) {
          EXPECT_TRUE(simulated.count(plan.time))
              << "trial " << trial << " missing " << plan.stages;
          ++twins;
        }
      }
      // The pass alone within step_limit: its enumeration needs enumerate_step_limit.
      if (all.enumeration_steps > 0) {
        detail::DpQuery capped = query;
        capped.step_limit = all.steps - all.enumeration_steps;
        const detail::DpResult cut = detail::best_pipeline(cost, capped);
        EXPECT_FALSE(cut.stopped) << "trial " << trial;
        EXPECT_FALSE(cut.enumerated) << "trial " << trial;
        capped.enumerate_step_limit = all.steps;
        const detail::DpResult room = detail::best_pipeline(cost, capped);
        EXPECT_TRUE(room.enumerated) << "trial " << trial;
        EXPECT_EQ(room.plans.size(), all.plans.size()) << "trial " << trial;
        ++limited;
      }
      ++shapes;
      several += static_cast<int>(found.size()) - beyond > 1;
      const int within_bound = static_cast<int>(found.size()) - beyond;
      if (within_bound == 0) continue;
      query.enumerate_plans = within_bound - 1;
      const detail::DpResult short_one = detail::best_pipeline(cost, query);
      EXPECT_FALSE(short_one.enumerated);
      EXPECT_FALSE(short_one.stopped);
      EXPECT_EQ(short_one.least_bound, all.least_bound);
      // The pass's own plans and at most as many of those it found.
      EXPECT_LE(short_one.plans.size(), 2 * static_cast<std::size_t>(query.plans));
    }
  }
  EXPECT_GT(shapes, random_trials(150));
  EXPECT_GT(several, shapes / 4);
  EXPECT_GT(limited, shapes / 4);
  // Twins are rare enough that the sanitizer run's tenth of the trials may hold none.
  if (!trials_reduced()) {
    EXPECT_GT(twins, 0);
  }
}

// A DpQuery::time_plan for the plans of `cost` at `global_batch`: each that fits, simulated.
auto simulated_times(const detail::CostModel& cost, int global_batch) {
  return [&cost, global_batch](const detail::PipelineSpec& spec) -> std::optional<Seconds> {
    const detail::Evaluation ev = detail::evaluate(cost, spec, global_batch);
    if (!ev.fits) return std::nullopt;
    return simulate(ev.plan.shape()).makespan;
  };
}

// An enumeration that stops (its steps or its plans run out) still bounds the plans it did not
// list (DpResult::unlisted_bound): on random instances, cut at a quarter, a half and three
// quarters of the steps it needs, or at a third of its plans, every plan of the shape
// (enumerated exhaustively) that it does not list, nor a twin of one (the same simulated time),
// nor one that recomputes a stage, has a bound no less than unlisted_bound, which is no less
// than the pass's least bound; on some shapes it is above it. So also where it simulates the
// plans it finds (DpQuery::time_plan), which lowers the bound it enumerates within.
TEST(PipelineDp, StoppedEnumerationBoundsEveryPlanItDidNotList) {
  std::mt19937 rng(20261206);
  int cut = 0, raised = 0;
  for (int trial = 0; trial < random_trials(60); ++trial) {
    const auto [devices, in, by_shape] = enumeration_instance(rng, trial);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    for (const auto& [key, plans] : by_shape) {
      const auto& [replicas, micro_batch, micro_batches, schedule] = key;
      const Seconds least = least_of(plans);
      detail::DpQuery query{replicas, devices / replicas, micro_batch, micro_batches, schedule};
      query.terms = {};  // every term
      query.plans = 2;
      query.enumerate = 1000;
      query.enumerate_bound = least * (1 + 0.1 * (trial % 4));
      query.enumerate_plans = 1 << 20;
      const detail::DpResult all = detail::best_pipeline(cost, query);
      ASSERT_TRUE(all.enumerated) << "trial " << trial;
      const std::uint64_t pass = all.steps - all.enumeration_steps;
      std::vector<detail::DpQuery> stops(4, query);
      for (int quarter = 1; quarter <= 3; ++quarter) {
        stops[quarter - 1].step_limit = pass;
        stops[quarter - 1].enumerate_step_limit = pass + all.enumeration_steps * quarter / 4;
      }
      stops[3].enumerate_plans = static_cast<int>(all.plans.size()) / 3;
      // Half the trials simulate the plans they find (DpQuery::time_plan).
      if (trial % 2 == 1)
        for (detail::DpQuery& stop : stops) stop.time_plan = simulated_times(cost, in.global_batch);
      for (const detail::DpQuery& stop : stops) {
        const detail::DpResult part = detail::best_pipeline(cost, stop);
        if (part.enumerated || part.stopped) continue;
        ++cut;
        EXPECT_GE(part.unlisted_bound, part.least_bound) << "trial " << trial;
        std::set<Seconds> listed;
        for (const detail::DpPlan& plan : part.plans)
          listed.insert(
              simulate(detail::evaluate(cost, plan.spec, in.global_batch).plan.shape()).makespan);
        for (const Listed& plan : plans) {
          if (!plan.recomputes && !listed.count(plan.time)) {
            EXPECT_GE(plan.bound, part.unlisted_bound * (1 - 1e-12)) << "trial " << trial;
          }
        }
        raised += part.unlisted_bound > part.least_bound * (1 + 1e-9);
      }
    }
  }
  EXPECT_GT(cut, random_trials(40));
  EXPECT_GT(raised, trials_reduced() ? 0 : cut / 10);
}

// An enumeration that simulates the plans it finds (DpQuery::time_plan) enumerates within the
// fastest of them: on random instances, with its bound 30 % above the shape's fastest plan, it
// finishes; it lists a plan of the shape's least simulated time (enumerated exhaustively,
// leaving out plans that recompute a stage, which the pass leaves out where a stage fits without)
// and its unlisted_bound is that time, no more than the bound of any plan it does not list (nor
// a twin of one); it takes no more steps than the same enumeration without the times, and on
// some shapes fewer.
TEST(PipelineDp, TimedEnumerationStopsAtTheFastestPlanItFinds) {
  std::mt19937 rng(20261207);
  int shapes = 0, fewer = 0;
  for (int trial = 0; trial < random_trials(60); ++trial) {
    const auto [devices, in, by_shape] = enumeration_instance(rng, trial);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    const int global_batch = in.global_batch;  // (a lambda may not capture a structured binding)
    auto time_of = [&](const detail::PipelineSpec& spec) {
      return simulate(detail::evaluate(cost, spec, global_batch).plan.shape()).makespan;
    };
    for (const auto& [key, plans] : by_shape) {
      const auto& [replicas, micro_batch, micro_batches, schedule] = key;
      Seconds fastest = std::numeric_limits<Seconds>::infinity(), any = fastest;
      for (const Listed& plan : plans) {
        if (!plan.recomputes) fastest = std::min(fastest, plan.time);
        any = std::min(any, plan.time);
      }
      if (!std::isfinite(fastest)) continue;
      detail::DpQuery query{replicas, devices / replicas, micro_batch, micro_batches, schedule};
      query.terms = {};  // every term
      query.enumerate = 1000;
      query.enumerate_bound = fastest * 1.3;
      query.enumerate_plans = 1 << 20;
      const detail::DpResult plain = detail::best_pipeline(cost, query);
      query.time_plan = simulated_times(cost, in.global_batch);
      const detail::DpResult timed = detail::best_pipeline(cost, query);
      ASSERT_TRUE(plain.enumerated) << "trial " << trial;
      ASSERT_TRUE(timed.enumerated) << "trial " << trial;
      std::set<Seconds> listed;
      for (const detail::DpPlan& plan : timed.plans) listed.insert(time_of(plan.spec));
      EXPECT_LE(*listed.begin(), fastest * (1 + 1e-12)) << "trial " << trial;
      EXPECT_GE(*listed.begin(), any * (1 - 1e-12)) << "trial " << trial;
      EXPECT_NEAR(timed.unlisted_bound, *listed.begin(), fastest * 1e-12) << "trial " << trial;
      for (const Listed& plan : plans)
        if (!plan.recomputes && !listed.count(plan.time)) {
          EXPECT_GE(plan.bound, timed.unlisted_bound * (1 - 1e-12))
              << "trial " << trial << " " << plan.stages;
        }
      EXPECT_LE(timed.steps, plain.steps) << "trial " << trial;
      fewer += timed.steps < plain.steps;
      ++shapes;
    }
  }
  EXPECT_GT(shapes, random_trials(150));
  EXPECT_GT(fewer, shapes / 4);
}

// A refining relaxed pass (DpQuery::relaxed, buckets) may enumerate too: a cell's entry holds
// the least of each field over the suffixes of its group and bucket, so some entry of the
// cell after a stage completes the stages so far within the bound wherever a suffix the cell
// stands for does, and the depth-first search over its cells misses no plan. On random
// instances, every plan of the shape whose bound is within the pass's (enumerated
// exhaustively) is among those it returns or has a twin there of the same simulated time, but
// for plans that recompute a stage; each returned within the bound is a plan of the shape,
// with its bound under the pass's terms.
TEST(PipelineDp, RefiningPassEnumeratesEveryPlanWithinItsBound) {
  std::mt19937 rng(20261204);
  int shapes = 0, several = 0;
  for (int trial = 0; trial < random_trials(60); ++trial) {
    const auto [devices, in, by_shape] = enumeration_instance(rng, trial);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    for (const auto& [key, plans] : by_shape) {
      const auto& [replicas, micro_batch, micro_batches, schedule] = key;
      const Seconds within = least_of(plans) * (1 + 0.05 * (trial % 4));
      detail::DpQuery query{replicas,      devices / replicas, micro_batch,
                            micro_batches, schedule,           within};
      query.relaxed = true;
      query.buckets = 16;
      query.worst_buckets = trial % 2 == 1;
      query.terms.windows = true;
      query.terms.arrivals = true;
      query.enumerate = 1000;
      query.enumerate_bound = within;
      query.enumerate_plans = 1 << 20;
      const detail::DpResult all = detail::best_pipeline(cost, query);
      if (all.least_bound > within) continue;  // the relaxed cells' least is above it
      ASSERT_TRUE(all.enumerated) << "trial " << trial;
      std::set<std::string> found;
      std::set<Seconds> simulated;
      for (const detail::DpPlan& plan : all.plans) {
        if (plan.lower_bound > within * (1 + 1e-9)) continue;  // the pass's own plans
        const detail::Evaluation ev = detail::evaluate(cost, plan.spec, in.global_batch);
        ASSERT_TRUE(ev.fits) << "trial " << trial;
        EXPECT_NEAR(detail::path_lower_bound(ev.plan.shape(), query.terms), plan.lower_bound,
                    plan.lower_bound * 1e-12);
        found.insert(stages_string(ev.plan));
        simulated.insert(simulate(ev.plan.shape()).makespan);
      }
      for (const Listed& plan : plans) {
        if (plan.bound <= within * (1 - 1e-12) && !plan.recomputes && !found.count(plan.stages)) {
          EXPECT_TRUE(simulated.count(plan.time))
              << "trial " << trial << " missing " << plan.stages;
        }
      }
      ++shapes;
      several += found.size() > 1;
    }
  }
  EXPECT_GT(shapes, random_trials(150));
  EXPECT_GT(several, shapes / 4);
}

}  // namespace
}  // namespace pe

namespace pe {
namespace {

// A pass stops exactly at its step limit: with the steps it took unlimited it finishes with
// the same answer, with one step less it stops without plans, within the limit. The search
// shares its effort on this (a shape that finished within its share is settled); the bound
// leaves many cells empty, so many stages tried are ones no suffix can follow (checked, not
// costed, eight to a step).
TEST(PipelineDp, APassStopsExactlyAtItsStepLimit) {
  std::mt19937 rng(20261127);
  int tried = 0;
  for (int trial = 0; trial < random_trials(60); ++trial) {
    const int devices = trial % 2 ? 8 : 4;
    const testing::Instance in = testing::random_instance(rng, 8, devices);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    detail::DpQuery query{1, devices, in.global_batch, 1, Schedule::OneFOneB};
    query.micro_batch = std::max(1, in.global_batch / 2);
    query.micro_batches = in.global_batch / query.micro_batch;
    if (query.micro_batch * query.micro_batches != in.global_batch) continue;
    query.terms.windows = trial % 3 == 0;
    const detail::DpResult open = detail::best_pipeline(cost, query);
    ASSERT_FALSE(open.stopped);
    if (open.plans.empty()) continue;
    query.bound = open.least_bound * 1.05;  // prunes: many cells stay empty
    const detail::DpResult full = detail::best_pipeline(cost, query);
    ASSERT_FALSE(full.stopped);
    query.step_limit = full.steps;
    const detail::DpResult enough = detail::best_pipeline(cost, query);
    ASSERT_FALSE(enough.stopped) << "trial " << trial;
    EXPECT_EQ(enough.steps, full.steps);
    EXPECT_EQ(enough.least_bound, full.least_bound);
    ASSERT_EQ(enough.plans.size(), full.plans.size());
    query.step_limit = full.steps - 1;
    const detail::DpResult short_one = detail::best_pipeline(cost, query);
    EXPECT_TRUE(short_one.stopped) << "trial " << trial;
    EXPECT_TRUE(short_one.plans.empty());
    EXPECT_LE(short_one.steps, query.step_limit);
    ++tried;
  }
  EXPECT_GT(tried, random_trials(20)) << tried;
}

// A stage of micro-batches of one sample has one device (max_stage_width), so one copy of a
// chain of at most 8 states can reach no further than its first machine (a one-stage plan,
// which may be wider, kept to it too): on 8 machines of 8 GPUs an exact pass finds the same
// least bound and plans as on that machine alone, for no more steps than its empty cells add
// (Dp::reachable: the cells beyond are not filled).
TEST(PipelineDp, CellsNoPlanReachesAreNotFilled) {
  std::mt19937 rng(20261204);
  for (int trial = 0; trial < random_trials(40); ++trial) {
    testing::Instance in = testing::random_instance(rng, 8, 8);
    const Network network = in.cluster.network;
    auto on = [&](const std::vector<int>& ends) {
      Cluster cluster = cluster_from_machine_ends(ends);
      cluster.network = network;
      cluster.device_memory = in.cluster.device_memory;
      return detail::CostModel(in.model, cluster, in.settings);
    };
    const detail::CostModel machine = on({8});
    const detail::CostModel cluster = on({8, 16, 24, 32, 40, 48, 56, 64});
    detail::DpQuery query{1, 8, 1, 4, trial % 2 ? Schedule::OneFOneB : Schedule::GPipe};
    query.max_stage_width = 8;  // a one-stage plan too, which may be wider
    const detail::DpResult narrow = detail::best_pipeline(machine, query);
    query.replica_width = 64;
    const detail::DpResult wide = detail::best_pipeline(cluster, query);
    ASSERT_FALSE(narrow.stopped || wide.stopped);
    EXPECT_EQ(wide.least_bound, narrow.least_bound) << "trial " << trial;
    ASSERT_EQ(wide.plans.size(), narrow.plans.size()) << "trial " << trial;
    for (std::size_t i = 0; i < wide.plans.size(); ++i)
      EXPECT_EQ(wide.plans[i].lower_bound, narrow.plans[i].lower_bound) << "trial " << trial;
    // The wider copy's only extra steps are its empty cells (8 times as many offsets a row).
    const std::uint64_t cells = static_cast<std::uint64_t>(in.model.states.size()) * 65;
    EXPECT_LE(wide.steps, narrow.steps + cells) << "trial " << trial;
  }
}

// VGG-19 over 3 machines of 8 GPUs, one copy of 8 micro-batches of 8: rows of about a million
// steps, filled in parallel. Its exact pass (2 % above the least bound: about 20 M steps) and its
// relaxed pass.
struct LargeRows {
  LargeRows() : LargeRows(find_profile("vgg19")) {}
  explicit LargeRows(const ProfileEntry& entry)
      : cost(import_pipedream_graph(entry.path, entry.profile_batch_size),
             cluster_from_machine_ends({8, 16, 24}), training_settings(entry)) {
    exact.bound = 0.039;
    relaxed = exact;
    relaxed.relaxed = true;
    relaxed.terms.windows = true;
    relaxed.bound = std::numeric_limits<Seconds>::infinity();
  }
  detail::CostModel cost;
  detail::DpQuery exact{1, 24, 8, 8, Schedule::OneFOneB};
  detail::DpQuery relaxed;
};

// The cells of a row are filled in parallel where rows are large (Dp::fill_row), with the steps
// counted as if one after another: on LargeRows, exact and relaxed passes give the same plans,
// bounds and steps on one thread and on two, whether they finish or stop at their step limit,
// also where that falls inside a row.
TEST(PipelineDp, RowsFilledInParallelGiveTheSameAnswerAndSteps) {
  const LargeRows rows;
  const detail::CostModel& cost = rows.cost;
  const detail::DpQuery &exact = rows.exact, &relaxed = rows.relaxed;
  auto run = [&](detail::DpQuery query, int threads) {
    const tbb::global_control cap(tbb::global_control::max_allowed_parallelism, threads);
    return detail::best_pipeline(cost, query);
  };
  auto same = [](const detail::DpResult& a, const detail::DpResult& b) {
    EXPECT_EQ(a.stopped, b.stopped);
    EXPECT_EQ(a.steps, b.steps);
    EXPECT_EQ(a.least_bound, b.least_bound);
    ASSERT_EQ(a.plans.size(), b.plans.size());
    for (std::size_t i = 0; i < a.plans.size(); ++i) {
      EXPECT_EQ(a.plans[i].lower_bound, b.plans[i].lower_bound);
      const auto& x = a.plans[i].spec.stages;
      const auto& y = b.plans[i].spec.stages;
      ASSERT_EQ(x.size(), y.size());
      for (std::size_t j = 0; j < x.size(); ++j)
        EXPECT_EQ(std::tie(x[j].first, x[j].last, x[j].offset, x[j].width),
                  std::tie(y[j].first, y[j].last, y[j].offset, y[j].width));
    }
  };
  for (detail::DpQuery query : {exact, relaxed}) {
    const detail::DpResult full = run(query, 1);
    ASSERT_FALSE(full.stopped);
    ASSERT_GT(full.steps, 100000u);  // rows large enough to be filled in parallel
    same(full, run(query, 2));
    for (const std::uint64_t limit : {full.steps - 1, full.steps / 2, full.steps / 7}) {
      query.step_limit = limit;
      const detail::DpResult one = run(query, 1);
      EXPECT_TRUE(one.stopped);
      EXPECT_LE(one.steps, limit);
      same(one, run(query, 2));
    }
  }
}

// A pass stops once its cells (with one cell's candidates while it is filled) would hold more
// than DpQuery::memory_limit bytes: with the bytes a pass with no limit reports it needs
// (DpResult::bytes) it gives the same answer and steps, with one byte less it stops, with every
// step it was allowed counted as spent, at the same place on one thread and on two, also where a
// row filled in parallel stops it. On LargeRows: exact, relaxed and timed passes.
TEST(PipelineDp, APassStopsAtItsMemoryLimitOnAnyThreadCount) {
  const LargeRows rows;
  const detail::CostModel& cost = rows.cost;
  const detail::DpQuery &exact = rows.exact, &relaxed = rows.relaxed;
  detail::DpQuery timed = exact;
  timed.timed = true;
  auto run = [&](const detail::DpQuery& query, int threads) {
    const tbb::global_control cap(tbb::global_control::max_allowed_parallelism, threads);
    return detail::best_pipeline(cost, query);
  };
  for (detail::DpQuery query : {exact, relaxed, timed}) {
    query.memory_limit = 0;
    const detail::DpResult free = run(query, 2);
    ASSERT_FALSE(free.stopped);
    ASSERT_GT(free.bytes, 100000u);
    EXPECT_EQ(run(query, 1).bytes, free.bytes);
    query.step_limit = 3 * free.steps;
    std::vector<std::uint64_t> limits{free.bytes, free.bytes - 1};
    for (int k = 63; k > 0; k -= 16) limits.push_back(free.bytes * k / 64);  // inside rows too
    for (const std::uint64_t limit : limits) {
      query.memory_limit = limit;
      const detail::DpResult one = run(query, 1);
      const detail::DpResult two = run(query, 2);
      EXPECT_EQ(one.out_of_memory, two.out_of_memory) << limit;
      EXPECT_EQ(one.steps, two.steps) << limit;
      EXPECT_EQ(one.stopped, one.out_of_memory) << limit;  // it has the steps it needs
      if (limit < free.bytes) {
        EXPECT_TRUE(one.out_of_memory) << limit;
        EXPECT_EQ(one.steps, query.step_limit);
        EXPECT_TRUE(one.plans.empty());
        continue;
      }
      EXPECT_FALSE(one.stopped);
      EXPECT_EQ(one.bytes, free.bytes);
      EXPECT_EQ(one.steps, free.steps);
      EXPECT_EQ(one.least_bound, free.least_bound);
      ASSERT_EQ(one.plans.size(), free.plans.size());
      for (std::size_t i = 0; i < one.plans.size(); ++i)
        EXPECT_EQ(one.plans[i].lower_bound, free.plans[i].lower_bound);
    }
  }
}

}  // namespace
}  // namespace pe
