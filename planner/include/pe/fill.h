// Bubble filling (PipeFisher-style): placing extra per-stage work, such as K-FAC
// curvature and inversion, into the idle gaps of a pipeline's timeline. docs/timeline.md
// describes the rules and the work-list YAML (pe/importers/work_yaml.h reads it).
#pragma once

#include <string>
#include <vector>

#include "pe/timeline.h"
#include "pe/units.h"

namespace pe {

/// What the pieces of a work item wait for.
enum class WorkAfter {
  Nothing,   ///< May run at any time.
  Forward,   ///< One piece per micro-batch; piece m after micro-batch m's forward on its stage.
  Backward,  ///< One piece per micro-batch; piece m after micro-batch m's backward.
  Item,      ///< After every piece of item `after_item`, on all of its stages, has ended.
};

/// One kind of extra work, run on each of its stages.
struct WorkItem {
  std::string name;          ///< Unique, not "forward" or "backward"; the filler events' label.
  Seconds duration = 0;      ///< Length of each piece, or of a stage's pieces together when
                             ///< `split_total` (then each piece is duration / pieces). > 0.
  bool split_total = false;  ///< `duration` is the total per stage, split over the pieces.
  int chunks = 1;            ///< Pieces per stage, 1..1e6; ignored (one per micro-batch) for
                             ///< Forward and Backward.
  std::vector<int> stages;   ///< Stages that run the item; empty means every stage.
  WorkAfter after = WorkAfter::Nothing;  ///< What each piece waits for.
  std::string after_item;                ///< The item waited for when `after` is Item.
  std::string where;  ///< Where it was defined ("work.yml:4"), for error messages.
};

/// The extra work of one iteration, in priority order (earlier items are placed first).
struct WorkList {
  std::vector<WorkItem> items;  ///< Highest priority first; names unique.
};

/// Parameters of the greedy placement.
struct FillOptions {
  double margin = 0.05;       ///< A piece of length d needs d * (1 + margin) of free time,
                              ///< all of which it keeps free of other work. 0..10.
  int max_iterations = 1000;  ///< Iterations searched before giving up, 1..1e6.
};

/// How far an item got.
enum class FillStatus {
  Done,        ///< Every piece placed.
  NeverFits,   ///< A piece (with margin) is longer than every gap of its stage.
  Blocked,     ///< Waits, directly or not, for an item that never fits.
  Unfinished,  ///< Not done within FillOptions::max_iterations.
};
/// "done", "never fits", "blocked" or "unfinished".
std::string to_string(FillStatus status);

/// Outcome for one work item.
struct ItemFill {
  std::string name;                      ///< The work item's name.
  FillStatus status = FillStatus::Done;  ///< How far it got.
  int pieces = 0;                        ///< Over all its stages.
  int placed = 0;                        ///< Pieces placed, over all its stages and iterations.
  int iteration = -1;  ///< 0-based iteration in which its last piece ends; -1 unless Done.
  Seconds finish = 0;  ///< End of its last piece, from the start of iteration 0 (if Done).
};

/// Utilization of one stage: (compute + filler) / makespan. Compute is Forward and
/// Backward time; filler events already in the input timeline only block time.
struct StageFill {
  int stage = 0;                  ///< Stage index, 0-based.
  Seconds compute = 0;            ///< Per iteration.
  Seconds filler_first = 0;       ///< Placed filler in iteration 0.
  Seconds filler_total = 0;       ///< Placed filler over all iterations.
  double utilization_before = 0;  ///< compute / makespan.
  double utilization_first = 0;   ///< (compute + filler_first) / makespan.
  double utilization_mean = 0;    ///< Mean over the `iterations` of FillResult.
};

/// One placed piece. Times are seconds from the start of iteration 0; iteration k spans
/// [k * makespan, (k + 1) * makespan).
struct FilledPiece {
  int item = 0;              ///< Index into WorkList::items.
  int stage = 0;             ///< Stage index, 0-based.
  int index = 0;             ///< Piece number on its stage (the micro-batch for Forward/Backward).
  int iteration = 0;         ///< 0-based iteration the piece starts in.
  Seconds start = 0;         ///< Seconds from the start of iteration 0.
  Seconds end = 0;           ///< start + length.
  Seconds reserved_end = 0;  ///< start + length * (1 + margin); no other work before it.
};

/// Everything fill_bubbles decided.
struct FillResult {
  Timeline timeline;                ///< Iteration 0 plus its pieces as Filler events
                                    ///< (label = item name, micro_batch = piece's or -1).
  std::vector<ItemFill> items;      ///< In work-list order.
  std::vector<StageFill> stages;    ///< One per stage.
  std::vector<FilledPiece> pieces;  ///< Every placed piece, ordered by (start, stage).
  int iterations = 0;               ///< Iterations used by the placed work (0: none placed).
  bool complete = false;            ///< Every item is Done.
};

/// Places the work into the gaps of the timeline repeated iteration after iteration.
/// Gaps are the stretches of [0, makespan) in which a stage runs no Forward, Backward or
/// Filler event; transfers and all-reduces do not block. A gap ends at the iteration's
/// end. Stages are walked together in time order (earliest cursor first, ties by stage);
/// in each gap a stage repeatedly takes the first piece in work-list order whose
/// dependency has ended and which fits with its margin, starting at the later of the
/// cursor and the dependency's end. Items that can never complete are left out at once.
/// Throws InputError (naming the item's `where`) for invalid items or stage numbers
/// outside the timeline, InputError for a broken timeline, UsageError for bad options.
FillResult fill_bubbles(const Timeline& timeline, const WorkList& work,
                        const FillOptions& options = {});

}  // namespace pe
