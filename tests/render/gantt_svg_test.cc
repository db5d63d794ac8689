#include <gtest/gtest.h>

#include <algorithm>

#include "pe/error.h"
#include "pe/render.h"
#include "render/png_render.h"
#include "render/xml_check.h"

namespace pe {
namespace {

using testing::check_xml;
using testing::has_text;

Timeline sample_timeline(int stages) {
  PipelineShape shape;
  shape.micro_batches = 4;
  for (int s = 0; s < stages; ++s) shape.stages.push_back({0.010, 0.020, 0.002, 0.005});
  shape.stages.back().send = 0;
  Timeline t = simulate(shape);
  // The last stage idles until (S-1) * (f + send) >= 12 ms: room for an 11 ms filler.
  t.events.push_back({stages - 1, EventKind::Filler, -1, 0, 0.011, "inv"});
  std::sort(t.events.begin(), t.events.end(), event_less);
  return t;
}

long positive_events(const Timeline& t) {
  return std::count_if(t.events.begin(), t.events.end(),
                       [](const Event& e) { return e.duration() > 0; });
}

// 3 stages with link rows: each block is 24 + 3 * 8 + 6 = 54 px; 40 + 3 * 54 + 64 = 266.
TEST(GanttSvg, IsWellFormedWithTheDocumentedSize) {
  const Timeline t = sample_timeline(3);
  const std::string svg = gantt_svg(t, SvgOptions{});
  const auto xml = check_xml(svg);
  ASSERT_EQ(xml.error, "");
  EXPECT_EQ(xml.root, "svg");
  EXPECT_EQ(xml.root_attributes.at("width"), "1200");
  EXPECT_EQ(xml.root_attributes.at("height"), "266");
  EXPECT_EQ(gantt_svg_height(t, SvgOptions{}), 266);
  EXPECT_EQ(xml.element_counts.at("title"), positive_events(t));  // one tooltip per event
}

TEST(GanttSvg, HasTitleAxisAndLegend) {
  SvgOptions options;
  options.title = "ResNet <50> & friends";
  options.stage_names = {"stage 0 (states 0-20, 8 GPUs)"};
  const auto xml = check_xml(gantt_svg(sample_timeline(2), options));
  ASSERT_EQ(xml.error, "");
  auto has = [&](const std::string& text) {
    return std::find(xml.texts.begin(), xml.texts.end(), text) != xml.texts.end();
  };
  EXPECT_TRUE(has("ResNet <50> & friends"));
  EXPECT_TRUE(has("stage 0 (states 0-20, 8 GPUs)"));
  EXPECT_TRUE(has("stage 1"));
  EXPECT_TRUE(has("time (ms)"));
  EXPECT_TRUE(has("0"));
  for (const char* legend :
       {"forward", "backward", "filler", "send-activation", "send-gradient", "allreduce", "idle"})
    EXPECT_TRUE(has(legend)) << legend;
  EXPECT_TRUE(has("inv"));  // filler label inside its box
}

TEST(GanttSvg, WithoutLinkRowsDrawsComputeOnly) {
  const Timeline t = sample_timeline(2);
  SvgOptions options;
  options.link_rows = false;
  options.width = 600;
  const std::string svg = gantt_svg(t, options);
  const auto xml = check_xml(svg);
  ASSERT_EQ(xml.error, "");
  EXPECT_EQ(xml.root_attributes.at("height"), std::to_string(40 + 2 * (24 + 6) + 64));
  const long compute = std::count_if(t.events.begin(), t.events.end(), [](const Event& e) {
    return uses_compute(e.kind) && e.duration() > 0;
  });
  EXPECT_EQ(xml.element_counts.at("title"), compute);
}

TEST(GanttSvg, RejectsSillyOptions) {
  SvgOptions options;
  options.width = 10;
  EXPECT_THROW(gantt_svg(sample_timeline(1), options), UsageError);
  options.width = 1200;
  options.row_height = 0;
  EXPECT_THROW(gantt_svg(sample_timeline(1), options), UsageError);
}

TEST(GanttSvg, RendersToAPngOfTheSameSize) {
  if (!testing::have_rsvg_convert()) GTEST_SKIP() << "rsvg-convert is not installed";
  const Timeline t = sample_timeline(4);
  SvgOptions options;
  options.width = 900;
  const auto size = testing::render_png(gantt_svg(t, options), "gantt");
  EXPECT_EQ(size.first, 900);
  EXPECT_EQ(size.second, gantt_svg_height(t, options));
}

// The legend lists only what is drawn: one stage without transfers or filler shows forward,
// backward and the all-reduce; without link rows not even that; idle only where a gap shows.
TEST(GanttSvg, LegendListsOnlyWhatIsDrawn) {
  PipelineShape shape;
  shape.micro_batches = 2;
  shape.stages.push_back({0.010, 0.020, 0, 0.005});
  const Timeline one = simulate(shape);
  const auto xml = check_xml(gantt_svg(one, SvgOptions{}));
  ASSERT_EQ(xml.error, "");
  for (const char* drawn : {"forward", "backward", "allreduce", "idle"})
    EXPECT_TRUE(has_text(xml, drawn)) << drawn;
  for (const char* absent : {"filler", "send-activation", "send-gradient"})
    EXPECT_FALSE(has_text(xml, absent)) << absent;
  SvgOptions compute_only;
  compute_only.link_rows = false;
  const auto no_links = check_xml(gantt_svg(one, compute_only));
  ASSERT_EQ(no_links.error, "");
  EXPECT_FALSE(has_text(no_links, "allreduce"));
  // Compute back to back from 0 to the end: no idle time, no "idle" entry.
  Timeline busy;
  busy.stage_count = 1;
  busy.events = {{0, EventKind::Forward, 0, 0, 0.01, ""},
                 {0, EventKind::Backward, 0, 0.01, 0.03, ""}};
  busy.makespan = 0.03;
  const auto full = check_xml(gantt_svg(busy, SvgOptions{}));
  ASSERT_EQ(full.error, "");
  EXPECT_TRUE(has_text(full, "forward"));
  EXPECT_FALSE(has_text(full, "idle"));
}

// A title longer than the chart is wide is shortened with "..." rather than run off it.
TEST(GanttSvg, LongTitleIsShortenedToTheWidth) {
  SvgOptions options;
  options.width = 300;
  options.title = std::string(200, 't');
  const auto xml = check_xml(gantt_svg(sample_timeline(2), options));
  ASSERT_EQ(xml.error, "");
  EXPECT_TRUE(has_text(xml, std::string(26, 't') + "..."))
      << "(300 - 32) px / 9 px = 29 characters";
}

}  // namespace
}  // namespace pe
