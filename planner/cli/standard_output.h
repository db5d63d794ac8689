// Standard output carries the programs' answers (pe-plan's report, sched-pipeline's schedule
// that PipeEdge's runtime reads), so a failed write to it is a failure of the program.
#pragma once

namespace pe::cli {

/// Flushes std::cout and stdout. Returns `status` when everything written reached standard
/// output; else writes "PROGRAM: cannot write standard output: REASON" to stderr and
/// returns `status`, or 1 when `status` is 0 (disk full, a closed descriptor, ...).
int finish_standard_output(int status, const char* program);

}  // namespace pe::cli
