// Numeric safety of models: NaN, infinity, negative and overflowing values, zero-time
// layers, and the smallest and largest shapes (one layer, 10,000 layers).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "pe/error.h"
#include "pe/model.h"
#include "pe/planner.h"
#include "robustness/robustness_checks.h"

namespace pe {
namespace {

using robustness::expect_error_naming;
using robustness::expect_sound_plan;
using ::testing::HasSubstr;

using robustness::kInf;
using robustness::kNaN;

Layer plain_layer(int index) { return {"layer" + std::to_string(index), 1e-3, 2e-3, 1e6, 1e6}; }

std::vector<Layer> chain_of(int count) {
  std::vector<Layer> layers;
  for (int i = 0; i < count; ++i) layers.push_back(plain_layer(i));
  return layers;
}

TEST(NumericModel, NanInfinityAndNegativeValuesAreInputErrorsNamingTheField) {
  struct Case {
    double Layer::*field;
    const char* name;
  };
  for (const Case& c :
       {Case{&Layer::forward, "forward"}, Case{&Layer::backward, "backward"},
        Case{&Layer::activation, "activation"}, Case{&Layer::parameters, "parameters"}})
    for (double bad : {kNaN, kInf, -kInf, -1.0}) {
      std::vector<Layer> layers = chain_of(3);
      layers[1].*c.field = bad;
      SCOPED_TRACE(std::string(c.name) + " = " + std::to_string(bad));
      expect_error_naming<InputError>([&] { make_chain_model("m", 8, layers); },
                                      {"m: state 1 (layer1)", c.name});
    }
}

TEST(NumericModel, CumulativeOverflowIsNamedAsAnOverflow) {
  std::vector<Layer> layers = chain_of(3);
  layers[0].parameters = 1e308;
  layers[1].parameters = 1e308;  // finite on its own; the running sum is not
  expect_error_naming<InputError>([&] { make_chain_model("m", 8, layers); },
                                  {"state 1 (layer1)", "cumulative parameters", "overflows"});
}

TEST(NumericModel, BadProfileBatchSizeIsAnInputError) {
  for (double pbs : {0.0, -1.0, kNaN, kInf, 1e-300, 5e-4, 2e9})
    expect_error_naming<InputError>([&] { make_chain_model("m", pbs, chain_of(2)); },
                                    {"profile batch size", "from 0.001 to 2^30"});
  EXPECT_NO_THROW(make_chain_model("m", kMinProfileBatch, chain_of(2)));
  EXPECT_NO_THROW(make_chain_model("m", kMaxProfileBatch, chain_of(2)));
}

// Finite values too large for the plan's arithmetic (times x batch scaling, bytes x
// optimizer scaling) are named at the state that passes the limit; the limits themselves
// are accepted and planned.
TEST(NumericModel, ValuesPastTheModelLimitsAreInputErrors) {
  std::vector<Layer> layers = chain_of(3);
  layers[1].forward = 0.6e9;
  layers[2].backward = 0.6e9;
  expect_error_naming<InputError>([&] { make_chain_model("m", 8, layers); },
                                  {"state 2 (layer2)", "forward + backward time", "1e9 s"});
  for (double Layer::*field : {&Layer::activation, &Layer::parameters}) {
    layers = chain_of(3);
    layers[0].*field = 1e300;
    expect_error_naming<InputError>([&] { make_chain_model("m", 8, layers); },
                                    {"state 0 (layer0)", "bytes, expected at most 1e18"});
  }
  layers = chain_of(2);
  layers[0] = {"big0", kMaxModelSeconds / 2, 0, 1e6, 1e6};
  layers[1] = {"big1", 0, kMaxModelSeconds / 2, 1e6, 1e6};
  layers[0].parameters = kMaxModelBytes / 2;
  layers[1].activation = kMaxModelBytes / 2;
  Cluster cluster = cluster_from_machine_ends({2});
  TrainingSettings settings;
  settings.optimizer_scaling = kMaxOptimizerScaling;
  settings.activation_bytes_per_sample = kMaxModelBytes;
  const Planner planner(make_chain_model("m", 8, layers), cluster, settings);
  const PointResult point = planner.plan(1 << 30);  // nothing fits, but every number is finite
  EXPECT_FALSE(point.best());
  EXPECT_TRUE(std::isfinite(point.baselines.dp));
  EXPECT_THAT(point.no_plan_reason, HasSubstr("no plan fits"));
}

TEST(NumericModel, TrainingSettingsPastTheirLimitsAreUsageErrors) {
  const Cluster cluster = cluster_from_machine_ends({2});
  for (double scaling : {0.5, 1e7, kNaN, kInf}) {
    TrainingSettings settings;
    settings.optimizer_scaling = scaling;
    expect_error_naming<UsageError>(
        [&] { Planner(make_chain_model("m", 8, chain_of(2)), cluster, settings); },
        {"TrainingSettings::optimizer_scaling", "from 1 to 1e6"});
  }
  for (double bytes : {-1.0, 1e19, kNaN}) {
    TrainingSettings settings;
    settings.activation_bytes_per_sample = bytes;
    expect_error_naming<UsageError>(
        [&] { Planner(make_chain_model("m", 8, chain_of(2)), cluster, settings); },
        {"TrainingSettings::activation_bytes_per_sample", "from 0 to 1e18"});
  }
}

TEST(NumericModel, NoLayersIsAnInputError) {
  expect_error_naming<InputError>([] { make_chain_model("m", 8, {}); }, {"no layers"});
}

TEST(NumericModel, ZeroTimeLayersAmongOthersArePlanned) {
  std::vector<Layer> layers = chain_of(6);
  for (int i : {0, 2, 3}) layers[i].forward = layers[i].backward = 0;
  const Cluster cluster = cluster_from_machine_ends({2, 4});
  const Planner planner(make_chain_model("m", 8, layers), cluster);
  const PointResult point = planner.plan(32);
  ASSERT_NE(point.best(), nullptr) << point.no_plan_reason;
  expect_sound_plan(*point.best(), planner.model(), cluster);
}

TEST(NumericModel, OneLayerOnOneDeviceRunsAtTheSpeedOfOneDevice) {
  // One stage on one device does the single-device work of the whole batch, with no
  // communication: the simulated speedup is exactly 1.
  const Cluster cluster = cluster_from_machine_ends({1});
  const Planner planner(make_chain_model("m", 8, chain_of(1)), cluster);
  for (int gbs : {1, 7, 64}) {
    const PointResult point = planner.plan(gbs);
    ASSERT_NE(point.best(), nullptr) << point.no_plan_reason;
    expect_sound_plan(*point.best(), planner.model(), cluster);
    EXPECT_EQ(point.best()->stages.size(), 1u);
    EXPECT_NEAR(point.best()->speedup, 1.0, 1e-9) << "gbs " << gbs;
  }
}

TEST(NumericModel, MoreDevicesThanLayersNeverBeatsTheDeviceCount) {
  const Cluster cluster = cluster_from_machine_ends({8, 16});
  const Planner planner(make_chain_model("m", 8, chain_of(2)), cluster);
  const PointResult point = planner.plan(256);
  ASSERT_NE(point.best(), nullptr) << point.no_plan_reason;
  expect_sound_plan(*point.best(), planner.model(), cluster);
  EXPECT_LE(point.best()->stages.size(), 2u);
  EXPECT_LE(point.best()->speedup, 16.0 * (1 + 1e-9));
}

// Plans a chain of `layers` layers of `parameters` bytes each on 2 x 4 GPUs with `effort`
// and prints the time it took (no timing assertion: the point is a sound answer).
void plan_long_chain(int layers, Bytes parameters, std::uint64_t effort = kDefaultSearchEffort) {
  std::vector<Layer> chain = chain_of(layers);
  for (Layer& layer : chain) layer.parameters = parameters;
  const Cluster cluster = cluster_from_machine_ends({4, 8});
  const auto start = std::chrono::steady_clock::now();
  SearchOptions options;
  options.effort = effort;
  const Planner planner(make_chain_model("long", 8, chain), cluster, {}, options);
  const PointResult point = planner.plan(64);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_NE(point.best(), nullptr) << point.no_plan_reason;
  expect_sound_plan(*point.best(), planner.model(), cluster);
  std::printf("[ timing   ] %d-layer chain, 8 GPUs, GBS 64, %g GB of weights: %.3f s\n", layers,
              layers * parameters / 1e9, seconds);
}

// 10,000 layers whose weights (2 x 10 MB with optimizer state) fit one GPU.
TEST(NumericModel, TenThousandLayerChainPlansInSeconds) { plan_long_chain(10000, 1e3); }

// 10,000 layers of 1.5 MB: 30 GB with optimizer state, so every plan is a pipeline. Was
// over 100 s (docs/bad-inputs.md K3); the search's effort limit (SearchOptions::effort)
// now bounds it, and the seeds' equal-work pipelines give a plan that fits. A tenth of the
// default effort bounds it the same way, in 2 s instead of 20.
TEST(NumericModel, TenThousandLayerChainThatNeedsAPipelinePlansInSeconds) {
  plan_long_chain(10000, 1.5e6, kDefaultSearchEffort / 10);
}

}  // namespace
}  // namespace pe
