// Numeric safety of clusters: zero, infinite and NaN bandwidth or memory, overflowing GB
// values and device counts, through the API and through the cluster YAML importer.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "pe/error.h"
#include "pe/importers/cluster_yaml.h"
#include "pe/planner.h"
#include "robustness/robustness_checks.h"

namespace pe {
namespace {

using robustness::expect_error_naming;

using robustness::kInf;
using robustness::kNaN;

ModelProfile small_model() {
  return make_chain_model("m", 8, {{"a", 1e-3, 2e-3, 1e6, 1e6}, {"b", 1e-3, 2e-3, 1e6, 1e6}});
}

TEST(NumericCluster, ZeroInfiniteOrNanBandwidthAndMemoryAreInputErrors) {
  struct Case {
    double* (*field)(Cluster&);
    const char* name;
  };
  const Case cases[] = {
      {[](Cluster& c) { return &c.network.intra; }, "intra-machine bandwidth"},
      {[](Cluster& c) { return &c.network.inter_allreduce; }, "all-reduce bandwidth"},
      {[](Cluster& c) { return &c.network.inter_p2p; }, "point-to-point bandwidth"},
      {[](Cluster& c) { return &c.device_memory; }, "device memory"},
  };
  for (const Case& c : cases)
    for (double bad : {0.0, -1.0, kNaN, kInf}) {
      Cluster cluster = cluster_from_machine_ends({2, 4});
      *c.field(cluster) = bad;
      SCOPED_TRACE(std::string(c.name) + " = " + std::to_string(bad));
      expect_error_naming<InputError>([&] { const Planner planner(small_model(), cluster); },
                                      {c.name});
    }
}

// A bandwidth below one byte per second (a subnormal one included) would make transfer
// times infinite; a cluster built in code gets the same limit as the flags and YAML.
TEST(NumericCluster, BandwidthBelowOneBytePerSecondIsAnInputError) {
  for (double bandwidth : {1e-320, 1e-9, 0.5}) {
    Cluster cluster = cluster_from_machine_ends({2, 4});
    cluster.network.inter_p2p = bandwidth;
    expect_error_naming<InputError>([&] { const Planner planner(small_model(), cluster); },
                                    {"point-to-point bandwidth", "at least 1 byte/s"});
  }
  Cluster slow = cluster_from_machine_ends({2, 4});
  slow.network.inter_p2p = slow.network.inter_allreduce = slow.network.intra = 1;
  const PointResult point = Planner(small_model(), slow).plan(8);
  ASSERT_TRUE(point.best());
  EXPECT_TRUE(std::isfinite(point.best()->iteration_time));
}

TEST(NumericCluster, MoreThanAMillionGpusIsAnInputErrorNotAnOverflow) {
  Cluster cluster;
  cluster.machine_gpus.assign(3, std::numeric_limits<int>::max());  // sum overflows an int
  expect_error_naming<InputError>([&] { validate(cluster, "c"); }, {"more than 1000000 GPUs"});
  EXPECT_THROW(parse_machine_ends("1000001"), UsageError);
  EXPECT_EQ(cluster_from_machine_ends(parse_machine_ends("1000000")).device_count(), 1000000);
}

TEST(NumericCluster, YamlWithTooManyGpusNamesTheGroup) {
  expect_error_naming<InputError>(
      [] {
        parse_cluster_yaml("machines:\n  - gpus: 8\n  - count: 100000\n    gpus: 100000\n",
                           "c.yml");
      },
      {"c.yml:3: machines", "10000000008 GPUs", "at most 1000000"});
}

TEST(NumericCluster, YamlGigabytesThatOverflowBytesNameTheKey) {
  expect_error_naming<InputError>(
      [] { parse_cluster_yaml("machines: [{gpus: 2}]\nmemory_GB: 1e300\n", "c.yml"); },
      {"c.yml:2: memory_GB", "'1e300'", "below 1.7e299"});
  expect_error_naming<InputError>(
      [] {
        parse_cluster_yaml("machines: [{gpus: 2}]\nbandwidth_GBps:\n  intra: 1e300\n", "c.yml");
      },
      {"c.yml:3: bandwidth_GBps.intra", "'1e300'"});
}

TEST(NumericCluster, YamlIntegersBeyondLongLongNameTheRealRange) {
  expect_error_naming<InputError>(
      [] { parse_cluster_yaml("machines: [{gpus: 18446744073709551616}]\n", "c.yml"); },
      {"c.yml:1: gpus", "expected 1..100000 GPUs", "'18446744073709551616'"});
}

TEST(NumericCluster, YamlNanAndInfinityAreRejectedInEverySpelling) {
  for (const char* value : {".nan", ".NaN", ".inf", "-.inf", "+.Inf", "nan", "inf", "1e999"})
    expect_error_naming<InputError>(
        [&] {
          parse_cluster_yaml(std::string("machines: [{gpus: 2}]\nmemory_GB: ") + value + "\n",
                             "c.yml");
        },
        {"c.yml:2: memory_GB", value});
}

TEST(NumericCluster, OneDeviceClusterPlansOneStage) {
  const Cluster cluster = cluster_from_machine_ends({1});
  const Planner planner(small_model(), cluster);
  const PointResult point = planner.plan(16);
  ASSERT_NE(point.best(), nullptr) << point.no_plan_reason;
  robustness::expect_sound_plan(*point.best(), planner.model(), cluster);
  EXPECT_EQ(point.best()->device_count(), 1);
}

}  // namespace
}  // namespace pe
