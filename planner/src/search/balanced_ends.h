// Equal-work cuts of the model: the seeds' pipelines and the interleaved schedule's chunks.
#pragma once

#include <cstddef>
#include <vector>

#include "cost/cost_model.h"

namespace pe::detail {

/// Cuts the states into one run per entry of `speeds`, each of about its share of the work
/// of one micro-batch of `micro_batch` samples (speed over the sum of speeds; each end the
/// state whose prefix sum is nearest its share), each a stage (CostModel::stage: when the
/// states are not a chain, an end's cut contains the previous one). Returns each run's last
/// state; fewer runs than speeds when the states run out.
std::vector<std::size_t> balanced_ends(const CostModel& cost, const std::vector<double>& speeds,
                                       int micro_batch);

}  // namespace pe::detail
