// pe-plan's main job, separated from main() so tests can call it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace pe::cli {

/// Runs pe-plan with `args` (argv without the program name). Returns the exit code:
/// 0 success (also when no plan fits), 1 bad input data, 2 bad usage.
int run_pe_plan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace pe::cli
