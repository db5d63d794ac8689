// Brute force for heterogeneous pipelines: tries every split and every host assignment.
#pragma once

#include <vector>

#include "pe/edge.h"

namespace pe::edge_test {

/// The best schedule by exhaustive enumeration, with the tie-break schedule_pipeline
/// documents: least bottleneck, then fewest stages, then per stage from the first the
/// smallest host index, then the latest last layer. Hosts of one type are taken in
/// cluster.hosts order. Empty when nothing fits. Exponential: for tiny pools only.
std::vector<EdgeStage> brute_force_schedule(const EdgeModel& model, const EdgeCluster& cluster,
                                            const EdgeSettings& settings);

}  // namespace pe::edge_test
