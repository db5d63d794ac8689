// SVG Gantt chart of a timeline.
#include "pe/render.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "pe/error.h"
#include "render/colors.h"
#include "render/svg.h"
#include "report/format.h"

namespace pe {
namespace {

using detail::format::fixed;
using detail::format::stage_label;

constexpr int kTop = 40;     // Title band.
constexpr int kGap = 6;      // Between stage blocks.
constexpr int kBottom = 64;  // Axis and legend.
constexpr int kRight = 16;
constexpr double kCharWidth = 6.6;       // Approximate width of an 11 px character.
constexpr double kTitleCharWidth = 9.0;  // Of a bold 15 px character.
// Most of the width the row labels may take; a longer label is shortened with "...". Wide
// enough at the default width for stage_labels() of a split, recomputed stage
// ("stage 12 (states 100-120, 16 GPUs, 8-way tensor parallel, recomputed)").
constexpr double kMaxLabelShare = 0.45;

struct Layout {
  double left = 0, right = 0;   // Plot area in x.
  double span = 1;              // Seconds shown across the plot area.
  double block = 0;             // Height of one stage's rows.
  std::size_t label_chars = 0;  // Longest label that fits.
  double x(Seconds t) const { return left + (right - left) * t / span; }
};

void check_options(const SvgOptions& options) {
  auto in = [](int value, int low, int high, const char* what) {
    if (value < low || value > high)
      throw UsageError(std::string("SVG ") + what + " must be in [" + std::to_string(low) + ", " +
                       std::to_string(high) + "], got " + std::to_string(value));
  };
  in(options.width, 300, 20000, "width");
  in(options.row_height, 8, 200, "row height");
  in(options.link_row_height, 2, 100, "link row height");
}

Layout make_layout(const Timeline& timeline, const SvgOptions& options) {
  Layout layout;
  std::size_t longest = 0;
  for (int s = 0; s < timeline.stage_count; ++s)
    longest = std::max(longest, stage_label(options.stage_names, s).size());
  const double label_width = std::clamp(12 + kCharWidth * static_cast<double>(longest), 70.0,
                                        kMaxLabelShare * options.width);
  layout.label_chars = static_cast<std::size_t>((label_width - 12) / kCharWidth + 1e-6);
  layout.left = label_width;
  layout.right = options.width - kRight;
  layout.span =
      timeline.makespan > 0 && std::isfinite(timeline.makespan) ? timeline.makespan : 1e-3;
  layout.block = options.row_height + (options.link_rows ? 3 * options.link_row_height : 0) + kGap;
  return layout;
}

// Top of the row that shows `kind` for `stage`; -1 when it is not drawn.
double row_top(const Layout& layout, const SvgOptions& options, int stage, EventKind kind) {
  const double top = kTop + stage * layout.block;
  if (uses_compute(kind)) return top;
  if (!options.link_rows) return -1;
  const int sub = kind == EventKind::SendActivation ? 0 : kind == EventKind::SendGradient ? 1 : 2;
  return top + options.row_height + sub * options.link_row_height;
}

void draw_rows(detail::render::SvgWriter& svg, const Timeline& timeline, const SvgOptions& options,
               const Layout& layout) {
  for (int s = 0; s < timeline.stage_count; ++s) {
    const double top = kTop + s * layout.block;
    svg.rect(layout.left, top, layout.x(timeline.makespan) - layout.left, options.row_height,
             "url(#idle)");
    if (options.link_rows)
      svg.rect(layout.left, top + options.row_height, layout.right - layout.left,
               3 * options.link_row_height, "#f7f7f7");
    svg.text(6, top + options.row_height / 2.0 + 4,
             detail::render::shorten(stage_label(options.stage_names, s), layout.label_chars),
             "font-size=\"11\"");
  }
}

// Whether draw_events draws a box for `e`.
bool drawn(const Event& e, const Timeline& timeline, const SvgOptions& options) {
  return e.stage >= 0 && e.stage < timeline.stage_count && e.duration() > 0 &&
         (uses_compute(e.kind) || options.link_rows);
}

std::string tooltip(const Event& e) {
  std::string what = to_string(e.kind);
  if (e.kind == EventKind::Filler) what += " " + e.label;
  if (e.micro_batch >= 0) what += " micro-batch " + std::to_string(e.micro_batch);
  if (e.chunk > 0) what += " chunk " + std::to_string(e.chunk);
  return "stage " + std::to_string(e.stage) + " " + what + ": " + fixed(e.start * 1e3, 3) + " - " +
         fixed(e.end * 1e3, 3) + " ms";
}

// The text inside a compute or filler box, or "" when it does not fit.
std::string box_text(const Event& e, double width) {
  std::string text = e.kind == EventKind::Filler ? e.label
                     : uses_compute(e.kind)      ? std::to_string(e.micro_batch)
                                                 : std::string();
  return width >= 6 + 6.0 * static_cast<double>(text.size()) ? text : std::string();
}

void draw_events(detail::render::SvgWriter& svg, const Timeline& timeline,
                 const SvgOptions& options, const Layout& layout) {
  for (const Event& e : timeline.events) {
    if (!drawn(e, timeline, options)) continue;
    const double top = row_top(layout, options, e.stage, e.kind);
    const double height = uses_compute(e.kind) ? options.row_height : options.link_row_height;
    const double x = std::clamp(layout.x(e.start), layout.left, layout.right);
    const double width = std::max(std::min(layout.x(e.end), layout.right) - x, 0.5);
    svg.rect(x, top, width, height, detail::render::kind_color(e.kind),
             options.tooltips ? tooltip(e) : "");
    const std::string text = box_text(e, width);
    if (!text.empty())
      svg.text(x + width / 2, top + height / 2 + 3.5, text,
               "font-size=\"10\" fill=\"white\" text-anchor=\"middle\"");
  }
}

void draw_axis(detail::render::SvgWriter& svg, const Timeline& timeline, const Layout& layout) {
  const double axis = kTop + timeline.stage_count * layout.block + 2;
  const double span_ms = layout.span * 1e3;
  const double step = detail::render::nice_step(
      span_ms, std::max(2, static_cast<int>((layout.right - layout.left) / 90)));
  const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step))));
  svg.line(layout.left, axis, layout.right, axis, "#333333");
  for (int k = 0; k * step <= span_ms * (1 + 1e-9); ++k) {
    const double x = layout.x(k * step / 1e3);
    svg.line(x, kTop - 2, x, axis, "#dddddd", 0.5);
    svg.line(x, axis, x, axis + 5, "#333333");
    svg.text(x, axis + 17, fixed(k * step, decimals), "font-size=\"10\" text-anchor=\"middle\"");
  }
  svg.text(layout.right, axis + 31, "time (ms)", "font-size=\"11\" text-anchor=\"end\"");
}

// Whether some stage's compute row shows idle time: a gap before, between or after its boxes.
bool shows_idle(const Timeline& timeline) {
  std::vector<Seconds> busy(static_cast<std::size_t>(timeline.stage_count), 0);
  for (const Event& e : timeline.events)
    if (uses_compute(e.kind) && e.stage >= 0 && e.stage < timeline.stage_count && e.duration() > 0)
      busy[static_cast<std::size_t>(e.stage)] += e.duration();
  return std::any_of(busy.begin(), busy.end(), [&](Seconds b) {
    return b < timeline.makespan * (1 - 1e-9) && timeline.makespan - b > 1e-12;
  });
}

// The legend: the kinds of the boxes drawn, in a fixed order, and idle when a gap shows.
void draw_legend(detail::render::SvgWriter& svg, const Timeline& timeline,
                 const SvgOptions& options, const Layout& layout) {
  const double y = kTop + timeline.stage_count * layout.block + 44;
  double x = layout.left;
  auto item = [&](const char* fill, const std::string& name) {
    svg.rect(x, y, 12, 12, fill);
    svg.text(x + 16, y + 10, name, "font-size=\"11\"");
    x += 16 + kCharWidth * static_cast<double>(name.size()) + 14;
  };
  for (EventKind kind : {EventKind::Forward, EventKind::Backward, EventKind::Filler,
                         EventKind::SendActivation, EventKind::SendGradient, EventKind::AllReduce})
    if (std::any_of(timeline.events.begin(), timeline.events.end(),
                    [&](const Event& e) { return e.kind == kind && drawn(e, timeline, options); }))
      item(detail::render::kind_color(kind), to_string(kind));
  if (shows_idle(timeline)) item("url(#idle)", "idle");
}

constexpr const char* kDefs =
    "<defs><pattern id=\"idle\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\" "
    "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f4f4f4\"/>"
    "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#c9c9c9\" stroke-width=\"2\"/>"
    "</pattern></defs>\n";

}  // namespace

int gantt_svg_height(const Timeline& timeline, const SvgOptions& options) {
  const int block =
      options.row_height + (options.link_rows ? 3 * options.link_row_height : 0) + kGap;
  return kTop + std::max(timeline.stage_count, 0) * block + kBottom;
}

std::string gantt_svg(const Timeline& timeline, const SvgOptions& options) {
  check_options(options);
  if (timeline.stage_count < 0 || timeline.stage_count > 100000)
    throw UsageError("gantt_svg: stage count " + std::to_string(timeline.stage_count) +
                     " out of range");
  const Layout layout = make_layout(timeline, options);
  detail::render::SvgWriter svg(options.width, gantt_svg_height(timeline, options));
  svg.raw(kDefs);
  svg.rect(0, 0, options.width, gantt_svg_height(timeline, options), "white");
  // A bold 15 px character is about 9 px wide; a longer title is shortened with "...".
  const auto title_chars = static_cast<std::size_t>((options.width - 2 * kRight) / kTitleCharWidth);
  svg.text(options.width / 2.0, 24, detail::render::shorten(options.title, title_chars),
           "font-size=\"15\" font-weight=\"bold\" text-anchor=\"middle\"");
  draw_rows(svg, timeline, options, layout);
  draw_events(svg, timeline, options, layout);
  draw_axis(svg, timeline, layout);
  draw_legend(svg, timeline, options, layout);
  return svg.finish();
}

}  // namespace pe
