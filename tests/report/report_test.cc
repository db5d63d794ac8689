// The text, CSV and JSON reporters: what they show when plain data parallelism does not
// fit (docs/bad-inputs.md K6), columns that never run together (K7), singular nouns.
#include "pe/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pe/planner.h"
#include "report/csv_table.h"
#include "report/format.h"

namespace pe {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The first point of a sweep_json report, parsed.
nlohmann::json first_point(const std::string& json) {
  return nlohmann::json::parse(json).at("points").at(0);
}

// The line of `text` that starts (after blanks) with `first`.
std::string line_starting(const std::string& text, const std::string& first) {
  for (const std::string& line : lines_of(text))
    if (line.find(first) != std::string::npos && line.find_first_not_of(' ') == line.find(first))
      return line;
  return "";
}

// Where each whitespace-separated word of `line` ends.
std::vector<std::size_t> word_ends(const std::string& line) {
  std::vector<std::size_t> ends;
  for (std::size_t i = 0; i < line.size(); ++i)
    if (line[i] != ' ' && (i + 1 == line.size() || line[i + 1] == ' ')) ends.push_back(i + 1);
  return ends;
}

// Two layers of 5 GB weights (10 GB with gradients and optimizer state): together they do
// not fit a 16 GB GPU, one per GPU in a two-stage pipeline does.
Planner two_stage_only_planner() {
  const ModelProfile model =
      make_chain_model("big", 1, {{"a", 1e-3, 2e-3, 1e3, 5e9}, {"b", 1e-3, 2e-3, 1e3, 5e9}});
  return Planner(model, cluster_from_machine_ends({2}));
}

TEST(Report, DataParallelThatDoesNotFitIsMarkedInTheTable) {
  const Planner planner = two_stage_only_planner();
  const std::vector<PointResult> points{planner.plan(8)};
  ASSERT_FALSE(points[0].baselines.fits);
  ASSERT_NE(points[0].best(), nullptr);
  const std::string table = sweep_table(points, {&planner.model(), &planner.cluster()});
  std::istringstream row(line_starting(table, "8 "));
  std::string gbs, dp, overlap, p3, hybrid;
  row >> gbs >> dp >> overlap >> p3 >> hybrid;
  EXPECT_EQ(dp, "n/f") << table;
  EXPECT_EQ(overlap, "n/f") << table;
  EXPECT_EQ(p3, "n/f") << table;
  EXPECT_NE(hybrid, "n/f") << table;
  EXPECT_THAT(table, HasSubstr("\nn/f: plain data parallelism does not fit"));
}

TEST(Report, EveryBatchSizeWithoutAPlanGetsItsReason) {
  // 10 GB of weights x 2 (optimizer) never fit 16 GB: no plan at either batch size.
  const Planner planner(make_chain_model("huge", 1, {{"a", 1e-3, 2e-3, 1e3, 10e9}}),
                        cluster_from_machine_ends({2}));
  const std::vector<PointResult> points{planner.plan(8), planner.plan(16)};
  const std::string table = sweep_table(points, {&planner.model(), &planner.cluster()});
  EXPECT_THAT(table, AllOf(HasSubstr("\nGBS 8: no plan fits: state 0 alone needs"),
                           HasSubstr("\nGBS 16: no plan fits: state 0 alone needs")));
}

TEST(Report, TooHighMicroBatchFloorSaysSoInTheReasonAndTheLegend) {
  // One sample per device fits; --mbs 4 on 2 devices needs 2 per device in every step.
  ModelProfile model = make_chain_model("m", 1, {{"a", 1e-3, 2e-3, 1e9, 1e9}});
  Cluster cluster = cluster_from_machine_ends({2});
  cluster.device_memory = 2e9 + 1.5e9;
  TrainingSettings settings;
  settings.min_micro_batch = 4;
  const Planner planner(model, cluster, settings);
  const PointResult point = planner.plan(8);
  ASSERT_EQ(point.best(), nullptr);
  EXPECT_TRUE(point.exact);
  EXPECT_FALSE(point.baselines.fits);
  EXPECT_THAT(point.no_plan_reason, HasSubstr("at GBS 8 with micro-batches of at least 4 samples "
                                              "(TrainingSettings::min_micro_batch 4)"));
  const std::string table = sweep_table({point}, {&planner.model(), &planner.cluster()});
  EXPECT_THAT(table, HasSubstr("below the micro-batch floor (TrainingSettings::min_micro_batch)"));
}

TEST(Report, DataParallelThatFitsHasNoMark) {
  const Planner planner(make_chain_model("small", 1, {{"a", 1e-3, 2e-3, 1e3, 1e3}}),
                        cluster_from_machine_ends({2}));
  const std::string table = sweep_table({planner.plan(8)}, {&planner.model(), &planner.cluster()});
  EXPECT_THAT(table, Not(HasSubstr("n/f")));
}

TEST(Report, DataParallelThatDoesNotFitHasEmptyCsvFieldsAndNullsInJson) {
  const Planner planner = two_stage_only_planner();
  const std::vector<PointResult> points{planner.plan(8)};
  const testing::CsvTable csv = testing::read_csv(sweep_csv(points));
  ASSERT_EQ(csv.rows.size(), 1u);
  for (const char* column : {"dp", "dp_overlap", "dp_p3"})
    EXPECT_EQ(csv.rows[0].at(column), "") << column;
  EXPECT_NE(csv.rows[0].at("speedup"), "") << "the hybrid speedup is there";
  const nlohmann::json baselines =
      first_point(sweep_json(points, {&planner.model(), &planner.cluster()})).at("baselines");
  EXPECT_EQ(baselines.at("fits"), false);
  for (const char* field : {"dp", "dp_overlap", "dp_p3"})
    EXPECT_TRUE(baselines.at(field).is_null()) << field << ": " << baselines;
}

TEST(Report, DataParallelThatFitsHasItsSpeedupsInJson) {
  const Planner planner(make_chain_model("small", 1, {{"a", 1e-3, 2e-3, 1e3, 1e3}}),
                        cluster_from_machine_ends({2}));
  const nlohmann::json baselines = first_point(sweep_json({planner.plan(8)}, {})).at("baselines");
  EXPECT_EQ(baselines.at("fits"), true);
  EXPECT_GT(baselines.at("dp").get<double>(), 1.0) << baselines;
}

// A point without a plan is one CSV row with an empty rank and its reason, quoted when it
// holds commas or quotes (RFC 4180).
TEST(Report, CsvRowWithoutAPlanCarriesTheReasonQuoted) {
  const Planner planner(make_chain_model("huge", 1, {{"a", 1e-3, 2e-3, 1e3, 10e9}}),
                        cluster_from_machine_ends({2}));
  std::vector<PointResult> points{planner.plan(8)};
  ASSERT_EQ(points[0].best(), nullptr);
  points[0].no_plan_reason = "a \"quoted\", comma-separated\nreason";
  const testing::CsvTable csv = testing::read_csv(sweep_csv(points));
  ASSERT_EQ(csv.rows.size(), 1u);
  EXPECT_EQ(csv.rows[0].at("gbs"), "8");
  EXPECT_EQ(csv.rows[0].at("rank"), "");
  EXPECT_EQ(csv.rows[0].at("speedup"), "");
  EXPECT_EQ(csv.rows[0].at("exact"), "true");
  EXPECT_EQ(csv.rows[0].at("no_plan_reason"), points[0].no_plan_reason);
}

TEST(Report, SweepTableColumnsNeverRunTogether) {
  const Planner planner(make_chain_model("m", 1, {{"a", 1e-3, 2e-3, 1e3, 1e3}}),
                        cluster_from_machine_ends({8}));
  const int gbs = 1 << 30;
  const std::vector<PointResult> points{planner.plan(gbs)};
  ASSERT_NE(points[0].best(), nullptr);
  const std::string table = sweep_table(points, {&planner.model(), &planner.cluster()});
  const std::string header = line_starting(table, "GBS");
  const std::string row = line_starting(table, std::to_string(gbs));
  // 9 right-aligned columns, then the schedule and the stages: 11 words on each line, and
  // the first 9 end where their headers end.
  ASSERT_EQ(word_ends(header).size(), 11u) << table;
  ASSERT_EQ(word_ends(row).size(), 11u) << table;
  for (std::size_t i = 0; i < 9; ++i)
    EXPECT_EQ(word_ends(row)[i], word_ends(header)[i]) << "column " << i << "\n" << table;
}

TEST(Report, BubbleTableColumnsNeverRunTogether) {
  BubbleReport report;
  report.makespan = 1.8e6;
  StageBubbles stage;
  stage.busy = 1.8e6;  // 1800000000.000 ms
  stage.idle = 3e-6;
  stage.drain = 123456.789;
  report.stages.push_back(stage);
  const std::string text = bubble_text(report);
  const std::string header = line_starting(text, "stage");
  const std::string row = line_starting(text, "0 ");
  ASSERT_EQ(word_ends(header).size(), 8u) << text;
  ASSERT_EQ(word_ends(row).size(), 8u) << text;
  EXPECT_EQ(word_ends(row), word_ends(header)) << text;
}

TEST(Report, OneGpuOneMachineOneStateAreSingular) {
  const Planner planner(make_chain_model("m", 1, {{"a", 1e-3, 2e-3, 1e3, 1e3}}),
                        cluster_from_machine_ends({1}));
  const std::string table = sweep_table({planner.plan(8)}, {&planner.model(), &planner.cluster()});
  EXPECT_THAT(table, StartsWith("m: 1 state, profile batch 1 | 1 GPU on 1 machine,"));
}

}  // namespace
}  // namespace pe

namespace pe {
namespace {

// Eight layers on 2 x 2 GPUs: a one-step effort stops every exact pass, so only the seeds
// (one stage, equal-work pipelines) answer; an unlimited effort finishes.
Planner effort_planner(std::uint64_t effort, int top = 1) {
  std::vector<Layer> layers;
  for (int i = 0; i < 8; ++i)
    layers.push_back({"l" + std::to_string(i), 1e-3 * (i + 1), 2e-3, 1e6, 4e7 * (8 - i)});
  SearchOptions options;
  options.effort = effort;
  options.top = top;
  return Planner(make_chain_model("eight", 8, layers), cluster_from_machine_ends({2, 4}), {},
                 options);
}

// The gap column: a number rounded up to 0.1 % in the table, the same fraction in CSV and
// JSON, and the lower bound it comes from.
TEST(Report, SearchStoppedAtItsEffortShowsItsGapEverywhere) {
  const Planner planner = effort_planner(1);
  const std::vector<PointResult> points{planner.plan(32)};
  ASSERT_FALSE(points[0].exact);
  ASSERT_NE(points[0].best(), nullptr);
  const double gap = points[0].gap();
  ASSERT_GT(gap, 0);
  EXPECT_DOUBLE_EQ(gap, 1 - points[0].lower_bound / points[0].best()->iteration_time);
  const std::string table = sweep_table(points, {&planner.model(), &planner.cluster()});
  std::istringstream row(line_starting(table, "32 "));
  std::string gbs, dp, overlap, p3, hybrid, estimate, gap_cell;
  row >> gbs >> dp >> overlap >> p3 >> hybrid >> estimate >> gap_cell;
  EXPECT_EQ(gap_cell, "<=" + detail::format::fixed(std::ceil(gap * 1000 - 1e-9) / 10, 1) + "%")
      << table;
  EXPECT_THAT(table, HasSubstr("\ngap: how much slower than the optimum"));
  EXPECT_THAT(line_starting(table, "gap: "), HasSubstr("more search effort"));
  // The explained plan says what the gap is measured against, below its own summary line.
  const std::string proved = line_starting(table, "the search proved no plan");
  EXPECT_THAT(proved, HasSubstr(detail::format::fixed(points[0].lower_bound * 1e3, 3) + " ms"));
  EXPECT_THAT(proved, HasSubstr(gap_cell));
  EXPECT_LT(table.find("its own lower bound"), table.find("the search proved no plan")) << table;
  const testing::CsvTable csv = testing::read_csv(sweep_csv(points));
  ASSERT_EQ(csv.rows.size(), 1u);
  EXPECT_EQ(csv.rows[0].at("exact"), "false");
  EXPECT_DOUBLE_EQ(std::stod(csv.rows[0].at("gap")), gap);
  EXPECT_DOUBLE_EQ(std::stod(csv.rows[0].at("lower_bound_s")), points[0].lower_bound);
  const nlohmann::json point = first_point(sweep_json(points, {}));
  EXPECT_EQ(point.at("exact"), false);
  EXPECT_DOUBLE_EQ(point.at("gap").get<double>(), gap);
  EXPECT_DOUBLE_EQ(point.at("lower_bound_s").get<double>(), points[0].lower_bound);
}

TEST(Report, ExactPointsSayExact) {
  const Planner planner(make_chain_model("small", 1, {{"a", 1e-3, 2e-3, 1e3, 1e3}}),
                        cluster_from_machine_ends({2}));
  const std::vector<PointResult> points{planner.plan(8)};
  ASSERT_TRUE(points[0].exact);
  EXPECT_EQ(points[0].gap(), 0);
  const std::string table = sweep_table(points, {&planner.model(), &planner.cluster()});
  EXPECT_THAT(line_starting(table, "8 "), HasSubstr(" exact "));
  EXPECT_THAT(table, Not(HasSubstr("gap:")));
  EXPECT_THAT(table, Not(HasSubstr("the search proved no plan")));
  const testing::CsvTable csv = testing::read_csv(sweep_csv(points));
  EXPECT_EQ(csv.rows.at(0).at("exact"), "true");
  EXPECT_EQ(std::stod(csv.rows.at(0).at("gap")), 0);
}

TEST(Report, StoppedSearchIsNeverBetterThanTheFinishedOne) {
  const std::vector<PointResult> points{effort_planner(0).plan(32)};
  // The stopped search's plan is never better than the finished one's.
  EXPECT_LE(effort_planner(1).plan(32).best()->speedup, points[0].best()->speedup * (1 + 1e-9));
}

TEST(Report, TopAlternativesFollowTheBestPlan) {
  const Planner planner = effort_planner(0, 3);
  const std::vector<PointResult> points{planner.plan(32)};
  ASSERT_EQ(points[0].plans.size(), 3u);
  const std::string table = sweep_table(points, {&planner.model(), &planner.cluster()});
  const std::size_t next = table.find("Next best plans for GBS 32:");
  ASSERT_NE(next, std::string::npos) << table;
  for (int rank : {2, 3}) {
    const std::string line = line_starting(table.substr(next), std::to_string(rank) + ". speedup ");
    ASSERT_FALSE(line.empty()) << table;
    EXPECT_THAT(line, HasSubstr(stages_string(points[0].plans[rank - 1])));
  }
}

// Two GPUs with room for 3 samples of 1 GB beside 12.5 GB of weights and optimizer state:
// GBS 13 (prime) gives one GPU 7 samples, run in 3 micro-steps, so the plan has 3
// micro-batches of at most 5 (5 + 4 + 4), a count that does not divide 13. Layer b's 0.25 s
// all-reduce runs during layer a's last backward: 7/3 samples (0.23 s) in this plan, 7/13
// (0.05 s) in the even plan of 13 micro-batches of 1, so this one is faster.
TEST(Report, UnevenMicroBatchesSayAtMostInTextAndJson) {
  const ModelProfile model =
      make_chain_model("acc", 1, {{"a", 0.05, 0.1, 0.5e9, 0}, {"b", 0.05, 0.1, 0.5e9, 6.25e9}});
  Cluster cluster = cluster_from_machine_ends({2});
  cluster.device_memory = 15.5e9;
  const Planner planner(model, cluster);
  const std::vector<PointResult> points{planner.plan(13)};
  const Plan* plan = points[0].best();
  ASSERT_NE(plan, nullptr) << points[0].no_plan_reason;
  EXPECT_EQ(plan->micro_batches, 3);
  EXPECT_EQ(plan->micro_batch_size, 5);
  EXPECT_TRUE(plan->uneven_micro_batches());
  const std::string table = sweep_table(points, {&planner.model(), &planner.cluster()});
  EXPECT_THAT(table, HasSubstr("3 micro-batches of at most 5"));
  EXPECT_EQ(first_point(sweep_json(points, {})).at("plans").at(0).at("uneven_micro_batches"), true);
  // GBS 12 is 2 micro-steps of 3 per GPU, 2 micro-batches of 6: even, said plainly.
  const std::vector<PointResult> even{planner.plan(12)};
  ASSERT_NE(even[0].best(), nullptr);
  EXPECT_FALSE(even[0].best()->uneven_micro_batches());
  EXPECT_THAT(sweep_table(even, {&planner.model(), &planner.cluster()}), Not(HasSubstr("at most")));
}

// CSV and JSON name each quantity alike: every CSV column is a JSON field of the point
// (gbs, exact, no_plan_reason), its baselines (dp...), its plan, or each of its stages (the
// columns after no_plan_reason but the last three, chunks, first_device and copy_stride, one
// value per stage).
TEST(Report, CsvColumnsAreJsonFieldNames) {
  const Planner planner = effort_planner(0);
  const std::vector<PointResult> points{planner.plan(32)};
  const testing::CsvTable csv = testing::read_csv(sweep_csv(points));
  const nlohmann::json point = first_point(sweep_json(points, {}));
  const nlohmann::json& plan = point.at("plans").at(0);
  bool stage_columns = false;
  for (const std::string& column : csv.header) {
    if (column == "gbs" || column == "exact" || column == "no_plan_reason")
      EXPECT_TRUE(point.contains(column)) << column;
    else if (column == "dp" || column == "dp_overlap" || column == "dp_p3")
      EXPECT_TRUE(point.at("baselines").contains(column)) << column;
    else if (stage_columns && column != "chunks" && column != "first_device" &&
             column != "copy_stride")
      EXPECT_TRUE(plan.at("stages").at(0).contains(column))
          << column << " is not a JSON stage field";
    else
      EXPECT_TRUE(plan.contains(column)) << column << " is not a JSON plan field";
    stage_columns = stage_columns || column == "no_plan_reason";
  }
  EXPECT_EQ(csv.header.back(), "copy_stride");
  EXPECT_EQ(csv.rows[0].at("first_device"), "0");
  EXPECT_EQ(std::stod(csv.rows[0].at("iteration_time_s")),
            plan.at("iteration_time_s").get<double>());
  EXPECT_EQ(std::stod(csv.rows[0].at("peak_memory_bytes")),
            plan.at("peak_memory_bytes").get<double>());
  EXPECT_EQ(csv.rows[0].at("stages_string"), plan.at("stages_string"));
}

// --top K: K rows per batch size, ranked from 1, in the order of PointResult::plans.
TEST(Report, CsvAndJsonRankEveryPlan) {
  const Planner planner = effort_planner(0, 3);
  const std::vector<PointResult> points{planner.plan(32)};
  ASSERT_EQ(points[0].plans.size(), 3u);
  const testing::CsvTable csv = testing::read_csv(sweep_csv(points));
  ASSERT_EQ(csv.rows.size(), 3u);
  const nlohmann::json plans = first_point(sweep_json(points, {})).at("plans");
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(csv.rows[i].at("gbs"), "32");
    EXPECT_EQ(csv.rows[i].at("rank"), std::to_string(i + 1));
    EXPECT_EQ(csv.rows[i].at("stages_string"), stages_string(points[0].plans[i]));
    EXPECT_EQ(csv.rows[i].at("micro_batches"), std::to_string(points[0].plans[i].micro_batches));
    EXPECT_EQ(plans.at(i).at("rank"), i + 1);
  }
}

// The context says how the report was made, so that a saved file can be reproduced.
TEST(Report, JsonContextCarriesSettingsSearchProgramAndCommandLine) {
  const Planner planner = effort_planner(0, 2);
  TrainingSettings settings;
  settings.min_micro_batch = 4;
  settings.optimizer_scaling = 3;
  SearchOptions search;
  search.schedules = {Schedule::GPipe};
  search.effort = 1234;
  search.top = 2;
  ReportContext context{&planner.model(), &planner.cluster()};
  context.settings = &settings;
  context.search = &search;
  context.program_version = "pe-plan 9.9";
  context.command_line = {"--top", "2", "--schedule", "gpipe"};
  const nlohmann::json c =
      nlohmann::json::parse(sweep_json({planner.plan(32)}, context)).at("context");
  EXPECT_EQ(c.at("program_version"), "pe-plan 9.9");
  EXPECT_EQ(c.at("command_line"), nlohmann::json({"--top", "2", "--schedule", "gpipe"}));
  EXPECT_EQ(c.at("model"), "eight");
  EXPECT_EQ(c.at("min_micro_batch"), 4);
  EXPECT_EQ(c.at("optimizer_scaling"), 3.0);
  EXPECT_TRUE(c.at("activation_bytes_per_sample").is_null());
  EXPECT_EQ(c.at("schedules"), nlohmann::json({"gpipe"}));
  EXPECT_EQ(c.at("search_effort"), 1234);
  EXPECT_EQ(c.at("top"), 2);
  EXPECT_FALSE(nlohmann::json::parse(sweep_json({}, {})).at("context").contains("top"));
}

}  // namespace
}  // namespace pe
