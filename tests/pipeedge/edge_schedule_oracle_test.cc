// schedule_pipeline against exhaustive enumeration on random small pools.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "pe/edge.h"
#include "pe/edge_cost.h"
#include "pipeedge/edge_oracle.h"

namespace pe {
namespace {

/// Random pools: <= 12 layers, <= 6 hosts, <= 3 types, memory and bandwidth that bind.
class PoolGenerator {
 public:
  explicit PoolGenerator(std::uint64_t seed) : rng_(seed) {}

  std::size_t below(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
  double uniform(double low, double high) {
    return low + (high - low) * static_cast<double>(rng_() >> 11) * 0x1.0p-53;
  }
  /// Coarse values (multiples of 0.25) make ties common, so tie-breaking is exercised.
  double time_value(bool coarse) {
    return coarse ? 0.25 * static_cast<double>(below(5)) : uniform(0, 1);
  }

  EdgeModel model(std::size_t layers) {
    EdgeModel model;
    model.name = "random";
    for (std::size_t k = 0; k < layers; ++k) {
      model.weights_mib.push_back(static_cast<double>(below(4)) + uniform(0, 1));
      model.parameters_out.push_back(below(4) == 0 ? 0 : below(50000));
    }
    model.parameters_in = below(50000);
    return model;
  }

  EdgeDeviceType type(const EdgeModel& model, bool coarse) {
    static constexpr double kBandwidths[] = {0, 1, 10, 100, 1000};
    EdgeDeviceType type;
    type.name = "t";
    type.bandwidth_mbps = below(3) == 0 ? uniform(0.5, 50) : kBandwidths[below(5)];
    double total = 5;
    for (double w : model.weights_mib) total += w;
    type.memory_mib = total * uniform(0.15, 1.1);
    for (std::size_t k = 0; k < model.layers(); ++k)
      type.layer_seconds.push_back(time_value(coarse));
    return type;
  }

  EdgeCluster cluster(const EdgeModel& model) {
    EdgeCluster cluster;
    const std::size_t types = 1 + below(3);
    const bool coarse = below(2) == 0;
    for (std::size_t t = 0; t < types; ++t) {
      cluster.types.push_back(t > 0 && below(4) == 0 ? cluster.types[t - 1] : type(model, coarse));
      cluster.types.back().name = "type" + std::to_string(t);
    }
    const std::size_t hosts = 1 + below(6);
    for (std::size_t h = 0; h < hosts; ++h)
      cluster.hosts.push_back(EdgeHost{"h" + std::to_string(h), below(types)});
    return cluster;
  }

  EdgeSettings settings() {
    EdgeSettings settings;
    settings.micro_batch = 1 + below(4);
    settings.buffers_in = below(3);
    settings.buffers_out = below(3);
    return settings;
  }

 private:
  std::mt19937_64 rng_;
};

void expect_same_schedule(const std::vector<EdgeStage>& got, const std::vector<EdgeStage>& want,
                          std::uint64_t seed) {
  ASSERT_EQ(got.size(), want.size()) << "seed " << seed;
  for (std::size_t s = 0; s < got.size(); ++s) {
    EXPECT_EQ(got[s].host, want[s].host) << "seed " << seed << " stage " << s;
    EXPECT_EQ(got[s].first_layer, want[s].first_layer) << "seed " << seed << " stage " << s;
    EXPECT_EQ(got[s].last_layer, want[s].last_layer) << "seed " << seed << " stage " << s;
  }
}

void check_seed(std::uint64_t seed, std::size_t& feasible) {
  PoolGenerator generate(seed);
  const EdgeModel model = generate.model(1 + generate.below(12));
  const EdgeCluster cluster = generate.cluster(model);
  const EdgeSettings settings = generate.settings();
  const std::vector<EdgeStage> want = edge_test::brute_force_schedule(model, cluster, settings);
  const EdgeSchedule got = schedule_pipeline(model, cluster, settings);
  EXPECT_EQ(got.empty(), want.empty()) << "seed " << seed;
  if (want.empty() || got.empty()) return;
  ++feasible;
  const EdgeCostModel cost(model, cluster, settings);
  EXPECT_EQ(got.bottleneck, cost.bottleneck(want)) << "seed " << seed;
  expect_same_schedule(got.stages, want, seed);
}

TEST(EdgeScheduleOracle, MatchesExhaustiveSearchOnRandomPools) {
  std::size_t feasible = 0;
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) check_seed(seed, feasible);
  // The pools are meant to bind: a fair share must be feasible and a fair share not.
  EXPECT_GT(feasible, 300U);
  EXPECT_LT(feasible, 950U);
}

}  // namespace
}  // namespace pe
