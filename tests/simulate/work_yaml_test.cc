#include "pe/importers/work_yaml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pe/error.h"
#include "test_paths.h"

namespace pe {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

const std::string kWork = std::string(PE_TEST_DATA_DIR) + "/work/";

TEST(WorkYaml, ReadsTheExampleFile) {
  const WorkList work = load_work_yaml(kWork + "kfac.yml");
  ASSERT_EQ(work.items.size(), 4u);
  const WorkItem& a = work.items[0];
  EXPECT_EQ(a.name, "curvature-a");
  EXPECT_EQ(a.after, WorkAfter::Forward);
  EXPECT_DOUBLE_EQ(a.duration, 0.8e-3);
  EXPECT_FALSE(a.split_total);
  EXPECT_TRUE(a.stages.empty());  // all stages
  EXPECT_EQ(a.where, kWork + "kfac.yml:4");
  EXPECT_EQ(work.items[1].after, WorkAfter::Backward);
  EXPECT_TRUE(work.items[1].split_total);
  EXPECT_DOUBLE_EQ(work.items[1].duration, 4e-3);
  EXPECT_EQ(work.items[2].after, WorkAfter::Item);
  EXPECT_EQ(work.items[2].after_item, "curvature-g");
  EXPECT_EQ(work.items[2].stages, (std::vector<int>{0, 1}));
  EXPECT_EQ(work.items[3].chunks, 4);
}

// The example file drives a real fill on a 2-stage plan.
TEST(WorkYaml, ExampleFillsAPlan) {
  PipelineShape shape;
  shape.micro_batches = 4;
  shape.stages = {{0.004, 0.008, 0.001, 0.003}, {0.004, 0.008, 0, 0.003}};
  const FillResult r = fill_bubbles(simulate(shape), load_work_yaml(kWork + "kfac.yml"));
  EXPECT_EQ(r.items.size(), 4u);
  EXPECT_EQ(r.items[0].pieces, 2 * 4);  // one per micro-batch on each stage
  EXPECT_EQ(r.items[3].pieces, 2 * 4);  // four chunks on each stage
  EXPECT_TRUE(r.complete);
  EXPECT_GE(r.iterations, 1);
}

TEST(WorkYaml, EmptyListIsNoWork) {
  EXPECT_TRUE(parse_work_yaml("items: []\n", "w.yml").items.empty());
}

TEST(WorkYaml, BadInputNamesFileLineAndKey) {
  struct Case {
    const char* text;
    const char* expect;
  };
  for (const Case& k : std::vector<Case>{
           {"items:\n  - name: a\n", "w.yml:2: duration_ms"},
           {"items:\n  - name: a\n    duration_ms: 1\n    total_ms: 2\n", "w.yml:2: duration_ms"},
           {"items:\n  - name: a\n    duration_ms: -1\n", "w.yml:3: duration_ms"},
           {"items:\n  - name: a\n    total_ms: .inf\n", "w.yml:3: total_ms"},
           {"items:\n  - duration_ms: 1\n", "missing required key 'name'"},
           {"items:\n  - name: forward\n    duration_ms: 1\n", "w.yml:2: name"},
           {"items:\n  - {name: a, duration_ms: 1}\n  - {name: a, duration_ms: 2}\n",
            "w.yml:3: name"},
           {"items:\n  - name: a\n    duration_ms: 1\n    after: nope\n", "w.yml:4: after"},
           {"items:\n  - name: a\n    duration_ms: 1\n    after: a\n", "cycle"},
           {"items:\n  - name: a\n    duration_ms: 1\n    after: forward\n    chunks: 2\n",
            "w.yml:5: chunks"},
           {"items:\n  - name: a\n    duration_ms: 1\n    chunks: 0\n", "w.yml:4: chunks"},
           {"items:\n  - name: a\n    duration_ms: 1\n    chunks: 1.5\n", "w.yml:4: chunks"},
           {"items:\n  - name: a\n    duration_ms: 1\n    stages: [0, 0]\n", "w.yml:4: stages"},
           {"items:\n  - name: a\n    duration_ms: 1\n    stages: [-1]\n", "w.yml:4: stages"},
           {"items:\n  - name: a\n    duration_ms: 1\n    stages: some\n", "w.yml:4: stages"},
           {"items:\n  - name: a\n    duration_ms: 1\n    durations_ms: 1\n",
            "w.yml:4: durations_ms"},
           {"items: {name: a}\n", "w.yml:1: items"},
           {"items:\n  - [a]\n", "w.yml:2: items"},
           {"work: []\n", "w.yml:1: work"},
           {"items: [\n", "w.yml:"},
           {"", "w.yml"},
       }) {
    EXPECT_THAT([&] { parse_work_yaml(k.text, "w.yml"); },
                ThrowsMessage<InputError>(HasSubstr(k.expect)))
        << k.text;
  }
}

TEST(WorkYaml, CycleInAFile) {
  EXPECT_THAT([] { load_work_yaml(kWork + "cycle.yml"); },
              ThrowsMessage<InputError>(HasSubstr("cycle.yml:3: after")));
  EXPECT_THROW(load_work_yaml(kWork + "no-such-file.yml"), InputError);
}

// Items w0 ... w{n-1}, each after the previous one; with `closed`, w0 after the last.
std::string chain_yaml(int n, bool closed) {
  std::string text = "items:\n";
  for (int i = 0; i < n; ++i) {
    text += "  - {name: w" + std::to_string(i) + ", duration_ms: 1";
    if (i > 0 || closed) text += ", after: w" + std::to_string(i > 0 ? i - 1 : n - 1);
    text += "}\n";
  }
  return text;
}

TEST(WorkYaml, ReadsALongChain) {
  const WorkList work = parse_work_yaml(chain_yaml(30000, false), "w.yml");
  ASSERT_EQ(work.items.size(), 30000u);
  EXPECT_EQ(work.items.back().after, WorkAfter::Item);
  EXPECT_EQ(work.items.back().after_item, "w29998");
}

TEST(WorkYaml, ALongCycleIsReportedAtItsFirstItem) {
  EXPECT_THAT([] { parse_work_yaml(chain_yaml(30000, true), "w.yml"); },
              ThrowsMessage<InputError>(
                  HasSubstr("w.yml:2: after: 'after' of item 'w0' leads back to itself")));
  // An item that leads into a cycle is reported too, before the cycle's own items.
  const std::string into = "items:\n  - {name: x, duration_ms: 1, after: w0}\n" +
                           chain_yaml(3, true).substr(std::string("items:\n").size());
  EXPECT_THAT([&] { parse_work_yaml(into, "w.yml"); },
              ThrowsMessage<InputError>(HasSubstr("w.yml:2: after: 'after' of item 'x'")));
}

}  // namespace
}  // namespace pe
