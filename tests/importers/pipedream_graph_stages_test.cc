// pipedream_graph_with_stages: a graph.txt with PipeDream's stage_id per node, from a plan.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "file_text.h"
#include "importers/graph_text.h"
#include "pe/error.h"
#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "test_paths.h"

namespace pe {
namespace {

using testing::file_text;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

const std::string kGraphs = std::string(PE_TEST_DATA_DIR) + "/graphs/";

Plan plan_of(const std::vector<std::pair<std::size_t, std::size_t>>& ranges) {
  Plan plan;
  for (const auto& [first, last] : ranges) {
    PlanStage stage;
    stage.first_state = first;
    stage.last_state = last;
    plan.stages.push_back(stage);
  }
  return plan;
}

// The stage_id of each node line, by node id ("" when the line has none).
std::map<std::string, std::string> stage_ids(const std::string& text) {
  std::map<std::string, std::string> ids;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '\t' || line[0] == ' ') continue;
    const std::size_t at = line.find(" -- stage_id=");
    ids[line.substr(0, line.find(" -- "))] = at == std::string::npos ? "" : line.substr(at + 13);
  }
  return ids;
}

void expect_same_model(const ModelProfile& a, const ModelProfile& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a.states[i].name, b.states[i].name) << i;
    EXPECT_EQ(a.states[i].operator_id, b.states[i].operator_id) << i;
    EXPECT_EQ(a.states[i].forward, b.states[i].forward) << i;
    EXPECT_EQ(a.states[i].backward, b.states[i].backward) << i;
    EXPECT_EQ(a.states[i].activation, b.states[i].activation) << i;
    EXPECT_EQ(a.states[i].parameters, b.states[i].parameters) << i;
    EXPECT_EQ(a.states[i].crossing, b.states[i].crossing) << i;
  }
  EXPECT_EQ(a.later, b.later);
  EXPECT_EQ(a.operator_count, b.operator_count);
}

TEST(GraphStages, OperatorsGetTheirStatesStageAndTheFileImportsUnchanged) {
  const std::string text = file_text(kGraphs + "chain.txt");
  const ModelProfile model = parse_pipedream_graph(text, "chain.txt", 8);
  ASSERT_EQ(model.size(), 3u);
  EXPECT_EQ(model.states[0].operator_id, "node2");
  const std::string staged =
      pipedream_graph_with_stages(text, "chain.txt", plan_of({{0, 1}, {2, 2}}));
  // node1 (Input0) is the model input, removed by the importer: its consumer's stage.
  EXPECT_EQ(stage_ids(staged),
            (std::map<std::string, std::string>{
                {"node1", "0"}, {"node2", "0"}, {"node3", "0"}, {"node4", "1"}}));
  EXPECT_THAT(staged, HasSubstr("node4 -- Linear(8, 2) -- forward_compute_time=2.0, "
                                "backward_compute_time=4.0, activation_size=10, "
                                "parameter_size=400 -- stage_id=1\n"));
  EXPECT_THAT(staged, HasSubstr("\tnode2 -- node3\n"));
  expect_same_model(parse_pipedream_graph(staged, "chain.txt", 8), model);
  // Written again from its own output, the stage ids are replaced, not added.
  const std::string again =
      pipedream_graph_with_stages(staged, "chain.txt", plan_of({{0, 0}, {1, 2}}));
  EXPECT_EQ(stage_ids(again), (std::map<std::string, std::string>{
                                  {"node1", "0"}, {"node2", "0"}, {"node3", "1"}, {"node4", "1"}}));
  expect_same_model(parse_pipedream_graph(again, "chain.txt", 8), model);
}

TEST(GraphStages, RemovedInputsAndSinksTakeANeighboursStage) {
  const std::string text = file_text(kGraphs + "inputs_and_sinks.txt");
  const ModelProfile model = parse_pipedream_graph(text, "inputs_and_sinks.txt", 8);
  ASSERT_EQ(model.size(), 5u);
  // One stage per state: each operator's stage is its state's index.
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  for (std::size_t i = 0; i < model.size(); ++i) ranges.push_back({i, i});
  const std::string staged =
      pipedream_graph_with_stages(text, "inputs_and_sinks.txt", plan_of(ranges));
  std::map<std::string, std::string> ids = stage_ids(staged);
  std::map<std::string, int> state_of;
  for (std::size_t i = 0; i < model.size(); ++i)
    state_of[model.states[i].operator_id] = static_cast<int>(i);
  for (const auto& [id, state] : state_of) EXPECT_EQ(ids[id], std::to_string(state)) << id;
  EXPECT_EQ(ids["n1"], std::to_string(state_of["n4"]));  // Input0 feeds the LSTM
  EXPECT_EQ(ids["n2"], std::to_string(state_of["n7"]));  // Input1 feeds the Linear
  EXPECT_EQ(ids["n5"], std::to_string(state_of["n4"]));  // a sink of the LSTM
  expect_same_model(parse_pipedream_graph(staged, "inputs_and_sinks.txt", 8), model);
}

TEST(GraphStages, EveryBundledProfileRoundTrips) {
  for (const ProfileEntry& entry : bundled_profiles()) {
    const std::string text = file_text(entry.path);
    const ModelProfile model = parse_pipedream_graph(text, entry.path, 32);
    const std::size_t half = model.size() / 2;
    const Plan plan = half == 0 ? plan_of({{0, model.size() - 1}})
                                : plan_of({{0, half - 1}, {half, model.size() - 1}});
    const std::string staged = pipedream_graph_with_stages(text, entry.path, plan);
    expect_same_model(parse_pipedream_graph(staged, entry.path, 32), model);
    for (const auto& [id, stage] : stage_ids(staged))
      EXPECT_TRUE(stage == "0" || stage == "1") << entry.name << " " << id << ": " << stage;
  }
}

TEST(GraphStages, APlanOfAnotherModelIsRefused) {
  const std::string text = file_text(kGraphs + "chain.txt");
  EXPECT_THAT(
      [&] {
        pipedream_graph_with_stages(text, "chain.txt", plan_of({{0, 3}}));
      },
      ThrowsMessage<UsageError>(HasSubstr("cover the graph's 3 states")));
  EXPECT_THAT(
      [&] {
        pipedream_graph_with_stages(text, "chain.txt", plan_of({{0, 1}}));
      },
      ThrowsMessage<UsageError>(HasSubstr("the graph has 3 states")));
  EXPECT_THAT(
      [&] {
        pipedream_graph_with_stages(text, "chain.txt", plan_of({{0, 0}, {2, 2}}));
      },
      ThrowsMessage<UsageError>(HasSubstr("plan stage 1 holds states 2-2")));
}

}  // namespace
}  // namespace pe
