// Exit codes of the real programs. pe-plan: 0 for answers (plans, "no plan fits", help),
// 1 for bad input files and unwritable outputs, 2 for bad usage. sched-pipeline keeps
// PipeEdge's codes: 0 for a schedule or `[]`, 1 for any error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "cli/program.h"
#include "report/csv_table.h"
#include "test_paths.h"

namespace pe::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

ProgramResult sched_pipeline(const std::vector<std::string>& args) {
  return run_program(sched_pipeline_program(), args);
}

std::vector<std::string> tiny_pipeedge(const std::string& models) {
  const std::string dir = kData + "/robustness/pipeedge/";
  return {
      "-m", "tiny", "-M", dir + models, "-T", dir + "device_types.yml", "-D", dir + "devices.yml"};
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
  EXPECT_THAT(r.err, HasSubstr("--gbs: '0'"));
}

TEST(PePlanExitCode, BadInputExitsOneNamingFileLineAndKey) {
  const ProgramResult r = pe_plan({"--cluster", kData + "/robustness/cluster/zero_bandwidth.yml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_THAT(r.err, HasSubstr("zero_bandwidth.yml:4: bandwidth_GBps.intra: expected a positive "
                               "number, got '0'"));
}

TEST(PePlanExitCode, EmptyPathFlagsAreBadUsage) {
  for (const char* flag :
       {"--profile", "--cluster", "--fill", "--trace", "--svg", "--plot", "--export-sched"}) {
    const ProgramResult r = pe_plan({flag, ""});
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_THAT(r.err, HasSubstr(std::string(flag) + ": expected a file path, got ''"));
  }
}

TEST(SchedPipelineExitCode, EmptyOrEndlessInputFilesAreNamed) {
  const ProgramResult empty = sched_pipeline({"-M", ""});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_THAT(empty.err, HasSubstr("the path of the models file is empty"));
  const ProgramResult endless = sched_pipeline({"-M", "/dev/zero"});
  EXPECT_EQ(endless.exit_code, 1);
  EXPECT_THAT(endless.err, HasSubstr("/dev/zero: more than 256 MiB"));
}

TEST(PePlanExitCode, NoPlanFitsExitsZeroAndSaysWhy) {
  const ProgramResult r =
      pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "16", "--memory-gb", "1e-9"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("no plan fits"));
}

TEST(PePlanExitCode, UnwritableOutputExitsOne) {
  const ProgramResult r = pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "16", "--trace",
                                   "/nonexistent-pe-dir/trace.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent-pe-dir/trace.json"));
  EXPECT_FALSE(std::filesystem::exists("/nonexistent-pe-dir"));
}

TEST(PePlanExitCode, BadThreadCountIsBadUsage) {
  for (const char* threads : {"0", "-1", "abc", "4097"}) {
    const ProgramResult r = pe_plan({"--version"}, {{"TBB_NUM_THREADS", threads}});
    EXPECT_EQ(r.exit_code, 2) << threads;
    EXPECT_THAT(r.err, HasSubstr("TBB_NUM_THREADS")) << threads;
  }
}

TEST(SchedPipelineExitCode, ScheduleOrEmptyListExitZero) {
  const ProgramResult found = sched_pipeline(tiny_pipeedge("models.yml"));
  EXPECT_EQ(found.exit_code, 0) << found.err;
  EXPECT_THAT(found.out, StartsWith("- "));
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
  EXPECT_THAT(option.err, HasSubstr("-b"));
  const ProgramResult input = sched_pipeline(tiny_pipeedge("models_nan.yml"));
  EXPECT_EQ(input.exit_code, 1);
  EXPECT_THAT(input.err, HasSubstr("models_nan.yml:3: tiny.mem_MB[1]"));
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
    EXPECT_THAT(r.err, AllOf(HasSubstr(flag), HasSubstr("1e300"), HasSubstr("below 1.7e299")));
    // 1e299 GB is 1e308 bytes, still finite: a plan.
    const ProgramResult ok =
        pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8", flag, "1e299"});
    EXPECT_EQ(ok.exit_code, 0) << flag << ": " << ok.err;
  }
}

// The plan's stage count is known only after planning; a --hosts list of another length
// is bad usage that names --hosts and counts both in the singular where they are 1.
TEST(PePlanExitCode, ScheduleExportWithTheWrongHostCountNamesHosts) {
  const std::string needs =
      "--hosts: the schedule export needs one host name per stage of the "
      "plan: got ";
  const std::vector<std::string> common{"--profile", kChain, "--pbs",          "8",
                                        "--gbs",     "8",    "--export-sched", "/dev/null"};
  for (const auto& [extra, hosts, counts] :
       {std::tuple<std::vector<std::string>, const char*, const char*>{
            {"--devices", "1", "--straight"}, "a,b", "2 names for 1 stage\n"},
        {{"--devices", "2", "--plan", "0-0:1;1-2:1", "--microbatches", "2"},
         "a",
         "1 name for 2 stages\n"}}) {
    std::vector<std::string> args = common;
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--hosts", hosts});
    const ProgramResult r = pe_plan(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(needs + counts));
  }
}

TEST(PePlanExitCode, ScheduleExportWithAHostNamedTwiceIsBadUsage) {
  const ProgramResult r =
      pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8", "--devices", "2", "--plan",
               "0-0:1;1-2:1", "--export-sched", "/dev/null", "--hosts", "a,a"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--hosts: host 'a' is named twice"));
}

// --plan-gbs outside --gbs is refused before planning; inside, it picks the plan that the
// table explains (README, "A real run").
TEST(PePlanExitCode, PlanGbsMustBeASweptBatchSizeAndPicksTheExplainedPlan) {
  const ProgramResult outside = pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8,16",
                                         "--plan-gbs", "32", "--svg", "/nonexistent-pe-dir/p.svg"});
  EXPECT_EQ(outside.exit_code, 2) << outside.err;
  EXPECT_TRUE(outside.out.empty()) << outside.out;
  EXPECT_THAT(outside.err, HasSubstr("--plan-gbs 32 is not one of --gbs '8,16'"));
  const ProgramResult alone =
      pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8,16", "--plan-gbs", "8"});
  EXPECT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_THAT(alone.out,
              AllOf(HasSubstr("Best plan for GBS 8:"), Not(HasSubstr("Best plan for GBS 16:"))));
  const ProgramResult last = pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8,16"});
  EXPECT_THAT(last.out, HasSubstr("Best plan for GBS 16:"));
}

// A directory given as --profile is named as one, not as a missing file.
TEST(PePlanExitCode, ProfileThatIsADirectorySaysSo) {
  const ProgramResult r = pe_plan({"--profile", kData});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("is a directory, expected a graph file"));
}

TEST(PePlanExitCode, SearchMemoryMustBeAWholeNumberOfMebibytes) {
  for (const char* bad : {"-1", "1.5", "1000001", "nan", "lots"}) {
    const ProgramResult r = pe_plan({"--search-memory-mb", bad, "--gbs", "32"});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr("--search-memory-mb: expected a whole number from 0 (no limit)"))
        << bad;
  }
  const ProgramResult ok = pe_plan({"--search-memory-mb", "0", "--gbs", "32", "--format", "csv"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST(PePlanExitCode, SearchEffortMustBeAWholeNumber) {
  for (const char* bad : {"-1", "1.5", "1e19", "lots"}) {
    const ProgramResult r = pe_plan({"--search-effort", bad, "--gbs", "32"});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr("--search-effort: expected a whole number of steps")) << bad;
  }
  const ProgramResult ok = pe_plan({"--search-effort", "0", "--gbs", "32", "--format", "csv"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  const CsvTable csv = read_csv(ok.out);
  ASSERT_EQ(csv.rows.size(), 1u);
  EXPECT_EQ(csv.rows[0].at("exact"), "true");
}

}  // namespace
}  // namespace pe::testing
