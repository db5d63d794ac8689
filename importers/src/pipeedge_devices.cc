// devices.yml: TYPE -> [host, ...].
#include "pe/importers/pipeedge.h"

#include <algorithm>
#include <map>

#include "pe/error.h"
#include "pipeedge_yaml.h"
#include "yaml_input.h"

namespace pe {
namespace {

using namespace detail::pipeedge_yaml;
using detail::yaml_input::where;

constexpr std::size_t kNoType = static_cast<std::size_t>(-1);

std::size_t usable_index(const PipeEdgeDeviceTypes& types, const std::string& name) {
  for (std::size_t k = 0; k < types.usable.size(); ++k)
    if (types.usable[k].name == name) return k;
  return kNoType;
}

bool is_skipped(const PipeEdgeDeviceTypes& types, const std::string& name) {
  return std::find(types.skipped.begin(), types.skipped.end(), name) != types.skipped.end();
}

/// Reads the host names of one type, rejecting empty names and names seen before.
std::vector<std::string> read_hosts(const YAML::Node& list, const std::string& file,
                                    const std::string& type, std::map<std::string, long>& seen) {
  if (!list.IsSequence())
    throw InputError(where(file, list, type),
                     "expected a list of host names ([] for none), got " + describe(list));
  std::vector<std::string> hosts;
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::string path = type + "[" + std::to_string(k) + "]";
    if (list[k].IsNull())
      throw InputError(where(file, list[k], path), "empty host name, expected a name after '-'");
    const std::string name = detail::yaml_input::text(list[k], file, path);
    if (name.empty()) throw InputError(where(file, list[k], path), "empty host name, got ''");
    const long line = list[k].Mark().is_null() ? 0 : list[k].Mark().line + 1;
    const auto [at, fresh] = seen.emplace(name, line);
    if (!fresh)
      throw InputError(where(file, list[k], path), "host '" + name + "' is listed twice (also at " +
                                                       location(file, at->second) + ")");
    hosts.push_back(name);
  }
  return hosts;
}

}  // namespace

std::vector<EdgeHost> parse_pipeedge_devices(const std::string& text, const std::string& file,
                                             const PipeEdgeDeviceTypes& types,
                                             std::vector<std::string>& warnings) {
  const YAML::Node root = detail::yaml_input::parse(text, file);
  require_map(root, file, "", "from device type name to a list of host names");
  reject_duplicate_keys(root, file, "");
  std::map<std::string, long> seen;
  std::vector<EdgeHost> hosts;
  for (const auto& item : root) {
    const std::string type = detail::yaml_input::text(item.first, file, "device type name");
    const std::vector<std::string> names = read_hosts(item.second, file, type, seen);
    const std::size_t index = usable_index(types, type);
    if (index != kNoType) {
      for (const std::string& name : names) hosts.push_back(EdgeHost{name, index});
    } else if (!is_skipped(types, type) && !names.empty()) {
      warnings.push_back(escape_controls(where(file, item.first, type) + ": device type '" + type +
                                         "' is not defined in the device types file; its " +
                                         std::to_string(names.size()) + " hosts are ignored"));
    }
  }
  return hosts;
}

}  // namespace pe
