#include "pe/cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pe/error.h"
#include "pe/importers/cluster_yaml.h"

namespace pe {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(Cluster, MachineEndsMakeMachines) {
  Cluster c = cluster_from_machine_ends({8, 16});
  EXPECT_EQ(c.machine_gpus, (std::vector<int>{8, 8}));
  EXPECT_EQ(c.device_count(), 16);
  EXPECT_EQ(c.machine_of(7), 0);
  EXPECT_EQ(c.machine_of(8), 1);
  EXPECT_TRUE(c.one_machine(0, 8));
  EXPECT_FALSE(c.one_machine(4, 8));
  EXPECT_EQ(c.first_device(1), 8);
}

TEST(Cluster, UnevenMachineEnds) {
  Cluster c = cluster_from_machine_ends({2, 3, 7});
  EXPECT_EQ(c.machine_gpus, (std::vector<int>{2, 1, 4}));
  EXPECT_EQ(c.machine_of(2), 1);
  EXPECT_EQ(c.machine_of(6), 2);
}

TEST(Cluster, ParsesMachineEnds) {
  EXPECT_EQ(parse_machine_ends("8,16"), (std::vector<int>{8, 16}));
  EXPECT_EQ(parse_machine_ends("4"), (std::vector<int>{4}));
  for (const char* bad : {"", "8,", "a", "8,x", "-1", "0", "8,,16", "8.5"})
    EXPECT_THROW(parse_machine_ends(bad), UsageError) << bad;
  EXPECT_THROW(cluster_from_machine_ends({8, 8}), UsageError);
  EXPECT_THROW(cluster_from_machine_ends({}), UsageError);
}

TEST(ClusterYaml, ReadsGroupsBandwidthAndMemory) {
  Cluster c = parse_cluster_yaml(
      "machines:\n  - count: 2\n    gpus: 8\n  - gpus: 4\n"
      "bandwidth_GBps: {intra: 50, inter_allreduce: 10, inter_p2p: 5}\nmemory_GB: 32\n",
      "c.yml");
  EXPECT_EQ(c.machine_gpus, (std::vector<int>{8, 8, 4}));
  EXPECT_DOUBLE_EQ(c.network.intra, 50e9);
  EXPECT_DOUBLE_EQ(c.network.inter_allreduce, 10e9);
  EXPECT_DOUBLE_EQ(c.network.inter_p2p, 5e9);
  EXPECT_DOUBLE_EQ(c.device_memory, 32e9);
}

TEST(ClusterYaml, DefaultsAreHpgoV100) {
  Cluster c = parse_cluster_yaml("machines: [{gpus: 8}]\n", "c.yml");
  EXPECT_DOUBLE_EQ(c.network.intra, 25e9);
  EXPECT_DOUBLE_EQ(c.network.inter_allreduce, 3e9);
  EXPECT_DOUBLE_EQ(c.network.inter_p2p, 1e9);
  EXPECT_DOUBLE_EQ(c.device_memory, 16e9);
}

TEST(ClusterYaml, BadInputNamesFileLineAndKey) {
  struct Case {
    const char* text;
    const char* expect;
  };
  for (const Case& k : std::vector<Case>{
           {"machines: [{gpus: 0}]\n", "c.yml:1"},
           {"machines:\n  - gpus: -2\n", "c.yml:2: gpus"},
           {"machines: [{gpus: 8}]\nmemory_GB: .nan\n", "c.yml:2: memory_GB"},
           {"machines: [{gpus: 8}]\nbandwidth_GBps: {intra: 0}\n", "bandwidth_GBps.intra"},
           {"machines: [{gpus: 8}]\nmemroy_GB: 3\n", "c.yml:2: memroy_GB"},
           {"machines: [{gpus: 8}\n", "c.yml:"},
           {"gpus: 8\n", "c.yml"},
           {"", "c.yml"},
       }) {
    EXPECT_THAT([&] { parse_cluster_yaml(k.text, "c.yml"); },
                ThrowsMessage<InputError>(HasSubstr(k.expect)))
        << k.text;
  }
}

}  // namespace
}  // namespace pe
