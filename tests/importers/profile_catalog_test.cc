#include "pe/importers/profile_catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "pe/error.h"
#include "pe/importers/pipedream_graph.h"
#include "test_paths.h"

namespace pe {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::ThrowsMessage;

// Totals of a graph file found by plain string handling, independently of the importer:
// the four metrics of every node line except Input sources and __getitem__ sinks.
struct Totals {
  double forward = 0, backward = 0, activation = 0, parameters = 0;
  std::size_t operators = 0;
};

// The number after `key` in a node line; a list `[a; b]` is summed.
double value_after(const std::string& line, const std::string& key) {
  std::size_t at = line.find(key);
  EXPECT_THAT(line, HasSubstr(key));
  if (at == std::string::npos) return 0;
  at += key.size();
  if (line[at] != '[') return std::strtod(line.c_str() + at, nullptr);
  std::istringstream items(line.substr(at + 1, line.find(']', at) - at - 1));
  double sum = 0;
  for (std::string item; std::getline(items, item, ';');) sum += std::strtod(item.c_str(), nullptr);
  return sum;
}

struct ScannedNode {
  std::string description;
  double forward, backward, activation, parameters;
};

Totals scan_totals(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, ScannedNode> nodes;
  std::set<std::string> has_in, has_out;
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (line[0] == ' ' || line[0] == '\t') {
      std::istringstream edge(line);
      std::string source, dash, target;
      edge >> source >> dash >> target;
      has_out.insert(source);
      has_in.insert(target);
      continue;
    }
    const std::size_t first = line.find(" -- "), second = line.find(" -- ", first + 4);
    nodes[line.substr(0, first)] = {
        line.substr(first + 4, second - first - 4), value_after(line, "forward_compute_time="),
        value_after(line, "backward_compute_time="), value_after(line, "activation_size="),
        value_after(line, "parameter_size=")};
  }
  Totals totals;
  for (const auto& [id, n] : nodes) {
    if (!has_in.count(id) && n.description.rfind("Input", 0) == 0) continue;
    if (!has_out.count(id) && n.description.rfind("__getitem__", 0) == 0) continue;
    totals.forward += n.forward / 1000;
    totals.backward += n.backward / 1000;
    totals.activation += n.activation;
    totals.parameters += n.parameters;
    ++totals.operators;
  }
  return totals;
}

void expect_close(double actual, double expected, const std::string& what) {
  EXPECT_NEAR(actual, expected, 1e-9 * std::max(1.0, std::abs(expected))) << what;
}

// Sets PE_PROFILES_DIR for the lifetime of the guard.
class ProfilesDirGuard {
 public:
  explicit ProfilesDirGuard(const fs::path& dir) {
    if (const char* old = std::getenv("PE_PROFILES_DIR")) previous_ = old;
    setenv("PE_PROFILES_DIR", dir.c_str(), 1);
  }
  ~ProfilesDirGuard() {
    if (previous_.empty())
      unsetenv("PE_PROFILES_DIR");
    else
      setenv("PE_PROFILES_DIR", previous_.c_str(), 1);
  }

 private:
  std::string previous_;
};

// A fresh, empty folder for one test (unique per process, so parallel runs don't clash).
fs::path scratch_dir(const std::string& test) {
  const fs::path dir =
      fs::temp_directory_path() / ("pe-catalog-" + test + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_file(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

const std::string kTinyGraph =
    "a -- op -- forward_compute_time=1, backward_compute_time=2, activation_size=3, "
    "parameter_size=4\n";

TEST(ProfileCatalog, ListsBundledProfiles) {
  const std::vector<ProfileEntry> entries = bundled_profiles();
  ASSERT_FALSE(entries.empty());
  EXPECT_EQ(entries.front().name, "alexnet");
  for (const ProfileEntry& e : entries) {
    EXPECT_TRUE(fs::is_regular_file(e.path)) << e.name << ": " << e.path;
    EXPECT_GT(e.profile_batch_size, 0) << e.name;
    EXPECT_GE(e.min_micro_batch, 1) << e.name;
  }
}

TEST(ProfileCatalog, EveryEntryImportsWithTotalsOfItsNodeLines) {
  for (const ProfileEntry& e : bundled_profiles()) {
    const ModelProfile m = import_pipedream_graph(e.path, e.profile_batch_size);
    const Totals expected = scan_totals(e.path);
    EXPECT_EQ(m.operator_count, expected.operators) << e.name;
    // Every cut (at least one per operator, the spine one per operator), or one per operator.
    if (std::string(m.states_cover()) == "every cut") {
      EXPECT_GT(m.size(), m.operator_count) << e.name;
      EXPECT_EQ(m.spine.size(), m.operator_count) << e.name;
    } else {
      EXPECT_EQ(m.size(), m.operator_count) << e.name;
    }
    EXPECT_EQ(m.whole().crossing, 0) << e.name;
    expect_close(m.whole().forward, expected.forward, e.name + " forward");
    expect_close(m.whole().backward, expected.backward, e.name + " backward");
    expect_close(m.whole().activation, expected.activation, e.name + " activation");
    expect_close(m.whole().parameters, expected.parameters, e.name + " parameters");
  }
}

TEST(ProfileCatalog, EveryBundledGraphIsCatalogued) {
  std::set<std::string> catalogued;
  for (const ProfileEntry& e : bundled_profiles())
    catalogued.insert(fs::weakly_canonical(e.path).string());
  for (const auto& file : fs::recursive_directory_iterator(PE_TEST_PROFILES_DIR)) {
    if (file.path().extension() != ".txt") continue;
    EXPECT_TRUE(catalogued.count(fs::weakly_canonical(file.path()).string())) << file.path();
  }
}

// Rows of profiles/README.md's table: `| name | batch size | operators | states | ...`.
std::map<std::string, std::vector<std::string>> readme_rows() {
  std::ifstream in(std::string(PE_TEST_PROFILES_DIR) + "/README.md");
  std::map<std::string, std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells;
    std::istringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) {
      const std::size_t begin = cell.find_first_not_of(" `"), end = cell.find_last_not_of(" `");
      cells.push_back(begin == std::string::npos ? "" : cell.substr(begin, end - begin + 1));
    }
    rows[cells.front()] = cells;
  }
  return rows;
}

TEST(ProfileCatalog, ReadmeTableMatchesImports) {
  const auto rows = readme_rows();
  for (const ProfileEntry& e : bundled_profiles()) {
    const ModelProfile m = import_pipedream_graph(e.path, e.profile_batch_size);
    std::ostringstream expected;
    expected << e.profile_batch_size << " " << m.operator_count << " " << m.size();
    const auto row = rows.find(e.name);
    ASSERT_NE(row, rows.end()) << "README.md lacks | `" << e.name << "` | " << expected.str();
    ASSERT_GE(row->second.size(), 4u) << e.name;
    EXPECT_EQ(row->second[1] + " " + row->second[2] + " " + row->second[3], expected.str())
        << "README.md row of " << e.name << " (batch size, operators, states)";
  }
  EXPECT_EQ(rows.size(), bundled_profiles().size());
}

TEST(ProfileCatalog, NasnetLargeHasOneStatePerOperator) {
  // nasnetalarge/graph.txt has 1,251 node lines: one Input source and no __getitem__
  // sinks, so 1,250 operators and, with more cuts than the importer enumerates, the 1,250
  // prefixes of one order.
  const ProfileEntry e = find_profile("nasnetalarge");
  const ModelProfile m = import_pipedream_graph(e.path, e.profile_batch_size);
  EXPECT_EQ(m.operator_count, 1250u);
  EXPECT_EQ(m.size(), 1250u);
  EXPECT_STREQ(m.states_cover(), "one order");
}

TEST(ProfileCatalog, FindsHpgoDefaultsByName) {
  const ProfileEntry resnet = find_profile("resnet50");
  EXPECT_EQ(resnet.profile_batch_size, 32);
  EXPECT_EQ(resnet.min_micro_batch, 32);
  EXPECT_EQ(resnet.optimizer_scaling, 2);
  ASSERT_TRUE(resnet.activation_bytes_per_sample.has_value());
  EXPECT_EQ(*resnet.activation_bytes_per_sample, 7e7);
  const ProfileEntry bert = find_profile("dapple/bert-48-pbs-2");
  EXPECT_EQ(bert.profile_batch_size, 2);
  EXPECT_EQ(bert.optimizer_scaling, 3);
  EXPECT_FALSE(bert.activation_bytes_per_sample.has_value());
}

TEST(ProfileCatalog, FindsCatalogueEntryByPath) {
  const std::string path = std::string(PE_TEST_PROFILES_DIR) + "/pipedream/vgg19/graph.txt";
  const ProfileEntry e = find_profile(path);
  EXPECT_EQ(e.name, "vgg19");
  EXPECT_EQ(e.min_micro_batch, 32);
}

TEST(ProfileCatalog, UncataloguedPathTakesBatchSizeFromFileName) {
  const fs::path dir = scratch_dir("pbs");
  write_file(dir / "tiny-pbs-16-v2.txt", kTinyGraph);
  write_file(dir / "tiny.txt", kTinyGraph);
  const ProfileEntry named = find_profile((dir / "tiny-pbs-16-v2.txt").string());
  EXPECT_EQ(named.profile_batch_size, 16);
  EXPECT_EQ(named.name, "tiny-pbs-16-v2");
  const ProfileEntry unnamed = find_profile((dir / "tiny.txt").string());
  EXPECT_EQ(unnamed.profile_batch_size, 0);  // unknown: the caller must ask for --pbs
  EXPECT_EQ(unnamed.min_micro_batch, 1);
  fs::remove_all(dir);
}

TEST(ProfileCatalog, UnknownNameListsKnownNames) {
  EXPECT_THAT([] { find_profile("resnet49"); },
              ThrowsMessage<InputError>(AllOf(HasSubstr("resnet49"), HasSubstr("resnet50"),
                                              HasSubstr("dapple/bert-48-pbs-2"))));
}

TEST(ProfileCatalog, MissingFileIsAnInputError) {
  EXPECT_THROW(find_profile("/no/such/dir/graph.txt"), InputError);
  const fs::path dir = scratch_dir("missing");
  write_file(dir / "catalog.yml",
             "profiles:\n  - name: gone\n    path: gone.txt\n    profile_batch_size: 1\n"
             "    min_micro_batch: 1\n    optimizer_scaling: 2\n");
  const ProfilesDirGuard guard(dir);
  EXPECT_THAT([] { find_profile("gone"); }, ThrowsMessage<InputError>(HasSubstr("gone.txt")));
  fs::remove_all(dir);
}

TEST(ProfileCatalog, DirectoryIsAnInputErrorSayingSo) {
  const fs::path dir = scratch_dir("a-directory");
  EXPECT_THAT([&] { find_profile(dir.string()); },
              ThrowsMessage<InputError>(
                  AllOf(HasSubstr("is a directory"), Not(HasSubstr("no such file")))));
  fs::remove_all(dir);
}

// A readable path that is not a regular file (a device, a pipe) is taken as the graph, so
// the importer reports what it finds in it: /dev/null is an empty file, not a missing one.
TEST(ProfileCatalog, DeviceIsReadAsGivenAndEmptyIsTheImportersError) {
  const ProfileEntry entry = find_profile("/dev/null");
  EXPECT_EQ(entry.path, "/dev/null");
  EXPECT_THAT(
      [&] { import_pipedream_graph(entry.path, 1); },
      ThrowsMessage<InputError>(AllOf(HasSubstr("/dev/null"), Not(HasSubstr("no such file")))));
}

// The lookup a program built against the installed package makes: with $PE_PROFILES_DIR
// unset, a registered directory that exists comes before the source tree; one that does
// not exist is passed over.
TEST(ProfileCatalog, RegisteredInstalledDirectoryComesBeforeTheSourceTree) {
  const fs::path dir = scratch_dir("registered");
  write_file(dir / "tiny.txt", kTinyGraph);
  write_file(dir / "catalog.yml",
             "profiles:\n  - name: vgg19\n    path: tiny.txt\n    profile_batch_size: 4\n"
             "    min_micro_batch: 1\n    optimizer_scaling: 2\n");
  std::string previous;
  if (const char* old = std::getenv("PE_PROFILES_DIR")) previous = old;
  unsetenv("PE_PROFILES_DIR");
  set_installed_profiles_directory(dir.string());
  EXPECT_EQ(profiles_directory(), dir.string());
  EXPECT_EQ(find_profile("vgg19").path, (dir / "tiny.txt").string());
  set_installed_profiles_directory((dir / "missing").string());
  EXPECT_NE(profiles_directory(), (dir / "missing").string());
  set_installed_profiles_directory("");
  if (!previous.empty()) setenv("PE_PROFILES_DIR", previous.c_str(), 1);
  fs::remove_all(dir);
}

TEST(ProfileCatalog, EnvironmentOverridesProfilesDirectory) {
  const fs::path dir = scratch_dir("env");
  write_file(dir / "tiny.txt", kTinyGraph);
  write_file(dir / "catalog.yml",
             "profiles:\n  - name: tiny\n    path: tiny.txt\n    profile_batch_size: 4\n"
             "    min_micro_batch: 2\n    optimizer_scaling: 3\n"
             "    activation_bytes_per_sample: 1.5e6\n    notes: test\n");
  const ProfilesDirGuard guard(dir);
  EXPECT_EQ(profiles_directory(), dir.string());
  const ProfileEntry e = find_profile("tiny");
  EXPECT_EQ(e.path, (dir / "tiny.txt").string());
  EXPECT_EQ(e.profile_batch_size, 4);
  EXPECT_EQ(e.min_micro_batch, 2);
  EXPECT_EQ(e.optimizer_scaling, 3);
  EXPECT_EQ(e.activation_bytes_per_sample.value_or(0), 1.5e6);
  EXPECT_EQ(e.notes, "test");
  fs::remove_all(dir);
}

TEST(ProfileCatalog, MalformedCatalogueNamesFileLineAndKey) {
  const std::string head = "profiles:\n  - name: a\n    path: a.txt\n";
  const std::string tail = "    min_micro_batch: 1\n    optimizer_scaling: 2\n";
  struct Case {
    std::string text, expect;
  };
  const fs::path dir = scratch_dir("malformed");
  const ProfilesDirGuard guard(dir);
  for (const Case& c : std::vector<Case>{
           {head + "    profile_batch_size: 0\n" + tail, "catalog.yml:4: profile_batch_size"},
           {head + "    profile_batch_size: 1\n    min_micro_batch: 0\n"
                   "    optimizer_scaling: 2\n",
            "catalog.yml:5: min_micro_batch"},
           {head + "    profile_batch_size: 1\n" + tail + "    colour: red\n",
            "catalog.yml:7: colour"},
           {head + "    profile_batch_size: 1\n" + tail + head.substr(10) +
                "    profile_batch_size: 1\n" + tail,
            "catalog.yml:7: name"},
           {"profiles: {}\n", "catalog.yml:1: profiles"},
       }) {
    write_file(dir / "catalog.yml", c.text);
    EXPECT_THAT([] { bundled_profiles(); }, ThrowsMessage<InputError>(HasSubstr(c.expect)))
        << c.text;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pe
