// pe-plan's progress line on stderr: batch sizes done of all, time so far, the slowest batch
// size; only when stderr is a terminal.
#include "progress.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/program.h"
#include "pe/cluster.h"
#include "pe/model.h"
#include "test_paths.h"

extern char** environ;

namespace pe::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ProgressLine, SaysDoneOfAllElapsedAndTheSlowestPoint) {
  cli::SweepProgress p;
  p.done = 22;
  p.all = 65;
  p.elapsed = 1.4;
  p.slowest_gbs = 32;
  p.slowest_seconds = 0.214;
  EXPECT_EQ(cli::progress_line(p),
            "\r[##########                    ] 22/65 batch sizes, 1.40 s, slowest GBS 32 "
            "(0.21 s)\033[K");
  p.done = 65;
  p.elapsed = 123.4;
  p.slowest_seconds = 12.345;
  EXPECT_EQ(cli::progress_line(p),
            "\r[##############################] 65/65 batch sizes, 123 s, slowest GBS 32 "
            "(12.3 s)\033[K");
  EXPECT_EQ(cli::progress_line({0, 3, 0.0, 0, 0.0}),
            "\r[                              ] 0/3 batch sizes, 0.00 s\033[K");
}

Planner chain_planner() {
  std::vector<Layer> layers{{"a", 0.01, 0.02, 1e6, 1e6}, {"b", 0.01, 0.02, 1e6, 1e6}};
  return Planner(make_chain_model("chain", 8, layers), cluster_from_machine_ends({2}), {});
}

TEST(SweepWithProgress, PlansEveryPointInOrderAndErasesItsLine) {
  const Planner planner = chain_planner();
  std::ostringstream err;
  const std::vector<int> batches{8, 16, 4};
  const std::vector<PointResult> points = cli::sweep_with_progress(planner, batches, nullptr, &err);
  ASSERT_EQ(points.size(), 3u);
  for (std::size_t i = 0; i < batches.size(); ++i) {
    EXPECT_EQ(points[i].global_batch, batches[i]);
    ASSERT_NE(points[i].best(), nullptr);
    EXPECT_EQ(stages_string(*points[i].best()), stages_string(*planner.plan(batches[i]).best()));
  }
  EXPECT_THAT(err.str(), HasSubstr("3/3 batch sizes, "));  // the last point is always shown
  EXPECT_THAT(err.str(), HasSubstr(", slowest GBS "));
  EXPECT_TRUE(err.str().size() >= 4 && err.str().substr(err.str().size() - 4) == "\r\033[K");
}

TEST(SweepWithProgress, CancelSkipsThePointsNotStartedAndSilenceIsSilent) {
  const Planner planner = chain_planner();
  const std::atomic<bool> cancel{true};
  const std::vector<PointResult> points =
      cli::sweep_with_progress(planner, {8, 16}, &cancel, nullptr);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].global_batch, 0);
  EXPECT_EQ(points[1].global_batch, 0);
}

// Runs pe-plan with stderr on a new pseudo-terminal (stdout to a pipe); returns what the
// terminal got and the exit code.
std::pair<std::string, int> run_with_terminal_stderr(const std::vector<std::string>& args,
                                                     const std::string& extra_environment = "") {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return {"no pty", -1};
  const std::string slave_name = ptsname(master);
  std::vector<std::string> strings{pe_plan_program()};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment;
  for (char** entry = environ; *entry; ++entry) environment.emplace_back(*entry);
  if (!extra_environment.empty()) environment.push_back(extra_environment);
  std::vector<char*> envp;
  for (std::string& s : environment) envp.push_back(s.data());
  envp.push_back(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    const int slave = open(slave_name.c_str(), O_RDWR | O_NOCTTY);
    const int null_fd = open("/dev/null", O_RDWR);
    if (slave < 0 || null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(null_fd, 1) < 0 ||
        dup2(slave, 2) < 0)
      _exit(127);
    alarm(120);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  std::string seen;
  char buffer[4096];
  for (;;) {
    pollfd fd{master, POLLIN, 0};
    if (poll(&fd, 1, 200) > 0) {
      const ssize_t n = read(master, buffer, sizeof buffer);
      if (n > 0) {
        seen.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
    }
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child) {
      while (poll(&fd, 1, 0) > 0) {  // what is left
        const ssize_t n = read(master, buffer, sizeof buffer);
        if (n <= 0) break;
        seen.append(buffer, static_cast<std::size_t>(n));
      }
      close(master);
      return {seen, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
    }
  }
}

TEST(ProgressOnATerminal, ShowsCountsElapsedAndTheSlowestPointThenErasesTheLine) {
  const auto [terminal, code] =
      run_with_terminal_stderr({"--profile", kChain, "--pbs", "8", "--gbs", "8:512:8"});
  ASSERT_EQ(code, 0) << terminal;
  EXPECT_THAT(terminal, HasSubstr("64/64 batch sizes, "));
  EXPECT_THAT(terminal, HasSubstr(", slowest GBS "));
  EXPECT_THAT(terminal, HasSubstr("\r\033[K"));
}

// Slow batch sizes (4.5 s for both on one thread of the 2-core machine, their effort capped
// so that a slower machine stays well inside the child's 120 s alarm): the line is redrawn
// every 0.5 s while a point runs.
TEST(ProgressOnATerminal, TheTimeMovesWhileASlowPointRuns) {
  const auto [terminal, code] =
      run_with_terminal_stderr({"--profile", "vgg19", "--devices", "8,1024", "--gbs", "128,512",
                                "--search-effort", "2000000"},
                               "TBB_NUM_THREADS=1");
  ASSERT_EQ(code, 0) << terminal;
  // Each point finishing writes a line (two here), the ticker one per 0.5 s. How many ticks
  // there are depends on how fast this machine plans, so the count is checked against the
  // elapsed time the last line reports, leaving the two point lines as slack for a late tick.
  std::size_t lines = 0;
  for (std::size_t at = terminal.find("batch sizes, "); at != std::string::npos;
       at = terminal.find("batch sizes, ", at + 1))
    ++lines;
  const std::string last = "] 2/2 batch sizes, ";
  const std::size_t at = terminal.find(last);
  ASSERT_NE(at, std::string::npos) << terminal;
  const double elapsed = std::stod(terminal.substr(at + last.size()));
  const auto ticks = static_cast<std::size_t>(elapsed / 0.5);
  EXPECT_GE(lines, ticks) << terminal;
}

TEST(ProgressOnATerminal, NothingWhenStderrIsAFileOrForOnePoint) {
  const ProgramResult r = pe_plan({"--profile", kChain, "--pbs", "8", "--gbs", "8:512:8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto [terminal, code] =
      run_with_terminal_stderr({"--profile", kChain, "--pbs", "8", "--gbs", "8"});
  ASSERT_EQ(code, 0) << terminal;
  EXPECT_THAT(terminal, Not(HasSubstr("batch sizes")));
}

}  // namespace
}  // namespace pe::testing
