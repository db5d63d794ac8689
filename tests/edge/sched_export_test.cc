#include "pe/edge_export.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "pe/error.h"

namespace pe {
namespace {

PlanStage stage(std::size_t first, std::size_t last, int width) {
  PlanStage s;
  s.first_state = first;
  s.last_state = last;
  s.width = width;
  return s;
}

TEST(SchedExport, EmitsTheOriginalLayout) {
  EXPECT_EQ(schedule_yaml(std::vector<HostLayers>{{"mb-0", 1, 6}, {"mb-1", 7, 12}}),
            "- mb-0: [1, 6]\n- mb-1: [7, 12]\n");
  EXPECT_EQ(schedule_yaml(std::vector<HostLayers>{}), "[]\n");
}

TEST(SchedExport, PlanStatesBecomeOneBasedLayersAndReplicasGetOneLineEach) {
  Plan plan;
  plan.stages = {stage(0, 23, 1), stage(24, 47, 2)};
  EXPECT_EQ(plan.device_count(), 3);
  EXPECT_EQ(schedule_yaml(plan, {"a", "b", "c"}), "- a: [1, 24]\n- b: [25, 48]\n- c: [25, 48]\n");
  EXPECT_EQ(partition_string(plan), "1,24,25,48");
  plan.pipeline_replicas = 2;
  EXPECT_EQ(schedule_yaml(plan, {"a", "a2", "b", "b2", "c", "c2"}),
            "- a: [1, 24]\n- a2: [1, 24]\n- b: [25, 48]\n- b2: [25, 48]\n- c: [25, 48]\n"
            "- c2: [25, 48]\n");
  EXPECT_THROW(schedule_yaml(plan, {"a", "b", "c"}), UsageError);
  EXPECT_EQ(partition_string(Plan{}), "");
}

TEST(SchedExport, RejectsMalformedPlans) {
  Plan plan;
  plan.stages = {stage(0, 3, 0)};
  EXPECT_THROW(schedule_yaml(plan, {}), UsageError);
  plan.stages = {stage(0, 3, 1)};
  plan.pipeline_replicas = 0;
  EXPECT_THROW(schedule_yaml(plan, {}), UsageError);
}

TEST(SchedExport, HostNamesReadBackAsTheSameStrings) {
  const std::vector<std::string> names{
      "mb-0", "0",     "1",      "true",  "yes", "No",  "on",  "OFF",  "y",    "null", "Null",
      "~",    "",      " lead",  "trail ", "a: b", "a:b", "x #y", "#x",  "-",    "-x",   "?",
      "?x",   "|",     ">",      "[x",    "{x",   "&x",  "*x",  "!x",   "%x",   "@x",   "`x",
      ",x",   "\"q\"", "it's",   "x,y",   "h\xc3\xa9llo", "1e3", "0x1F", ".inf", "10.0.0.5",
      "2001-12-14", "1:20", "=", "<<", "back\\slash", "tab\there", "node_1.example.com"};
  for (const std::string& name : names) {
    const std::string yaml = schedule_yaml(std::vector<HostLayers>{{name, 1, 2}});
    const YAML::Node parsed = YAML::Load(yaml);
    ASSERT_TRUE(parsed.IsSequence()) << yaml;
    const auto entry = *parsed[0].begin();
    EXPECT_EQ(entry.first.Scalar(), name) << yaml;
  }
}

TEST(SchedExport, NamesThatResolveToOtherTypesAreQuoted) {
  for (const std::string name : {"0", "true", "yes", "No", "on", "null", "~", "1e3", "0x1F",
                                 ".inf", "2001-12-14", "1:20", "=", "<<", "-1", "y"})
    EXPECT_EQ(yaml_scalar(name).front(), '"') << name;
  for (const std::string name : {"mb-0", "rcc-3", "node_1.example.com", "/dev/x", "_h"})
    EXPECT_EQ(yaml_scalar(name), name);
  EXPECT_EQ(yaml_scalar("say \"hi\"\n"), "\"say \\\"hi\\\"\\n\"");
}

}  // namespace
}  // namespace pe
