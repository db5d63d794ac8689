#include "report/format.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pe::detail::format {

void append_fixed(std::string& out, double value, int digits) {
  if (!std::isfinite(value)) {
    out += '-';
    return;
  }
  if (std::fabs(value) < 0.5 * std::pow(10.0, -digits)) value = 0;  // no "-0.00"
  fmt::format_to(std::back_inserter(out), "{:.{}f}", value, digits);
}

std::string fixed(double value, int digits) {
  std::string out;
  append_fixed(out, value, digits);
  return out;
}

std::string json_number(double value) {
  return std::isfinite(value) ? fmt::format("{:.17g}", value) : "null";
}

std::string right(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string left(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string gigabytes(Bytes bytes) {
  std::ostringstream out;
  out.precision(3);
  out << bytes / kGB << " GB";
  return out.str();
}

std::string counted(long long n, std::string_view noun, std::string_view plural) {
  if (n == 1) return fmt::format("1 {}", noun);
  return plural.empty() ? fmt::format("{} {}s", n, noun) : fmt::format("{} {}", n, plural);
}

std::string stage_label(const std::vector<std::string>& names, int stage) {
  const auto index = static_cast<std::size_t>(stage);
  if (stage >= 0 && index < names.size() && !names[index].empty()) return names[index];
  return "stage " + std::to_string(stage);
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

Bytes peak_memory(const Plan& plan) {
  Bytes peak = 0;
  for (const PlanStage& s : plan.stages) peak = std::max(peak, s.peak_memory());
  return peak;
}

namespace {

using Json = nlohmann::ordered_json;

// Printable ASCII but the quote and backslash: written as it is, quoted.
bool plain(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c >= ' ' && c <= '~' && c != '"' && c != '\\'; });
}

// A JSON string literal; nlohmann::json escapes all but plain text.
void append_string(std::string& out, const std::string& text) {
  if (plain(text)) {
    out += '"';
    out += text;
    out += '"';
    return;
  }
  out += Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

void append_json_line(std::string& out, const Json& value, const JsonStyle& style) {
  if (value.is_object()) {
    out += '{';
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it != value.begin()) out += style.comma;
      append_string(out, it.key());
      out += style.colon;
      append_json_line(out, it.value(), style);
    }
    out += '}';
  } else if (value.is_array()) {
    out += '[';
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it != value.begin()) out += style.comma;
      append_json_line(out, *it, style);
    }
    out += ']';
  } else if (value.is_string()) {
    append_string(out, value.get_ref<const std::string&>());
  } else if (value.is_number_float()) {
    out += style.number(value.get<double>());
  } else if (value.is_number_unsigned()) {
    out += fmt::format_int(value.get<std::uint64_t>()).c_str();
  } else if (value.is_number_integer()) {
    out += fmt::format_int(value.get<std::int64_t>()).c_str();
  } else {
    out += value.dump();  // true, false or null
  }
}

std::string json_line(const Json& value, const JsonStyle& style) {
  std::string out;
  append_json_line(out, value, style);
  return out;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string gap_text(double gap) {
  if (!(gap > 0)) return "exact";
  return "<=" + fixed(std::ceil(gap * 1000 - 1e-9) / 10, 1) + "%";
}

}  // namespace pe::detail::format
