// The relaxed pass of the pipeline dynamic program (DpQuery::relaxed) is a proven lower
// bound: on random instances, for every shape, it is never above the least path bound of
// any plan of the shape (enumerated exhaustively), and it is not vacuous. The exact pass with
// the window cycles (DpQuery::windows) finds that least bound, and without them one no
// larger.
#include "search/pipeline_dp.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>

#include "search/exhaustive.h"
#include "search/random_instances.h"

namespace pe {
namespace {

using ShapeKey = std::tuple<int, int, int, Schedule>;

TEST(PipelineDp, RelaxedPassNeverAboveAnyPlansBound) {
  std::mt19937 rng(20261125);
  int shapes = 0, close = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int devices = trial % 2 ? 8 : 4;
    const testing::Instance in = testing::random_instance(rng, trial % 3 ? 6 : 8, devices);
    const detail::CostModel cost(in.model, in.cluster, in.settings);
    const std::vector<Schedule> schedules{Schedule::OneFOneB, Schedule::GPipe};
    std::map<ShapeKey, Seconds> least;
    testing::for_each_plan(cost, in.global_batch, schedules, [&](const Plan& p) {
      if (p.uneven_micro_batches()) return;
      const ShapeKey key{p.pipeline_replicas, p.micro_batch_size, p.micro_batches, p.schedule};
      const auto it = least.find(key);
      if (it == least.end() || p.lower_bound < it->second) least[key] = p.lower_bound;
    });
    for (const auto& [key, bound] : least) {
      const auto& [replicas, micro_batch, micro_batches, schedule] = key;
      detail::DpQuery query{replicas, devices / replicas, micro_batch, micro_batches, schedule};
      // Without the window cycles, a bound no larger.
      const detail::DpResult plain = detail::best_pipeline(cost, query);
      EXPECT_LE(plain.least_bound, bound * (1 + 1e-12)) << "trial " << trial;
      query.windows = true;
      const detail::DpResult exact = detail::best_pipeline(cost, query);
      query.relaxed = true;
      const detail::DpResult relaxed = detail::best_pipeline(cost, query);
      ASSERT_FALSE(relaxed.stopped);
      EXPECT_TRUE(relaxed.plans.empty());
      EXPECT_LE(relaxed.least_bound, bound * (1 + 1e-12)) << "trial " << trial;
      // The exact pass finds the least bound itself.
      EXPECT_NEAR(exact.least_bound, bound, bound * 1e-12) << "trial " << trial;
      ++shapes;
      close += relaxed.least_bound >= 0.9 * bound;
    }
  }
  EXPECT_GT(shapes, 500);
  // Most shapes keep most of their bound.
  EXPECT_GT(close, shapes / 2);
}

}  // namespace
}  // namespace pe
