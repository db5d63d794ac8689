// What pe-plan and sched-pipeline promise about their outputs: bad output paths and outputs
// that would overwrite an input or each other fail before planning; a failed write to
// standard output is an error; CSV and JSON carry what a script needs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/program.h"
#include "cli/scratch.h"
#include "file_text.h"
#include "render/xml_check.h"
#include "report/csv_table.h"
#include "test_paths.h"

namespace pe::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<std::string> kChainArgs{"--profile", kChain, "--pbs", "8", "--gbs", "8"};

ProgramResult plan_chain(std::vector<std::string> args) {
  args.insert(args.begin(), kChainArgs.begin(), kChainArgs.end());
  return pe_plan(args);
}

// A fresh scratch folder, removed at the end of the test.
using Scratch = ScratchTest;

using PePlanOutputPath = Scratch;

TEST_F(PePlanOutputPath, MissingDirectoryFailsBeforePlanningNamingFlagAndPath) {
  for (const char* flag : {"--trace", "--svg", "--plot", "--export-sched"}) {
    const std::string bad = path("missing/out.file");
    const ProgramResult r = plan_chain({flag, bad, "--hosts", "a,b,c,d"});
    EXPECT_EQ(r.exit_code, 1) << flag << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << flag << ": the table was printed, so planning ran";
    EXPECT_THAT(r.err, AllOf(HasSubstr(std::string(flag) + ": cannot write '" + bad + "'"),
                             HasSubstr("No such file or directory")));
  }
}

TEST_F(PePlanOutputPath, DirectoryFailsBeforePlanning) {
  for (const char* flag : {"--trace", "--svg", "--plot", "--export-sched"}) {
    const ProgramResult r = plan_chain({flag, path(""), "--hosts", "a"});
    EXPECT_EQ(r.exit_code, 1) << flag << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << flag;
    EXPECT_THAT(r.err, HasSubstr(flag)) << flag;
    const std::string dir = path("sub");
    fs::create_directory(dir);
    const ProgramResult named = plan_chain({flag, dir, "--hosts", "a"});
    EXPECT_EQ(named.exit_code, 1) << flag;
    EXPECT_THAT(named.err,
                HasSubstr(std::string(flag) + ": cannot write '" + dir + "': Is a directory"));
  }
}

TEST_F(PePlanOutputPath, FileAsDirectoryFailsBeforePlanning) {
  const std::string file = copy(kChain, "plain.txt");
  const ProgramResult r = plan_chain({"--svg", file + "/out.svg"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_THAT(r.err, HasSubstr("--svg: cannot write '" + file + "/out.svg'"));
}

// Each pair must be refused (exit 2) naming both flags, and the input left as it was.
TEST_F(PePlanOutputPath, OutputOnAnInputIsRefused) {
  const std::string profile = copy(kChain, "chain.txt");
  const std::string cluster = copy(kData + "/robustness/cluster/two_by_two.yml", "cluster.yml");
  const std::string work = copy(kData + "/work/kfac.yml", "work.yml");
  struct Case {
    std::vector<std::string> args;
    std::string output_flag, input_flag, input;
  };
  const std::vector<Case> cases{
      {{"--profile", profile, "--trace", profile}, "--trace", "--profile", profile},
      {{"--cluster", cluster, "--plot", cluster}, "--plot", "--cluster", cluster},
      // Another spelling of the same file is the same file.
      {{"--fill", work, "--hosts", "a", "--export-sched", path("./work.yml")},
       "--export-sched",
       "--fill",
       work},
  };
  for (const Case& c : cases) {
    const std::string before = file_text(c.input);
    const ProgramResult r = plan_chain(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.output_flag << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.output_flag;
    EXPECT_THAT(r.err, AllOf(HasSubstr(c.output_flag + " '"), HasSubstr(c.input_flag + " '"),
                             HasSubstr("an output would overwrite an input")));
    EXPECT_EQ(file_text(c.input), before) << c.input << " was changed";
  }
}

TEST_F(PePlanOutputPath, TwoOutputsOnOneFileAreRefused) {
  // Not there yet: compared by normal form.
  const ProgramResult fresh = plan_chain({"--trace", path("both"), "--svg", path("./both")});
  EXPECT_EQ(fresh.exit_code, 2) << fresh.err;
  EXPECT_THAT(fresh.err, AllOf(HasSubstr("--svg '"), HasSubstr("--trace '"),
                               HasSubstr("two outputs would overwrite each other")));
  EXPECT_FALSE(fs::exists(path("both")));
  // There: compared by identity (a hard link is another name of the same file).
  std::ofstream(path("old")) << "old";
  fs::create_hard_link(path("old"), path("link"));
  const ProgramResult old = plan_chain({"--plot", path("old"), "--trace", path("link")});
  EXPECT_EQ(old.exit_code, 2) << old.err;
  EXPECT_THAT(old.err, AllOf(HasSubstr("--trace '"), HasSubstr("--plot '")));
  EXPECT_EQ(file_text(path("old")), "old");
}

TEST_F(PePlanOutputPath, DistinctOutputsAndSharedDevicesAreWritten) {
  const ProgramResult r = plan_chain(
      {"--trace", path("t.json"), "--svg", path("t.svg"), "--plot", "/dev/null", "--export-sched",
       "/dev/null", "--hosts", "a,b,c", "--plan", "0-0:1;1-1:1;2-2:1", "--microbatches", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(path("t.json")));
  EXPECT_TRUE(fs::exists(path("t.svg")));
}

// Host names that do not match the plan are found before any file is written: the plan's
// device count is known only after planning, so the check runs between the sweep and the
// first write (and the report), exit 2.
TEST_F(PePlanOutputPath, HostsThatDoNotMatchThePlanWriteNothing) {
  std::ofstream(path("old.svg")) << "old";
  for (const char* hosts : {"a", "a,a", "a,b,c,d,e,f,g,h,i"}) {
    const ProgramResult r = plan_chain({"--plot", path("p.svg"), "--trace", path("t.json"), "--svg",
                                        path("old.svg"), "--export-sched", path("s.yml"), "--hosts",
                                        hosts, "--devices", "8", "--straight"});
    EXPECT_EQ(r.exit_code, 2) << hosts << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("pe-plan: --hosts: ")) << hosts;
    EXPECT_EQ(r.out, "") << hosts;
    EXPECT_FALSE(fs::exists(path("p.svg"))) << hosts;
    EXPECT_FALSE(fs::exists(path("t.json"))) << hosts;
    EXPECT_FALSE(fs::exists(path("s.yml"))) << hosts;
    EXPECT_EQ(file_text(path("old.svg")), "old") << hosts;
  }
  // --export-sched without --hosts is found before planning.
  const ProgramResult none = plan_chain({"--plot", path("p.svg"), "--export-sched", path("s.yml")});
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_THAT(none.err, HasSubstr("--export-sched needs --hosts with one name per stage"));
  EXPECT_FALSE(fs::exists(path("p.svg")));
}

// The charts' titles name the model, the cluster and the batch size (not the stage string,
// which ran off the chart for 16 stages); the plot also shows the simulated speedup.
TEST_F(PePlanOutputPath, ChartTitlesNameModelClusterAndBatchSize) {
  const ProgramResult r =
      pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8,16", "--devices", "2,4", "--plot",
               path("p.svg"), "--svg", path("g.svg"), "--trace", path("t.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string gantt = file_text(path("g.svg")), plot = file_text(path("p.svg"));
  EXPECT_THAT(gantt, HasSubstr(">chain on 4 GPUs (2 machines), GBS 16: 1 pipeline copy x "));
  EXPECT_THAT(plot, HasSubstr(">chain on 4 GPUs (2 machines): speedup over one GPU, GBS 8 to 16<"));
  EXPECT_THAT(plot, HasSubstr(">best hybrid (estimate)<"));
  EXPECT_THAT(plot, HasSubstr(">best hybrid (simulated)<"));
  const nlohmann::json trace = nlohmann::json::parse(file_text(path("t.json")));
  EXPECT_THAT(trace["otherData"]["title"].get<std::string>(),
              HasSubstr("chain on 4 GPUs (2 machines), GBS 16: "));
}

// Sixteen stages: the title still names the plan in full (the stage string used to run off
// the chart), and the legend lists what is drawn. The plot's legend lists the curves with
// points: no DP curves where data parallelism does not fit a GPU.
TEST_F(PePlanOutputPath, SixteenStageChartKeepsItsTitleAndLegendListsWhatIsDrawn) {
  std::string stages;
  for (int s = 0; s < 15; ++s) stages += std::to_string(s) + "-" + std::to_string(s) + ":1;";
  stages += "15-24:1";
  std::string devices;
  for (int d = 1; d <= 16; ++d) devices += (d > 1 ? "," : "") + std::to_string(d);
  const ProgramResult r = run_program(
      pe_plan_program(), {"--profile", "vgg19", "--gbs", "512", "--devices", devices, "--plan",
                          stages, "--microbatches", "4", "--svg", path("g.svg")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const XmlSummary gantt = check_xml(file_text(path("g.svg")));
  ASSERT_EQ(gantt.error, "");
  const std::string title =
      "vgg19 on 16 GPUs (16 machines), your plan at GBS 512: 1 pipeline copy x 16 stages, "
      "4 micro-batches of 128, 1f1b";
  ASSERT_FALSE(gantt.texts.empty());
  EXPECT_EQ(gantt.texts.front(), title);
  auto has = [](const XmlSummary& xml, const std::string& text) {
    return std::find(xml.texts.begin(), xml.texts.end(), text) != xml.texts.end();
  };
  for (const char* drawn : {"forward", "backward", "send-activation", "send-gradient", "idle"})
    EXPECT_TRUE(has(gantt, drawn)) << drawn;
  EXPECT_FALSE(has(gantt, "filler"));  // no --fill
  const ProgramResult plot =
      plan_chain({"--gbs", "64,128", "--memory-gb", "1e-6", "--plot", path("p.svg")});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  const XmlSummary sweep = check_xml(file_text(path("p.svg")));
  ASSERT_EQ(sweep.error, "");
  EXPECT_TRUE(has(sweep, "best hybrid (estimate)"));
  EXPECT_TRUE(has(sweep, "best hybrid (simulated)"));
  for (const char* absent : {"DP", "DP + overlap", "DP + P3"}) EXPECT_FALSE(has(sweep, absent));
}

// Runs `command` with the shell; returns its exit status and what it wrote to stderr.
ProgramResult shell(const std::string& command, const std::string& err_file) {
  const int status = std::system((command + " 2>" + err_file).c_str());
  ProgramResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = file_text(err_file);
  return r;
}

using StandardOutput = Scratch;

// PipeEdge's runtime reads the schedule from stdout, a script the report: a write that
// fails (disk full, closed descriptor) must not exit 0.
TEST_F(StandardOutput, FailedWriteExitsOneWithAMessage) {
  const std::string dir = kData + "/pipeedge/example/";
  const std::string sched = sched_pipeline_program() + " -M " + dir + "models.yml -T " + dir +
                            "device_types.yml -D " + dir + "devices.yml";
  const std::string plan = pe_plan_program() + " --profile " + kChain + " --pbs 8 --gbs 8";
  const std::vector<std::pair<std::string, std::string>> commands{
      {sched, "sched-pipeline"},
      {pe_plan_program() + " sched-pipeline -M " + dir + "models.yml -T " + dir +
           "device_types.yml -D " + dir + "devices.yml",
       "sched-pipeline"},
      {plan, "pe-plan"},
      {plan + " --format csv", "pe-plan"},
      {plan + " --format json", "pe-plan"},
      {pe_plan_program() + " --help", "pe-plan"}};
  for (const auto& [command, program] : commands) {
    for (const char* redirect : {" >/dev/full", " >&-"}) {
      const ProgramResult r = shell(command + redirect, path("err"));
      EXPECT_EQ(r.exit_code, 1) << command << redirect << ": " << r.err;
      EXPECT_THAT(r.err, HasSubstr(program + ": cannot write standard output"))
          << command << redirect;
    }
    EXPECT_EQ(shell(command + " >/dev/null", path("err")).exit_code, 0) << command;
  }
}

TEST(PePlanJson, FillResultsAreInTheJsonNotOnStderr) {
  const std::vector<std::string> args{"--profile",   kChain, "--pbs",     "8",
                                      "--gbs",       "64",   "--devices", "4",
                                      "--memory-gb", "1e-6", "--fill",    kData + "/work/kfac.yml"};
  std::vector<std::string> json_args = args;
  json_args.insert(json_args.end(), {"--format", "json"});
  const ProgramResult json = pe_plan(json_args);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.err, Not(HasSubstr("bubble filling")));
  const nlohmann::json fill = nlohmann::json::parse(json.out).at("fill");
  EXPECT_EQ(fill.at("items").size(), 4u) << fill;
  EXPECT_EQ(fill.at("items").at(0).at("name"), "curvature-a");
  EXPECT_TRUE(fill.contains("complete"));
  const ProgramResult table = pe_plan(args);
  EXPECT_THAT(table.err, HasSubstr("bubble filling"));
}

TEST(PePlanJson, ContextSaysHowToReproduceTheReport) {
  const std::vector<std::string> args{"--profile",
                                      kChain,
                                      "--pbs",
                                      "8",
                                      "--gbs",
                                      "8",
                                      "--mbs",
                                      "2",
                                      "--schedule",
                                      "gpipe",
                                      "--top",
                                      "2",
                                      "--search-effort",
                                      "5000",
                                      "--search-memory-mb",
                                      "512",
                                      "--optimizer-scaling",
                                      "3",
                                      "--format",
                                      "json"};
  const ProgramResult r = pe_plan(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json c = nlohmann::json::parse(r.out).at("context");
  EXPECT_THAT(c.at("program_version").get<std::string>(), HasSubstr("pe-plan "));
  EXPECT_EQ(c.at("command_line"), nlohmann::json(args));
  EXPECT_EQ(c.at("model"), "chain");
  EXPECT_EQ(c.at("source"), kChain);
  EXPECT_EQ(c.at("profile_batch_size"), 8.0);
  EXPECT_EQ(c.at("min_micro_batch"), 2);
  EXPECT_EQ(c.at("optimizer_scaling"), 3.0);
  EXPECT_TRUE(c.contains("activation_bytes_per_sample"));
  EXPECT_EQ(c.at("schedules"), nlohmann::json({"gpipe"}));
  EXPECT_EQ(c.at("search_effort"), 5000);
  EXPECT_EQ(c.at("search_memory_mb"), 512);
  EXPECT_EQ(c.at("top"), 2);
}

TEST(PePlanCsv, TopGivesRankedRowsAndNoPlanRowsGiveTheReason) {
  const ProgramResult top = pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8,16",
                                     "--devices", "4", "--top", "2", "--format", "csv"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  const CsvTable csv = read_csv(top.out);
  ASSERT_EQ(csv.rows.size(), 4u) << top.out;
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(csv.rows[i].at("gbs"), i < 2 ? "8" : "16");
    EXPECT_EQ(csv.rows[i].at("rank"), std::to_string(i % 2 + 1));
    EXPECT_EQ(csv.rows[i].at("no_plan_reason"), "");
  }
  const ProgramResult none = run_program(
      pe_plan_program(),
      {"--profile", kChain, "--pbs", "8", "--gbs", "64", "--memory-gb", "1e-9", "--format", "csv"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  const CsvTable empty = read_csv(none.out);
  ASSERT_EQ(empty.rows.size(), 1u);
  EXPECT_EQ(empty.rows[0].at("rank"), "");
  EXPECT_EQ(empty.rows[0].at("speedup"), "");
  EXPECT_THAT(empty.rows[0].at("no_plan_reason"), HasSubstr("state 2 alone needs"));
}

// Each stage of a plan in JSON names the operators its states add and their graph.txt ids,
// so a reader need not look the FIRST-LAST range up in --states.
TEST(StageOperators, JsonNamesEachStagesOperatorsAndTheirIds) {
  const ProgramResult r =
      plan_chain({"--devices", "2", "--plan", "0-1:1;2-2:1", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  const nlohmann::json& given = report["given_plan"]["stages"];
  EXPECT_EQ(given[0]["operators"], nlohmann::json({"Conv2d(3, 8)", "ReLU"}));
  EXPECT_EQ(given[0]["operator_ids"], nlohmann::json({"node2", "node3"}));
  EXPECT_EQ(given[1]["operators"], nlohmann::json({"Linear(8, 2)"}));
  EXPECT_EQ(given[1]["operator_ids"], nlohmann::json({"node4"}));
  const nlohmann::json& best = report["points"][0]["plans"][0]["stages"];
  std::size_t operators = 0;
  for (const nlohmann::json& stage : best) operators += stage["operators"].size();
  EXPECT_EQ(operators, 3u);
  EXPECT_EQ(report["context"]["max_stage_width"], 0);
  EXPECT_EQ(report["context"]["max_pipeline_copies"], 0);
}

}  // namespace
}  // namespace pe::testing
