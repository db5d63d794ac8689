// Importers on hostile input: directories, deep nesting, huge integers, non-ASCII bytes,
// NUL bytes and runaway lines. Each must answer with an InputError naming the file.
#include <gtest/gtest.h>

#include <string>

#include "pe/error.h"
#include "pe/importers/cluster_yaml.h"
#include "pe/importers/pipedream_graph.h"
#include "pe/importers/pipeedge.h"
#include "pe/importers/work_yaml.h"
#include "robustness/robustness_checks.h"
#include "test_paths.h"

namespace pe {
namespace {

using robustness::expect_error_naming;

const std::string kDataDir = PE_TEST_DATA_DIR;

TEST(ImporterRobustness, DirectoriesAreNamedAsDirectories) {
  expect_error_naming<InputError>([] { load_cluster_yaml(kDataDir); },
                                  {kDataDir, "is a directory"});
  expect_error_naming<InputError>([] { load_work_yaml(kDataDir); }, {kDataDir, "is a directory"});
}

TEST(ImporterRobustness, DeeplyNestedYamlIsAnInputErrorNotAStackOverflow) {
  const std::string deep = "machines: " + std::string(100000, '[') + std::string(100000, ']');
  expect_error_naming<InputError>([&] { parse_cluster_yaml(deep, "deep.yml"); }, {"deep.yml"});
}

TEST(ImporterRobustness, NonAsciiAndNulBytesInNumbersAreInputErrors) {
  const std::vector<std::string> values{"\xc3\xb1", "\xff\xfe", std::string("1\0", 2),
                                        "\x80"
                                        "1"};
  for (const std::string& value : values)
    expect_error_naming<InputError>(
        [&] {
          parse_cluster_yaml("machines: [{gpus: 2}]\nmemory_GB: \"" + value + "\"\n", "c.yml");
        },
        {"c.yml:2"});
}

TEST(ImporterRobustness, PipeEdgeCountsUpToTheLargestLongLongAreAccepted) {
  std::vector<std::string> warnings;
  const EdgeModel model = parse_pipeedge_model(
      "m: {layers: 1, mem_MB: [1], parameters_in: 9223372036854775807, parameters_out: [7]}\n",
      "models.yml", "m", warnings);
  EXPECT_EQ(model.parameters_in, 9223372036854775807u);
  expect_error_naming<InputError>(
      [&] {
        parse_pipeedge_model(
            "m: {layers: 1, mem_MB: [1], parameters_in: 9223372036854775808, parameters_out: "
            "[7]}\n",
            "models.yml", "m", warnings);
      },
      {"models.yml:1: m.parameters_in", "up to 9223372036854775807", "9223372036854775808"});
}

TEST(ImporterRobustness, GraphLinesWithNulBytesAndRunawayLengthAreQuotedShortly) {
  const std::string nul_line = std::string("n1 -- Linear -- forward_compute_time=1", 38) +
                               std::string(1, '\0') +
                               ", backward_compute_time=1, activation_size=1, parameter_size=1\n";
  expect_error_naming<InputError>([&] { parse_pipedream_graph(nul_line, "g.txt", 1); },
                                  {"g.txt:1: forward_compute_time"});
  const std::string runaway = "n1 -- Linear -- forward_compute_time=" + std::string(1 << 20, '9') +
                              "x, backward_compute_time=1, activation_size=1, parameter_size=1\n";
  try {
    parse_pipedream_graph(runaway, "g.txt", 1);
    ADD_FAILURE() << "accepted a runaway number";
  } catch (const InputError& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u) << "the message repeats the whole line";
  }
}

TEST(ImporterRobustness, WorkListsRejectNanAndZeroDurations) {
  expect_error_naming<InputError>(
      [] { load_work_yaml(kDataDir + "/robustness/work/nan_duration.yml"); },
      {"nan_duration.yml:4: duration_ms", "'.nan'"});
  expect_error_naming<InputError>(
      [] { load_work_yaml(kDataDir + "/robustness/work/zero_duration.yml"); },
      {"zero_duration.yml:3: duration_ms", "positive"});
}

}  // namespace
}  // namespace pe
