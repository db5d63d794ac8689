#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "pe/importers/pipeedge.h"
#include "pipeedge/edge_fixtures.h"
#include "test_paths.h"

namespace pe {
namespace {

using edge_test::expect_input_error;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;

using testing::kPipeEdgeExample;

EdgeModel model_from(const std::string& text, std::vector<std::string>& warnings) {
  return parse_pipeedge_model(text, "models.yml", "m", warnings);
}

void expect_model_error(const std::string& text, const std::vector<std::string>& parts) {
  std::vector<std::string> warnings;
  expect_input_error([&] { model_from(text, warnings); }, parts);
}

TEST(PipeEdgeModels, ReadsTheExampleModel) {
  std::vector<std::string> warnings;
  const PipeEdgeInput input =
      load_pipeedge_input({kPipeEdgeExample + "models.yml", kPipeEdgeExample + "device_types.yml",
                           kPipeEdgeExample + "devices.yml"},
                          PipeEdgeQuery{});
  EXPECT_EQ(input.model.layers(), 48U);
  EXPECT_EQ(input.model.parameters_in, 150528U);
  EXPECT_EQ(input.model.parameters_out.back(), 1000U);
  EXPECT_DOUBLE_EQ(input.model.weights_mib.front(), 26.808319999999995);
}

TEST(PipeEdgeModels, ShortParametersOutRepeatsWithAWarning) {
  std::vector<std::string> warnings;
  const EdgeModel model = model_from(
      "m:\n  layers: 5\n  mem_MB: [1, 2, 3, 4, 5]\n  parameters_in: 3\n"
      "  parameters_out: [10, 20]\n",
      warnings);
  EXPECT_EQ(model.parameters_out, (std::vector<std::uint64_t>{10, 20, 10, 20, 10}));
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], AllOf(HasSubstr("models.yml:5"), HasSubstr("parameters_out")));
}

TEST(PipeEdgeModels, ZeroLayersIsAValidModel) {
  std::vector<std::string> warnings;
  const EdgeModel model =
      model_from("m: {layers: 0, mem_MB: [], parameters_in: 0, parameters_out: []}\n", warnings);
  EXPECT_EQ(model.layers(), 0U);
  EXPECT_TRUE(warnings.empty());
}

// PipeEdge's profiler writes mem_MB as a difference of two RSS readings: a slightly
// negative value is read as 0, with a warning naming file, line and key.
TEST(PipeEdgeModels, NegativeLayerMemoryReadsAsZeroWithAWarning) {
  std::vector<std::string> warnings;
  const EdgeModel model = model_from(
      "m:\n  layers: 3\n  mem_MB: [1, -0.25, 3]\n  parameters_in: 3\n"
      "  parameters_out: [10, 20, 30]\n",
      warnings);
  EXPECT_EQ(model.weights_mib, (std::vector<double>{1, 0, 3}));
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], AllOf(HasSubstr("models.yml:3: m.mem_MB[1]: -0.25 MiB is negative"),
                                 HasSubstr("read as 0")));
}

TEST(PipeEdgeModels, BadModelsNameFileLineAndKey) {
  const std::string ok_tail = "  parameters_in: 3\n  parameters_out: [1, 2]\n";
  expect_model_error("m:\n  layers: 48.5\n  mem_MB: [1, 2]\n" + ok_tail,
                     {"models.yml:2", "m.layers", "48.5"});
  expect_model_error("m:\n  mem_MB: [1, 2]\n" + ok_tail, {"models.yml:2", "m", "'layers'"});
  expect_model_error("m:\n  layers: 2\n  mem_MB: [1, .nan]\n" + ok_tail,
                     {"models.yml:3", "m.mem_MB[1]", ".nan"});
  expect_model_error("m:\n  layers: 2\n  mem_MB: [1]\n" + ok_tail,
                     {"models.yml:3", "m.mem_MB", "1 values for 2 layers"});
  expect_model_error(
      "m:\n  layers: 2\n  mem_MB: [1, 2]\n  parameters_in: x\n  parameters_out: [1]\n",
      {"models.yml:4", "m.parameters_in", "'x'"});
  expect_model_error(
      "m:\n  layers: 1\n  mem_MB: [1]\n  parameters_in: 3\n  parameters_out: [1, 2]\n",
      {"models.yml:5", "m.parameters_out", "2 values for 1 layers"});
  expect_model_error(
      "m:\n  layers: 2\n  mem_MB: [1, 2]\n  parameters_in: 3\n  parameters_out: []\n",
      {"models.yml:5", "m.parameters_out", "0 values for 2 layers"});
  expect_model_error("m:\n  layers: 2\n  mem_MB: [1, 2]\n  parameters_in: 3\n  parameters_out: 7\n",
                     {"models.yml:5", "m.parameters_out", "'7'"});
}

TEST(PipeEdgeModels, BadFilesNameTheFile) {
  expect_model_error("other: {}\n", {"models.yml", "model 'm' not found", "other"});
  expect_model_error("", {"models.yml", "expected a map"});
  expect_model_error("- m\n", {"models.yml:1", "expected a map", "a list"});
  expect_model_error("m: [1, 2\n", {"models.yml:", "YAML syntax error"});
  expect_model_error("m: 3\n", {"models.yml:1", "m", "'3'"});
  expect_model_error("m: {layers: 0, mem_MB: [], parameters_in: 0, parameters_out: []}\nm: {}\n",
                     {"models.yml:2", "duplicate key 'm'"});
  expect_input_error(
      [] {
        load_pipeedge_input({kPipeEdgeExample + "missing.yml", "", ""}, {});
      },
      {"missing.yml", "cannot open"});
  expect_input_error(
      [] {
        load_pipeedge_input({kPipeEdgeExample, "", ""}, {});
      },
      {kPipeEdgeExample, "is a directory"});
}

PipeEdgeDeviceTypes types_from(const std::string& text, std::vector<std::string>& warnings,
                               std::size_t layers = 2) {
  PipeEdgeQuery query;
  query.model_name = "m";
  return parse_pipeedge_device_types(text, "device_types.yml", query, layers, warnings);
}

void expect_types_error(const std::string& text, const std::vector<std::string>& parts) {
  std::vector<std::string> warnings;
  expect_input_error([&] { types_from(text, warnings); }, parts);
}

const std::string kProfile = "      - {batch_size: 8, dtype: torch.float32, time_s: [0.5, 0.25]}\n";

TEST(PipeEdgeDeviceTypes, PicksTheMatchingProfile) {
  std::vector<std::string> warnings;
  const PipeEdgeDeviceTypes types = types_from(
      "A:\n  bw_Mbps: 100\n  mem_MB: 512\n  model_profiles:\n    m:\n"
      "      - {batch_size: 4, dtype: torch.float32, time_s: [9, 9]}\n" +
          kProfile,
      warnings);
  ASSERT_EQ(types.usable.size(), 1U);
  EXPECT_EQ(types.usable[0].name, "A");
  EXPECT_DOUBLE_EQ(types.usable[0].bandwidth_mbps, 100);
  EXPECT_DOUBLE_EQ(types.usable[0].memory_mib, 512);
  EXPECT_EQ(types.usable[0].layer_seconds, (std::vector<double>{0.5, 0.25}));
  EXPECT_TRUE(warnings.empty());
}

TEST(PipeEdgeDeviceTypes, TypesWithoutAMatchingProfileAreSkippedWithAWarning) {
  std::vector<std::string> warnings;
  const PipeEdgeDeviceTypes types = types_from(
      "A: {bw_Mbps: 1, mem_MB: 1, model_profiles: }\n"
      "B: {bw_Mbps: 1, mem_MB: 1}\n"
      "C:\n  bw_Mbps: 1\n  mem_MB: 1\n  model_profiles:\n    m:\n"
      "      - {batch_size: 4, dtype: torch.float32, time_s: [1, 1]}\n",
      warnings);
  EXPECT_TRUE(types.usable.empty());
  EXPECT_EQ(types.skipped, (std::vector<std::string>{"A", "B", "C"}));
  ASSERT_EQ(warnings.size(), 3U);
  EXPECT_THAT(warnings[0], HasSubstr("device_types.yml:1: A"));
  EXPECT_THAT(warnings[2], HasSubstr("batch_size 8"));
}

TEST(PipeEdgeDeviceTypes, SeveralMatchesUseTheFirstWithAWarning) {
  std::vector<std::string> warnings;
  const PipeEdgeDeviceTypes types =
      types_from("A:\n  bw_Mbps: 1\n  mem_MB: 1\n  model_profiles:\n    m:\n" + kProfile +
                     "      - {batch_size: 8, dtype: torch.float32, time_s: [7, 7]}\n",
                 warnings);
  ASSERT_EQ(types.usable.size(), 1U);
  EXPECT_EQ(types.usable[0].layer_seconds, (std::vector<double>{0.5, 0.25}));
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("[1] also matches"));
}

TEST(PipeEdgeDeviceTypes, BadTypesNameFileLineAndKey) {
  const std::string head = "A:\n  bw_Mbps: 1\n  mem_MB: 1\n  model_profiles:\n    m:\n";
  expect_types_error("A:\n  mem_MB: 1\n", {"device_types.yml:2", "A", "'bw_Mbps'"});
  expect_types_error("A:\n  bw_Mbps: -1\n  mem_MB: 1\n", {"device_types.yml:2", "A.bw_Mbps", "-1"});
  expect_types_error("A:\n  bw_Mbps: 1\n  mem_MB: lots\n",
                     {"device_types.yml:3", "A.mem_MB", "lots"});
  expect_types_error(
      head + "      - {batch_size: 8, dtype: torch.float32, time_s: [1]}\n",
      {"device_types.yml:6", "A.model_profiles.m[0].time_s", "1 layer times", "2 layers"});
  expect_types_error(head + "      - {batch_size: 8.5, dtype: torch.float32, time_s: [1, 1]}\n",
                     {"device_types.yml:6", "A.model_profiles.m[0].batch_size", "8.5"});
  expect_types_error(head + "      - {batch_size: 8, time_s: [1, 1]}\n",
                     {"device_types.yml:6", "A.model_profiles.m[0]", "'dtype'"});
  expect_types_error(head + "      - {batch_size: 8, dtype: torch.float32, time_s: [1, -3]}\n",
                     {"device_types.yml:6", "time_s[1]", "-3"});
  expect_types_error(head + "      {batch_size: 8}\n",
                     {"device_types.yml:6", "A.model_profiles.m", "a map"});
  expect_types_error("A:\n  bw_Mbps: 1\n  mem_MB: 1\n  model_profiles: [m]\n",
                     {"device_types.yml:4", "A.model_profiles", "a list"});
  expect_types_error("", {"device_types.yml", "expected a map"});
  expect_types_error("A: {bw_Mbps: 1, mem_MB: 1}\nA: {bw_Mbps: 1, mem_MB: 1}\n",
                     {"device_types.yml:2", "duplicate key 'A'"});
  expect_types_error("A: {bw_Mbps: 1, mem_MB: 1\n", {"device_types.yml", "YAML syntax error"});
}

PipeEdgeDeviceTypes two_types() {
  PipeEdgeDeviceTypes types;
  types.usable = {EdgeDeviceType{"A", 1, 1, {1}}, EdgeDeviceType{"B", 1, 1, {1}}};
  types.skipped = {"S"};
  return types;
}

TEST(PipeEdgeDevices, KeepsFileOrderAndWarnsAboutUnknownTypes) {
  std::vector<std::string> warnings;
  const std::vector<EdgeHost> hosts =
      parse_pipeedge_devices("B: [b0]\nS: [s0]\nX:\n  - x0\n  - x1\nA: [a0, a1]\nEmpty: []\n",
                             "devices.yml", two_types(), warnings);
  ASSERT_EQ(hosts.size(), 3U);
  EXPECT_EQ(hosts[0].name, "b0");
  EXPECT_EQ(hosts[0].type, 1U);
  EXPECT_EQ(hosts[1].name, "a0");
  EXPECT_EQ(hosts[2].type, 0U);
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], AllOf(HasSubstr("devices.yml:3: X"), HasSubstr("2 hosts")));
}

TEST(PipeEdgeDevices, BadDevicesNameFileLineAndKey) {
  auto check = [](const std::string& text, const std::vector<std::string>& parts) {
    std::vector<std::string> warnings;
    expect_input_error([&] { parse_pipeedge_devices(text, "devices.yml", two_types(), warnings); },
                       parts);
  };
  check("A: [h1]\nB:\n  - h2\n  - h1\n",
        {"devices.yml:4", "B[1]", "'h1' is listed twice", "devices.yml:1"});
  check("A:\n", {"devices.yml", "A", "expected a list of host names", "nothing"});
  check("A: h1\n", {"devices.yml:1", "A", "'h1'"});
  check("A: [[h1]]\n", {"devices.yml:1", "A[0]", "scalar"});
  check("A: ['']\n", {"devices.yml:1", "A[0]", "host name"});
  check("- A\n", {"devices.yml:1", "expected a map"});
  check("", {"devices.yml", "expected a map"});
  check("A: [a]\nA: [b]\n", {"devices.yml:2", "duplicate key 'A'"});
}

TEST(PipeEdgeImport, EmptyHostItemIsReportedAtItsOwnLine) {
  const PipeEdgeDeviceTypes types;
  std::vector<std::string> warnings;
  const auto check = [&](const std::string& text, const std::vector<std::string>& parts) {
    expect_input_error([&] { parse_pipeedge_devices(text, "devices.yml", types, warnings); },
                       parts);
  };
  check("A:\n  - h0\n  -\n", {"devices.yml:3: A[1]: empty host name"});
  check("A:\n  - \n  - h1\n", {"devices.yml:2: A[0]: empty host name"});
  check("A:\n  - h0\n  - # none\n\n  - h2\n", {"devices.yml:3: A[1]: empty host name"});
  check("A:\n  - ~\n", {"devices.yml:2: A[0]: empty host name"});
  check("A: [h0, '']\n", {"devices.yml:1: A[1]: empty host name"});
}

TEST(PipeEdgeImport, EmptyPathSaysSo) {
  for (int empty = 0; empty < 3; ++empty) {
    PipeEdgeFiles files{kPipeEdgeExample + "models.yml", kPipeEdgeExample + "device_types.yml",
                        kPipeEdgeExample + "devices.yml"};
    (empty == 0 ? files.models : empty == 1 ? files.device_types : files.devices).clear();
    expect_input_error([&] { load_pipeedge_input(files, PipeEdgeQuery{}); },
                       {"is empty, expected a file name"});
  }
}

TEST(PipeEdgeInput, TheExampleWarnsAboutTheUndefinedRccType) {
  const PipeEdgeInput input =
      load_pipeedge_input({kPipeEdgeExample + "models.yml", kPipeEdgeExample + "device_types.yml",
                           kPipeEdgeExample + "devices.yml"},
                          PipeEdgeQuery{});
  ASSERT_EQ(input.cluster.hosts.size(), 4U);
  for (const EdgeHost& host : input.cluster.hosts)
    EXPECT_EQ(input.cluster.types[host.type].name, "Minnowboard-E3845");
  EXPECT_THAT(input.warnings, Contains(HasSubstr("RCC-VE-C2558")));
}

}  // namespace
}  // namespace pe
