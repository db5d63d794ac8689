#include "report/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace pe::detail::format {

std::string fixed(double value, int digits) {
  if (!std::isfinite(value)) return "-";
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(digits);
  out << value;
  return out.str();
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string right(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string left(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string counted(long long n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::vector<std::string> right_columns(const std::vector<std::vector<std::string>>& rows,
                                       const std::vector<std::size_t>& min_widths) {
  std::vector<std::size_t> widths = min_widths;
  for (const auto& cells : rows)
    for (std::size_t i = 0; i < cells.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], cells[i].size() + 1);
  std::vector<std::string> lines;
  for (const auto& cells : rows) {
    std::string line;
    for (std::size_t i = 0; i < cells.size(); ++i)
      line += right(cells[i], i < widths.size() ? widths[i] : cells[i].size() + 1);
    lines.push_back(line);
  }
  return lines;
}

}  // namespace pe::detail::format
