// Helpers for reading YAML input with errors that name file, line and key.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "pe/error.h"

namespace pe::yaml_input {

/// Parses `text`; a syntax error becomes an InputError at its line.
YAML::Node parse(const std::string& text, const std::string& file);
/// Reads and parses a file; an unreadable file becomes an InputError.
YAML::Node load(const std::string& path);
/// Reads a whole file into a string (InputError if it cannot be opened).
std::string read_text(const std::string& path);

/// "file:line: key" for a node (line is 1-based; omitted when unknown).
std::string where(const std::string& file, const YAML::Node& node, const std::string& key);

/// The child `key` of a map; throws when missing or null and `required`.
YAML::Node child(const YAML::Node& map, const std::string& key, const std::string& file,
                 bool required);
/// A finite number (ints accepted); throws naming the key and the value seen.
double number(const YAML::Node& node, const std::string& file, const std::string& key);
/// A finite number >= 0 (or > 0 when `strictly_positive`).
double non_negative(const YAML::Node& node, const std::string& file, const std::string& key,
                    bool strictly_positive = false);
/// A non-negative integer that fits in `long long` (no fraction, no sign, no junk).
long long count(const YAML::Node& node, const std::string& file, const std::string& key);
/// A scalar string.
std::string text(const YAML::Node& node, const std::string& file, const std::string& key);
/// Throws on keys of `map` that are not in `known`.
void only_keys(const YAML::Node& map, const std::vector<std::string>& known,
               const std::string& file, const std::string& what);

}  // namespace pe::yaml_input
