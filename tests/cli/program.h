// Runs the real pe-plan and sched-pipeline programs for CLI tests and captures what they
// print. The programs' paths come from the PE_PLAN environment variable that ctest sets.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pe::testing {

/// What a finished program left behind.
struct ProgramResult {
  int exit_code = -1;  ///< Exit status, or 128 + signal number when a signal ended it.
  std::string out;     ///< Everything written to stdout.
  std::string err;     ///< Everything written to stderr.
};

/// Seconds a program may run before a test kills it as hung: far beyond any test's program
/// in a release build (seconds), so slow machines and sanitized builds (10 to 30 times
/// slower, and slower again when the tests run in parallel) do not fail by the clock.
inline constexpr unsigned kProgramTimeout = 600;

/// Extra environment variables, e.g. {"TBB_NUM_THREADS", "2"}.
using Environment = std::vector<std::pair<std::string, std::string>>;

/// Runs `program` with `args` (argv[1..]) and `environment` added to this process's, with
/// stdin empty. A program still running after `timeout_seconds` is killed (SIGALRM, so
/// exit_code 142). Throws std::runtime_error when the program cannot be started.
ProgramResult run_program(const std::string& program, const std::vector<std::string>& args,
                          const Environment& environment = {},
                          unsigned timeout_seconds = kProgramTimeout);

/// A program started by start_program and still running (or finished but not yet waited
/// for). Its output goes to temporary files that finish() reads.
class RunningProgram {
 public:
  RunningProgram(const std::string& program, const std::vector<std::string>& args,
                 const Environment& environment = {}, unsigned timeout_seconds = kProgramTimeout);
  ~RunningProgram();  ///< Kills (SIGKILL) and reaps the program if finish() was not called.
  RunningProgram(const RunningProgram&) = delete;
  RunningProgram& operator=(const RunningProgram&) = delete;

  int pid() const { return pid_; }
  /// Sends `signal_number` to the program.
  void signal(int signal_number) const;
  /// Waits for the program to end; what it printed, its exit code.
  ProgramResult finish();

 private:
  struct Files;
  Files* files_;
  int pid_ = -1;
  bool finished_ = false;
};

/// The pe-plan binary: $PE_PLAN. Throws std::runtime_error when it is not set.
std::string pe_plan_program();

/// The sched-pipeline binary, built next to pe-plan.
std::string sched_pipeline_program();

/// Runs pe-plan (pe_plan_program) with `args` and `environment`, as run_program does.
ProgramResult pe_plan(const std::vector<std::string>& args, const Environment& environment = {});

}  // namespace pe::testing
