// Turns a filled reachability table into the one schedule the documented tie-break picks.
#pragma once

#include <vector>

#include "pe/edge.h"
#include "pipeedge/bound_graph.h"
#include "pipeedge/count_dp.h"

namespace pe::detail::edge {

/// Among the schedules allowed by `graph`, the one with the fewest stages; among those,
/// stage by stage from the first: the host that comes first in devices.yml order, then the
/// stage that ends latest. Each class hands out its hosts in ascending order. `dp` must be
/// filled by run(false) and cover all layers. Only host and layers of the stages are set.
std::vector<EdgeStage> pick_schedule(const BoundGraph& graph, const CountDp& dp);

}  // namespace pe::detail::edge
