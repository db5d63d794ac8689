// device_types.yml: TYPE -> {bw_Mbps, mem_MB, model_profiles: MODEL -> [profile]}.
#include "pe/importers/pipeedge.h"

#include "pe/error.h"
#include "pipeedge_yaml.h"
#include "yaml_input.h"

namespace pe {
namespace {

using namespace detail::pipeedge_yaml;
using detail::yaml_input::where;

/// One profile of the queried model, read and checked.
struct Profile {
  std::uint64_t batch_size = 0;
  std::string dtype;
  std::vector<double> times;
  YAML::Node times_node;
  std::string path;
};

Profile read_profile(const YAML::Node& node, const std::string& file, const std::string& path,
                     std::vector<std::string>& warnings) {
  require_map(node, file, path, "with batch_size, dtype and time_s");
  reject_duplicate_keys(node, file, path);
  warn_unknown_keys(node, {"batch_size", "dtype", "time_s"}, file, path, warnings);
  Profile profile;
  profile.path = path;
  profile.batch_size =
      non_negative_integer(required(node, "batch_size", file, path), file, path + ".batch_size");
  profile.dtype =
      detail::yaml_input::text(required(node, "dtype", file, path), file, path + ".dtype");
  profile.times_node = required(node, "time_s", file, path);
  profile.times = number_list(profile.times_node, file, path + ".time_s");
  return profile;
}

/// The profiles of the queried batch size and dtype, in file order.
std::vector<Profile> matching_profiles(const YAML::Node& list, const std::string& file,
                                       const std::string& path, const PipeEdgeQuery& query,
                                       std::vector<std::string>& warnings) {
  if (!list.IsSequence())
    throw InputError(where(file, list, path), "expected a list of profiles, got " + describe(list));
  std::vector<Profile> matches;
  for (std::size_t k = 0; k < list.size(); ++k) {
    Profile profile = read_profile(list[k], file, path + "[" + std::to_string(k) + "]", warnings);
    if (profile.batch_size == query.micro_batch && profile.dtype == query.dtype)
      matches.push_back(std::move(profile));
  }
  return matches;
}

/// The profile list of the queried model, or a null node when the type has none.
YAML::Node model_profile_list(const YAML::Node& entry, const std::string& file,
                              const std::string& name, const PipeEdgeQuery& query) {
  const YAML::Node profiles = entry["model_profiles"];
  if (!profiles || profiles.IsNull()) return YAML::Node();
  const std::string path = name + ".model_profiles";
  require_map(profiles, file, path, "from model name to a list of profiles");
  reject_duplicate_keys(profiles, file, path);
  const YAML::Node list = profiles[query.model_name];
  return list ? list : YAML::Node();
}

/// Picks the first matching profile; a warning when none or several match.
bool select_profile(const std::vector<Profile>& matches, const std::string& where_type,
                    const PipeEdgeQuery& query, std::vector<std::string>& warnings) {
  const std::string key =
      "batch_size " + std::to_string(query.micro_batch) + " and dtype " + query.dtype;
  if (matches.empty()) {
    warnings.push_back(escape_controls(where_type + ": no profile of model '" + query.model_name +
                                       "' with " + key + "; the type is skipped"));
    return false;
  }
  for (std::size_t k = 1; k < matches.size(); ++k)
    warnings.push_back(escape_controls(where_type + ": profile " + matches[k].path +
                                       " also matches " + key + "; using the first, " +
                                       matches[0].path));
  return true;
}

/// Reads one type; returns false (after a warning) when it has no usable profile.
bool read_type(const YAML::Node& key, const YAML::Node& entry, const std::string& file,
               const PipeEdgeQuery& query, std::size_t layers, EdgeDeviceType& type,
               std::vector<std::string>& warnings) {
  const std::string& name = type.name;
  require_map(entry, file, name, "with bw_Mbps, mem_MB and model_profiles");
  reject_duplicate_keys(entry, file, name);
  warn_unknown_keys(entry, {"bw_Mbps", "mem_MB", "model_profiles"}, file, name, warnings);
  type.bandwidth_mbps = detail::yaml_input::non_negative(required(entry, "bw_Mbps", file, name),
                                                         file, name + ".bw_Mbps");
  type.memory_mib = detail::yaml_input::non_negative(required(entry, "mem_MB", file, name), file,
                                                     name + ".mem_MB");
  const YAML::Node list = model_profile_list(entry, file, name, query);
  const std::string where_type = where(file, key, name);
  if (!list || list.IsNull()) {
    warnings.push_back(escape_controls(where_type + ": no profiles for model '" + query.model_name +
                                       "'; the type is skipped"));
    return false;
  }
  const std::string path = name + ".model_profiles." + query.model_name;
  const std::vector<Profile> matches = matching_profiles(list, file, path, query, warnings);
  if (!select_profile(matches, where_type, query, warnings)) return false;
  const Profile& chosen = matches.front();
  if (chosen.times.size() != layers)
    throw InputError(where(file, chosen.times_node, chosen.path + ".time_s"),
                     std::to_string(chosen.times.size()) + " layer times; model '" +
                         query.model_name + "' has " + std::to_string(layers) + " layers");
  type.layer_seconds = chosen.times;
  return true;
}

}  // namespace

PipeEdgeDeviceTypes parse_pipeedge_device_types(const std::string& text, const std::string& file,
                                                const PipeEdgeQuery& query, std::size_t layers,
                                                std::vector<std::string>& warnings) {
  const YAML::Node root = detail::yaml_input::parse(text, file);
  require_map(root, file, "", "from device type name to {bw_Mbps, mem_MB, model_profiles}");
  reject_duplicate_keys(root, file, "");
  PipeEdgeDeviceTypes types;
  for (const auto& item : root) {
    EdgeDeviceType type;
    type.name = detail::yaml_input::text(item.first, file, "device type name");
    if (read_type(item.first, item.second, file, query, layers, type, warnings))
      types.usable.push_back(std::move(type));
    else
      types.skipped.push_back(type.name);
  }
  return types;
}

}  // namespace pe
