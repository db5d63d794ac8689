// Checking a work list and cutting its items into pieces (part of bubble filling).
#pragma once

#include <vector>

#include "pe/fill.h"
#include "simulate/event_index.h"

namespace pe::detail::fill {

/// One piece of work on one stage.
struct Piece {
  int item = 0;
  int stage = 0;
  int index = 0;  ///< Piece number on the stage (micro-batch for Forward/Backward).
  Seconds length = 0;
  Seconds ready = 0;    ///< Earliest start from a Forward/Backward dependency (0 otherwise).
  int after_item = -1;  ///< Item whose completion it waits for, or -1.
};

/// Throws UsageError for options outside their documented ranges.
void check_options(const FillOptions& options);

/// Throws InputError for invalid items: empty, duplicate or reserved names, bad lengths or
/// chunk counts, stages outside [0, stage_count) or repeated, unknown or cyclic `after`.
void check_work(const WorkList& work, int stage_count);

/// Index of the item each item waits for (-1 for none). The list must have passed
/// check_work.
std::vector<int> item_dependencies(const WorkList& work);

/// All pieces, item by item, stage by stage, piece by piece. Per-micro-batch pieces take
/// their ready time from the timeline (InputError when it lacks that forward/backward).
std::vector<Piece> make_pieces(const WorkList& work, const Timeline& timeline,
                               const detail::EventIndex& index);

}  // namespace pe::detail::fill
