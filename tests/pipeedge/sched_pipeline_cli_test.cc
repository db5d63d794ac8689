#include "sched_pipeline_cli.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pe/error.h"
#include "sched_pipeline_options.h"
#include "test_paths.h"

namespace pe {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using testing::kPipeEdgeExample;

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

CliRun run(std::vector<std::string> args) {
  args.insert(args.begin(), "sched-pipeline");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  std::ostringstream out;
  std::ostringstream err;
  CliRun result;
  result.code = sched_pipeline_main(static_cast<int>(argv.size()), argv.data(), out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

/// The example files, plus any extra options.
CliRun run_example(std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"-M", kPipeEdgeExample + "models.yml",
                                "-T", kPipeEdgeExample + "device_types.yml",
                                "-D", kPipeEdgeExample + "devices.yml"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run(args);
}

TEST(SchedPipelineCli, HelpGoesToStdoutWithExitZero) {
  const CliRun result = run({"--help"});
  EXPECT_EQ(result.code, 0);
  EXPECT_THAT(result.out, StartsWith("Usage: sched-pipeline [OPTION]..."));
  EXPECT_THAT(result.out, HasSubstr("--dev-types-file"));
  EXPECT_TRUE(result.err.empty());
}

TEST(SchedPipelineCli, BadOptionsExitOneWithAMessage) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"-x"},
                                             {"-b", "8abc"},
                                             {"-b", "-1"},
                                             {"--batch-size=0"},
                                             {"-b"},
                                             {"positional"},
                                             {"--b=3"},
                                             {"-x", "-h"}}) {
    const CliRun result = run(args);
    EXPECT_EQ(result.code, 1) << args[0];
    EXPECT_TRUE(result.out.empty()) << args[0];
    EXPECT_THAT(result.err, AllOf(HasSubstr("sched-pipeline: "), HasSubstr("Usage:"))) << args[0];
  }
  EXPECT_THAT(run({"-b", "8abc"}).err, HasSubstr("'8abc'"));
}

TEST(SchedPipelineCli, UnsupportedDtypeExitsOne) {
  const CliRun result = run_example({"-d", "torch.float16"});
  EXPECT_EQ(result.code, 1);
  EXPECT_THAT(result.err, HasSubstr("unsupported dtype: torch.float16"));
}

TEST(SchedPipelineCli, ExampleGivesAValidScheduleAndWarnsAboutRcc) {
  const CliRun result = run_example();
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_THAT(result.err, HasSubstr("RCC-VE-C2558"));
  const YAML::Node schedule = YAML::Load(result.out);
  ASSERT_TRUE(schedule.IsSequence()) << result.out;
  const std::vector<std::string> allowed{"mb-0", "mb-1", "mb-2", "mb-3"};
  std::vector<std::string> used;
  std::size_t next = 1;
  for (const YAML::Node& item : schedule) {
    ASSERT_TRUE(item.IsMap());
    ASSERT_EQ(item.size(), 1U);
    const auto entry = *item.begin();
    const std::string host = entry.first.as<std::string>();
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), host), allowed.end()) << host;
    EXPECT_EQ(std::find(used.begin(), used.end(), host), used.end()) << host << " used twice";
    used.push_back(host);
    EXPECT_EQ(entry.second[0].as<std::size_t>(), next);
    next = entry.second[1].as<std::size_t>() + 1;
  }
  EXPECT_EQ(next, 49U);  // layers 1..48 covered contiguously
}

TEST(SchedPipelineCli, NothingFitsPrintsEmptyListWithReasonAndExitZero) {
  // No profile exists for micro-batch 4, so every type is skipped.
  const CliRun result = run_example({"--batch-size", "4"});
  EXPECT_EQ(result.code, 0);
  EXPECT_EQ(result.out, "[]\n");
  EXPECT_THAT(result.err, AllOf(HasSubstr("no schedule: "), HasSubstr("batch_size 4")));
}

TEST(SchedPipelineCli, InputErrorsExitOneWithoutAborting) {
  const CliRun missing = run({"-M", kPipeEdgeExample + "nope.yml"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.err, HasSubstr("nope.yml: cannot open file"));
  const CliRun unknown = run_example({"--model-name=unknown/model"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("model 'unknown/model' not found"));
  EXPECT_TRUE(unknown.out.empty());
}

TEST(SchedPipelineOptions, AcceptsTheOriginalSpellings) {
  const SchedPipelineOptions a = parse_sched_pipeline_options(
      {"-b16", "--buffers-in=3", "--buffers-out", "4", "--dt", "torch.float32", "-m", "x",
       "--models=a.yml", "-T", "t.yml", "--dev-f=d.yml"});
  EXPECT_EQ(a.batch_size, 16U);
  EXPECT_EQ(a.buffers_in, 3U);
  EXPECT_EQ(a.buffers_out, 4U);
  EXPECT_EQ(a.model_name, "x");
  EXPECT_EQ(a.models_file, "a.yml");
  EXPECT_EQ(a.dev_types_file, "t.yml");
  EXPECT_EQ(a.dev_file, "d.yml");
  const SchedPipelineOptions defaults = parse_sched_pipeline_options({});
  EXPECT_EQ(defaults.batch_size, 8U);
  EXPECT_EQ(defaults.buffers_in, 2U);
  EXPECT_EQ(defaults.dev_file, "devices.yml");
  EXPECT_EQ(parse_sched_pipeline_options({"-i", "0"}).buffers_in, 0U);
  EXPECT_TRUE(parse_sched_pipeline_options({"-h", "--bogus"}).help);
  EXPECT_EQ(parse_sched_pipeline_options({"-b", "00000000008"}).batch_size, 8U);
  EXPECT_EQ(parse_sched_pipeline_options({"-i", "000"}).buffers_in, 0U);
  EXPECT_EQ(defaults.search_memory_mb, 64U);
  EXPECT_EQ(parse_sched_pipeline_options({"--search-memory-mb=512"}).search_memory_mb, 512U);
}

TEST(SchedPipelineOptions, RejectsJunkNumbersAndUnknownOrAmbiguousOptions) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"-b", "8abc"},
                                             {"-b", "-1"},
                                             {"-b", "0"},
                                             {"-b", ""},
                                             {"-b", "+8"},
                                             {"-b", "99999999999"},
                                             {"-b", "0000"},
                                             {"--search-memory-mb=0"},
                                             {"-S", "1"},
                                             {"-i", "1.5"},
                                             {"--model=x"},
                                             {"--dev=x"},
                                             {"--nope"},
                                             {"--help=yes"},
                                             {"-q"},
                                             {"--", "extra"},
                                             {"-M"}}) {
    EXPECT_THROW(parse_sched_pipeline_options(args), UsageError) << args[0];
  }
}

}  // namespace
}  // namespace pe
