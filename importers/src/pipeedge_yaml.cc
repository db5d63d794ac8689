#include "pipeedge_yaml.h"

#include <algorithm>
#include <set>

#include "pe/error.h"
#include "yaml_input.h"

namespace pe::detail::pipeedge_yaml {

using detail::yaml_input::where;

std::string describe(const YAML::Node& node) {
  if (!node || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  return "'" + node.Scalar() + "'";
}

void require_map(const YAML::Node& node, const std::string& file, const std::string& path,
                 const std::string& expected) {
  if (!node.IsMap())
    throw InputError(where(file, node, path),
                     "expected a map " + expected + ", got " + describe(node));
}

YAML::Node required(const YAML::Node& map, const std::string& key, const std::string& file,
                    const std::string& path) {
  const YAML::Node& view = map;
  YAML::Node value = view[key];
  if (!value) throw InputError(where(file, map, path), "missing required key '" + key + "'");
  if (value.IsNull()) throw InputError(where(file, map, path), "key '" + key + "' has no value");
  return value;
}

void reject_duplicate_keys(const YAML::Node& map, const std::string& file,
                           const std::string& path) {
  std::set<std::string> seen;
  for (const auto& item : map) {
    const std::string key = item.first.IsScalar() ? item.first.Scalar() : describe(item.first);
    if (!seen.insert(key).second)
      throw InputError(where(file, item.first, path.empty() ? key : path + "." + key),
                       "duplicate key '" + key + "'");
  }
}

void warn_unknown_keys(const YAML::Node& map, const std::vector<std::string>& known,
                       const std::string& file, const std::string& path,
                       std::vector<std::string>& warnings) {
  for (const auto& item : map) {
    const std::string key = item.first.IsScalar() ? item.first.Scalar() : describe(item.first);
    if (std::find(known.begin(), known.end(), key) == known.end())
      warnings.push_back(
          escape_controls(where(file, item.first, path) + ": unknown key '" + key + "' ignored"));
  }
}

std::uint64_t non_negative_integer(const YAML::Node& node, const std::string& file,
                                   const std::string& path) {
  if (!node.IsScalar())
    throw InputError(where(file, node, path),
                     "expected a non-negative integer, got " + describe(node));
  return static_cast<std::uint64_t>(detail::yaml_input::count(node, file, path));
}

std::vector<double> number_list(const YAML::Node& node, const std::string& file,
                                const std::string& path) {
  if (!node.IsSequence())
    throw InputError(where(file, node, path), "expected a list of numbers, got " + describe(node));
  std::vector<double> values;
  values.reserve(node.size());
  for (std::size_t k = 0; k < node.size(); ++k)
    values.push_back(
        detail::yaml_input::non_negative(node[k], file, path + "[" + std::to_string(k) + "]"));
  return values;
}

std::vector<std::uint64_t> count_list(const YAML::Node& node, const std::string& file,
                                      const std::string& path) {
  if (!node.IsSequence())
    throw InputError(where(file, node, path),
                     "expected a list of non-negative integers, got " + describe(node));
  std::vector<std::uint64_t> values;
  values.reserve(node.size());
  for (std::size_t k = 0; k < node.size(); ++k)
    values.push_back(non_negative_integer(node[k], file, path + "[" + std::to_string(k) + "]"));
  return values;
}

}  // namespace pe::detail::pipeedge_yaml
