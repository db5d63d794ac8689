// pe-plan's sweep with a progress line on stderr.
#pragma once

#include <atomic>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "pe/planner.h"

namespace pe::cli {

/// Where a sweep stands.
struct SweepProgress {
  std::size_t done = 0, all = 0;  ///< Batch sizes planned, and in all.
  double elapsed = 0;             ///< Seconds since the sweep began.
  int slowest_gbs = 0;            ///< The batch size that took longest so far (0: none yet).
  double slowest_seconds = 0;     ///< Its planning time.
};

/// The progress line: carriage return, a 30-character bar, the counts, the time so far and
/// the slowest batch size so far, then erase-to-end-of-line, e.g.
/// "\r[#########                     ] 22/65 batch sizes, 1.4 s, slowest GBS 32 (0.21 s)\033[K".
std::string progress_line(const SweepProgress& progress);

/// Plans every batch size of `batches` in parallel (Planner::plan per point, in the order
/// given, as Planner::sweep does) and times each point. Once `*cancel` is true the points not
/// yet started are skipped (global_batch 0, no plans); points in progress finish. With
/// `progress` not null, a progress_line is written there after a point finishes (at most
/// every 0.1 s, and for the last one) and every 0.5 s in between, so that the time moves
/// while slow points run; the line is erased at the end. Then the points share their plans
/// (Planner::share_plans), as Planner::sweep's do.
std::vector<PointResult> sweep_with_progress(const Planner& planner,
                                             const std::vector<int>& batches,
                                             const std::atomic<bool>* cancel,
                                             std::ostream* progress);

}  // namespace pe::cli
