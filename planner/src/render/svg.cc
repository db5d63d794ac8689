#include "render/svg.h"

#include <charconv>
#include <cmath>

namespace pe::detail::render {
namespace {

std::string dash_attribute(std::string_view dash) {
  return dash.empty() ? std::string() : " stroke-dasharray=\"" + std::string(dash) + "\"";
}

}  // namespace

void append_fixed(std::string& out, double value, int decimals) {
  if (!std::isfinite(value)) value = 0;
  if (std::fabs(value) < 0.5 * std::pow(10.0, -decimals)) value = 0;  // no "-0.00"
  char buffer[400];  // the largest double printed in full fits
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed,
                              decimals);
  if (result.ec != std::errc()) {
    out += '0';
    return;
  }
  out.append(buffer, result.ptr);
}

void append_int(std::string& out, long long value) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

std::string fixed(double value, int decimals) {
  std::string out;
  append_fixed(out, value, decimals);
  return out;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r')
          out += c;
    }
  }
  return out;
}

std::string json_string(std::string_view text) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      out += "\\u00";
      out += hex[byte >> 4];
      out += hex[byte & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

double nice_step(double range, int target) {
  if (!std::isfinite(range) || range <= 0 || target < 1) return 1;
  const double raw = range / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double normal = raw / magnitude;
  const double factor = normal < 1.5 ? 1 : normal < 3 ? 2 : normal < 7 ? 5 : 10;
  return factor * magnitude;
}

std::string shorten(const std::string& text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  if (max_chars <= 3) return text.substr(0, max_chars);
  return text.substr(0, max_chars - 3) + "...";
}

SvgWriter::SvgWriter(int width, int height) {
  const std::string w = std::to_string(width), h = std::to_string(height);
  out_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h +
         "\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n";
}

void SvgWriter::rect(double x, double y, double width, double height, std::string_view fill,
                     std::string_view tooltip) {
  out_ += "<rect x=\"" + fixed(x, 2) + "\" y=\"" + fixed(y, 2) + "\" width=\"" +
          fixed(width, 2) + "\" height=\"" + fixed(height, 2) + "\" fill=\"";
  out_ += fill;
  if (tooltip.empty()) {
    out_ += "\"/>\n";
    return;
  }
  out_ += "\"><title>" + xml_escape(tooltip) + "</title></rect>\n";
}

void SvgWriter::line(double x1, double y1, double x2, double y2, std::string_view stroke,
                     double stroke_width, std::string_view dash) {
  out_ += "<line x1=\"" + fixed(x1, 2) + "\" y1=\"" + fixed(y1, 2) + "\" x2=\"" +
          fixed(x2, 2) + "\" y2=\"" + fixed(y2, 2) + "\" stroke=\"";
  out_ += stroke;
  out_ += "\" stroke-width=\"" + fixed(stroke_width, 2) + "\"";
  out_ += dash_attribute(dash) + "/>\n";
}

void SvgWriter::text(double x, double y, std::string_view content, std::string_view attributes) {
  out_ += "<text x=\"" + fixed(x, 2) + "\" y=\"" + fixed(y, 2) + "\"";
  if (!attributes.empty()) out_ += " " + std::string(attributes);
  out_ += ">" + xml_escape(content) + "</text>\n";
}

void SvgWriter::circle(double x, double y, double radius, std::string_view fill) {
  out_ += "<circle cx=\"" + fixed(x, 2) + "\" cy=\"" + fixed(y, 2) + "\" r=\"" +
          fixed(radius, 2) + "\" fill=\"";
  out_ += fill;
  out_ += "\" stroke=\"white\" stroke-width=\"1\"/>\n";
}

void SvgWriter::polyline(const std::vector<std::pair<double, double>>& points,
                         std::string_view stroke, double stroke_width, std::string_view dash) {
  out_ += "<polyline fill=\"none\" stroke=\"";
  out_ += stroke;
  out_ += "\" stroke-width=\"" + fixed(stroke_width, 2) + "\"";
  out_ += dash_attribute(dash) + " points=\"";
  for (const auto& [x, y] : points) out_ += fixed(x, 2) + "," + fixed(y, 2) + " ";
  out_ += "\"/>\n";
}

std::string SvgWriter::finish() {
  out_ += "</svg>\n";
  return std::move(out_);
}

}  // namespace pe::detail::render
