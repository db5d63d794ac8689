// One test per input the fuzz targets found (tests/data/robustness/fuzz/README.md), each
// replayed through its target's path. A finding still open is a DISABLED_ test that
// asserts the answer it should get.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/program.h"
#include "pe/error.h"
#include "pe/importers/cluster_yaml.h"
#include "pe/importers/work_yaml.h"
#include "robustness/robustness_checks.h"
#include "test_paths.h"

namespace pe {
namespace {

using robustness::expect_error_naming;
using ::testing::HasSubstr;

std::string finding(const std::string& name) {
  return std::string(PE_TEST_DATA_DIR) + "/robustness/fuzz/" + name;
}

// Was: UBSan "signed integer overflow" in Cluster::device_count() (10^10 GPUs in an int).
TEST(FuzzRegression, ClusterYamlDeviceCountOverflow) {
  expect_error_naming<InputError>(
      [] { load_cluster_yaml(finding("cluster_device_count_overflow.yml")); },
      {"cluster_device_count_overflow.yml:2: machines", "at most 1000000"});
}

// Was (docs/bad-inputs.md K8): the hybrid search never ended when every compute time was
// 0 (or so small that lowering the slot cap by a factor 1 - 1e-9 left it unchanged);
// fixed: the slot caps fall strictly, and a model with no compute at all is a bad input
// file (exit 1: no speedup is defined). Runs the fuzz target's path (import, then plan
// GBS 8 on 2 x 2 GPUs) through the real program, killed after 30 s (exit 142) instead of
// hanging the suite.
TEST(FuzzRegression, ZeroTimeGraphHang) {
  const testing::ProgramResult r =
      testing::run_program(testing::pe_plan_program(),
                           {"--profile", finding("zero_time_graph_hang.txt"), "--pbs", "32",
                            "--devices", "2,4", "--gbs", "8"},
                           {}, 30);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("zero_time_graph_hang.txt: every forward and backward time is 0"));
}

// Was: the same hang through the command line (K8), fixed. The fuzz input decodes to these
// arguments; the later --profile (all times 0) wins and is a bad input file (exit 1),
// found before the plan whose device count the 4 names of --hosts would have to match.
TEST(FuzzRegression, PePlanZeroTimeProfileHang) {
  const testing::ProgramResult r = testing::run_program(
      testing::pe_plan_program(),
      {"--profile", testing::kChain, "--pbs", "8", "--gbs", "16", "--profile",
       std::string(PE_TEST_DATA_DIR) + "/robustness/graphs/zero_time.txt", "--schedule", "1f1b",
       "--hosts", "a,b,c,d", "--export-sched", "/nonexistent-pe-dir/a.out"},
      {}, 30);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("zero_time.txt: every forward and backward time is 0"));
}

// Was: the same hang with a positive but subnormal compute time (1e-321 s) (K8), fixed.
TEST(FuzzRegression, DenormalTimeGraphHang) {
  const testing::ProgramResult r = testing::run_program(
      testing::pe_plan_program(),
      {"--profile", std::string(PE_TEST_DATA_DIR) + "/robustness/graphs/denormal_time.txt", "--pbs",
       "8", "--devices", "2", "--gbs", "8"},
      {}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Best plan for GBS 8"));
}

// Was (K8): GPipe's search over forward caps never ended when a forward time was subnormal
// (2e-321 s) although the backward time is 1 ms; fixed. Found by fuzz_pipedream_graph.
TEST(FuzzRegression, SubnormalForwardGpipeHang) {
  const testing::ProgramResult r =
      testing::run_program(testing::pe_plan_program(),
                           {"--profile", finding("subnormal_forward_gpipe_hang.txt"), "--pbs", "32",
                            "--devices", "2,4", "--gbs", "8", "--schedule", "gpipe"},
                           {}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Best plan for GBS 8"));
}

// Was: `duration_ms: 1e-321`, a subnormal number of ms, became 0 s, an item with no length
// (fuzz_work_yaml's contract). A piece that is 0 s in seconds is now an error, also when a
// total_ms is split over chunks; subnormal lengths that stay positive are still read.
TEST(FuzzRegression, WorkYamlSubnormalDurationIsZeroSeconds) {
  expect_error_naming<InputError>(
      [] { load_work_yaml(finding("work_subnormal_duration.yml")); },
      {"work_subnormal_duration.yml:4: duration_ms", "longer than 0 s, got '1e-321'"});
  expect_error_naming<InputError>(
      [] {
        parse_work_yaml("items:\n  - name: w\n    total_ms: 1e-318\n    chunks: 1000000\n",
                        "w.yml");
      },
      {"w.yml:3: total_ms", "'1e-318' over 1000000 chunks"});
  const WorkList ok = parse_work_yaml("items:\n  - name: w\n    duration_ms: 1e-318\n", "w.yml");
  ASSERT_EQ(ok.items.size(), 1u);
  EXPECT_GT(ok.items[0].duration, 0);
}

}  // namespace
}  // namespace pe
