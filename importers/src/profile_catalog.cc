#include "pe/importers/profile_catalog.h"

#include <cctype>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "pe/error.h"
#include "yaml_input.h"

namespace pe {
namespace {

namespace fs = std::filesystem;
using namespace detail::yaml_input;

const std::vector<std::string> kEntryKeys = {"name",
                                             "path",
                                             "profile_batch_size",
                                             "min_micro_batch",
                                             "optimizer_scaling",
                                             "activation_bytes_per_sample",
                                             "notes"};

int read_min_micro_batch(const YAML::Node& entry, const std::string& file) {
  const YAML::Node node = child(entry, "min_micro_batch", file, true);
  const long long value = count(node, file, "min_micro_batch");
  if (value < 1 || value > INT_MAX)
    throw InputError(where(file, node, "min_micro_batch"),
                     "expected a positive integer, got '" + node.Scalar() + "'");
  return static_cast<int>(value);
}

ProfileEntry read_entry(const YAML::Node& entry, const std::string& file,
                        const fs::path& directory) {
  if (!entry.IsMap()) throw InputError(where(file, entry, "profiles"), "expected a map");
  only_keys(entry, kEntryKeys, file, "a profile entry");
  ProfileEntry p;
  p.name = text(child(entry, "name", file, true), file, "name");
  p.path = (directory / text(child(entry, "path", file, true), file, "path")).string();
  p.profile_batch_size = non_negative(child(entry, "profile_batch_size", file, true), file,
                                      "profile_batch_size", true);
  p.min_micro_batch = read_min_micro_batch(entry, file);
  p.optimizer_scaling =
      non_negative(child(entry, "optimizer_scaling", file, true), file, "optimizer_scaling", true);
  const YAML::Node activation = child(entry, "activation_bytes_per_sample", file, false);
  if (activation && !activation.IsNull())
    p.activation_bytes_per_sample =
        non_negative(activation, file, "activation_bytes_per_sample", true);
  if (const YAML::Node notes = child(entry, "notes", file, false); notes && !notes.IsNull())
    p.notes = text(notes, file, "notes");
  return p;
}

std::vector<ProfileEntry> read_catalog(const std::string& file, const fs::path& directory) {
  const YAML::Node root = load(file);
  if (!root.IsMap()) throw InputError(file, "expected a map with a 'profiles' key");
  only_keys(root, {"profiles"}, file, "the profile catalogue");
  const YAML::Node list = child(root, "profiles", file, true);
  if (!list.IsSequence())
    throw InputError(where(file, list, "profiles"), "expected a list of profiles");
  std::vector<ProfileEntry> entries;
  std::set<std::string> names;
  for (const YAML::Node& entry : list) {
    entries.push_back(read_entry(entry, file, directory));
    if (!names.insert(entries.back().name).second)
      throw InputError(where(file, entry, "name"),
                       "duplicate profile name '" + entries.back().name + "'");
  }
  return entries;
}

// share/pe/profiles relative to the running program's bin/ folder, if it exists.
std::string installed_beside_program() {
  std::error_code error;
  const fs::path program = fs::read_symlink("/proc/self/exe", error);
  if (error) return "";
  const fs::path dir = (program.parent_path() / PE_PROFILES_FROM_BINDIR).lexically_normal();
  return fs::is_directory(dir, error) ? dir.string() : "";
}

// The directory given to set_installed_profiles_directory() (a function-local static, so
// that it can be set from another file's static initializer).
std::string& registered_directory() {
  static std::string directory;
  return directory;
}

std::string catalog_file() { return (fs::path(profiles_directory()) / "catalog.yml").string(); }

bool is_file(const std::string& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

// What a path names, following links; not_found when it cannot be read.
fs::file_type type_of(const std::string& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  return error ? fs::file_type::not_found : status.type();
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  return fs::equivalent(a, b, error);
}

// The N of `...-pbs-N...` in a file name (digits with an optional fraction), or 0.
double batch_size_from_file_name(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  const std::string marker = "-pbs-";
  const std::size_t at = name.find(marker);
  if (at == std::string::npos) return 0;
  const std::size_t begin = at + marker.size();
  std::size_t end = begin;
  while (end < name.size() && (std::isdigit(static_cast<unsigned char>(name[end])) ||
                               (name[end] == '.' && end + 1 < name.size() &&
                                std::isdigit(static_cast<unsigned char>(name[end + 1])))))
    ++end;
  if (end == begin || end - begin > 12) return 0;
  return std::stod(name.substr(begin, end - begin));
}

ProfileEntry entry_for_path(const std::string& path, const std::vector<ProfileEntry>& catalog) {
  for (const ProfileEntry& entry : catalog)
    if (same_file(entry.path, path)) return entry;
  ProfileEntry entry;
  const fs::path file(path);
  entry.name = file.stem() == "graph" && file.has_parent_path()
                   ? file.parent_path().filename().string()
                   : file.stem().string();
  entry.path = path;
  entry.profile_batch_size = batch_size_from_file_name(path);
  entry.notes = "not in the catalogue";
  return entry;
}

std::string known_names(const std::vector<ProfileEntry>& entries) {
  std::vector<std::string> names;
  for (const ProfileEntry& entry : entries) names.push_back(entry.name);
  return detail::yaml_input::comma_list(names);
}

}  // namespace

void set_installed_profiles_directory(const std::string& directory) {
  registered_directory() = directory;
}

std::string profiles_directory() {
  const char* from_environment = std::getenv("PE_PROFILES_DIR");
  if (from_environment != nullptr && *from_environment != '\0') return from_environment;
  if (std::string installed = installed_beside_program(); !installed.empty()) return installed;
  std::error_code error;
  if (const std::string& registered = registered_directory();
      !registered.empty() && fs::is_directory(registered, error))
    return registered;
  if (fs::is_directory(PE_SOURCE_PROFILES_DIR, error)) return PE_SOURCE_PROFILES_DIR;
  return PE_INSTALL_PROFILES_DIR;
}

std::vector<ProfileEntry> bundled_profiles() {
  return read_catalog(catalog_file(), profiles_directory());
}

ProfileEntry find_profile(const std::string& name_or_path) {
  const bool have_catalog = is_file(catalog_file());
  const std::vector<ProfileEntry> catalog =
      have_catalog ? bundled_profiles() : std::vector<ProfileEntry>();
  for (const ProfileEntry& entry : catalog) {
    if (entry.name != name_or_path) continue;
    if (!is_file(entry.path))
      throw InputError(entry.path, "profile '" + entry.name + "' is listed in " + catalog_file() +
                                       " but its file is missing");
    return entry;
  }
  // Regular files, but also devices and pipes (`<(...)`), are read as given.
  const fs::file_type type = type_of(name_or_path);
  if (type == fs::file_type::directory)
    throw InputError(name_or_path, "is a directory, expected a graph file (e.g. " +
                                       (fs::path(name_or_path) / "graph.txt").string() + ")");
  if (type != fs::file_type::not_found) return entry_for_path(name_or_path, catalog);
  const std::string known =
      have_catalog ? known_names(catalog) : "(no catalogue at " + catalog_file() + ")";
  throw InputError(name_or_path,
                   "no such file and no bundled profile of that name, "
                   "expected a graph file or one of: " +
                       known);
}

TrainingSettings training_settings(const ProfileEntry& entry) {
  TrainingSettings settings;
  settings.min_micro_batch = entry.min_micro_batch;
  settings.optimizer_scaling = entry.optimizer_scaling;
  settings.activation_bytes_per_sample = entry.activation_bytes_per_sample;
  return settings;
}

}  // namespace pe
