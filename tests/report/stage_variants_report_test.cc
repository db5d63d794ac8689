// The stage variants in every report: a stage split t ways (tensor parallelism), one that
// recomputes its forward, ZeRO sharding and working memory show in the text, JSON and CSV
// of a transformer plan, and never in those of a model without them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pe/plan_layout.h"
#include "pe/planner.h"
#include "pe/report.h"
#include "pe/transformer.h"
#include "report/csv_table.h"
#include "report/format.h"

namespace pe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A small LLaMA-like transformer: embedding, four layers, head (six states); 8 heads, so a
// stage may split 1, 2, 4 or 8 ways.
ModelProfile small_transformer() {
  TransformerConfig c;
  c.name = "tiny-llama";
  c.layers = 4;
  c.hidden = 1024;
  c.heads = 8;
  c.kv_heads = 8;
  c.ffn = 2816;
  c.gated_ffn = true;
  c.sequence = 2048;
  c.vocabulary = 32000;
  return transformer_model(c, find_gpu("H100-80GB", "test"), 0.5);
}

TrainingSettings transformer_settings(int zero_stage = 0) {
  TrainingSettings settings;
  settings.optimizer_scaling = 8;  // mixed-precision Adam over 2-byte weights
  settings.zero_stage = zero_stage;
  return settings;
}

Planner transformer_planner(int zero_stage = 0) {
  return Planner(small_transformer(), cluster_from_machine_ends({8}),
                 transformer_settings(zero_stage));
}

// Stage 0 (embedding .. layer 2) on 4 GPUs as one 4-way split that recomputes; stage 1
// (layer 3 .. head) on 4 GPUs as two 2-way splits.
PlanLayout split_layout() {
  PlanLayout layout;
  layout.stages = {{0, 2, 4, 4, true}, {3, 5, 4, 2, false}};
  layout.micro_batches = 4;
  return layout;
}

// A model without the new fields (as a graph.txt profile): three plain layers.
Planner plain_planner() {
  const ModelProfile model = make_chain_model(
      "plain", 8,
      {{"a", 1e-3, 2e-3, 1e6, 1e6}, {"b", 2e-3, 4e-3, 1e6, 2e6}, {"c", 1e-3, 2e-3, 1e6, 1e6}});
  return Planner(model, cluster_from_machine_ends({4}));
}

std::vector<std::string> variant_report_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The line of `text` that contains `part`, "" when none does.
std::string line_with(const std::string& text, const std::string& part) {
  for (const std::string& line : variant_report_lines(text))
    if (line.find(part) != std::string::npos) return line;
  return "";
}

// The given plan of a sweep_json report with `cost` as its given plan.
nlohmann::json given_json(const Planner& planner, const LayoutCost& cost,
                          const TrainingSettings* settings = nullptr) {
  ReportContext context{&planner.model(), &planner.cluster()};
  context.given_plan = &cost;
  context.settings = settings;
  return nlohmann::json::parse(sweep_json({}, context));
}

TEST(StageVariantsReport, EvaluatedPlanKeepsEachStagesSplitAndRecomputation) {
  const Planner planner = transformer_planner();
  const LayoutCost cost = planner.evaluate(split_layout(), 8);
  const std::vector<PlanStage>& stages = cost.plan.stages;
  ASSERT_EQ(stages.size(), 2u);
  for (std::size_t s = 0; s < stages.size(); ++s) {
    EXPECT_EQ(stages[s].tensor_parallel, split_layout().stages[s].tensor_parallel);
    EXPECT_EQ(stages[s].recompute, split_layout().stages[s].recompute);
    EXPECT_EQ(stages[s].data_parallel() * stages[s].tensor_parallel, stages[s].width);
    EXPECT_EQ(stages[s].zero_stage, 0);
  }
  // A recomputing stage holds its largest operator's activations while working.
  EXPECT_GT(stages[0].working_memory, 0);
}

TEST(StageVariantsReport, TextSaysHowEachStageUsesItsGpus) {
  const Planner planner = transformer_planner();
  const LayoutCost cost = planner.evaluate(split_layout(), 8);
  const std::string text = plan_text(cost.plan, planner.model());
  const std::string first = line_with(text, "  stage 0: ");
  const std::string second = line_with(text, "  stage 1: ");
  EXPECT_THAT(first, HasSubstr(" per copy [0-3] as 1 replica x 4-way tensor parallel, recomputed"));
  EXPECT_THAT(second, HasSubstr(" per copy [4-7] as 2 replicas x 2-way tensor parallel"));
  EXPECT_THAT(second, Not(HasSubstr("recomputed")));
  EXPECT_THAT(text, Not(HasSubstr("ZeRO")));
  // The memory is broken down exactly for the stages that hold working memory.
  for (std::size_t s = 0; s < 2; ++s) {
    const PlanStage& stage = cost.plan.stages[s];
    const std::string memory =
        line_with(text, "memory " + detail::format::fixed(stage.peak_memory() / kGB, 2));
    ASSERT_FALSE(memory.empty()) << s;
    if (stage.working_memory > 0)
      EXPECT_THAT(
          memory,
          HasSubstr("(weights " + detail::format::fixed(stage.weight_memory / kGB, 2) +
                    ", activations " + detail::format::fixed(stage.activation_memory / kGB, 2) +
                    ", working " + detail::format::fixed(stage.working_memory / kGB, 2) + ")"));
    else
      EXPECT_THAT(memory, Not(HasSubstr("working")));
  }
  // Both stages split, the first recomputes: each says how its time divides.
  for (std::size_t s = 0; s < 2; ++s) {
    const PlanStage& stage = cost.plan.stages[s];
    EXPECT_GT(stage.tensor_parallel_time, 0) << s;
    EXPECT_EQ(stage.recompute_time > 0, stage.recompute) << s;
    EXPECT_LT(stage.tensor_parallel_time + stage.recompute_time,
              stage.times.forward + stage.times.backward)
        << s;
  }
  EXPECT_THAT(text, HasSubstr("tensor-parallel all-reduce"));
  EXPECT_THAT(text, HasSubstr("recomputation"));
}

TEST(StageVariantsReport, TextSplitsTheStageTimeIntoComputeAllReduceAndRecomputation) {
  const Planner planner = transformer_planner();
  Plan plan = planner.evaluate(split_layout(), 8).plan;
  PlanStage& stage = plan.stages[0];
  const Seconds whole = stage.times.forward + stage.times.backward;
  stage.tensor_parallel_time = whole / 4;
  stage.recompute_time = whole / 4;
  plan.stages[1].tensor_parallel_time = whole / 5;
  using detail::format::fixed;
  const auto ms = [&](Seconds s) { return fixed(s * 1e3, 3) + " ms"; };
  const std::string text = plan_text(plan, planner.model());
  EXPECT_THAT(text, HasSubstr("    fwd+bwd " + ms(whole) + " = compute " + ms(whole / 2) +
                              " (50%) + tensor-parallel all-reduce " + ms(whole / 4) +
                              " (25%) + recomputation " + ms(whole / 4) + " (25%)\n"));
  // Stage 1 splits but does not recompute: no recomputation part.
  const PlanStage& second = plan.stages[1];
  const Seconds second_whole = second.times.forward + second.times.backward;
  const std::string line = line_with(text, "    fwd+bwd " + ms(second_whole));
  EXPECT_THAT(line, HasSubstr(" + tensor-parallel all-reduce " + ms(whole / 5)));
  EXPECT_THAT(line, Not(HasSubstr("recomputation")));
  // The JSON and CSV carry the same numbers.
  const nlohmann::json stages =
      given_json(planner, LayoutCost{plan, true, ""}).at("given_plan").at("stages");
  EXPECT_EQ(stages.at(0).at("tensor_parallel_time_s").get<double>(), whole / 4);
  EXPECT_EQ(stages.at(0).at("recompute_time_s").get<double>(), whole / 4);
  EXPECT_EQ(stages.at(1).at("recompute_time_s").get<double>(), 0);
}

TEST(StageVariantsReport, ZeroShardingIsNamedPerStage) {
  const TrainingSettings settings = transformer_settings(1);
  const Planner planner = transformer_planner(1);
  const LayoutCost cost = planner.evaluate(split_layout(), 8);
  const std::string text = plan_text(cost.plan, planner.model());
  EXPECT_THAT(line_with(text, "  stage 0: "),
              HasSubstr("-way tensor parallel, recomputed, ZeRO-1"));
  EXPECT_THAT(line_with(text, "  stage 1: "), HasSubstr("-way tensor parallel, ZeRO-1"));
  const nlohmann::json doc = given_json(planner, cost, &settings);
  for (const nlohmann::json& stage : doc.at("given_plan").at("stages"))
    EXPECT_EQ(stage.at("zero_stage"), 1);
  EXPECT_EQ(doc.at("context").at("zero_stage"), 1);
}

TEST(StageVariantsReport, JsonStagesCarryTheVariantsAndWorkingMemory) {
  const Planner planner = transformer_planner();
  const LayoutCost cost = planner.evaluate(split_layout(), 8);
  const nlohmann::json stages = given_json(planner, cost).at("given_plan").at("stages");
  ASSERT_EQ(stages.size(), 2u);
  for (std::size_t s = 0; s < 2; ++s) {
    const PlanStage& stage = cost.plan.stages[s];
    const nlohmann::json& j = stages.at(s);
    EXPECT_EQ(j.at("tensor_parallel"), split_layout().stages[s].tensor_parallel);
    EXPECT_EQ(j.at("recompute"), split_layout().stages[s].recompute);
    EXPECT_EQ(j.at("data_parallel").get<int>() * j.at("tensor_parallel").get<int>(),
              j.at("width").get<int>());
    EXPECT_EQ(j.at("zero_stage"), 0);
    EXPECT_EQ(j.at("working_memory_bytes").get<double>(), stage.working_memory);
    EXPECT_EQ(j.at("weight_memory_bytes").get<double>() +
                  j.at("activation_memory_bytes").get<double>() +
                  j.at("working_memory_bytes").get<double>(),
              j.at("peak_memory_bytes").get<double>());
  }
}

TEST(StageVariantsReport, JsonContextCarriesTheVariantSettings) {
  const Planner planner = transformer_planner();
  TrainingSettings settings = transformer_settings(2);
  settings.max_tensor_parallel = 4;
  settings.tensor_parallel_efficiency = 0.75;
  settings.recomputation = false;
  const nlohmann::json context =
      given_json(planner, planner.evaluate(split_layout(), 8), &settings).at("context");
  EXPECT_EQ(context.at("max_tensor_parallel"), 4);
  EXPECT_EQ(context.at("tensor_parallel_efficiency"), 0.75);
  EXPECT_EQ(context.at("recomputation"), false);
  EXPECT_EQ(context.at("zero_stage"), 2);
}

// Each per-stage CSV column holds the stages' JSON values in order, joined by ';'.
void expect_csv_matches_json_stages(const std::vector<PointResult>& points) {
  const testing::CsvTable csv = testing::read_csv(sweep_csv(points));
  const nlohmann::json plans =
      nlohmann::json::parse(sweep_json(points, {})).at("points").at(0).at("plans");
  ASSERT_EQ(csv.rows.size(), plans.size());
  for (std::size_t p = 0; p < plans.size(); ++p)
    for (const char* column :
         {"tensor_parallel", "data_parallel", "recompute", "zero_stage", "working_memory_bytes",
          "tensor_parallel_time_s", "recompute_time_s"}) {
      std::string joined;
      for (const nlohmann::json& stage : plans.at(p).at("stages")) {
        const nlohmann::json& value = stage.at(column);
        joined += (joined.empty() ? "" : ";") +
                  (value.is_number_float() ? detail::format::json_number(value.get<double>())
                                           : value.dump());
      }
      EXPECT_EQ(csv.rows[p].at(column), joined) << column;
    }
}

TEST(StageVariantsReport, CsvHasOneValuePerStageOfEachVariantColumn) {
  const Planner planner = transformer_planner();
  PointResult point;
  point.global_batch = 8;
  point.plans = {planner.evaluate(split_layout(), 8).plan};
  point.plans[0].stages[0].tensor_parallel_time = 1e-3;
  point.plans[0].stages[0].recompute_time = 2e-3;
  const testing::CsvTable csv = testing::read_csv(sweep_csv({point}));
  ASSERT_EQ(csv.rows.size(), 1u);
  EXPECT_EQ(csv.rows[0].at("tensor_parallel"), "4;2");
  EXPECT_EQ(csv.rows[0].at("data_parallel"), "1;2");
  EXPECT_EQ(csv.rows[0].at("recompute"), "true;false");
  EXPECT_EQ(csv.rows[0].at("zero_stage"), "0;0");
  expect_csv_matches_json_stages({point});
}

TEST(StageVariantsReport, ModelsWithoutTheChoicesShowNoneOfThem) {
  const Planner planner = plain_planner();
  const std::vector<PointResult> points{planner.plan(32)};
  ASSERT_NE(points[0].best(), nullptr);
  const std::string text = sweep_table(points, {&planner.model(), &planner.cluster()});
  for (const char* word : {"tensor parallel", "replica x", "recomputed", "ZeRO", "working",
                           "fwd+bwd", "recomputation", "limits:"})
    EXPECT_THAT(text, Not(HasSubstr(word))) << word;
  // The parsed report must outlive the loop: a range-for keeps only the last temporary.
  const nlohmann::json report = nlohmann::json::parse(sweep_json(points, {}));
  for (const nlohmann::json& stage : report.at("points").at(0).at("plans").at(0).at("stages")) {
    EXPECT_EQ(stage.at("tensor_parallel"), 1);
    EXPECT_EQ(stage.at("data_parallel"), stage.at("width"));
    EXPECT_EQ(stage.at("recompute"), false);
    EXPECT_EQ(stage.at("zero_stage"), 0);
    EXPECT_EQ(stage.at("working_memory_bytes"), 0);
    EXPECT_EQ(stage.at("tensor_parallel_time_s"), 0);
    EXPECT_EQ(stage.at("recompute_time_s"), 0);
  }
  expect_csv_matches_json_stages(points);
}

// The shares of "limits:" (compute, tensor-parallel all-reduce, recomputation, idle) in
// the order printed.
std::vector<double> limit_shares(const std::string& line) {
  std::vector<double> shares;
  for (const char* name : {" compute ", " all-reduce ", " recomputation ", " idle "}) {
    const std::size_t at = line.find(name);
    if (at == std::string::npos) return {};
    shares.push_back(std::stod(line.substr(at + std::string(name).size())));
  }
  return shares;
}

TEST(StageVariantsReport, TextSaysWhatLimitsATransformerPlan) {
  const Planner planner = transformer_planner();
  const LayoutCost cost = planner.evaluate(split_layout(), 8);
  const std::string line = line_with(plan_text(cost.plan, planner.model()), "  limits: stage ");
  ASSERT_FALSE(line.empty());
  const std::vector<double> shares = limit_shares(line);
  ASSERT_EQ(shares.size(), 4u) << line;
  EXPECT_NEAR(shares[0] + shares[1] + shares[2] + shares[3], 100, 0.25) << line;
  EXPECT_GT(shares[1], 0) << line;  // both stages split
  EXPECT_THAT(line, HasSubstr("% of their memory"));
}

}  // namespace
}  // namespace pe
