// The ways a stage of a pipeline shape can run, as the floors take them (stage_floor.h,
// transfer_fill.h): variant, samples per device, the GPUs its gradients are reduced over and
// whether they may sit on one machine.
#pragma once

#include <algorithm>

#include "cost/cost_model.h"
#include "cost/pipeline_spec.h"
#include "cost/stage_samples.h"
#include "search/pipeline_shapes.h"

namespace pe::detail {

// How a stage of the shape runs: its variant, the samples each device times, the GPUs its
// gradients are reduced over, and whether they sit on one machine.
struct StageRun {
  StageVariant variant;
  double samples = 0;
  int reducers = 1;
  bool intra = false;
};

// Calls visit(run) for each way a stage of the shape on at most `width` devices of each
// copy can run (one_stage: a one-stage plan's). Of data-parallel replicas that time the
// same samples only the fewest: the others reduce over more GPUs. Without recomputation
// only: it adds compute and leaves the all-reduce as it is. A stage's devices in every copy
// share a machine only where they fit one: r times its devices, and copy 0's first to copy
// r - 1's last ((r - 1) `stride` + its devices, copies at least `stride` apart).
template <typename Visit>
inline void each_run(const CostModel& cost, const PipelineShapeChoice& shape, int width, int stride,
                     bool one_stage, Visit visit) {
  const int share = shape.micro_batch * shape.micro_batches;
  const int machine = cost.largest_machine();
  for (int t = 1; t <= cost.max_tensor_parallel() && t <= width; ++t) {
    if (!cost.tensor_parallel_allowed(t)) continue;
    const int most = one_stage ? width / t : std::min(width / t, shape.micro_batch);
    double last = -1;
    for (int replicas = 1; replicas <= most; ++replicas) {
      const double samples =
          stage_samples(one_stage, share, shape.micro_batch, shape.micro_batches, replicas).timed;
      if (samples == last) continue;
      last = samples;
      StageRun run{StageVariant{t, false}, samples, replicas * shape.replicas, false};
      visit(run);
      // Its devices in every copy on one machine.
      const int devices = replicas * t;
      if (shape.replicas * devices <= machine &&
          (shape.replicas - 1) * stride + devices <= machine) {
        run.intra = true;
        visit(run);
      }
    }
  }
}

}  // namespace pe::detail
