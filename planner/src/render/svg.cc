#include "render/svg.h"

#include <cmath>

#include "report/format.h"

namespace pe::detail::render {
namespace {

std::string dash_attribute(std::string_view dash) {
  return dash.empty() ? std::string() : " stroke-dasharray=\"" + std::string(dash) + "\"";
}

}  // namespace

std::string pixels(double value) { return format::fixed(std::isfinite(value) ? value : 0, 2); }

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') out += c;
    }
  }
  return out;
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
  out_ =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"" +
      w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h +
      "\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n";
}

void SvgWriter::rect(double x, double y, double width, double height, std::string_view fill,
                     std::string_view tooltip) {
  out_ += "<rect x=\"" + pixels(x) + "\" y=\"" + pixels(y) + "\" width=\"" + pixels(width) +
          "\" height=\"" + pixels(height) + "\" fill=\"";
  out_ += fill;
  if (tooltip.empty()) {
    out_ += "\"/>\n";
    return;
  }
  out_ += "\"><title>" + xml_escape(tooltip) + "</title></rect>\n";
}

void SvgWriter::line(double x1, double y1, double x2, double y2, std::string_view stroke,
                     double stroke_width, std::string_view dash) {
  out_ += "<line x1=\"" + pixels(x1) + "\" y1=\"" + pixels(y1) + "\" x2=\"" + pixels(x2) +
          "\" y2=\"" + pixels(y2) + "\" stroke=\"";
  out_ += stroke;
  out_ += "\" stroke-width=\"" + pixels(stroke_width) + "\"";
  out_ += dash_attribute(dash) + "/>\n";
}

void SvgWriter::text(double x, double y, std::string_view content, std::string_view attributes) {
  out_ += "<text x=\"" + pixels(x) + "\" y=\"" + pixels(y) + "\"";
  if (!attributes.empty()) out_ += " " + std::string(attributes);
  out_ += ">" + xml_escape(content) + "</text>\n";
}

void SvgWriter::circle(double x, double y, double radius, std::string_view fill) {
  out_ += "<circle cx=\"" + pixels(x) + "\" cy=\"" + pixels(y) + "\" r=\"" + pixels(radius) +
          "\" fill=\"";
  out_ += fill;
  out_ += "\" stroke=\"white\" stroke-width=\"1\"/>\n";
}

void SvgWriter::polyline(const std::vector<std::pair<double, double>>& points,
                         std::string_view stroke, double stroke_width, std::string_view dash) {
  out_ += "<polyline fill=\"none\" stroke=\"";
  out_ += stroke;
  out_ += "\" stroke-width=\"" + pixels(stroke_width) + "\"";
  out_ += dash_attribute(dash) + " points=\"";
  for (const auto& [x, y] : points) out_ += pixels(x) + "," + pixels(y) + " ";
  out_ += "\"/>\n";
}

std::string SvgWriter::finish() {
  out_ += "</svg>\n";
  return std::move(out_);
}

}  // namespace pe::detail::render
