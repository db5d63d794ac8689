// Shared readers for PipeEdge's YAML files: lists of numbers, duplicate and unknown keys.
// Built on yaml_input.h; every error names file, line and a dotted key path.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pe::detail::pipeedge_yaml {

/// "a map", "a list", "nothing" or "'text'", for messages saying what was found.
std::string describe(const YAML::Node& node);

/// Throws unless `node` is a map; `expected` says what the map should hold.
void require_map(const YAML::Node& node, const std::string& file, const std::string& path,
                 const std::string& expected);

/// The value of `key` in `map`; throws naming `path` when the key is missing.
YAML::Node required(const YAML::Node& map, const std::string& key, const std::string& file,
                    const std::string& path);

/// Throws when a key of `map` appears twice (yaml-cpp keeps both).
void reject_duplicate_keys(const YAML::Node& map, const std::string& file, const std::string& path);

/// Adds a warning for every key of `map` not in `known` (the original ignores them).
void warn_unknown_keys(const YAML::Node& map, const std::vector<std::string>& known,
                       const std::string& file, const std::string& path,
                       std::vector<std::string>& warnings);

/// A non-negative integer (digits only).
std::uint64_t non_negative_integer(const YAML::Node& node, const std::string& file,
                                   const std::string& path);

/// A list of finite numbers >= 0.
std::vector<double> number_list(const YAML::Node& node, const std::string& file,
                                const std::string& path);

/// A list of non-negative integers.
std::vector<std::uint64_t> count_list(const YAML::Node& node, const std::string& file,
                                      const std::string& path);

}  // namespace pe::detail::pipeedge_yaml
