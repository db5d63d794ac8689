#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "pe/error.h"
#include "pe/render.h"
#include "render/png_render.h"
#include "render/xml_check.h"

namespace pe {
namespace {

using testing::check_xml;

std::vector<SpeedupCurve> sample_curves() {
  return {{"pipeline", {{256, 9.8}, {32, 1.9}, {64, 3.5}, {128, 6.1}}},
          {"DP & <overlap>", {{32, 1.2}, {64, 2.1}, {128, 3.9}, {256, 6.0}}},
          {"one point", {{100, 4.0}, {NAN, 1.0}, {50, INFINITY}}}};
}

bool has_text(const testing::XmlSummary& xml, const std::string& text) {
  return std::find(xml.texts.begin(), xml.texts.end(), text) != xml.texts.end();
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

}  // namespace
}  // namespace pe
