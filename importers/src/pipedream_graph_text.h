// Line-level reader of PipeDream `graph.txt` files: nodes and edges as written, with the
// line each came from. No graph logic here (see pipedream_graph_dag.h).
#pragma once

#include <string>
#include <vector>

#include "pe/units.h"

namespace pe::detail::pipedream {

/// One node line. Metrics are converted to seconds and bytes at the profile batch size.
struct NodeLine {
  std::string id;
  std::string description;
  Seconds forward = 0;
  Seconds backward = 0;
  Bytes activation = 0;  ///< Sum of the list when activation_size is `[a; b; ...]`.
  Bytes parameters = 0;
  long line = 0;  ///< 1-based line number in the file.
};

/// One edge line `SRC -- DST`, ids as written.
struct EdgeLine {
  std::string source;
  std::string target;
  long line = 0;
};

/// The lines of a file, in file order. An edge line repeating an earlier one (same ids) is
/// dropped as it is read, so that repeats cost no memory; the first keeps its line.
struct GraphText {
  std::vector<NodeLine> nodes;
  std::vector<EdgeLine> edges;
};

/// Splits `text` into node and edge lines; a UTF-8 byte order mark at the start is skipped. Throws
/// InputError at "file:line" for a wrong token count, an unknown, missing or repeated metadata key,
/// a value that is not a finite non-negative number, or a `stage_id` that is not a non-negative
/// integer.
GraphText read_graph_text(const std::string& text, const std::string& file);

}  // namespace pe::detail::pipedream
