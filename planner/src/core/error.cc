#include "pe/error.h"

namespace pe {

std::string escape_controls(const std::string& text) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte >= 0x20 && byte != 0x7f) || c == '\n' || c == '\t') {
      out += c;
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out;
}

std::string location(const std::string& file, long line) {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line);
}

}  // namespace pe
