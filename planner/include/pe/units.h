// Units used throughout pe-plan. Names carry the unit; values are plain doubles so that
// formulas read like the papers they come from.
#pragma once

namespace pe {

/// Wall-clock time in seconds.
using Seconds = double;
/// A size in bytes (fractional values appear after batch-size scaling).
using Bytes = double;
/// A bandwidth in bytes per second.
using BytesPerSecond = double;

/// One decimal gigabyte, the unit of the command line's bandwidth and memory flags.
inline constexpr double kGB = 1e9;
/// One mebibyte, the unit of PipeEdge's `mem_MB` fields.
inline constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace pe
