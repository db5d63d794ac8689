#include "pe/edge_export.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <string_view>

namespace pe {
namespace {

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// Words that YAML 1.1 or 1.2 reads as booleans or null when plain (compared in lower case).
bool is_reserved_word(const std::string& text) {
  static constexpr std::array<std::string_view, 9> kWords = {"y",   "n",    "yes",   "no",  "on",
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

void append_hex(std::string& out, const char* format, unsigned value) {
  std::array<char, 12> hex{};
  std::snprintf(hex.data(), hex.size(), format, value);
  out += hex.data();
}

/// Length of the well-formed UTF-8 sequence at the start of `text` (no overlong forms, no
/// surrogates, at most U+10FFFF) and its code point; 0 when the first byte starts none.
std::size_t utf8_sequence(std::string_view text, char32_t& code_point) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(0);
  const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
  if (length == 0 || lead > 0xF4 || text.size() < length) return 0;
  char32_t value = lead & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (byte(k) & 0x3F);
  }
  static constexpr std::array<char32_t, 5> kSmallest = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kSmallest[length] || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF))
    return 0;
  code_point = value;
  return length;
}

/// True for code points a YAML reader may not see raw in a double-quoted scalar, or would
/// take as a line break or drop: C1 controls (NEL among them), NBSP, the line and paragraph
/// separators, the byte order mark and the non-characters U+FFFE, U+FFFF.
bool needs_escape(char32_t c) {
  return (c >= 0x80 && c <= 0xA0) || c == 0x2028 || c == 0x2029 || c == 0xFEFF || c == 0xFFFE ||
         c == 0xFFFF;
}

/// Appends the YAML escape of code point `c`: \L, \P, \xNN or \uNNNN. NEL and NBSP get
/// \x85 and \xa0, not \N and \_, which yaml-cpp reads as single (invalid UTF-8) bytes.
void append_code_point(std::string& out, char32_t c) {
  if (c == 0x2028)
    out += "\\L";
  else if (c == 0x2029)
    out += "\\P";
  else if (c <= 0xFF)
    append_hex(out, "\\x%02x", static_cast<unsigned>(c));
  else
    append_hex(out, "\\u%04x", static_cast<unsigned>(c));
}

void append_ascii(std::string& out, char c) {
  switch (c) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\r':
      out += "\\r";
      return;
    default:
      break;
  }
  const auto byte = static_cast<unsigned char>(c);
  if (byte < 0x20 || byte == 0x7f)
    append_hex(out, "\\x%02x", byte);
  else
    out += c;
}

/// Appends the character at the start of `rest` escaped; returns the bytes it used. A byte
/// that starts no well-formed UTF-8 sequence is written as \xNN (U+00NN to a reader: what
/// yaml-cpp's \N and \_ escapes meant before it left them as single bytes), so the output
/// is valid UTF-8.
std::size_t append_escaped(std::string& out, std::string_view rest) {
  const auto lead = static_cast<unsigned char>(rest[0]);
  if (lead < 0x80) {
    append_ascii(out, rest[0]);
    return 1;
  }
  char32_t code_point = 0;
  const std::size_t length = utf8_sequence(rest, code_point);
  if (length == 0) {
    append_code_point(out, lead);
    return 1;
  }
  if (needs_escape(code_point))
    append_code_point(out, code_point);
  else
    out += rest.substr(0, length);
  return length;
}

}  // namespace

std::string yaml_scalar(const std::string& text) {
  if (is_safe_plain(text)) return text;
  std::string out = "\"";
  const std::string_view view(text);
  for (std::size_t at = 0; at < view.size();) at += append_escaped(out, view.substr(at));
  return out + "\"";
}

}  // namespace pe
