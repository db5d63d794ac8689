// The search's first candidates, which let its exact passes prune from the start: per shape
// the one-stage plan and equal-work pipelines; the accumulation plans (data parallelism with
// gradient accumulation) of every copy count; and the best of them polished by local moves.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cost/cost_model.h"
#include "cost/pipeline_spec.h"
#include "pe/planner.h"
#include "search/pipeline_shapes.h"
#include "search/polish.h"

namespace pe::detail {

/// Appends to `seeds` the fitting plans of a shape: the one-stage plan (plain data
/// parallelism inside each copy) and equal-width pipelines of 2, 4, 8, ... stages cut at
/// equal work, on the whole copy, on its first 1, 2, 4, ... machines' worth of devices (slow
/// links between machines often leave devices idle) and on as many devices as the copy has
/// samples, when fewer; for a model that can split, each with every stage split t ways, for
/// each degree t. Stages are at most `max_width` devices wide (0: no limit).
void seed(const CostModel& cost, int global_batch, const PipelineShapeChoice& shape, int max_width,
          std::vector<CostedPlan>& seeds);

/// The one-stage plan that runs each of `replicas` copies as data parallelism with gradient
/// accumulation: 1F1B on every device of the copy, the fewest micro-batches M whose
/// micro-steps (ceil(share / (M x width)) samples per device) fit memory, micro-batches of
/// ceil(share / M) samples (some one smaller when M does not divide the copy's share), the
/// smallest at least the micro-batch floor. It is in the search space even where M does not
/// divide the share, so that a plan is never worse than data parallelism on batch sizes the
/// devices do not divide. Empty when nothing fits. `replicas` divides the device count and
/// the batch.
std::optional<PipelineSpec> accumulation_spec(const CostModel& cost, int global_batch,
                                              int replicas);

/// Appends the fitting accumulation plans (accumulation_spec) of every copy count within the
/// options' limits, when 1F1B is searched.
void seed_accumulation(const CostModel& cost, int global_batch, const SearchOptions& options,
                       std::vector<CostedPlan>& seeds);

/// Polishes (search/polish.h) the seed of least path bound of each of the 8 shapes of least
/// bound, those within 50 % of the least, spending `pairs` simulated pairs; appends the
/// polished plans that improved. (Ranking by bound spares simulating every seed.)
void polish_seeds(const CostModel& cost, int global_batch, int width_limit, std::int64_t& pairs,
                  std::vector<CostedPlan>& seeds);

}  // namespace pe::detail
