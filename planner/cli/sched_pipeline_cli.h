// sched-pipeline: a drop-in replacement for PipeEdge's scheduler program.
#pragma once

#include <ostream>

namespace pe {

/// Runs sched-pipeline with the original's options (see sched_pipeline_usage) and output:
/// the schedule as a YAML list on `out` (`[]` when nothing fits, with the reason on `err`),
/// warnings on `err`. Returns the exit code: 0 after printing a schedule or `[]` or the
/// help text; 1 for bad options or input files and for searches over the memory limit,
/// with a message on `err`. Never throws. argv[0] is the program name and is ignored.
int sched_pipeline_main(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace pe
