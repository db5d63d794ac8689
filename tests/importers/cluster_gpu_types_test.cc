// Machine groups that name their GPU in a cluster file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pe/error.h"
#include "pe/importers/cluster_yaml.h"

namespace pe {
namespace {

using ::testing::HasSubstr;

TEST(ClusterGpuTypes, GroupsNameACatalogueGpuOrGiveItsNumbers) {
  const Cluster c = parse_cluster_yaml(
      "machines:\n"
      "  - count: 2\n    gpus: 8\n    gpu: H100-80GB\n"
      "  - gpus: 4\n    gpu: {name: X1, peak_tflops: 400, memory_gb: 96}\n"
      "  - gpus: 2\n",
      "c.yml");
  ASSERT_EQ(c.machine_gpu.size(), 4u);
  EXPECT_EQ(c.machine_gpu[0].name, "H100-80GB");
  EXPECT_EQ(c.machine_gpu[1].name, "H100-80GB");
  EXPECT_DOUBLE_EQ(c.machine_gpu[2].peak_flops, 400e12);
  EXPECT_DOUBLE_EQ(c.machine_gpu[2].memory, 96 * kGB);
  EXPECT_DOUBLE_EQ(c.machine_gpu[3].peak_flops, 0);  // the model's own GPU
  // Without any `gpu` key the cluster has no types at all.
  EXPECT_TRUE(parse_cluster_yaml("machines:\n  - gpus: 8\n", "c.yml").machine_gpu.empty());
}

TEST(ClusterGpuTypes, UnknownGpusAndBadNumbersNameTheLineAndKey) {
  try {
    parse_cluster_yaml("machines:\n  - gpus: 8\n    gpu: B999\n", "c.yml");
    FAIL() << "an unknown GPU was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("c.yml:3"));
    EXPECT_THAT(e.what(), HasSubstr("GPU 'B999' is not in the catalogue"));
  }
  try {
    parse_cluster_yaml(
        "machines:\n  - gpus: 8\n    gpu: {name: X, peak_tflops: -1, memory_gb: 8}\n", "c.yml");
    FAIL() << "a negative peak was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("c.yml:3"));
    EXPECT_THAT(e.what(), HasSubstr("peak_tflops"));
  }
}

}  // namespace
}  // namespace pe
