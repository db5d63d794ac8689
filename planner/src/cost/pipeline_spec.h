// The search's description of a candidate plan, before its costs are filled in.
#pragma once

#include <cstddef>
#include <vector>

#include "pe/schedule.h"

namespace pe::detail {

/// How a stage runs on its devices beyond data parallelism.
struct StageVariant {
  int tensor_parallel = 1;  ///< GPUs that split each operator (t); width / t replicas.
  bool recompute = false;   ///< The backward recomputes the forward instead of keeping it.
};

/// One stage: states [first, last] on devices [offset, offset + width) of every replica.
struct StageSpec {
  std::size_t first = 0;
  std::size_t last = 0;
  int offset = 0;
  int width = 1;
  StageVariant variant;
};

/// `replicas` copies of a pipeline; copy k owns devices [k * replica_width, (k+1) * ...).
struct PipelineSpec {
  int replicas = 1;
  int replica_width = 1;
  int micro_batch = 1;
  int micro_batches = 1;
  Schedule schedule = Schedule::OneFOneB;
  /// In pipeline order. Interleaved: p x chunks of them, stage j on the devices of stage j % p.
  std::vector<StageSpec> stages;
  int chunks = 1;  ///< Chunks per device group: >= 2 for the interleaved schedule, else 1.
};

}  // namespace pe::detail
