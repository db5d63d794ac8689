// The one-stage rule: how many samples per device a stage's compute and memory are
// charged for. The cost of a plan (evaluate), the search (pipeline_dp, the seeds) and the
// tests' exhaustive oracle all take it from here.
#pragma once

namespace pe::detail {

/// Per-device samples of one stage for one micro-batch slot.
struct StageSamples {
  double timed = 0;   ///< Sets the stage's forward, backward and exposed all-reduce times.
  double memory = 0;  ///< Sets the activations one micro-batch keeps on a device.
};

/// Samples per device of a stage on `width` devices in a copy whose share of the global
/// batch is `share`, run as `micro_batches` micro-batches of at most `micro_batch` samples.
/// A pipeline stage runs each micro-batch split over its devices: ceil(b / width) samples,
/// timed and kept. A stage that holds the whole model (`one_stage`, a one-stage plan)
/// exchanges nothing between micro-batches, so, as in data parallelism with gradient
/// accumulation, its devices run their ceil(share / width) samples of the iteration in M
/// micro-steps of at most ceil(b / width) (b >= share / M): the timed samples are
/// ceil(share / width) / M (times are linear in samples, so the average gives the
/// iteration's compute), the memory ones ceil(b / width).
StageSamples stage_samples(bool one_stage, int share, int micro_batch, int micro_batches,
                           int width);

/// The most devices a stage may use out of `devices`: all of them for a one-stage plan
/// (stage_samples spreads the iteration's samples), at most `micro_batch` data-parallel
/// replicas of at most `tensor_parallel` GPUs each for a pipeline stage (more replicas would
/// hold no sample of a micro-batch).
int max_stage_width(bool one_stage, int micro_batch, int devices, int tensor_parallel = 1);

}  // namespace pe::detail
