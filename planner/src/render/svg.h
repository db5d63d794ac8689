// A small SVG and JSON text writer for the renderers. Coordinates are in pixels.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pe::detail::render {

/// A coordinate or length in pixels: format::fixed with two decimals, 0 when not finite
/// (an SVG attribute must be a number).
std::string pixels(double value);
/// Escapes &, <, >, " and ' for XML text and attributes; drops control characters that
/// XML 1.0 forbids.
std::string xml_escape(std::string_view text);
/// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `target` ticks over
/// `range`; 1 when the range is not positive and finite.
double nice_step(double range, int target);
/// `text` cut to at most `max_chars` characters, with "..." when cut.
std::string shorten(const std::string& text, std::size_t max_chars);

/// Builds an SVG document. Text content and tooltips are escaped; colours and extra
/// attribute strings are trusted (they come from the renderers, never from input).
class SvgWriter {
 public:
  SvgWriter(int width, int height);
  void raw(std::string_view markup) { out_ += markup; }
  void rect(double x, double y, double width, double height, std::string_view fill,
            std::string_view tooltip = {});
  void line(double x1, double y1, double x2, double y2, std::string_view stroke,
            double stroke_width = 1, std::string_view dash = {});
  void text(double x, double y, std::string_view content, std::string_view attributes = {});
  void circle(double x, double y, double radius, std::string_view fill);
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke,
                double stroke_width, std::string_view dash = {});
  /// Closes the document and returns it.
  std::string finish();

 private:
  std::string out_;
};

}  // namespace pe::detail::render
