// One test per input the fuzz targets found (tests/data/robustness/fuzz/README.md), each
// replayed through its target's path. Findings still open are DISABLED_ tests that assert
// the answer they should get.
#include <gtest/gtest.h>

#include "cli/program.h"
#include "pe/error.h"
#include "pe/importers/cluster_yaml.h"
#include "robustness_checks.h"
#include "test_paths.h"

namespace pe {
namespace {

using robustness::expect_error_naming;

std::string finding(const std::string& name) {
  return std::string(PE_TEST_DATA_DIR) + "/robustness/fuzz/" + name;
}

// Was: UBSan "signed integer overflow" in Cluster::device_count() (10^10 GPUs in an int).
TEST(FuzzRegression, ClusterYamlDeviceCountOverflow) {
  expect_error_naming<InputError>(
      [] { load_cluster_yaml(finding("cluster_device_count_overflow.yml")); },
      {"cluster_device_count_overflow.yml:2: machines", "at most 1000000"});
}

// Open (docs/bad-inputs.md K8): the hybrid search never ends when every compute time is 0
// (or so small that lowering the slot cap by a factor 1 - 1e-9 leaves it unchanged). Runs
// the fuzz target's path (import, then plan GBS 8 on 2 x 2 GPUs) through the real program,
// killed after 30 s (exit 142) instead of hanging the suite.
TEST(FuzzRegression, DISABLED_ZeroTimeGraphHang) {
  const testing::ProgramResult r = testing::run_program(
      testing::pe_plan_program(),
      {"--profile", finding("zero_time_graph_hang.txt"), "--pbs", "32", "--devices", "2,4",
       "--gbs", "8"},
      {}, 30);
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << "exit " << r.exit_code << ": " << r.err;
}

// The same hang through the command line; the fuzz input decodes to these arguments.
TEST(FuzzRegression, DISABLED_PePlanZeroTimeProfileHang) {
  const testing::ProgramResult r = testing::run_program(
      testing::pe_plan_program(),
      {"--profile", std::string(PE_TEST_SOURCE_DIR) + "/tests/data/graphs/chain.txt", "--pbs", "8",
       "--gbs", "16", "--profile",
       std::string(PE_TEST_DATA_DIR) + "/robustness/graphs/zero_time.txt", "--schedule", "1f1b",
       "--hosts", "a,b,c,d", "--export-sched", "/nonexistent-pe-dir/a.out"},
      {}, 30);
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << "exit " << r.exit_code << ": " << r.err;
}

// The same hang with a positive but subnormal compute time (1e-321 s).
TEST(FuzzRegression, DISABLED_DenormalTimeGraphHang) {
  const testing::ProgramResult r = testing::run_program(
      testing::pe_plan_program(),
      {"--profile", std::string(PE_TEST_DATA_DIR) + "/robustness/graphs/denormal_time.txt",
       "--pbs", "8", "--devices", "2", "--gbs", "8"},
      {}, 30);
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << "exit " << r.exit_code << ": " << r.err;
}

// Open (K8): GPipe's search over forward caps never ends when a forward time is subnormal
// (2e-321 s) although the backward time is 1 ms. Found by fuzz_pipedream_graph.
TEST(FuzzRegression, DISABLED_SubnormalForwardGpipeHang) {
  const testing::ProgramResult r = testing::run_program(
      testing::pe_plan_program(),
      {"--profile", finding("subnormal_forward_gpipe_hang.txt"), "--pbs", "32", "--devices",
       "2,4", "--gbs", "8", "--schedule", "gpipe"},
      {}, 30);
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << "exit " << r.exit_code << ": " << r.err;
}

}  // namespace
}  // namespace pe
