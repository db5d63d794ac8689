// pe-plan's answer to SIGINT (Ctrl-C) and SIGTERM: stop planning, leave no temporary file and
// no half-written output, exit with 128 + the signal's number.
#pragma once

#include <atomic>
#include <csignal>
#include <string>

namespace pe::cli {

/// What stops a run from outside. `cancel` set (by a signal handler, or a test) stops the
/// sweep before the batch sizes not yet started and any output file being written; the run
/// then ends with exit code 128 + `*signal` (130, as for SIGINT, when `signal` is null or 0).
struct Interruption {
  const std::atomic<bool>* cancel = nullptr;
  const std::atomic<int>* signal = nullptr;

  /// Whether the run should stop now.
  bool requested() const { return cancel && cancel->load(); }
  /// 128 + the signal's number.
  int exit_code() const;
  /// "SIGINT", "SIGTERM", or "a request" when no signal is named.
  std::string cause() const;
};

/// Installs handlers for SIGINT and SIGTERM while it lives (the previous handlers come back
/// after). The first signal sets the flag that interruption() names and says on stderr that
/// pe-plan is stopping; a second one removes the temporary files of the writes in progress
/// (pe::remove_temporary_files) and ends the program at once with 128 + its number. The
/// handlers make only async-signal-safe calls. One guard at a time.
class SignalGuard {
 public:
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  /// The flag and signal number the handlers set.
  Interruption interruption() const;

 private:
  struct sigaction previous_int_ = {};
  struct sigaction previous_term_ = {};
};

}  // namespace pe::cli
