// Checks shared by the robustness tests: the contract every plan keeps, and error
// messages that must name what went wrong.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "pe/cluster.h"
#include "pe/model.h"
#include "pe/plan.h"

namespace pe::robustness {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// Stages cover every state of `model` contiguously, widths are positive, the plan uses no
/// more devices than `cluster` has, its micro-batches of at most micro_batch_size add up to
/// the global batch (micro_batch_size x micro_batches x pipeline_replicas is at least the
/// batch, and less than micro_batches x pipeline_replicas more), and its times and speedup
/// are finite and positive.
inline void expect_sound_plan(const Plan& plan, const ModelProfile& model, const Cluster& cluster) {
  ASSERT_FALSE(plan.stages.empty());
  EXPECT_EQ(plan.stages.front().first_state, 0u);
  EXPECT_EQ(plan.stages.back().last_state + 1, model.size());
  for (std::size_t s = 1; s < plan.stages.size(); ++s)
    EXPECT_EQ(plan.stages[s].first_state, plan.stages[s - 1].last_state + 1) << "stage " << s;
  for (const PlanStage& stage : plan.stages) EXPECT_GE(stage.width, 1);
  EXPECT_LE(plan.device_count(), cluster.device_count());
  const long long parts = static_cast<long long>(plan.micro_batches) * plan.pipeline_replicas;
  EXPECT_GE(plan.micro_batch_size * parts, plan.global_batch);
  EXPECT_LT(plan.micro_batch_size * parts, plan.global_batch + parts);
  EXPECT_TRUE(std::isfinite(plan.iteration_time) && plan.iteration_time > 0) << plan.iteration_time;
  EXPECT_TRUE(std::isfinite(plan.simulated_time) && plan.simulated_time > 0) << plan.simulated_time;
  EXPECT_TRUE(std::isfinite(plan.speedup) && plan.speedup > 0) << plan.speedup;
}

/// Runs `action`, which must throw `Error` whose message contains every fragment.
template <typename Error, typename Action>
void expect_error_naming(Action action, const std::vector<std::string>& fragments) {
  std::vector<::testing::Matcher<std::string>> each;
  for (const std::string& fragment : fragments) each.push_back(::testing::HasSubstr(fragment));
  EXPECT_THAT(action, ::testing::ThrowsMessage<Error>(::testing::AllOfArray(each)));
}

}  // namespace pe::robustness
