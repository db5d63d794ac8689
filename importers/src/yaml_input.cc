#include "yaml_input.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>
#include <vector>

namespace pe::detail::yaml_input {

namespace {

constexpr std::size_t kBlock = std::size_t{1} << 20;  // read_blocks' blocks after the first

InputError too_large(const std::string& path, std::size_t max_bytes) {
  return InputError(path, "more than " + std::to_string(max_bytes >> 20) +
                              " MiB, expected an input file of at most that size");
}

// The file's bytes in blocks, joined once at the end: the first of `first` bytes, the others of
// 1 MiB. Growing one string by doubling copied the text again at each doubling and held up to
// three times its size (refusing /dev/zero took 2.2 s and 530 MB); in blocks each byte is
// copied once more at most, and an endless input holds the limit's bytes when it is refused.
std::string read_blocks(std::ifstream& in, const std::string& path, std::size_t max_bytes,
                        std::size_t first) {
  std::vector<std::string> blocks;
  std::size_t total = 0;
  for (std::size_t size = first; in; size = kBlock) {
    std::string& block = blocks.emplace_back(size, '\0');
    in.read(block.data(), static_cast<std::streamsize>(size));
    block.resize(static_cast<std::size_t>(in.gcount()));
    total += block.size();
    if (total > max_bytes) throw too_large(path, max_bytes);
  }
  if (blocks.size() == 1) return std::move(blocks.front());
  std::string text;
  text.reserve(total);
  for (const std::string& block : blocks) text += block;
  return text;
}

}  // namespace

std::string read_text(const std::string& path, std::size_t max_bytes) {
  if (path.empty()) throw InputError("", "empty file name, expected the path of a file");
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw InputError(path, "is a directory, expected a YAML file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open file");
  // A regular file past the limit is refused by its size; one within it is read in one block
  // of its size and one byte more (which shows a file that grew since), anything else (a
  // pipe, a device) in blocks of 1 MiB.
  std::size_t first = kBlock;
  if (std::filesystem::is_regular_file(path, ignored)) {
    const std::uintmax_t size = std::filesystem::file_size(path, ignored);
    if (!ignored && size > max_bytes) throw too_large(path, max_bytes);
    if (!ignored) first = static_cast<std::size_t>(size) + 1;
  }
  std::string text = read_blocks(in, path, max_bytes, first);
  if (in.bad()) throw InputError(path, "cannot read file");
  return text;
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

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The number of digits from `at` on, moving `at` past them.
std::size_t digits(const std::string& text, std::size_t& at) {
  const std::size_t from = at;
  while (at < text.size() && is_digit(text[at])) ++at;
  return at - from;
}

// Whether the text names a NaN or an infinity (.nan, .inf, -.Inf, nan, infinity, ...).
bool names_nan_or_infinity(const std::string& seen) {
  std::string lowered = seen;
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lowered.find("nan") != std::string::npos || lowered.find("inf") != std::string::npos;
}

}  // namespace

bool decimal_number_text(const std::string& text) {
  std::size_t at = 0;
  if (at < text.size() && (text[at] == '+' || text[at] == '-')) ++at;
  std::size_t mantissa = digits(text, at);
  if (at < text.size() && text[at] == '.') mantissa += digits(text, ++at);
  if (mantissa == 0) return false;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) ++at;
    if (digits(text, at) == 0) return false;
  }
  return at == text.size();
}

double number(const YAML::Node& node, const std::string& file, const std::string& key) {
  const std::string seen = text(node, file, key);
  if (names_nan_or_infinity(seen))
    throw InputError(where(file, node, key), "expected a finite number, got '" + seen + "'");
  if (!decimal_number_text(seen))
    throw InputError(where(file, node, key),
                     "expected a decimal number (digits with an optional sign, fraction and "
                     "exponent, e.g. 25, 0.5 or 1e-3), got '" +
                         seen + "'");
  // Values below the smallest subnormal read as 0; values too large for a double are refused.
  const double value = std::strtod(seen.c_str(), nullptr);
  if (!std::isfinite(value))
    throw InputError(where(file, node, key), "expected a finite number, got '" + seen + "'");
  return value;
}

// A note for a text with a non-zero digit before its exponent whose double is 0, else "".
std::string underflow_note(const std::string& seen) {
  const std::string mantissa = seen.substr(0, seen.find_first_of("eE"));
  if (mantissa.find_first_of("123456789") == std::string::npos) return "";
  return " (below the smallest double, 4.9e-324, it reads as 0)";
}

double non_negative(const YAML::Node& node, const std::string& file, const std::string& key,
                    bool strictly_positive) {
  double value = number(node, file, key);
  if (value < 0 || (strictly_positive && value == 0))
    throw InputError(where(file, node, key),
                     std::string("expected a ") +
                         (strictly_positive ? "positive" : "non-negative") + " number, got '" +
                         node.Scalar() + "'" +
                         (value == 0 && strictly_positive ? underflow_note(node.Scalar()) : ""));
  return value;
}

long long count(const YAML::Node& node, const std::string& file, const std::string& key) {
  const std::string seen = text(node, file, key);
  const bool digits = !seen.empty() && std::all_of(seen.begin(), seen.end(),
                                                   [](char c) { return c >= '0' && c <= '9'; });
  if (!digits)
    throw InputError(where(file, node, key), "expected a non-negative integer, got '" + seen + "'");
  long long value = 0;
  const auto [end, error] = std::from_chars(seen.data(), seen.data() + seen.size(), value);
  if (error != std::errc() || end != seen.data() + seen.size())
    throw InputError(where(file, node, key),
                     "expected a non-negative integer up to " +
                         std::to_string(std::numeric_limits<long long>::max()) + ", got '" + seen +
                         "'");
  return value;
}

long long count_in(const YAML::Node& node, const std::string& file, const std::string& key,
                   long long low, long long high, const std::string& what) {
  const std::string seen = text(node, file, key);
  long long value = 0;
  const bool digits = !seen.empty() && std::all_of(seen.begin(), seen.end(),
                                                   [](char c) { return c >= '0' && c <= '9'; });
  const auto [end, error] = std::from_chars(seen.data(), seen.data() + seen.size(), value);
  if (!digits || error != std::errc() || value < low || value > high)
    throw InputError(where(file, node, key), "expected " + std::to_string(low) + ".." +
                                                 std::to_string(high) + " " + what + ", got '" +
                                                 seen + "'");
  return value;
}

std::string comma_list(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  return list;
}

void only_keys(const YAML::Node& map, const std::vector<std::string>& known,
               const std::string& file, const std::string& what) {
  for (const auto& item : map) {
    const std::string key = item.first.IsScalar() ? item.first.Scalar() : "?";
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw InputError(where(file, item.first, key), "unknown key in " + what);
  }
}

GpuSpec read_gpu(const YAML::Node& node, const std::string& file) {
  if (node.IsScalar()) return find_gpu(text(node, file, "gpu"), where(file, node, "gpu"));
  if (!node.IsMap())
    throw InputError(where(file, node, "gpu"), "expected a catalogue name or a map");
  only_keys(node, {"name", "peak_tflops", "memory_gb", "memory_bandwidth_gbps"}, file, "gpu");
  GpuSpec gpu;
  gpu.name = text(child(node, "name", file, true), file, "gpu.name");
  gpu.peak_flops =
      non_negative(child(node, "peak_tflops", file, true), file, "gpu.peak_tflops", true) * 1e12;
  gpu.memory =
      non_negative(child(node, "memory_gb", file, true), file, "gpu.memory_gb", true) * kGB;
  if (const YAML::Node bw = child(node, "memory_bandwidth_gbps", file, false))
    gpu.memory_bandwidth = non_negative(bw, file, "gpu.memory_bandwidth_gbps", true) * kGB;
  gpu.source = "given in " + file;
  return gpu;
}

}  // namespace pe::detail::yaml_input
