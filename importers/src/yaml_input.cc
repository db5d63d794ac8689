#include "yaml_input.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>

namespace pe::yaml_input {

YAML::Node parse(const std::string& text, const std::string& file) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(location(file, e.mark.is_null() ? 0 : e.mark.line + 1),
                     "YAML syntax error: " + e.msg);
  }
}

std::string read_text(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw InputError(path, "is a directory, expected a YAML file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

YAML::Node load(const std::string& path) { return parse(read_text(path), path); }

std::string where(const std::string& file, const YAML::Node& node, const std::string& key) {
  long line = node.Mark().is_null() ? 0 : node.Mark().line + 1;
  return location(file, line) + (key.empty() ? "" : ": " + key);
}

YAML::Node child(const YAML::Node& map, const std::string& key, const std::string& file,
                 bool required) {
  if (!map.IsMap()) throw InputError(where(file, map, key), "expected a map");
  YAML::Node value = map[key];
  if (required && (!value || value.IsNull()))
    throw InputError(where(file, map, key), "missing required key '" + key + "'");
  return value;
}

std::string text(const YAML::Node& node, const std::string& file, const std::string& key) {
  if (!node.IsScalar()) throw InputError(where(file, node, key), "expected a scalar value");
  return node.Scalar();
}

double number(const YAML::Node& node, const std::string& file, const std::string& key) {
  const std::string seen = text(node, file, key);
  std::string lowered = seen;
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  double value = 0;
  std::size_t used = 0;
  try {
    value = std::stod(seen, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != seen.size() || lowered.find("nan") != std::string::npos ||
      lowered.find("inf") != std::string::npos || !std::isfinite(value))
    throw InputError(where(file, node, key),
                     "expected a finite number, got '" + seen + "'");
  return value;
}

double non_negative(const YAML::Node& node, const std::string& file, const std::string& key,
                    bool strictly_positive) {
  double value = number(node, file, key);
  if (value < 0 || (strictly_positive && value == 0))
    throw InputError(where(file, node, key),
                     std::string("expected a ") + (strictly_positive ? "positive" : "non-negative") +
                         " number, got '" + node.Scalar() + "'");
  return value;
}

long long count(const YAML::Node& node, const std::string& file, const std::string& key) {
  const std::string seen = text(node, file, key);
  const bool digits = !seen.empty() && std::all_of(seen.begin(), seen.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  if (!digits)
    throw InputError(where(file, node, key),
                     "expected a non-negative integer, got '" + seen + "'");
  long long value = 0;
  const auto [end, error] = std::from_chars(seen.data(), seen.data() + seen.size(), value);
  if (error != std::errc() || end != seen.data() + seen.size())
    throw InputError(where(file, node, key),
                     "expected a non-negative integer up to " +
                         std::to_string(std::numeric_limits<long long>::max()) + ", got '" +
                         seen + "'");
  return value;
}

void only_keys(const YAML::Node& map, const std::vector<std::string>& known,
               const std::string& file, const std::string& what) {
  for (const auto& item : map) {
    const std::string key = item.first.IsScalar() ? item.first.Scalar() : "?";
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw InputError(where(file, item.first, key), "unknown key in " + what);
  }
}

}  // namespace pe::yaml_input
