#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "pe/edge_export.h"
#include "pe/error.h"

namespace pe {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

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

TEST(SchedExport, PlanStatesBecomeOneBasedLayersWithAHostCommentPerStage) {
  Plan plan;
  plan.stages = {stage(0, 23, 1), stage(24, 47, 1)};
  plan.stages[1].devices = {5};  // where the plan puts a stage is what the comment says
  EXPECT_EQ(pipeedge_obstacles(plan), "");
  const std::string yaml = schedule_yaml(plan, {"a", "0"});
  EXPECT_EQ(yaml,
            "# pe-plan training plan 0-23:1;24-47:1 as a PipeEdge schedule; the hosts, in stage "
            "order, stand for these devices:\n"
            "# a: device 0, stage 0, states 0-23\n"
            "# \"0\": device 5, stage 1, states 24-47\n"
            "- a: [1, 24]\n- \"0\": [25, 48]\n");
  // A YAML reader (the runtime's safe_load) sees only the list.
  const YAML::Node list = YAML::Load(yaml);
  ASSERT_TRUE(list.IsSequence());
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1]["0"][1].as<int>(), 48);
  EXPECT_EQ(partition_string(plan), "1,24,25,48");
  EXPECT_EQ(partition_string(Plan{}), "");
}

// PipeEdge's runtime makes every line the next stage: a replicated stage would become
// several stages and pipeline copies one longer pipeline, so such plans are refused.
TEST(SchedExport, PlansPipeEdgeCannotRunAreRefusedNamingWhy) {
  Plan plan;
  plan.stages = {stage(0, 23, 15), stage(24, 47, 1)};
  EXPECT_EQ(pipeedge_obstacles(plan), "stage 0 is replicated on 15 devices");
  std::vector<std::string> hosts;
  for (int i = 0; i < 16; ++i) hosts.push_back("h" + std::to_string(i));
  EXPECT_THAT([&] { schedule_yaml(plan, hosts); },
              ThrowsMessage<UsageError>(AllOf(HasSubstr("one host per stage and one pipeline copy"),
                                              HasSubstr("stage 0 is replicated on 15 devices"))));
  plan.stages = {stage(0, 23, 1), stage(24, 47, 1)};
  plan.pipeline_replicas = 2;
  EXPECT_EQ(pipeedge_obstacles(plan), "the plan has 2 pipeline copies");
  EXPECT_THAT(
      [&] {
        schedule_yaml(plan, {"a", "b", "c", "d"});
      },
      ThrowsMessage<UsageError>(HasSubstr("the plan has 2 pipeline copies")));
  plan.stages[1].width = 3;
  EXPECT_EQ(pipeedge_obstacles(plan),
            "stage 1 is replicated on 3 devices; the plan has 2 pipeline copies");
}

TEST(SchedExport, EachStageNeedsItsOwnNonEmptyHostName) {
  Plan plan;
  plan.stages = {stage(0, 23, 1), stage(24, 40, 1), stage(41, 47, 1)};
  EXPECT_THAT(
      [&] {
        schedule_yaml(plan, {"a", "b", "a"});
      },
      ThrowsMessage<UsageError>(HasSubstr("'a' is named twice")));
  EXPECT_THROW(schedule_yaml(plan, {"a", "", "c"}), UsageError);
  EXPECT_THROW(schedule_yaml(plan, {"a", "b"}), UsageError);
  EXPECT_NO_THROW(schedule_yaml(plan, {"a", "A", "c"}));  // names are case-sensitive
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
  const std::vector<std::string> names{"mb-0",
                                       "0",
                                       "1",
                                       "true",
                                       "yes",
                                       "No",
                                       "on",
                                       "OFF",
                                       "y",
                                       "null",
                                       "Null",
                                       "~",
                                       "",
                                       " lead",
                                       "trail ",
                                       "a: b",
                                       "a:b",
                                       "x #y",
                                       "#x",
                                       "-",
                                       "-x",
                                       "?",
                                       "?x",
                                       "|",
                                       ">",
                                       "[x",
                                       "{x",
                                       "&x",
                                       "*x",
                                       "!x",
                                       "%x",
                                       "@x",
                                       "`x",
                                       ",x",
                                       "\"q\"",
                                       "it's",
                                       "x,y",
                                       "h\xc3\xa9llo",
                                       "1e3",
                                       "0x1F",
                                       ".inf",
                                       "10.0.0.5",
                                       "2001-12-14",
                                       "1:20",
                                       "=",
                                       "<<",
                                       "back\\slash",
                                       "tab\there",
                                       "node_1.example.com"};
  for (const std::string& name : names) {
    const std::string yaml = schedule_yaml(std::vector<HostLayers>{{name, 1, 2}});
    const YAML::Node parsed = YAML::Load(yaml);
    ASSERT_TRUE(parsed.IsSequence()) << yaml;
    const auto entry = *parsed[0].begin();
    EXPECT_EQ(entry.first.Scalar(), name) << yaml;
  }
}

TEST(SchedExport, NamesThatResolveToOtherTypesAreQuoted) {
  for (const std::string name : {"0", "true", "yes", "No", "on", "null", "~", "1e3", "0x1F", ".inf",
                                 "2001-12-14", "1:20", "=", "<<", "-1", "y"})
    EXPECT_EQ(yaml_scalar(name).front(), '"') << name;
  for (const std::string name : {"mb-0", "rcc-3", "node_1.example.com", "/dev/x", "_h"})
    EXPECT_EQ(yaml_scalar(name), name);
  EXPECT_EQ(yaml_scalar("say \"hi\"\n"), "\"say \\\"hi\\\"\\n\"");
}

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or stray bytes).
bool valid_utf8(const std::string& text) {
  for (std::size_t at = 0; at < text.size();) {
    const auto lead = static_cast<unsigned char>(text[at]);
    const std::size_t length = lead < 0x80    ? 1
                               : lead >= 0xF0 ? 4
                               : lead >= 0xE0 ? 3
                               : lead >= 0xC2 ? 2
                                              : 0;
    if (length == 0 || lead > 0xF4 || at + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(text[at + k]) & 0xC0) != 0x80) return false;
    const auto second = static_cast<unsigned char>(length > 1 ? text[at + 1] : 0);
    if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second >= 0xA0) ||
        (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second >= 0x90))
      return false;
    at += length;
  }
  return true;
}

std::string read_back(const std::string& name) {
  const std::string yaml = schedule_yaml(std::vector<HostLayers>{{name, 1, 2}});
  return (*YAML::Load(yaml)[0].begin()).first.Scalar();
}

TEST(SchedExport, LineBreaksAndInvisibleCharactersAreEscaped) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a\xe2\x80\xa8"
       "b",
       "\"a\\Lb\""},
      {"a\xe2\x80\xa9"
       "b",
       "\"a\\Pb\""},
      {"a\xc2\x85"
       "b",
       "\"a\\x85b\""},
      {"a\xc2\xa0"
       "b",
       "\"a\\xa0b\""},
      {"a\xc2\x9f"
       "b",
       "\"a\\x9fb\""},
      {"a\xef\xbb\xbf"
       "b",
       "\"a\\ufeffb\""},
      {"a\xef\xbf\xbe"
       "b",
       "\"a\\ufffeb\""},
      {"h\xc3\xa9"
       "llo",
       "\"h\xc3\xa9llo\""},
      {"\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""}};
  for (const auto& [name, written] : cases) {
    EXPECT_EQ(yaml_scalar(name), written);
    EXPECT_EQ(read_back(name), name) << yaml_scalar(name);
  }
}

TEST(SchedExport, InvalidUtf8BytesAreWrittenAsEscapesSoTheOutputIsValid) {
  // yaml-cpp reads the escapes \N and \_ as the single bytes 0x85 and 0xA0, so host names
  // read from devices.yml may hold them; they are written as U+0085 and U+00A0.
  EXPECT_EQ(YAML::Load("\"a\\_b\"").Scalar(),
            "a\xa0"
            "b");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a\xa0"
       "b",
       "\"a\\xa0b\""},
      {"a\x85"
       "b",
       "\"a\\x85b\""},
      {"\xff\xfe", "\"\\xff\\xfe\""},
      {"\xc0\xaf", "\"\\xc0\\xaf\""},
      {"\xed\xa0\x80", "\"\\xed\\xa0\\x80\""},
      {"\xe2\x80", "\"\\xe2\\x80\""}};
  for (const auto& [name, written] : cases) {
    const std::string yaml = schedule_yaml(std::vector<HostLayers>{{name, 1, 2}});
    EXPECT_EQ(yaml_scalar(name), written);
    EXPECT_TRUE(valid_utf8(yaml)) << yaml;
    EXPECT_TRUE(valid_utf8(read_back(name))) << yaml;
  }
}

}  // namespace
}  // namespace pe
