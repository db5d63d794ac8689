// pe-plan: a thin command line over the pe library.
#include <tbb/global_control.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "interrupt.h"
#include "pe/error.h"
#include "run.h"
#include "sched_pipeline_cli.h"
#include "standard_output.h"

namespace {

// TBB_NUM_THREADS caps the worker threads; a bad value is a UsageError.
std::unique_ptr<tbb::global_control> thread_cap() {
  const char* text = std::getenv("TBB_NUM_THREADS");
  if (!text || !*text) return nullptr;
  char* end = nullptr;
  const long threads = std::strtol(text, &end, 10);
  if (*end != '\0' || threads < 1 || threads > 4096)
    throw pe::UsageError("TBB_NUM_THREADS must be a whole number from 1 to 4096, got '" +
                         std::string(text) + "'");
  return std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                               static_cast<std::size_t>(threads));
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<tbb::global_control> cap;
  try {
    cap = thread_cap();
  } catch (const pe::Error& e) {
    return pe::cli::report_error(e, std::cerr);
  }
  if (argc > 1 && std::string(argv[1]) == "sched-pipeline") {
    const int status = pe::sched_pipeline_main(argc - 1, argv + 1, std::cout, std::cerr);
    return pe::cli::finish_standard_output(status, "sched-pipeline");
  }
  const pe::cli::SignalGuard signals;  // Ctrl-C: stop, leave no temporary file, exit 130
  const std::vector<std::string> args(argv + 1, argv + argc);
  return pe::cli::finish_standard_output(
      pe::cli::run_pe_plan(args, std::cout, std::cerr, signals.interruption()), "pe-plan");
}
