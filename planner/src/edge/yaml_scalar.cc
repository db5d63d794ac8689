#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <string_view>

#include "pe/edge_export.h"

namespace pe {
namespace {

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// Words that YAML 1.1 or 1.2 reads as booleans or null when plain (compared in lower case).
bool is_reserved_word(const std::string& text) {
  static constexpr std::array<std::string_view, 9> kWords = {"y",  "n",    "yes",   "no",  "on",
                                                            "off", "true", "false", "null"};
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return is_letter(c) ? static_cast<char>(c | 0x20) : c; });
  return std::find(kWords.begin(), kWords.end(), lower) != kWords.end();
}

/// Plain scalars we emit: letters, digits, '_', '.', '/', '-', starting with a letter,
/// '_' or '/'. No number, date, boolean or null can be spelled this way but the words
/// checked by is_reserved_word.
bool is_safe_plain(const std::string& text) {
  if (text.empty() || !(is_letter(text[0]) || text[0] == '_' || text[0] == '/')) return false;
  const bool simple = std::all_of(text.begin(), text.end(), [](char c) {
    return is_letter(c) || is_digit(c) || c == '_' || c == '.' || c == '/' || c == '-';
  });
  return simple && !is_reserved_word(text);
}

void append_escaped(std::string& out, char c) {
  switch (c) {
    case '"': out += "\\\""; return;
    case '\\': out += "\\\\"; return;
    case '\n': out += "\\n"; return;
    case '\t': out += "\\t"; return;
    case '\r': out += "\\r"; return;
    default: break;
  }
  const auto byte = static_cast<unsigned char>(c);
  if (byte < 0x20 || byte == 0x7f) {
    std::array<char, 5> hex{};
    std::snprintf(hex.data(), hex.size(), "\\x%02x", byte);
    out += hex.data();
    return;
  }
  out += c;
}

}  // namespace

std::string yaml_scalar(const std::string& text) {
  if (is_safe_plain(text)) return text;
  std::string out = "\"";
  for (char c : text) append_escaped(out, c);
  return out + "\"";
}

}  // namespace pe
