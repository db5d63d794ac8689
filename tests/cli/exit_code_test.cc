// Exit codes of the real programs. pe-plan: 0 for answers (plans, "no plan fits", help),
// 1 for bad input files and unwritable outputs, 2 for bad usage. sched-pipeline keeps
// PipeEdge's codes: 0 for a schedule or `[]`, 1 for any error.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "cli/program.h"
#include "test_paths.h"

namespace pe::testing {
namespace {

const std::string kData = PE_TEST_DATA_DIR;
const std::string kChain = kData + "/graphs/chain.txt";

ProgramResult pe_plan(const std::vector<std::string>& args, const Environment& env = {}) {
  return run_program(pe_plan_program(), args, env);
}

ProgramResult sched_pipeline(const std::vector<std::string>& args) {
  return run_program(sched_pipeline_program(), args);
}

std::vector<std::string> tiny_pipeedge(const std::string& models) {
  const std::string dir = kData + "/robustness/pipeedge/";
  return {"-m", "tiny", "-M", dir + models, "-T", dir + "device_types.yml", "-D",
          dir + "devices.yml"};
}

TEST(PePlanExitCode, HelpAndVersionExitZeroOnStdout) {
  for (const char* flag : {"--help", "-h", "--version"}) {
    const ProgramResult r = pe_plan({flag});
    EXPECT_EQ(r.exit_code, 0) << flag;
    EXPECT_FALSE(r.out.empty()) << flag;
    EXPECT_TRUE(r.err.empty()) << flag << ": " << r.err;
  }
}

TEST(PePlanExitCode, BadUsageExitsTwoNamingTheFlagAndValue) {
  const ProgramResult r = pe_plan({"--gbs", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("--gbs: '0'"), std::string::npos) << r.err;
}

TEST(PePlanExitCode, BadInputExitsOneNamingFileLineAndKey) {
  const ProgramResult r = pe_plan({"--cluster", kData + "/robustness/cluster/zero_bandwidth.yml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("zero_bandwidth.yml:4: bandwidth_GBps.intra: expected a positive number, "
                       "got '0'"),
            std::string::npos)
      << r.err;
}

TEST(PePlanExitCode, EmptyPathFlagsAreBadUsage) {
  for (const char* flag : {"--profile", "--cluster", "--fill", "--trace", "--svg", "--plot",
                           "--export-sched"}) {
    const ProgramResult r = pe_plan({flag, ""});
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_NE(r.err.find(std::string(flag) + ": expected a file path, got ''"), std::string::npos)
        << r.err;
  }
}

TEST(SchedPipelineExitCode, EmptyOrEndlessInputFilesAreNamed) {
  const ProgramResult empty = sched_pipeline({"-M", ""});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_NE(empty.err.find("the path of the models file is empty"), std::string::npos)
      << empty.err;
  const ProgramResult endless = sched_pipeline({"-M", "/dev/zero"});
  EXPECT_EQ(endless.exit_code, 1);
  EXPECT_NE(endless.err.find("/dev/zero: more than 256 MiB"), std::string::npos) << endless.err;
}

TEST(PePlanExitCode, NoPlanFitsExitsZeroAndSaysWhy) {
  const ProgramResult r = pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "16",
                                   "--memory-gb", "1e-9"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no plan fits"), std::string::npos) << r.out;
}

TEST(PePlanExitCode, UnwritableOutputExitsOne) {
  const ProgramResult r = pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "16", "--trace",
                                   "/nonexistent-pe-dir/trace.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent-pe-dir/trace.json"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists("/nonexistent-pe-dir"));
}

TEST(PePlanExitCode, BadThreadCountIsBadUsage) {
  for (const char* threads : {"0", "-1", "abc", "4097"}) {
    const ProgramResult r = pe_plan({"--version"}, {{"TBB_NUM_THREADS", threads}});
    EXPECT_EQ(r.exit_code, 2) << threads;
    EXPECT_NE(r.err.find("TBB_NUM_THREADS"), std::string::npos) << r.err;
  }
}

TEST(SchedPipelineExitCode, ScheduleOrEmptyListExitZero) {
  const ProgramResult found = sched_pipeline(tiny_pipeedge("models.yml"));
  EXPECT_EQ(found.exit_code, 0) << found.err;
  EXPECT_EQ(found.out.rfind("- ", 0), 0u) << found.out;
  std::vector<std::string> args = tiny_pipeedge("models.yml");
  args.insert(args.end(), {"-b", "4294967295"});  // no profile has this batch size
  const ProgramResult none = sched_pipeline(args);
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out, "[]\n");
  EXPECT_FALSE(none.err.empty()) << "an empty schedule must say why";
}

TEST(SchedPipelineExitCode, BadOptionsAndInputExitOne) {
  const ProgramResult option = sched_pipeline({"-b", "-1"});
  EXPECT_EQ(option.exit_code, 1);
  EXPECT_NE(option.err.find("-b"), std::string::npos) << option.err;
  const ProgramResult input = sched_pipeline(tiny_pipeedge("models_nan.yml"));
  EXPECT_EQ(input.exit_code, 1);
  EXPECT_NE(input.err.find("models_nan.yml:3: tiny.mem_MB[1]"), std::string::npos) << input.err;
  EXPECT_TRUE(input.out.empty());
}

TEST(SchedPipelineExitCode, SubcommandOfPePlanBehavesTheSame) {
  std::vector<std::string> args{"sched-pipeline"};
  for (const std::string& arg : tiny_pipeedge("models.yml")) args.push_back(arg);
  const ProgramResult via_pe_plan = pe_plan(args);
  const ProgramResult direct = sched_pipeline(tiny_pipeedge("models.yml"));
  EXPECT_EQ(via_pe_plan.exit_code, direct.exit_code);
  EXPECT_EQ(via_pe_plan.out, direct.out);
}

// docs/bad-inputs.md K1. Was: exit 1 with "cluster: intra-machine bandwidth must be a
// finite positive number", which named neither the flag nor the value (1e300 GB/s is
// finite, the bytes/s it becomes are not); fixed: a usage error naming both.
TEST(PePlanExitCode, FlagValueThatOverflowsBytesIsBadUsage) {
  for (const char* flag : {"--intra-bw", "--inter-bw", "--inter-p2p-bw", "--memory-gb"}) {
    const ProgramResult r = pe_plan({flag, "1e300"});
    EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("1e300"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("below 1.7e299"), std::string::npos) << r.err;
    // 1e299 GB is 1e308 bytes, still finite: a plan.
    const ProgramResult ok =
        pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8", flag, "1e299"});
    EXPECT_EQ(ok.exit_code, 0) << flag << ": " << ok.err;
  }
}

// The plan's device count is known only after planning; a --hosts list of another length
// is bad usage that names --hosts and counts both in the singular where they are 1.
TEST(PePlanExitCode, ScheduleExportWithTheWrongHostCountNamesHosts) {
  const std::string needs = "--hosts: the schedule export needs one host name per device of the "
                            "plan: got ";
  const std::vector<std::string> common{"--profile", kChain, "--pbs", "8", "--gbs", "8",
                                        "--export-sched", "/nonexistent-pe-dir/s.yml"};
  for (const auto& [devices, hosts, counts] :
       {std::tuple<const char*, const char*, const char*>{"1", "a,b", "2 names for 1 device\n"},
        {"8", "a", "1 name for 8 devices\n"}}) {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--devices", devices, "--hosts", hosts});
    const ProgramResult r = pe_plan(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(needs + counts), std::string::npos) << r.err;
  }
}

TEST(PePlanExitCode, ScheduleExportWithAHostNamedTwiceIsBadUsage) {
  const ProgramResult r = pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8", "--devices",
                                   "2", "--export-sched", "/nonexistent-pe-dir/s.yml", "--hosts",
                                   "a,a"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--hosts: host 'a' is named twice"), std::string::npos) << r.err;
}

// --plan-gbs outside --gbs is refused before planning; inside, it picks the plan that the
// table explains (README, "A real run").
TEST(PePlanExitCode, PlanGbsMustBeASweptBatchSizeAndPicksTheExplainedPlan) {
  const ProgramResult outside = pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8,16",
                                         "--plan-gbs", "32", "--svg", "/nonexistent-pe-dir/p.svg"});
  EXPECT_EQ(outside.exit_code, 2) << outside.err;
  EXPECT_TRUE(outside.out.empty()) << outside.out;
  EXPECT_NE(outside.err.find("--plan-gbs 32 is not one of --gbs '8,16'"), std::string::npos)
      << outside.err;
  const ProgramResult alone =
      pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8,16", "--plan-gbs", "8"});
  EXPECT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_NE(alone.out.find("Best plan for GBS 8:"), std::string::npos) << alone.out;
  EXPECT_EQ(alone.out.find("Best plan for GBS 16:"), std::string::npos) << alone.out;
  const ProgramResult last = pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8,16"});
  EXPECT_NE(last.out.find("Best plan for GBS 16:"), std::string::npos) << last.out;
}

// A directory given as --profile is named as one, not as a missing file.
TEST(PePlanExitCode, ProfileThatIsADirectorySaysSo) {
  const ProgramResult r = pe_plan({"--profile", kData});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("is a directory, expected a graph file"), std::string::npos) << r.err;
}

// Was docs/bad-inputs.md K2: planning ResNet-50 on 10^6 GPUs ran for hours. The search's
// effort limit (--search-effort) now bounds every batch size; the answer is a plan.
TEST(PePlanExitCode, MillionGpuClusterAnswers) {
  const ProgramResult r =
      run_program(pe_plan_program(), {"--gbs", "32", "--devices", "1000000"}, {}, 120);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1000000 GPUs on 1 machine"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Best plan for GBS 32"), std::string::npos) << r.out;
}

TEST(PePlanExitCode, SearchEffortMustBeAWholeNumber) {
  for (const char* bad : {"-1", "1.5", "1e19", "lots"}) {
    const ProgramResult r = pe_plan({"--search-effort", bad, "--gbs", "32"});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--search-effort: expected a whole number of steps"), std::string::npos)
        << r.err;
  }
  const ProgramResult ok = pe_plan({"--search-effort", "0", "--gbs", "32", "--format", "csv"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find(",true\n"), std::string::npos) << ok.out;
}

}  // namespace
}  // namespace pe::testing
