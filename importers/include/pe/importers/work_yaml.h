// Work lists for bubble filling (`pe-plan --fill FILE`); docs/timeline.md has the details.
//
//   items:                     # placed in this order of priority
//     - name: curvature        # required, unique; not "forward" or "backward"
//       after: forward         # forward | backward | <earlier or later item name>;
//                              # omitted: no dependency
//       duration_ms: 0.8       # length of each piece ...
//       stages: all            # all (default) or a list of stage numbers, e.g. [0, 2]
//     - name: sync
//       after: curvature       # after every piece of curvature, on all its stages
//       duration_ms: 2
//     - name: inversion
//       after: sync
//       total_ms: 30           # ... or the total per stage, split over the pieces
//       chunks: 6              # pieces per stage (default 1; not with forward/backward,
//                              # which get one piece per micro-batch)
#pragma once

#include <string>

#include "pe/fill.h"

namespace pe {

/// Reads a work-list file. Throws InputError naming the file, line and key for unknown
/// keys, missing names, duplicate or reserved names, both or neither of duration_ms and
/// total_ms, non-positive or non-finite times, pieces that are 0 s once in seconds (a
/// subnormal number of ms), chunks outside 1..1000000 or given with
/// after: forward/backward, bad stage lists, unknown or cyclic `after`, and for files that
/// cannot be read or parsed. Stage numbers are checked against a plan by fill_bubbles.
WorkList load_work_yaml(const std::string& path);

/// Same, from text; `file_label` names the input in error messages.
WorkList parse_work_yaml(const std::string& text, const std::string& file_label);

}  // namespace pe
