// The states reports: the numbers a reader needs to read a plan's FIRST-LAST ranges.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pe/model.h"
#include "pe/report.h"

namespace pe {
namespace {

using ::testing::HasSubstr;

ModelProfile two_layers() {
  return make_chain_model("m", 4,
                          {{"conv, 3x3", 1e-3, 2e-3, 4e6, 1e3}, {"fc", 3e-3, 5e-3, 2e6, 8e3}});
}

TEST(StatesReport, TableListsEveryStateWithItsOperator) {
  const std::string text = states_table(two_layers());
  EXPECT_THAT(text, HasSubstr("m: 2 states, profile batch 4;"));
  EXPECT_THAT(text, HasSubstr("forward_ms backward_ms"));
  // State 1 holds both layers: cumulative 4 ms forward, 7 ms backward, 6 MB activations.
  EXPECT_THAT(text, HasSubstr("     1      4.000       7.000"));
  EXPECT_THAT(text, HasSubstr("  fc\n"));
}

TEST(StatesReport, CsvAndJsonCarryTheSameNumbers) {
  const ModelProfile model = two_layers();
  const std::string csv = states_csv(model);
  EXPECT_THAT(csv, HasSubstr("state,name,forward_s,backward_s,activation_bytes,"));
  EXPECT_THAT(csv, HasSubstr("\n0,\"conv, 3x3\",0.001"));  // a comma in a name is quoted
  const nlohmann::json doc = nlohmann::json::parse(states_json(model));
  ASSERT_EQ(doc.at("states").size(), 2u);
  const nlohmann::json& last = doc.at("states").at(1);
  EXPECT_EQ(last.at("name"), "fc");
  EXPECT_DOUBLE_EQ(last.at("forward_s").get<double>(), model.states[1].forward);
  EXPECT_DOUBLE_EQ(last.at("backward_s").get<double>(), model.states[1].backward);
  EXPECT_DOUBLE_EQ(last.at("activation_bytes").get<double>(), model.states[1].activation);
  EXPECT_DOUBLE_EQ(last.at("parameter_bytes").get<double>(), model.states[1].parameters);
  EXPECT_DOUBLE_EQ(last.at("crossing_bytes").get<double>(), model.states[1].crossing);
  EXPECT_EQ(doc.at("profile_batch_size"), 4);
}

}  // namespace
}  // namespace pe
