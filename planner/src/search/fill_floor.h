// The fill floor of a pipeline shape: a lower bound on every plan of two stages or more,
// from how a pipeline fills, however the model is cut.
#pragma once

#include "cost/cost_model.h"
#include "search/pipeline_shapes.h"

namespace pe::detail {

/// A lower bound on every plan of `shape` (1F1B or GPipe) of two stages or more whose copies
/// are at most `width` devices wide; infinity where no such plan fits (a copy of one device).
/// Each stage k runs its M forwards and backwards one after another (t_k = f_k + g_k a
/// micro-batch), after micro-batch 0's forwards on the stages before it and before the last
/// one's backwards there, so T >= t_0 + ... + t_{k-1} + M t_k for every k: each t_k <= (T -
/// the t's before it) / M, and the j largest t's add up to at most T (1 - q^j), q = 1 - 1/M.
/// A stage of w replicas of t GPUs runs ceil(b / w) samples on each, so it does its work
/// (f + g of its states for the micro-batch's b samples) at most e = b / ceil(b / w) x split(t)
/// times as fast as one GPU, with e <= c, the most a stage of at most width - 1 devices
/// reaches, and the e's add up to at most the copy's devices (times the tensor-parallel
/// efficiency where it is above 1). The work the pipeline can do by T is then at most
/// T (c (1 - q^n) + r q^n / M), n full stages of c and r left over; T is at least the work of
/// a micro-batch over that. It binds where a stage cannot take a copy's devices: ResNet-101 at
/// GBS 512 on 256 GPUs, one copy of 4 micro-batches of 128, is at least 14 % above its work
/// floor (stages of at most 128 replicas, 4 micro-batches to fill them); with many
/// micro-batches it tends to the work floor.
Seconds fill_floor(const CostModel& cost, const PipelineShapeChoice& shape, int width);

}  // namespace pe::detail
