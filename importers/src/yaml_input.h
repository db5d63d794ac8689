// Helpers for reading YAML input with errors that name file, line and key.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <vector>

#include "pe/error.h"
#include "pe/gpu.h"

namespace pe::detail::yaml_input {

/// The most nodes (keys, values, lists and maps) a YAML input may hold by default. yaml-cpp
/// takes a few hundred bytes a node, so this bounds memory whatever the file's size.
inline constexpr std::size_t kMaxYamlNodes = 1000000;

/// Parses the first document of `text`; a syntax error becomes an InputError at its line,
/// a key repeated in one map an InputError at the repeat ("duplicate key 'K' (first at
/// line N)"). Empty nodes (`- ` or `key:` with nothing after) are marked at their own line.
/// A document of more than `max_nodes` nodes is refused, at the line and key path of the
/// first node past the limit, by a first pass that holds no tree (memory stays near the
/// text's size).
YAML::Node parse(const std::string& text, const std::string& file,
                 std::size_t max_nodes = kMaxYamlNodes);
/// Reads and parses a file; an unreadable file becomes an InputError.
YAML::Node load(const std::string& path);
/// The most bytes an input file may hold (256 MiB): larger inputs, and endless ones such
/// as /dev/zero, are refused rather than read.
inline constexpr std::size_t kMaxInputBytes = std::size_t{256} << 20;

/// Reads a whole file into a string. InputError for an empty path, a directory, a file that
/// cannot be opened or read, or one longer than `max_bytes`.
std::string read_text(const std::string& path, std::size_t max_bytes = kMaxInputBytes);

/// "file:line: key" for a node (line is 1-based; omitted when unknown).
std::string where(const std::string& file, const YAML::Node& node, const std::string& key);

/// The child `key` of a map; throws when missing or null and `required`.
YAML::Node child(const YAML::Node& map, const std::string& key, const std::string& file,
                 bool required);
/// Whether `text` is a number as YAML 1.2's core schema writes one in decimal: an optional
/// sign, digits with an optional fraction (or a fraction alone, `.5`), an optional exponent
/// (`1e3`, `2.5E-4`). Hexadecimal (`0x20`), octal (`0o17`), digit separators (`1_000`),
/// spaces and words are not.
bool decimal_number_text(const std::string& text);
/// A finite number written in decimal (decimal_number_text; whole numbers too); throws
/// naming the key and the value seen: "expected a finite number" for NaN, infinities and
/// values too large for a double, "expected a decimal number" for any other form.
double number(const YAML::Node& node, const std::string& file, const std::string& key);
/// A finite number >= 0 (or > 0 when `strictly_positive`).
double non_negative(const YAML::Node& node, const std::string& file, const std::string& key,
                    bool strictly_positive = false);
/// A non-negative integer that fits in `long long`: decimal digits only (no sign, fraction,
/// exponent, hexadecimal or junk).
long long count(const YAML::Node& node, const std::string& file, const std::string& key);
/// A whole number in [low, high]; anything else (a sign, a fraction, an overflow) throws
/// "expected LOW..HIGH WHAT, got 'TEXT'".
long long count_in(const YAML::Node& node, const std::string& file, const std::string& key,
                   long long low, long long high, const std::string& what);
/// A scalar string.
std::string text(const YAML::Node& node, const std::string& file, const std::string& key);
/// `names` joined by ", ", for the lists of known names in error messages.
std::string comma_list(const std::vector<std::string>& names);
/// Throws on keys of `map` that are not in `known`.
void only_keys(const YAML::Node& map, const std::vector<std::string>& known,
               const std::string& file, const std::string& what);

/// A GPU: a catalogue name (find_gpu) or a map of name, peak_tflops, memory_gb and optionally
/// memory_bandwidth_gbps. Throws InputError at the node for anything else.
GpuSpec read_gpu(const YAML::Node& node, const std::string& file);

}  // namespace pe::detail::yaml_input
