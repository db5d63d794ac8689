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
#include "test_paths.h"

namespace pe::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kChain = std::string(PE_TEST_DATA_DIR) + "/graphs/chain.txt";

ProgramResult pe_plan(std::vector<std::string> args) {
  const std::vector<std::string> common{"--profile", kChain, "--pbs", "8", "--devices", "2"};
  args.insert(args.begin(), common.begin(), common.end());
  return run_program(pe_plan_program(), args);
}

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(GivenPlan, IsExplainedAndComparedWithTheBestPlan) {
  const ProgramResult r = pe_plan({"--gbs", "8,16", "--plan-gbs", "8", "--plan", "0-0:1;1-2:1",
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
  const ProgramResult r =
      pe_plan({"--gbs", "8", "--plan", "0-2:2", "--microbatches", "2", "--format", "json"});
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

TEST(GivenPlan, ThatDoesNotFitIsAnAnswer) {
  const ProgramResult r = pe_plan({"--gbs", "64", "--plan", "0-2:1", "--memory-gb", "1e-9"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  does not fit: stage 0 needs "));
  EXPECT_THAT(r.out, HasSubstr("no plan found by the search to compare with"));
}

TEST(GivenPlan, TraceAndChartShowTheGivenPlan) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("pe_given_plan_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const ProgramResult r =
      pe_plan({"--gbs", "8", "--plan", "0-1:1;2-2:1", "--microbatches", "4", "--trace",
               (dir / "t.json").string(), "--svg", (dir / "g.svg").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string given = "your plan at GBS 8: 1 pipeline copy x 2 stages, 4 micro-batches";
  EXPECT_THAT(read(dir / "t.json"), HasSubstr(given));
  EXPECT_THAT(read(dir / "g.svg"), HasSubstr(given));
  EXPECT_THAT(read(dir / "g.svg"), HasSubstr("stage 1 (states 2-2, 1 GPU)"));
  const ProgramResult best = pe_plan({"--gbs", "8", "--trace", (dir / "b.json").string()});
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_THAT(read(dir / "b.json"), Not(HasSubstr("your plan")));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pe::testing
