// pe-plan's exports for other tools: --export-sched (PipeEdge schedules, only of plans its
// runtime can run), --straight and the search limits behind it, and --export-graph
// (graph.txt with PipeDream's stage_id).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/program.h"
#include "cli/scratch.h"
#include "file_text.h"
#include "test_paths.h"

namespace pe::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// --devices for `count` single-GPU machines: "1,2,...,count".
std::string single_gpu_machines(int count) {
  std::string ends;
  for (int i = 1; i <= count; ++i) ends += (i > 1 ? "," : "") + std::to_string(i);
  return ends;
}

std::string host_list(std::size_t count) {
  std::string hosts;
  for (std::size_t i = 0; i < count; ++i) hosts += (i ? ",h" : "h") + std::to_string(i);
  return hosts;
}

using Export = ScratchTest;

// VGG-19's best plan at GBS 512 on 16 machines has a stage on 15 GPUs: PipeEdge's runtime
// would chain 15 copies of it, so the export is refused before anything is written.
TEST_F(Export, APlanPipeEdgeCannotRunIsRefusedBeforeAnyFileIsWritten) {
  const ProgramResult r =
      pe_plan({"--profile", "vgg19", "--gbs", "512", "--devices", single_gpu_machines(16),
               "--export-sched", path("s.yml"), "--hosts", host_list(16), "--trace", path("t.json"),
               "--plot", path("p.svg")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_THAT(r.err,
              AllOf(HasSubstr("--export-sched: PipeEdge's runtime runs one host per stage "
                              "and one pipeline copy, so it cannot run the plan for GBS "
                              "512 (0-20:15;21-24:1, 1 pipeline copy)"),
                    HasSubstr("stage 0 is replicated on 15 devices"), HasSubstr("--straight")));
  EXPECT_FALSE(fs::exists(path("s.yml")));
  EXPECT_FALSE(fs::exists(path("t.json")));
  EXPECT_FALSE(fs::exists(path("p.svg")));
}

TEST_F(Export, AGivenPlanWithSeveralCopiesIsRefusedNamingThem) {
  const ProgramResult r =
      pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8", "--devices", "2", "--plan", "0-2:1",
               "--plan-copies", "2", "--export-sched", path("s.yml"), "--hosts", "a,b"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, AllOf(HasSubstr("cannot run the --plan plan (0-2:1, --plan-copies 2)"),
                           HasSubstr("the plan has 2 pipeline copies")));
  EXPECT_FALSE(fs::exists(path("s.yml")));
}

// --straight: the best plan PipeEdge can run, one device per stage, one copy; the YAML
// names the device and stage of each host in comments that YAML readers skip.
TEST_F(Export, StraightPlansExportWithOneHostPerStage) {
  const std::vector<std::string> common{
      "--profile", "vgg19", "--gbs", "512", "--devices", single_gpu_machines(8), "--straight"};
  std::vector<std::string> json_args = common;
  json_args.insert(json_args.end(), {"--format", "json"});
  const ProgramResult planned = pe_plan(json_args);
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  const nlohmann::json report = nlohmann::json::parse(planned.out);
  EXPECT_EQ(report["context"]["max_stage_width"], 1);
  EXPECT_EQ(report["context"]["max_pipeline_copies"], 1);
  const nlohmann::json& plan = report["points"][0]["plans"][0];
  EXPECT_EQ(plan["pipeline_replicas"], 1);
  const std::size_t stages = plan["stages"].size();
  ASSERT_GT(stages, 1u);
  for (const nlohmann::json& stage : plan["stages"]) EXPECT_EQ(stage["width"], 1);

  std::vector<std::string> export_args = common;
  export_args.insert(export_args.end(),
                     {"--export-sched", path("s.yml"), "--hosts", host_list(stages)});
  const ProgramResult r = pe_plan(export_args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("PipeEdge partition (-pt): 1,"));
  const std::string yaml = file_text(path("s.yml"));
  EXPECT_THAT(yaml, HasSubstr("# h0: device 0, stage 0, states 0-"));
  EXPECT_THAT(yaml, HasSubstr("# h1: device 1, stage 1, states "));
  const YAML::Node list = YAML::Load(yaml);
  ASSERT_EQ(list.size(), stages);
  std::size_t next_layer = 1;
  for (std::size_t s = 0; s < stages; ++s) {
    const YAML::Node range = list[s]["h" + std::to_string(s)];
    ASSERT_TRUE(range.IsSequence()) << s;
    EXPECT_EQ(range[0].as<std::size_t>(), next_layer);
    EXPECT_EQ(range[0].as<std::size_t>(), plan["stages"][s]["first_state"].get<std::size_t>() + 1);
    next_layer = range[1].as<std::size_t>() + 1;
  }
  EXPECT_EQ(next_layer, 26u);  // VGG-19's 25 states, all covered
}

TEST(SearchLimitFlags, AreCheckedAndStraightMeansBothOne) {
  const ProgramResult both = pe_plan(
      {"--profile", kChain, "--pbs", "8", "--gbs", "8", "--straight", "--max-stage-width", "2"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("--straight means --max-stage-width 1 --max-copies 1, but "
                                  "--max-stage-width is 2"));
  const ProgramResult negative = pe_plan({"--max-copies", "-1"});
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_THAT(negative.err,
              HasSubstr("--max-copies: expected a whole number from 0 (no limit) to 1000000, "
                        "got '-1'"));
  // Limits in the table: 4 devices, stages of one device, one copy.
  const ProgramResult limited =
      pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8", "--devices", "4",
               "--max-stage-width", "1", "--max-copies", "1", "--format", "csv"});
  ASSERT_EQ(limited.exit_code, 0) << limited.err;
  EXPECT_THAT(limited.out, Not(HasSubstr(":2"))) << limited.out;
  EXPECT_THAT(limited.out, HasSubstr(":1,"));
}

// --export-graph DIR: DIR/graph.txt with each node's stage_id, importing back unchanged.
TEST_F(Export, GraphExportSetsStageIdsAndImportsUnchanged) {
  const ProgramResult r = pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8", "--devices",
                                   "2", "--plan", "0-1:1;2-2:1", "--export-graph", path("staged")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string graph = file_text(path("staged/graph.txt"));
  EXPECT_THAT(graph, HasSubstr("node1 -- Input0 -- forward_compute_time=0.000, "
                               "backward_compute_time=0.000, activation_size=100.0, "
                               "parameter_size=0.000 -- stage_id=0\n"));
  EXPECT_THAT(graph, HasSubstr("node3 -- ReLU -- forward_compute_time=0.5, "
                               "backward_compute_time=0.25, activation_size=1000, "
                               "parameter_size=0 -- stage_id=0\n"));
  EXPECT_THAT(graph, HasSubstr("parameter_size=400 -- stage_id=1\n"));
  const ProgramResult before =
      pe_plan({"--profile", kChain, "--pbs", "8", "--states", "--format", "csv"});
  const ProgramResult after =
      pe_plan({"--profile", path("staged/graph.txt"), "--pbs", "8", "--states", "--format", "csv"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
  // The best plan of --plan-gbs when no --plan is given; an existing directory is reused.
  const ProgramResult best = pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8,16",
                                      "--plan-gbs", "8", "--export-graph", path("staged")});
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_THAT(file_text(path("staged/graph.txt")), HasSubstr("stage_id=0\n"));
}

TEST_F(Export, GraphExportPathsAreCheckedBeforePlanning) {
  fs::create_directories(path("model"));
  fs::copy_file(kChain, path("model/graph.txt"));
  const std::string original = file_text(path("model/graph.txt"));
  const ProgramResult input = pe_plan({"--profile", path("model/graph.txt"), "--pbs", "8", "--gbs",
                                       "8", "--export-graph", path("model")});
  EXPECT_EQ(input.exit_code, 2) << input.err;
  EXPECT_THAT(input.err, AllOf(HasSubstr("--export-graph '"), HasSubstr("--profile '"),
                               HasSubstr("an output would overwrite an input")));
  EXPECT_EQ(file_text(path("model/graph.txt")), original);
  std::ofstream(path("file")) << "x";
  const ProgramResult file =
      pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8", "--export-graph", path("file")});
  EXPECT_EQ(file.exit_code, 1) << file.err;
  EXPECT_THAT(file.err, HasSubstr("--export-graph: cannot write into '" + path("file") +
                                  "': not a directory"));
  const ProgramResult missing = pe_plan(
      {"--profile", kChain, "--pbs", "8", "--gbs", "8", "--export-graph", path("no/such/dir")});
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_THAT(missing.err, HasSubstr("--export-graph: "));
  EXPECT_TRUE(missing.out.empty());
  fs::create_directories(path("g"));
  const ProgramResult twice =
      pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8", "--export-graph", path("g"),
               "--trace", path("g/graph.txt")});
  EXPECT_EQ(twice.exit_code, 2) << twice.err;
  EXPECT_THAT(twice.err, HasSubstr("two outputs would overwrite each other"));
}

}  // namespace
}  // namespace pe::testing
