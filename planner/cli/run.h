// pe-plan's main job, separated from main() so tests can call it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "interrupt.h"
#include "pe/error.h"

namespace pe::cli {

/// Says `error` on `err` as pe-plan does ("pe-plan: " and the message, a field named by its
/// flag) and returns its exit code: 2 for a UsageError, 1 for any other (bad input data, an
/// output that cannot be written).
int report_error(const Error& error, std::ostream& err);

/// Runs pe-plan with `args` (argv without the program name). Returns the exit code:
/// 0 success (also when no plan fits), 1 bad input data, 2 bad usage, and 128 + the signal
/// (130 for SIGINT, 143 for SIGTERM) when `stop` was requested: the sweep then skips the
/// batch sizes not yet started, nothing more is printed on `out`, and a file being written
/// keeps its old content (its temporary file is removed).
int run_pe_plan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                const Interruption& stop = {});

}  // namespace pe::cli
