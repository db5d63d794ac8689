#include "interrupt.h"

#include <unistd.h>

#include <cstring>
#include <utility>

#include "pe/output_file.h"

namespace pe::cli {
namespace {

static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "the signal handler may touch lock-free atomics only");

std::atomic<bool> signal_cancel{false};
std::atomic<int> signal_number{0};

void say(const char* text) {
  // Nothing to do when stderr is gone; the exit code still tells.
  [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
}

extern "C" void on_signal(int number) {
  int none = 0;
  if (!signal_number.compare_exchange_strong(none, number)) {
    // The second signal: no more waiting for the batch sizes in progress.
    remove_temporary_files();
    ::_exit(128 + number);
  }
  signal_cancel.store(true);
  say("\npe-plan: stopping after the batch sizes in progress (signal again to stop at once)\n");
}

}  // namespace

int Interruption::exit_code() const {
  const int number = signal ? signal->load() : 0;
  return 128 + (number > 0 ? number : SIGINT);
}

std::string Interruption::cause() const {
  const int number = signal ? signal->load() : 0;
  if (number == SIGINT) return "SIGINT";
  if (number == SIGTERM) return "SIGTERM";
  return number > 0 ? "signal " + std::to_string(number) : "a request";
}

SignalGuard::SignalGuard() {
  signal_cancel.store(false);
  signal_number.store(0);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  // A signal the parent made us ignore (`nohup`, a background job of a script) stays ignored.
  const std::pair<int, struct sigaction*> signals[] = {{SIGINT, &previous_int_},
                                                       {SIGTERM, &previous_term_}};
  for (const auto& [number, previous] : signals) {
    sigaction(number, nullptr, previous);
    if (previous->sa_handler != SIG_IGN) sigaction(number, &action, nullptr);
  }
}

SignalGuard::~SignalGuard() {
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
}

Interruption SignalGuard::interruption() const { return {&signal_cancel, &signal_number}; }

}  // namespace pe::cli
