// pe-plan --plan: a plan of your own, costed next to the best plan found, and the per-plan
// outputs (trace, Gantt chart) showing it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/program.h"
#include "file_text.h"
#include "report/csv_table.h"
#include "test_paths.h"

namespace pe::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ProgramResult chain_on_two_devices(std::vector<std::string> args) {
  const std::vector<std::string> common{"--profile", kChain, "--pbs", "8", "--devices", "2"};
  args.insert(args.begin(), common.begin(), common.end());
  return pe_plan(args);
}

TEST(GivenPlan, IsExplainedAndComparedWithTheBestPlan) {
  const ProgramResult r =
      chain_on_two_devices({"--gbs", "8,16", "--plan-gbs", "8", "--plan", "0-0:1;1-2:1",
                            "--microbatches", "2", "--schedule", "gpipe"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nGiven plan for GBS 8: 1 pipeline copy x 2 stages, "
                               "2 micro-batches of 4, gpipe\n"));
  EXPECT_THAT(r.out, HasSubstr("  stage 1: states 1-2 "));
  EXPECT_THAT(r.out, HasSubstr("x as fast simulated, "));
  // The given plan is never faster than the best plan the exact search finds.
  const std::size_t at = r.out.find("x as fast simulated");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GE(std::stod(r.out.substr(r.out.rfind(" is ", at) + 4)), 1.0 - 1e-9);
}

TEST(GivenPlanJson, CarriesTheGivenPlanAndItsRatio) {
  const ProgramResult r = chain_on_two_devices(
      {"--gbs", "8", "--plan", "0-2:2", "--microbatches", "2", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  const nlohmann::json& given = doc.at("given_plan");
  EXPECT_EQ(given.at("stages_string"), "0-2:2");
  EXPECT_EQ(given.at("micro_batches"), 2);
  EXPECT_EQ(given.at("fits"), true);
  EXPECT_TRUE(given.at("memory_note").is_null());
  EXPECT_GE(given.at("simulated_time_over_best").get<double>(), 1.0 - 1e-9);
  EXPECT_DOUBLE_EQ(
      given.at("time_over_best").get<double>() *
          doc.at("points").at(0).at("plans").at(0).at("iteration_time_s").get<double>(),
      given.at("iteration_time_s").get<double>());
}

// VGG-19 at GBS 32 on a machine of 1 GPU then one of 8 runs on the second machine alone: CSV,
// JSON and the table say where it starts, and --plan with --plan-first-device costs that same
// plan.
TEST(GivenPlanJson, ThePlanFoundOnLaterMachinesIsCostedWhereItRuns) {
  const std::vector<std::string> common{"--profile", "vgg19", "--devices", "1,9", "--gbs", "32"};
  std::vector<std::string> args = common;
  args.insert(args.end(), {"--format", "json"});
  const ProgramResult found = pe_plan(args);
  ASSERT_EQ(found.exit_code, 0) << found.err;
  const nlohmann::json best = nlohmann::json::parse(found.out).at("points").at(0).at("plans").at(0);
  ASSERT_EQ(best.at("first_device"), 1);
  args.insert(args.end(), {"--plan", best.at("stages_string").get<std::string>(), "--microbatches",
                           std::to_string(best.at("micro_batches").get<int>()), "--plan-copies",
                           std::to_string(best.at("pipeline_replicas").get<int>()),
                           "--plan-first-device", "1"});
  const ProgramResult r = pe_plan(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json given = nlohmann::json::parse(r.out).at("given_plan");
  EXPECT_EQ(given.at("first_device"), 1);
  EXPECT_EQ(given.at("stages").at(0).at("devices").at(0), 1);
  EXPECT_DOUBLE_EQ(given.at("simulated_time_over_best").get<double>(), 1.0);
  args = common;
  args.insert(args.end(), {"--format", "csv"});
  const ProgramResult csv = pe_plan(args);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(read_csv(csv.out).rows.at(0).at("first_device"), "1");
  // The table says where the plan starts, next to its stages.
  const ProgramResult table = pe_plan(common);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out,
              HasSubstr("  " + best.at("stages_string").get<std::string>() + " from device 1\n"));
}

TEST(GivenPlan, ThatDoesNotFitIsAnAnswer) {
  const ProgramResult r =
      chain_on_two_devices({"--gbs", "64", "--plan", "0-2:1", "--memory-gb", "1e-9"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  does not fit: stage 0 needs "));
  EXPECT_THAT(r.out, HasSubstr("no plan found by the search to compare with"));
}

TEST(GivenPlan, TraceAndChartShowTheGivenPlan) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("pe_given_plan_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const ProgramResult r =
      chain_on_two_devices({"--gbs", "8", "--plan", "0-1:1;2-2:1", "--microbatches", "4", "--trace",
                            (dir / "t.json").string(), "--svg", (dir / "g.svg").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string given = "your plan at GBS 8: 1 pipeline copy x 2 stages, 4 micro-batches";
  EXPECT_THAT(file_text(dir / "t.json"), HasSubstr(given));
  EXPECT_THAT(file_text(dir / "g.svg"), HasSubstr(given));
  EXPECT_THAT(file_text(dir / "g.svg"), HasSubstr("stage 1 (states 2-2, 1 GPU)"));
  const ProgramResult best =
      chain_on_two_devices({"--gbs", "8", "--trace", (dir / "b.json").string()});
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_THAT(file_text(dir / "b.json"), Not(HasSubstr("your plan")));
  std::filesystem::remove_all(dir);
}

// A transformer plan of split and recomputed stages: the table, the JSON, the trace and the
// Gantt chart all say how each stage uses its GPUs.
TEST(GivenPlan, TransformerStagesShowTheirSplitAndRecomputationEverywhere) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("pe_given_split_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::vector<std::string> common{
      "--model", "llama2-7b",           "--devices",      "8", "--gbs",           "16",
      "--plan",  "0-16:4t4r;17-33:4t2", "--microbatches", "4", "--search-effort", "2000"};
  std::vector<std::string> args = common;
  args.insert(args.end(),
              {"--trace", (dir / "t.json").string(), "--svg", (dir / "g.svg").string()});
  const ProgramResult r = pe_plan(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string given = r.out.substr(r.out.find("\nGiven plan for "));
  EXPECT_THAT(given,
              HasSubstr(" per copy [0-3] as 1 replica x 4-way tensor parallel, recomputed\n"));
  EXPECT_THAT(given, HasSubstr(" per copy [4-7] as 2 replicas x 2-way tensor parallel\n"));
  for (const char* file : {"t.json", "g.svg"}) {
    EXPECT_THAT(file_text(dir / file),
                HasSubstr("stage 0 (states 0-16, 4 GPUs, 4-way tensor parallel, recomputed)"))
        << file;
    EXPECT_THAT(file_text(dir / file),
                HasSubstr("stage 1 (states 17-33, 4 GPUs, 2-way tensor parallel)"))
        << file;
  }
  std::filesystem::remove_all(dir);

  args = common;
  args.insert(args.end(), {"--format", "json"});
  const ProgramResult json = pe_plan(args);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json stages = nlohmann::json::parse(json.out).at("given_plan").at("stages");
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages.at(0).at("tensor_parallel"), 4);
  EXPECT_EQ(stages.at(1).at("tensor_parallel"), 2);
  EXPECT_EQ(stages.at(0).at("recompute"), true);
  EXPECT_EQ(stages.at(1).at("recompute"), false);
  for (const nlohmann::json& stage : stages)
    EXPECT_EQ(stage.at("data_parallel").get<int>() * stage.at("tensor_parallel").get<int>(),
              stage.at("width").get<int>());
}

// A graph.txt profile's outputs name none of the transformer choices.
TEST(GivenPlan, ProfilesWithoutTheChoicesShowNoneOfThem) {
  const ProgramResult r =
      chain_on_two_devices({"--gbs", "8", "--plan", "0-1:1;2-2:1", "--microbatches", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* word : {"tensor parallel", "recomputed", "ZeRO", "working", "fwd+bwd"})
    EXPECT_THAT(r.out, Not(HasSubstr(word))) << word;
}

}  // namespace
}  // namespace pe::testing
