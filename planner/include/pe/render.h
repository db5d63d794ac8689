// Renderers of timelines and sweeps: Chrome trace JSON and SVG charts. They return text;
// writing it is the caller's job (see pe/output_file.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "pe/timeline.h"

namespace pe {

/// Names shown in a trace.
struct TraceLabels {
  std::string title;  ///< Stored as trace metadata ("otherData": {"title": ...}).
  /// One name per stage, e.g. "stage 0 (states 0-20, 8 GPUs)". Missing or empty entries
  /// become "stage N".
  std::vector<std::string> stage_names;
};

/// Chrome trace-event JSON ({"traceEvents": [...]}, opens in Perfetto and
/// chrome://tracing). One process per stage (pid = stage), named by `labels`; threads
/// 0 "compute" (forward, backward), 1 "send-forward" (activations), 2 "send-backward"
/// (gradients), 3 "all-reduce", 4 "filler". Every event is a complete ("X") event with
/// ts and dur in microseconds, cat = to_string(kind), name "F<m>", "B<m>", "act <m>",
/// "grad <m>", "all-reduce" or the filler's label, and args {"micro_batch": m} (m = -1 for
/// events not tied to a micro-batch). Events keep the timeline's order.
std::string chrome_trace_json(const Timeline& timeline, const TraceLabels& labels);

/// Layout of a Gantt chart. Height in pixels =
///   40 + stages * (row_height + (link_rows ? 3 * link_row_height : 0) + 6) + 64
/// (title band, one block per stage with a 6 px gap, then axis and legend).
struct SvgOptions {
  int width = 1200;  ///< Pixels, 300..20000.
  /// Shown centred above the chart, shortened with "..." to what fits the width (about
  /// 9 px a character).
  std::string title = "Pipeline timeline";
  /// Row labels; missing or empty -> "stage N". Labels take at most 45 % of the width and
  /// are shortened with "..." beyond it (about 6.6 px a character).
  std::vector<std::string> stage_names;
  bool link_rows = true;    ///< Sub-rows under each stage: activations, gradients, all-reduce.
  int row_height = 24;      ///< Compute row, pixels (8..200).
  int link_row_height = 8;  ///< Each link sub-row, pixels (2..100).
  bool tooltips = true;     ///< A <title> per event (hover text); makes large charts bigger.
};

/// Height in pixels of gantt_svg's chart (the formula of SvgOptions).
int gantt_svg_height(const Timeline& timeline, const SvgOptions& options);

/// An SVG Gantt chart: one row per stage with forward and backward compute in distinct
/// colours and filler work in its own, optional link sub-rows for transfers and the
/// all-reduce, idle time hatched, a time axis in ms with ticks, a legend and a title. The
/// legend lists only what is drawn: the kinds of the boxes shown (no link kinds without
/// `link_rows`), and "idle" when some stage's compute row has a gap.
/// Throws UsageError for options outside their ranges.
std::string gantt_svg(const Timeline& timeline, const SvgOptions& options);

/// One line of a sweep plot: (global batch size, speedup) points.
struct SpeedupCurve {
  std::string name;                               ///< Legend entry.
  std::vector<std::pair<double, double>> points;  ///< (x, y) pairs, any order.
};

/// Layout of a sweep plot.
struct PlotOptions {
  int width = 800;   ///< Pixels, 300..20000.
  int height = 500;  ///< Pixels, 200..20000.
  /// Shown above the plot, shortened with "..." to what fits the width.
  std::string title = "Speedup over one device";
  std::string x_label = "global batch size";  ///< Label of the x axis.
  std::string y_label = "speedup";            ///< Label of the y axis.
  bool log_x = false;  ///< Logarithmic x axis (base 2); points with x <= 0 are then left out.
};

/// An SVG line plot of the curves with markers, axes with ticks and labels, and a legend of
/// the curves that have a point drawn (each keeps the colour of its position in `curves`).
/// Points are drawn in x order; non-finite points are left out. Throws UsageError for
/// sizes outside their ranges.
std::string sweep_svg(const std::vector<SpeedupCurve>& curves, const PlotOptions& options);

}  // namespace pe
