#include "output_paths.h"

#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "pe/error.h"
#include "pe/output_file.h"

namespace pe::cli {
namespace {

namespace fs = std::filesystem;

struct NamedPath {
  std::string flag;
  std::string path;
};

std::vector<NamedPath> present(
    const std::vector<std::pair<std::string, const std::optional<std::string>*>>& flags) {
  std::vector<NamedPath> paths;
  for (const auto& [flag, value] : flags)
    if (*value) paths.push_back({flag, **value});
  return paths;
}

std::vector<NamedPath> outputs(const Options& o) {
  std::vector<NamedPath> paths = present({{"--trace", &o.trace},
                                          {"--svg", &o.svg},
                                          {"--plot", &o.plot},
                                          {"--export-sched", &o.export_sched}});
  if (o.export_graph)
    paths.push_back({"--export-graph", (fs::path(*o.export_graph) / "graph.txt").string()});
  return paths;
}

// --export-graph DIR: DIR is a directory, or a new one whose parent directory exists.
void check_graph_directory(const std::string& directory) {
  std::error_code error;
  const fs::file_status status = fs::status(directory, error);
  if (fs::exists(status)) {
    if (!fs::is_directory(status))
      throw OutputError("--export-graph: cannot write into '" + directory +
                        "': not a directory, expected a directory for graph.txt");
    return;
  }
  std::string name = directory;
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  try {
    check_output_path(name);  // its parent must exist
  } catch (const OutputError& e) {
    throw OutputError(std::string("--export-graph: ") + e.what());
  }
}

std::vector<NamedPath> inputs(const Options& o, const std::string& profile_path) {
  std::vector<NamedPath> paths = present({{"--cluster", &o.cluster_file}, {"--fill", &o.fill}});
  paths.insert(paths.begin(), {"--profile", profile_path});
  return paths;
}

// Whether both paths name one file: by identity where both exist, else by their normal form.
// Special files (devices, FIFOs) may be named twice.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  const fs::file_status status_a = fs::status(a, error), status_b = fs::status(b, error);
  if (fs::exists(status_a) && fs::exists(status_b))
    return fs::is_regular_file(status_a) && fs::equivalent(a, b, error) && !error;
  if (fs::exists(status_a) || fs::exists(status_b)) return false;
  return fs::absolute(a, error).lexically_normal() == fs::absolute(b, error).lexically_normal();
}

void check_writable(const NamedPath& output) {
  try {
    check_output_path(output.path);
  } catch (const OutputError& e) {
    throw OutputError(output.flag + ": " + e.what());
  }
}

void refuse_same(const NamedPath& output, const NamedPath& other, const char* what) {
  throw UsageError(output.flag + " '" + output.path + "' is the same file as " + other.flag + " '" +
                   other.path + "': " + what);
}

}  // namespace

void check_output_paths(const Options& o, const std::string& profile_path) {
  const std::vector<NamedPath> written = outputs(o), read = inputs(o, profile_path);
  if (o.export_graph) check_graph_directory(*o.export_graph);
  for (const NamedPath& output : written)
    if (output.flag != "--export-graph" || fs::is_directory(*o.export_graph))
      check_writable(output);
  for (std::size_t i = 0; i < written.size(); ++i) {
    for (const NamedPath& input : read)
      if (same_file(written[i].path, input.path))
        refuse_same(written[i], input, "an output would overwrite an input");
    for (std::size_t j = 0; j < i; ++j)
      if (same_file(written[i].path, written[j].path))
        refuse_same(written[i], written[j], "two outputs would overwrite each other");
  }
}

}  // namespace pe::cli
