#include "pipedream_graph_text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string_view>
#include <unordered_set>

#include "pe/error.h"

namespace pe::detail::pipedream {
namespace {

constexpr std::string_view kSeparator = " -- ";
constexpr std::array<std::string_view, 4> kMetadataKeys = {
    "forward_compute_time", "backward_compute_time", "activation_size", "parameter_size"};
constexpr double kMillisecond = 1e-3;

// Position of one line, for error messages.
struct Where {
  const std::string& file;
  long line;
  std::string at(std::string_view key = {}) const {
    return location(file, line) + (key.empty() ? "" : ": " + std::string(key));
  }
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// `'value'`, shortened so that a runaway line does not flood the message.
std::string quoted(std::string_view value) {
  constexpr std::size_t kMax = 80;
  if (value.size() > kMax) return "'" + std::string(value.substr(0, kMax)) + "...'";
  return "'" + std::string(value) + "'";
}

std::vector<std::string_view> split(std::string_view s, std::string_view separator) {
  std::vector<std::string_view> parts;
  for (std::size_t at = s.find(separator); at != std::string_view::npos; at = s.find(separator)) {
    parts.push_back(s.substr(0, at));
    s.remove_prefix(at + separator.size());
  }
  parts.push_back(s);
  return parts;
}

double parse_number(std::string_view text, const Where& where, std::string_view key) {
  const std::string_view value = trim(text);
  double number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  const bool whole = error == std::errc() && end == value.data() + value.size();
  if (!whole || !std::isfinite(number) || number < 0 || value.front() == '-')
    throw InputError(where.at(key), "expected a finite non-negative number, got " + quoted(value));
  return number;
}

// A number, or a list `[a; b; ...]` whose items are summed.
double parse_activation(std::string_view text, const Where& where, std::string_view key) {
  const std::string_view value = trim(text);
  if (value.empty() || value.front() != '[') return parse_number(value, where, key);
  if (value.size() < 3 || value.back() != ']')
    throw InputError(where.at(key),
                     "expected a number or a list '[a; b; ...]', got " + quoted(value));
  double sum = 0;
  for (std::string_view item : split(value.substr(1, value.size() - 2), ";"))
    sum += parse_number(item, where, key);
  return sum;
}

std::size_t metadata_index(std::string_view key, const Where& where) {
  for (std::size_t i = 0; i < kMetadataKeys.size(); ++i)
    if (kMetadataKeys[i] == key) return i;
  throw InputError(where.at(key), "unknown metadata key " + quoted(key) +
                                      ", expected forward_compute_time, backward_compute_time, "
                                      "activation_size and parameter_size");
}

void parse_metadata(std::string_view token, const Where& where, NodeLine& node) {
  std::array<bool, kMetadataKeys.size()> seen{};
  for (std::string_view item : split(token, ", ")) {
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos)
      throw InputError(where.at(), "expected 'key=value' in the metadata, got " + quoted(item));
    const std::string_view key = trim(item.substr(0, equals));
    const std::string_view value = item.substr(equals + 1);
    const std::size_t index = metadata_index(key, where);
    if (seen[index]) throw InputError(where.at(key), "metadata key given twice");
    seen[index] = true;
    if (index == 0) node.forward = parse_number(value, where, key) * kMillisecond;
    if (index == 1) node.backward = parse_number(value, where, key) * kMillisecond;
    if (index == 2) node.activation = parse_activation(value, where, key);
    if (index == 3) node.parameters = parse_number(value, where, key);
  }
  for (std::size_t i = 0; i < kMetadataKeys.size(); ++i)
    if (!seen[i])
      throw InputError(where.at(kMetadataKeys[i]),
                       "missing metadata key " + quoted(kMetadataKeys[i]));
}

void check_stage_id(std::string_view token, const Where& where) {
  constexpr std::string_view kPrefix = "stage_id=";
  const std::string_view field = trim(token);
  const std::string_view value =
      field.starts_with(kPrefix) ? field.substr(kPrefix.size()) : std::string_view();
  const bool digits =
      !value.empty() && value.size() <= 9 &&
      std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits)
    throw InputError(where.at("stage_id"),
                     "expected 'stage_id=K' with K a non-negative integer, got " + quoted(field));
}

NodeLine parse_node(std::string_view line, const Where& where) {
  const std::vector<std::string_view> tokens = split(line, kSeparator);
  if (tokens.size() != 3 && tokens.size() != 4)
    throw InputError(where.at(),
                     "expected 'ID -- DESCRIPTION -- METADATA[ -- stage_id=K]' "
                     "(3 or 4 fields separated by ' -- '), got " +
                         std::to_string(tokens.size()) + " fields");
  NodeLine node;
  node.id = std::string(trim(tokens[0]));
  node.description = std::string(trim(tokens[1]));
  node.line = where.line;
  if (node.id.empty()) throw InputError(where.at(), "empty node id");
  parse_metadata(tokens[2], where, node);
  if (tokens.size() == 4) check_stage_id(tokens[3], where);
  return node;
}

// An edge's ids as views into the text: repeated edge lines are told apart without
// storing a copy of each.
struct EdgeIds {
  std::string_view source;
  std::string_view target;
  bool operator==(const EdgeIds&) const = default;
};

struct EdgeIdsHash {
  std::size_t operator()(const EdgeIds& e) const {
    const std::hash<std::string_view> hash;
    return hash(e.source) * 31 + hash(e.target);
  }
};

EdgeIds parse_edge(std::string_view line, const Where& where) {
  const std::vector<std::string_view> tokens = split(trim(line), kSeparator);
  const EdgeIds edge{trim(tokens[0]), tokens.size() == 2 ? trim(tokens[1]) : std::string_view()};
  if (tokens.size() != 2 || edge.source.empty() || edge.target.empty())
    throw InputError(where.at(),
                     "expected an edge 'SRC_ID -- DST_ID' (an indented line), got " +
                         quoted(trim(line)) +
                         (tokens.size() >= 3 ? "; a node line must not be indented" : ""));
  return edge;
}

// The text after a UTF-8 byte order mark, which some editors write at the start.
std::string_view without_bom(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.starts_with(kBom)) text.remove_prefix(kBom.size());
  return text;
}

}  // namespace

GraphText read_graph_text(const std::string& text, const std::string& file) {
  GraphText graph;
  std::unordered_set<EdgeIds, EdgeIdsHash> seen_edges;
  long number = 0;
  for (std::string_view rest = without_bom(text); !rest.empty();) {
    const std::size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    const Where where{file, ++number};
    if (trim(line).empty()) continue;
    if (!is_space(line.front())) {
      graph.nodes.push_back(parse_node(trim(line), where));
    } else if (const EdgeIds ids = parse_edge(line, where); seen_edges.insert(ids).second) {
      graph.edges.push_back({std::string(ids.source), std::string(ids.target), number});
    }
  }
  return graph;
}

}  // namespace pe::detail::pipedream
