// Checks of pe-plan's output paths, made before planning so that a bad path fails at once.
#pragma once

#include <string>

#include "options.h"

namespace pe::cli {

/// Fails fast on output paths that could not be written (OutputError naming the flag and
/// path: a directory, a missing directory) and on outputs that would overwrite an input or
/// each other (UsageError naming both flags): --trace, --svg, --plot, --export-sched and
/// --export-graph (its DIR/graph.txt) against each other and against --profile (its file,
/// `profile_path`), --cluster and --fill. --export-graph's DIR must be a directory or a new
/// one in an existing directory. Paths are the same when they name the same existing regular file
/// (std::filesystem::equivalent) or, where one does not exist, when they are equal once
/// made absolute and normal. Devices and other special files (/dev/stdout, /dev/null) may
/// be shared.
void check_output_paths(const Options& o, const std::string& profile_path);

}  // namespace pe::cli
