#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>

#include "pe/error.h"
#include "pe/render.h"
#include "render/png_render.h"
#include "render/xml_check.h"

namespace pe {
namespace {

using testing::check_xml;
using ::testing::Each;
using testing::has_text;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<SpeedupCurve> sample_curves() {
  return {{"pipeline", {{256, 9.8}, {32, 1.9}, {64, 3.5}, {128, 6.1}}},
          {"DP & <overlap>", {{32, 1.2}, {64, 2.1}, {128, 3.9}, {256, 6.0}}},
          {"one point", {{100, 4.0}, {NAN, 1.0}, {50, INFINITY}}}};
}

TEST(SweepSvg, IsWellFormedWithLinesMarkersAndLegend) {
  const auto xml = check_xml(sweep_svg(sample_curves(), PlotOptions{}));
  ASSERT_EQ(xml.error, "");
  EXPECT_EQ(xml.root_attributes.at("width"), "800");
  EXPECT_EQ(xml.root_attributes.at("height"), "500");
  // Lines only for curves with two or more usable points.
  EXPECT_EQ(xml.element_counts.at("polyline"), 2);
  // Markers: 4 + 4 + 1 usable points, plus one per legend entry.
  EXPECT_EQ(xml.element_counts.at("circle"), 9 + 3);
  for (const char* text : {"pipeline", "DP & <overlap>", "one point", "speedup",
                           "global batch size", "Speedup over one device"})
    EXPECT_TRUE(has_text(xml, text)) << text;
}

TEST(SweepSvg, LogAxisTicksArePowersOfTwo) {
  PlotOptions options;
  options.log_x = true;
  auto curves = sample_curves();
  curves[0].points.push_back({0, 5});  // not drawable on a log axis
  const auto xml = check_xml(sweep_svg(curves, options));
  ASSERT_EQ(xml.error, "");
  for (const char* tick : {"32", "64", "128", "256"}) EXPECT_TRUE(has_text(xml, tick)) << tick;
  EXPECT_EQ(xml.element_counts.at("circle"), 9 + 3);
}

// Every match of the pattern's first group in `svg`.
std::vector<std::string> captures(const std::string& svg, const std::string& pattern) {
  std::vector<std::string> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1].str());
  return out;
}

// One batch size: the markers sit strictly inside the plot area (not on the y axis) and
// the x ticks are distinct whole numbers around it, for a linear and a log axis.
void expect_single_batch_size_inside(bool log_x) {
  PlotOptions options;
  options.log_x = log_x;
  const std::string svg = sweep_svg({{"hybrid", {{512, 10.8}}}, {"DP", {{512, 4.7}}}}, options);
  ASSERT_EQ(check_xml(svg).error, "");
  const auto cx = captures(svg, "<circle cx=\"([^\"]+)\"");
  const auto cy = captures(svg, "<circle cx=\"[^\"]+\" cy=\"([^\"]+)\"");
  ASSERT_EQ(cx.size(), 2u + 2u);  // two markers and two legend entries
  for (std::size_t k = 0; k < cx.size(); ++k) {
    EXPECT_GT(std::stod(cx[k]), 64 + 1) << cx[k];
    EXPECT_LT(std::stod(cx[k]), options.width - 20 - 1) << cx[k];
    EXPECT_GT(std::stod(cy[k]), 44 + 1) << cy[k];
    EXPECT_LT(std::stod(cy[k]), options.height - 56 - 1) << cy[k];
  }
  const auto x_ticks = captures(svg, "font-size=\"10\" text-anchor=\"middle\">([^<]*)</text>");
  EXPECT_GE(x_ticks.size(), 3u);
  EXPECT_EQ(std::set<std::string>(x_ticks.begin(), x_ticks.end()).size(), x_ticks.size());
  EXPECT_THAT(x_ticks, Each(Not(HasSubstr("."))));
  EXPECT_LT(std::stod(x_ticks.front()), 512);
  EXPECT_GT(std::stod(x_ticks.back()), 512);
  const auto y_ticks = captures(svg, "font-size=\"10\" text-anchor=\"end\">([^<]*)</text>");
  EXPECT_EQ(std::set<std::string>(y_ticks.begin(), y_ticks.end()).size(), y_ticks.size());
}

TEST(SweepSvg, OneBatchSizeIsInsideThePlot) {
  expect_single_batch_size_inside(false);
  expect_single_batch_size_inside(true);
}

TEST(SweepSvg, NoDataStillDrawsAxes) {
  const auto xml = check_xml(sweep_svg({}, PlotOptions{}));
  ASSERT_EQ(xml.error, "");
  EXPECT_TRUE(has_text(xml, "no data"));
  EXPECT_EQ(xml.element_counts.count("polyline"), 0u);
}

TEST(SweepSvg, RejectsSillySizes) {
  PlotOptions options;
  options.height = 50;
  EXPECT_THROW(sweep_svg(sample_curves(), options), UsageError);
}

TEST(SweepSvg, RendersToAPngOfTheSameSize) {
  if (!testing::have_rsvg_convert()) GTEST_SKIP() << "rsvg-convert is not installed";
  PlotOptions options;
  options.width = 640;
  options.height = 360;
  const auto size = testing::render_png(sweep_svg(sample_curves(), options), "sweep");
  EXPECT_EQ(size.first, 640);
  EXPECT_EQ(size.second, 360);
}

// The legend lists only the curves that have a point drawn (a DP curve is empty where data
// parallelism does not fit); colours stay those of the curves' positions.
TEST(SweepSvg, LegendListsOnlyCurvesWithPointsDrawn) {
  std::vector<SpeedupCurve> curves = sample_curves();
  curves.insert(curves.begin() + 1, SpeedupCurve{"DP (never fits)", {}});
  curves.push_back({"only NaN", {{64, NAN}}});
  const auto xml = check_xml(sweep_svg(curves, PlotOptions{}));
  ASSERT_EQ(xml.error, "");
  EXPECT_FALSE(has_text(xml, "DP (never fits)"));
  EXPECT_FALSE(has_text(xml, "only NaN"));
  for (const char* name : {"pipeline", "DP & <overlap>", "one point"})
    EXPECT_TRUE(has_text(xml, name)) << name;
  EXPECT_EQ(xml.element_counts.at("circle"), 9 + 3);  // markers + three legend rows
  // Nothing drawn, no legend.
  const auto empty = check_xml(sweep_svg({{"DP", {}}}, PlotOptions{}));
  ASSERT_EQ(empty.error, "");
  EXPECT_TRUE(has_text(empty, "no data"));
  EXPECT_FALSE(has_text(empty, "DP"));
}

// A title longer than the plot is wide is shortened with "..." rather than run off it.
TEST(SweepSvg, LongTitleIsShortenedToTheWidth) {
  PlotOptions options;
  options.width = 400;
  options.title = std::string(100, 'x');
  const auto xml = check_xml(sweep_svg(sample_curves(), options));
  ASSERT_EQ(xml.error, "");
  EXPECT_TRUE(has_text(xml, std::string(41, 'x') + "...")) << "400 px / 9 px = 44 characters";
}

}  // namespace
}  // namespace pe
