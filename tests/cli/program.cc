#include "cli/program.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "file_text.h"

extern char** environ;

namespace pe::testing {
namespace {

// A temporary file that is removed when it goes out of scope.
class TempFile {
 public:
  TempFile() {
    path_ = (std::filesystem::temp_directory_path() / "pe-cli-XXXXXX").string();
    fd_ = mkstemp(path_.data());
    if (fd_ < 0) throw std::runtime_error("cannot create a temporary file");
  }
  ~TempFile() {
    close(fd_);
    std::filesystem::remove(path_);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  int fd() const { return fd_; }
  std::string text() const { return file_text(path_); }

 private:
  std::string path_;
  int fd_ = -1;
};

// This process's environment with `extra` replacing variables of the same name.
std::vector<std::string> merged_environment(const Environment& extra) {
  std::vector<std::string> merged;
  for (char** entry = environ; *entry; ++entry) {
    const std::string text = *entry;
    bool replaced = false;
    for (const auto& [name, value] : extra) replaced |= text.rfind(name + "=", 0) == 0;
    if (!replaced) merged.push_back(text);
  }
  for (const auto& [name, value] : extra) merged.push_back(name + "=" + value);
  return merged;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (std::string& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

// In the child: only async-signal-safe calls until execve.
[[noreturn]] void exec_child(const char* program, char** argv, char** envp, int out, int err,
                             unsigned timeout_seconds) {
  const int null_input = open("/dev/null", O_RDONLY);
  if (null_input < 0 || dup2(null_input, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(127);
  alarm(timeout_seconds);
  execve(program, argv, envp);
  _exit(127);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

struct RunningProgram::Files {
  std::string program;
  TempFile out, err;
};

RunningProgram::RunningProgram(const std::string& program, const std::vector<std::string>& args,
                               const Environment& environment, unsigned timeout_seconds)
    : files_(new Files{program, {}, {}}) {
  std::vector<std::string> argv_strings{program};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings = merged_environment(environment);
  std::vector<char*> argv = pointers(argv_strings), envp = pointers(env_strings);
  pid_ = fork();
  if (pid_ < 0) {
    delete files_;
    throw std::runtime_error("cannot start " + program);
  }
  if (pid_ == 0)
    exec_child(program.c_str(), argv.data(), envp.data(), files_->out.fd(), files_->err.fd(),
               timeout_seconds);
}

RunningProgram::~RunningProgram() {
  if (!finished_) {
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  delete files_;
}

void RunningProgram::signal(int signal_number) const { kill(pid_, signal_number); }

ProgramResult RunningProgram::finish() {
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("lost track of " + files_->program);
  finished_ = true;
  return ProgramResult{exit_code_of(status), files_->out.text(), files_->err.text()};
}

ProgramResult run_program(const std::string& program, const std::vector<std::string>& args,
                          const Environment& environment, unsigned timeout_seconds) {
  return RunningProgram(program, args, environment, timeout_seconds).finish();
}

std::string pe_plan_program() {
  const char* path = std::getenv("PE_PLAN");
  if (!path || !*path) throw std::runtime_error("PE_PLAN is not set; run the tests with ctest");
  return path;
}

std::string sched_pipeline_program() {
  return (std::filesystem::path(pe_plan_program()).parent_path() / "sched-pipeline").string();
}

ProgramResult pe_plan(const std::vector<std::string>& args, const Environment& environment) {
  return run_program(pe_plan_program(), args, environment);
}

}  // namespace pe::testing
