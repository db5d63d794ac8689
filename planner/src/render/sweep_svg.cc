// SVG line plot of speedup over global batch size.
#include "pe/render.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "pe/error.h"
#include "render/colors.h"
#include "render/svg.h"

namespace pe {
namespace {

constexpr double kPlotLeft = 64, kPlotRight = 20, kPlotTop = 44, kPlotBottom = 56;

// A data range and its mapping onto pixels.
struct Axis {
  double low = 0, high = 1;  // Data values at the ends (log2 of x when logarithmic).
  double from = 0, to = 1;   // Pixels at the ends.
  bool log = false;
  double map(double value) const {
    const double v = log ? std::log2(value) : value;
    return from + (to - from) * (v - low) / (high - low);
  }
};

std::string number_label(double value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return result.ec == std::errc() ? std::string(buffer, result.ptr) : "?";
}

bool usable(std::pair<double, double> p, bool log_x) {
  return std::isfinite(p.first) && std::isfinite(p.second) && (!log_x || p.first > 0);
}

// The curves' usable points, each curve sorted by x.
std::vector<std::vector<std::pair<double, double>>> usable_points(
    const std::vector<SpeedupCurve>& curves, bool log_x) {
  std::vector<std::vector<std::pair<double, double>>> all;
  for (const SpeedupCurve& curve : curves) {
    std::vector<std::pair<double, double>> points;
    for (const auto& p : curve.points)
      if (usable(p, log_x)) points.push_back(p);
    std::sort(points.begin(), points.end());
    all.push_back(std::move(points));
  }
  return all;
}

Axis x_axis(const std::vector<std::vector<std::pair<double, double>>>& data,
            const PlotOptions& options) {
  double low = INFINITY, high = -INFINITY;
  for (const auto& points : data)
    for (const auto& [x, y] : points) {
      const double v = options.log_x ? std::log2(x) : x;
      low = std::min(low, v);
      high = std::max(high, v);
    }
  Axis axis{0, 1, kPlotLeft, options.width - kPlotRight, options.log_x};
  if (low > high) return axis;
  if (high - low <= 1e-9 * std::max(1.0, std::fabs(high))) {
    // One x value: widen the range around it so the points sit inside the plot.
    const double pad = options.log_x ? 1 : std::fabs(high) > 0 ? std::fabs(high) / 2 : 1;
    low -= pad;
    high += pad;
  }
  if (options.log_x) {
    axis.low = std::floor(low);
    axis.high = std::max(std::ceil(high), axis.low + 1);
    return axis;
  }
  const double step = detail::render::nice_step(high - low, 6);
  axis.low = std::floor(low / step) * step;
  axis.high = std::max(std::ceil(high / step) * step, axis.low + step);
  return axis;
}

Axis y_axis(const std::vector<std::vector<std::pair<double, double>>>& data,
            const PlotOptions& options) {
  double low = 0, high = 0;
  for (const auto& points : data)
    for (const auto& [x, y] : points) {
      low = std::min(low, y);
      high = std::max(high, y);
    }
  const double step = detail::render::nice_step(high - low, 5);
  const double top = std::max(std::ceil(high * 1.02 / step) * step, low + step);
  return {std::floor(low / step) * step, top, options.height - kPlotBottom, kPlotTop, false};
}

// Tick values of an axis, in data units (powers of two when logarithmic).
std::vector<double> ticks(const Axis& axis) {
  std::vector<double> values;
  if (axis.log) {
    const int count = static_cast<int>(axis.high - axis.low) + 1;
    const int stride = std::max(1, (count + 9) / 10);
    for (int k = 0; k < count; k += stride) values.push_back(std::exp2(axis.low + k));
    return values;
  }
  const double step = detail::render::nice_step(axis.high - axis.low, 6);
  for (int k = 0; axis.low + k * step <= axis.high + step * 1e-9; ++k)
    values.push_back(axis.low + k * step);
  return values;
}

void draw_axes(detail::render::SvgWriter& svg, const Axis& x, const Axis& y,
               const PlotOptions& options) {
  svg.line(x.from, y.from, x.to, y.from, "#333333");
  svg.line(x.from, y.from, x.from, y.to, "#333333");
  for (double value : ticks(x)) {
    const double px = x.map(value);
    svg.line(px, y.to, px, y.from, "#e5e5e5", 0.5);
    svg.line(px, y.from, px, y.from + 5, "#333333");
    svg.text(px, y.from + 18, number_label(value), "font-size=\"10\" text-anchor=\"middle\"");
  }
  for (double value : ticks(y)) {
    const double py = y.map(value);
    svg.line(x.from, py, x.to, py, "#e5e5e5", 0.5);
    svg.line(x.from - 5, py, x.from, py, "#333333");
    svg.text(x.from - 8, py + 3.5, number_label(value), "font-size=\"10\" text-anchor=\"end\"");
  }
  svg.text((x.from + x.to) / 2, options.height - 14, options.x_label,
           "font-size=\"12\" text-anchor=\"middle\"");
  const std::string centre = detail::render::pixels((y.from + y.to) / 2);
  svg.text(16, (y.from + y.to) / 2, options.y_label,
           "font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 16 " + centre + ")\"");
}

std::string dash_of(std::size_t curve) { return curve < 10 ? "" : curve < 20 ? "6 3" : "2 2"; }

void draw_curves(detail::render::SvgWriter& svg,
                 const std::vector<std::vector<std::pair<double, double>>>& data, const Axis& x,
                 const Axis& y) {
  for (std::size_t c = 0; c < data.size(); ++c) {
    std::vector<std::pair<double, double>> pixels;
    for (const auto& [vx, vy] : data[c]) pixels.emplace_back(x.map(vx), y.map(vy));
    if (pixels.size() > 1) svg.polyline(pixels, detail::render::series_color(c), 2, dash_of(c));
    for (const auto& [px, py] : pixels) svg.circle(px, py, 3.5, detail::render::series_color(c));
  }
}

// The legend: one row per curve that has a point drawn, in the curves' order and colours.
void draw_legend(detail::render::SvgWriter& svg, const std::vector<SpeedupCurve>& curves,
                 const std::vector<std::vector<std::pair<double, double>>>& data, const Axis& x,
                 const Axis& y) {
  std::vector<std::size_t> shown;
  for (std::size_t c = 0; c < curves.size(); ++c)
    if (!data[c].empty()) shown.push_back(c);
  if (shown.empty()) return;
  std::size_t longest = 0;
  for (std::size_t c : shown) longest = std::max(longest, curves[c].name.size());
  const double width = 40 + 6.6 * static_cast<double>(std::min<std::size_t>(longest, 40));
  const double left = x.from + 10, top = y.to + 8;
  svg.raw("<rect x=\"" + detail::render::pixels(left) + "\" y=\"" + detail::render::pixels(top) +
          "\" width=\"" + detail::render::pixels(width) + "\" height=\"" +
          detail::render::pixels(8 + 16.0 * static_cast<double>(shown.size())) +
          "\" fill=\"white\" fill-opacity=\"0.85\" stroke=\"#cccccc\"/>\n");
  for (std::size_t row_index = 0; row_index < shown.size(); ++row_index) {
    const std::size_t c = shown[row_index];
    const double row = top + 12 + 16.0 * static_cast<double>(row_index);
    svg.line(left + 6, row, left + 26, row, detail::render::series_color(c), 2, dash_of(c));
    svg.circle(left + 16, row, 3.5, detail::render::series_color(c));
    svg.text(left + 32, row + 4, detail::render::shorten(curves[c].name, 40), "font-size=\"11\"");
  }
}

void check_options(const PlotOptions& options) {
  if (options.width < 300 || options.width > 20000 || options.height < 200 ||
      options.height > 20000)
    throw UsageError("plot size must be 300..20000 x 200..20000 pixels, got " +
                     std::to_string(options.width) + " x " + std::to_string(options.height));
}

}  // namespace

std::string sweep_svg(const std::vector<SpeedupCurve>& curves, const PlotOptions& options) {
  check_options(options);
  const auto data = usable_points(curves, options.log_x);
  const Axis x = x_axis(data, options), y = y_axis(data, options);
  detail::render::SvgWriter svg(options.width, options.height);
  svg.rect(0, 0, options.width, options.height, "white");
  // A bold 15 px character is about 9 px wide; a longer title is shortened with "...".
  svg.text(options.width / 2.0, 26,
           detail::render::shorten(options.title, static_cast<std::size_t>(options.width / 9.0)),
           "font-size=\"15\" font-weight=\"bold\" text-anchor=\"middle\"");
  draw_axes(svg, x, y, options);
  const bool empty = std::all_of(data.begin(), data.end(), [](const auto& p) { return p.empty(); });
  if (empty)
    svg.text((x.from + x.to) / 2, (y.from + y.to) / 2, "no data",
             "font-size=\"14\" fill=\"#888888\" text-anchor=\"middle\"");
  draw_curves(svg, data, x, y);
  draw_legend(svg, curves, data, x, y);
  return svg.finish();
}

}  // namespace pe
