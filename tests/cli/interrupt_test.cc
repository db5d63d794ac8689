// Ctrl-C (SIGINT) and SIGTERM during a long sweep or while a large file is written: pe-plan
// exits 128 + the signal, leaves an earlier output file as it was and no temporary file
// behind. The real program runs as a child process and gets a real signal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/program.h"
#include "cli/scratch.h"
#include "file_text.h"
#include "test_paths.h"

namespace pe::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Every name in `dir`, hidden ones included.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class Interrupt : public ScratchTest {
 protected:
  // A sweep of 8192 batch sizes of VGG-19 without an effort limit: about 20 s on two cores,
  // each batch size well under a second. An existing chart must survive its interruption.
  ProgramResult interrupt_sweep(int signal_number) {
    {
      std::ofstream old(path("plot.svg"));
      old << "old chart\n";
    }
    RunningProgram program(
        pe_plan_program(),
        {"--profile", "vgg19", "--gbs", "8:65536:8", "--search-effort", "0", "--plot",
         path("plot.svg"), "--svg", path("gantt.svg"), "--trace", path("trace.json")});
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    program.signal(signal_number);
    return program.finish();
  }
};

TEST_F(Interrupt, SigintDuringASweepExits130AndWritesNothing) {
  const auto start = std::chrono::steady_clock::now();
  const ProgramResult r = interrupt_sweep(SIGINT);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_LT(seconds, 15) << "the sweep ran on after the signal";
  EXPECT_THAT(r.err, HasSubstr("pe-plan: interrupted by SIGINT: stopped after planning "));
  EXPECT_THAT(r.err, HasSubstr(" of 8192 batch sizes; nothing written"));
  EXPECT_EQ(r.out, "");  // no table of a partial sweep
  EXPECT_EQ(file_text(path("plot.svg")), "old chart\n");
  EXPECT_EQ(names_in(dir()), std::vector<std::string>{"plot.svg"});
}

TEST_F(Interrupt, SigtermDuringASweepExits143AndWritesNothing) {
  const ProgramResult r = interrupt_sweep(SIGTERM);
  EXPECT_EQ(r.exit_code, 143) << r.err;
  EXPECT_THAT(r.err, HasSubstr("pe-plan: interrupted by SIGTERM"));
  EXPECT_EQ(file_text(path("plot.svg")), "old chart\n");
  EXPECT_EQ(names_in(dir()), std::vector<std::string>{"plot.svg"});
}

// A second signal does not wait for the batch sizes in progress: it removes the temporary
// files of the writes under way and exits at once.
TEST_F(Interrupt, ASecondSignalStopsAtOnce) {
  RunningProgram program(pe_plan_program(), {"--profile", "vgg19", "--gbs", "8:65536:8",
                                             "--search-effort", "0", "--plot", path("plot.svg")});
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  program.signal(SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  program.signal(SIGINT);
  const ProgramResult r = program.finish();
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_THAT(r.err, HasSubstr("signal again to stop at once"));
  EXPECT_TRUE(names_in(dir()).empty());
}

// The signal lands while a large trace (about 40 MB) is being written: its temporary file
// exists. The old trace stays, the temporary file goes, the exit code is 130. Writing and
// flushing 40 MB keeps the temporary file about a tenth of a second on the 2-core machine,
// which the test, looking every 200 us, does not miss; building the trace takes most of the
// test's time (under ASan, 48 s for the 80 MB it wrote before).
TEST_F(Interrupt, SigintWhileWritingALargeTraceKeepsTheOldFile) {
  {
    std::ofstream old(path("trace.json"));
    old << "{\"old\": true}\n";
  }
  RunningProgram program(
      pe_plan_program(),
      {"--profile", kChain, "--pbs", "8", "--gbs", "32768", "--devices", "3", "--plan",
       "0-0:1;1-1:1;2-2:1", "--microbatches", "32768", "--trace", path("trace.json")});
  // Wait for the hidden temporary file next to the trace, then interrupt.
  bool seen = false;
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(kProgramTimeout - 60);
  while (!seen && std::chrono::steady_clock::now() < give_up) {
    for (const std::string& name : names_in(dir())) seen |= name.rfind(".trace.json.tmp-", 0) == 0;
    if (!seen) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_TRUE(seen) << "never saw the temporary file";
  program.signal(SIGINT);
  const ProgramResult r = program.finish();
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_THAT(r.err, HasSubstr("interrupted by SIGINT: writing '" + path("trace.json") +
                               "' was cancelled; the file is as it was"));
  EXPECT_EQ(file_text(path("trace.json")), "{\"old\": true}\n");
  EXPECT_EQ(names_in(dir()), std::vector<std::string>{"trace.json"});
}

// Signals the parent ignores stay ignored (nohup, background jobs of a script): pe-plan then
// runs to the end.
TEST_F(Interrupt, AnIgnoredSignalStaysIgnored) {
  struct sigaction ignore = {};
  struct sigaction previous = {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &ignore, &previous), 0);
  // 512 batch sizes of a three-layer chain: about 1 s, still running when the signal comes.
  RunningProgram program(pe_plan_program(), {"--profile", kChain, "--pbs", "8", "--gbs", "8:4096:8",
                                             "--format", "csv"});
  sigaction(SIGINT, &previous, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  program.signal(SIGINT);
  const ProgramResult r = program.finish();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\n4096,1,"));
}

}  // namespace
}  // namespace pe::testing
