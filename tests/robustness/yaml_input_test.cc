// The shared YAML input helpers as every importer meets them: repeated keys, subnormal and
// underflowing numbers, integer ranges, empty nodes' lines, empty paths and endless files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "pe/error.h"
#include "pe/importers/cluster_yaml.h"
#include "pe/importers/pipeedge.h"
#include "pe/importers/work_yaml.h"
#include "pe/units.h"
#include "robustness/robustness_checks.h"
#include "yaml_input.h"

namespace pe {
namespace {

using robustness::expect_error_naming;

const std::string kMachines = "machines:\n  - count: 2\n    gpus: 2\n";

TEST(YamlDuplicateKeys, ClusterFileRejectsARepeatedKey) {
  expect_error_naming<InputError>(
      [] { parse_cluster_yaml(kMachines + "memory_GB: 16\nmemory_GB: 1\n", "c.yml"); },
      {"c.yml:5: duplicate key 'memory_GB' (first at line 4)"});
  expect_error_naming<InputError>(
      [] { parse_cluster_yaml("machines: [{gpus: 2, gpus: 4}]\n", "c.yml"); },
      {"c.yml:1: duplicate key 'gpus' (first at line 1)"});
}

TEST(YamlDuplicateKeys, WorkFileRejectsARepeatedKey) {
  expect_error_naming<InputError>(
      [] { parse_work_yaml("items:\n  - name: a\n    total_ms: 3\nitems: []\n", "w.yml"); },
      {"w.yml:4: duplicate key 'items' (first at line 1)"});
  expect_error_naming<InputError>(
      [] {
        parse_work_yaml("items:\n  - name: a\n    duration_ms: 2\n    duration_ms: 5\n", "w.yml");
      },
      {"w.yml:4: duplicate key 'duration_ms' (first at line 3)"});
}

TEST(YamlDuplicateKeys, QuotingDoesNotMakeAKeyNew) {
  expect_error_naming<InputError>(
      [] { parse_cluster_yaml(kMachines + "memory_GB: 16\n\"memory_GB\": 1\n", "c.yml"); },
      {"c.yml:5: duplicate key 'memory_GB' (first at line 4)"});
}

TEST(YamlDuplicateKeys, PipeEdgeFilesRejectARepeatedKeyAtAnyDepth) {
  std::vector<std::string> warnings;
  expect_error_naming<InputError>(
      [&] {
        parse_pipeedge_model("m:\n  layers: 1\n  mem_MB: [1]\n  mem_MB: [2]\n", "models.yml", "m",
                             warnings);
      },
      {"models.yml:4: duplicate key 'mem_MB' (first at line 3)"});
  expect_error_naming<InputError>(
      [&] { parse_pipeedge_model("other:\n  a: 1\n  a: 2\nm: {}\n", "models.yml", "m", warnings); },
      {"models.yml:3: duplicate key 'a' (first at line 2)"});
}

TEST(YamlDuplicateKeys, TheSameKeyInTwoMapsIsFine) {
  const Cluster cluster =
      parse_cluster_yaml("machines:\n  - {count: 1, gpus: 2}\n  - {count: 1, gpus: 4}\n", "c.yml");
  EXPECT_EQ(cluster.machine_gpus, (std::vector<int>{2, 4}));
}

// A reader of the first document alone would drop the rest without a word; one document
// with explicit start and end markers is fine.
TEST(YamlDocuments, ASecondDocumentIsAnErrorAtItsStart) {
  expect_error_naming<InputError>(
      [] { parse_cluster_yaml(kMachines + "---\n" + kMachines, "c.yml"); },
      {"c.yml:4: a second YAML document starts here, expected one document"});
  std::vector<std::string> warnings;
  expect_error_naming<InputError>(
      [&] { parse_pipeedge_model("m: {}\n---\nm: {}\n", "models.yml", "m", warnings); },
      {"models.yml:2: a second YAML document"});
  EXPECT_EQ(parse_cluster_yaml("---\n" + kMachines + "...\n", "c.yml").device_count(), 4);
}

TEST(YamlDocuments, MachineTypeIsText) {
  expect_error_naming<InputError>(
      [] { parse_cluster_yaml("machines:\n  - gpus: 2\n    type: [a, b]\n", "c.yml"); },
      {"c.yml:3: type: expected a scalar value"});
  EXPECT_EQ(parse_cluster_yaml("machines:\n  - gpus: 2\n    type: V100\n", "c.yml").device_count(),
            2);
}

TEST(YamlSubnormals, AreFiniteNumbers) {
  const Cluster cluster = parse_cluster_yaml(kMachines + "memory_GB: 1e-320\n", "c.yml");
  EXPECT_GT(cluster.device_memory, 0);
  const WorkList work = parse_work_yaml(
      "items:\n  - name: a\n    after: forward\n    duration_ms: 1e-310\n", "w.yml");
  ASSERT_EQ(work.items.size(), 1U);
  EXPECT_GT(work.items[0].duration, 0);
  std::vector<std::string> warnings;
  const EdgeModel model = parse_pipeedge_model(
      "m:\n  layers: 1\n  mem_MB: [1e-320]\n  parameters_in: 1\n  parameters_out: [1]\n",
      "models.yml", "m", warnings);
  EXPECT_GT(model.weights_mib.at(0), 0);
}

TEST(YamlSubnormals, ClusterBandwidthNamesItsLeastValue) {
  expect_error_naming<InputError>(
      [] { parse_cluster_yaml(kMachines + "bandwidth_GBps:\n  intra: 1e-320\n", "c.yml"); },
      {"c.yml:5: bandwidth_GBps.intra: expected at least 1e-9 GB/s (one byte per second), "
       "got '1e-320'"});
  const Cluster slow = parse_cluster_yaml(kMachines + "bandwidth_GBps:\n  intra: 1e-9\n", "c");
  EXPECT_DOUBLE_EQ(slow.network.intra, 1.0);
}

TEST(YamlSubnormals, AValueThatUnderflowsToZeroSaysSo) {
  expect_error_naming<InputError>(
      [] { parse_cluster_yaml(kMachines + "memory_GB: 1e-400\n", "c.yml"); },
      {"c.yml:4: memory_GB: expected a positive number, got '1e-400'", "reads as 0"});
}

TEST(WorkYamlRanges, HugeChunksNameTheRealRange) {
  for (const std::string chunks : {"99999999999999999999", "9223372036854775808", "0", "-3"})
    expect_error_naming<InputError>(
        [&] {
          parse_work_yaml("items:\n  - name: a\n    total_ms: 3\n    chunks: " + chunks + "\n",
                          "w.yml");
        },
        {"w.yml:4: chunks: expected 1..1000000 pieces, got '" + chunks + "'"});
}

TEST(ClusterYamlRanges, MachineCountsNameTheRealRange) {
  expect_error_naming<InputError>(
      [] { parse_cluster_yaml("machines: [{count: 0, gpus: 2}]\n", "c.yml"); },
      {"c.yml:1: count: expected 1..100000 machines, got '0'"});
}

TEST(YamlNullMarks, EmptyNodesAreReportedAtTheirOwnLine) {
  expect_error_naming<InputError>(
      [] { parse_work_yaml("items:\n  - name:\n    total_ms: 3\n", "w.yml"); }, {"w.yml:2"});
  expect_error_naming<InputError>(
      [] { parse_cluster_yaml("machines:\n  - gpus: 2\n  -   # nothing here\n\n", "c.yml"); },
      {"c.yml:3"});
}

TEST(InputFileSize, EndlessInputIsRefused) {
  expect_error_naming<InputError>([] { load_work_yaml("/dev/zero"); },
                                  {"/dev/zero: more than 256 MiB"});
}

// A stream of unknown size is read in blocks of 1 MiB and joined: a FIFO of three blocks and a
// few bytes (no two alike in a row) comes back byte for byte, and one past the limit is
// refused; so is a regular file past the limit, by its size, and one at it is read whole.
TEST(InputFileSize, StreamsAreReadWholeAndRefusedPastTheLimit) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("pe-read-text-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string sent((std::size_t{3} << 20) + 5, '\0');
  for (std::size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<char>('a' + i % 23);
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out.write(sent.data(), static_cast<std::streamsize>(sent.size()));
  });
  const std::string read = detail::yaml_input::read_text(fifo);
  writer.join();
  EXPECT_EQ(read.size(), sent.size());
  EXPECT_TRUE(read == sent);
  expect_error_naming<InputError>(
      [] { detail::yaml_input::read_text("/dev/zero", std::size_t{2} << 20); },
      {"/dev/zero: more than 2 MiB"});
  const std::string file = (dir / "big.yml").string();
  std::ofstream(file) << sent;
  EXPECT_EQ(detail::yaml_input::read_text(file, sent.size()).size(), sent.size());
  expect_error_naming<InputError>(
      [&] { detail::yaml_input::read_text(file, std::size_t{3} << 20); },
      {file + ": more than 3 MiB"});
  std::filesystem::remove_all(dir);
}

// A list of `n` one-GPU machine groups, one per line ("  - {gpus: 1}": 3 nodes each).
std::string one_gpu_groups(int n) {
  std::string text = "machines:\n";
  for (int i = 0; i < n; ++i) text += "  - {gpus: 1}\n";
  return text;
}

TEST(YamlNodeLimit, ClusterFileIsRefusedBeforeItsTreeIsBuilt) {
  // 1 (root) + 2 (machines key, list) + 3 a group: group 33,333 holds node 100,001.
  EXPECT_EQ(parse_cluster_yaml(one_gpu_groups(33332), "c.yml").machine_gpus.size(), 33332u);
  expect_error_naming<InputError>(
      [] { parse_cluster_yaml(one_gpu_groups(40000), "c.yml"); },
      {"c.yml:33334: machines: more than 100000 YAML nodes", "expected a smaller file"});
  // The key path names the keys a node is the value of: node 100,001 is the `type` key of
  // group 19,999 (7 nodes before the list, 5 a group), under machines, not machines.gpus.
  std::string typed = "bandwidth_GBps: {intra: 1}\nmachines:\n";
  for (int i = 0; i < 20001; ++i) typed += "  - {gpus: 1, type: a}\n";
  expect_error_naming<InputError>([&] { parse_cluster_yaml(typed, "c.yml"); },
                                  {"c.yml:20001: machines: more than 100000 YAML nodes"});
}

TEST(YamlNodeLimit, ModelsFileNamesTheKeyOfTheLongList) {
  std::string text = "m:\n  layers: 2000000\n  mem_MB: [";
  for (int i = 0; i < 1000000; ++i) text += "1,";
  text += "1]\n";
  std::vector<std::string> warnings;
  expect_error_naming<InputError>([&] { parse_pipeedge_model(text, "models.yml", "m", warnings); },
                                  {"models.yml:3: m.mem_MB: more than 1000000 YAML nodes"});
}

TEST(YamlControlCharacters, AreEscapedInErrorsAndWarnings) {
  std::vector<std::string> warnings;
  parse_pipeedge_model(
      "m:\n  layers: 1\n  mem_MB: [1]\n  parameters_in: 1\n  parameters_out: [1]\n"
      "  \"x\\e[2J\": 1\n",
      "models.yml", "m", warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("unknown key 'x\\x1b[2J' ignored"), std::string::npos) << warnings[0];
  expect_error_naming<InputError>(
      [] {
        parse_work_yaml("items:\n  - {name: a, duration_ms: 1, after: \"b\\e[2J\"}\n", "w.yml");
      },
      {"w.yml:2: after: no item named 'b\\x1b[2J'"});
  expect_error_naming<InputError>(
      [] {
        parse_work_yaml("items:\n  - {name: \"a\\e\", after: \"a\\e\", duration_ms: 1}\n", "w.yml");
      },
      {"'after' of item 'a\\x1b' leads back to itself"});
}

TEST(InputFilePath, AnEmptyPathSaysSo) {
  expect_error_naming<InputError>([] { load_cluster_yaml(""); }, {"empty file name"});
  expect_error_naming<InputError>([] { load_work_yaml(""); }, {"empty file name"});
  expect_error_naming<InputError>(
      [] {
        load_pipeedge_input({"", "t.yml", "d.yml"}, PipeEdgeQuery{});
      },
      {"the path of the models file is empty"});
}

// Numbers are decimal as in YAML 1.2's core schema; other forms are errors naming the key,
// never read as something else (0x20 as 32).
TEST(YamlNumbers, DecimalFormsAreRead) {
  const std::vector<std::pair<std::string, double>> forms = {
      {"16", 16},     {"16.0", 16}, {"+16", 16}, {"16.", 16}, {"1.6e1", 16},
      {"160E-1", 16}, {".5", 0.5},  {"016", 16}, {"1e+1", 10}};
  for (const auto& [text, value] : forms)
    EXPECT_DOUBLE_EQ(
        parse_cluster_yaml(kMachines + "memory_GB: " + text + "\n", "c.yml").device_memory,
        value * kGB)
        << text;
}

TEST(YamlNumbers, OtherFormsAreErrorsNamingFileLineAndKey) {
  for (const std::string text : {"0x20", "0X20", "0x1p4", "0o20", "1_000", "16GB", "1e", "e5", ".",
                                 "+", "1.2.3", "--1", "1e5.5", "16 GB", "true"})
    expect_error_naming<InputError>(
        [&] { parse_cluster_yaml(kMachines + "memory_GB: " + text + "\n", "c.yml"); },
        {"c.yml:4: memory_GB: expected a decimal number", "got '" + text + "'"});
  expect_error_naming<InputError>(
      [] {
        parse_work_yaml("items:\n  - name: a\n    after: forward\n    duration_ms: 0x10\n",
                        "w.yml");
      },
      {"w.yml:4: duration_ms: expected a decimal number", "got '0x10'"});
  std::vector<std::string> warnings;
  expect_error_naming<InputError>(
      [&] {
        parse_pipeedge_model(
            "m:\n  layers: 1\n  mem_MB: [0x10]\n  parameters_in: 1\n  parameters_out: [1]\n",
            "models.yml", "m", warnings);
      },
      {"models.yml:3: m.mem_MB[0]: expected a decimal number", "got '0x10'"});
  // NaN and infinities keep their own message.
  expect_error_naming<InputError>(
      [] { parse_cluster_yaml(kMachines + "memory_GB: -.inf\n", "c.yml"); },
      {"c.yml:4: memory_GB: expected a finite number, got '-.inf'"});
}

// Whole numbers (counts, GPUs, chunks, stages) are digits only.
TEST(YamlNumbers, WholeNumbersAreDigitsOnly) {
  for (const std::string gpus : {"0x4", "+4", "4.0", "4e0"})
    expect_error_naming<InputError>(
        [&] { parse_cluster_yaml("machines:\n  - gpus: " + gpus + "\n", "c.yml"); },
        {"c.yml:2: gpus: expected 1..100000 GPUs, got '" + gpus + "'"});
}

}  // namespace
}  // namespace pe
