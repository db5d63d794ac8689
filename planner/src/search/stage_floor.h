// The stage floor of a pipeline shape: a lower bound on every plan of the shape from the
// stage that holds each state, however the model is cut.
#pragma once

#include "cost/cost_model.h"
#include "search/pipeline_shapes.h"

namespace pe::detail {

/// A lower bound on every plan of `shape` whose copies are `width` devices wide, on a chain
/// or a graph with a spine (ModelProfile::spine; 0 on a graph without).
/// On a chain some stage holds each state i. Its devices run M forwards and backwards of its
/// states, the last backward ends no earlier than their sum, and then what is left of its
/// all-reduce runs (CostModel::ExposedScan: at least the largest reach over its states minus
/// the origin of its first). So every plan of two stages or more takes at least, for each
/// state, the least over the ways a stage holding it can run (tensor-parallel degree,
/// data-parallel replicas, the samples they get, the all-reduce inside a machine or across)
/// and over its first state i' <= i of max(M (f + g) of state i, M (f + g) of [i', i] +
/// reach(i) - origin(i')), compute at the fastest GPUs' speed and the all-reduce overlapped
/// with the slowest's backward; and a one-stage plan the least over its widths of M (f + g)
/// of the whole model and its exposed all-reduce.
/// On a graph some stage holds each operator of the spine (what its cut adds to the one
/// before), and every plan of two stages or more takes at least, for each, the least over
/// those ways of M (f + g) of the operator and its own all-reduce: the operator's gradients
/// are reduced after its last backward, which only the backwards of the stage's operators in
/// front of it follow (the chain's bound with i' = i).
/// It binds where a stage's all-reduce, which no cut can split below one state's, limits the
/// plan: GNMT-16 at GBS 512 on 256 GPUs, whose embeddings' gradients cross machines in every
/// plan of many copies. Copies' first devices are at least `stride` apart (a shape's own
/// plans: `width`; 1 covers the same shape with copies of any width up to `width`, as on the
/// cluster's first machines): a stage's devices in every copy share a machine only where copy
/// 0's first to copy r - 1's last fit one, so copies a machine wide or wider reduce every
/// stage across machines.
/// 0 where it cannot be above `above`: the way with the most replicas, reduced across
/// machines, bounds the floor from above, so where its bound is no more, the floor is no
/// more and no other way is tried (one O(n) pass instead of O(n sqrt(b)): on models whose
/// states' all-reduces are small beside their compute, such as NASNet-A large's 1,250
/// states, the floor is below the work floor).
Seconds stage_floor(const CostModel& cost, const PipelineShapeChoice& shape, int width, int stride,
                    Seconds above = 0);

/// A lower bound on every one-stage plan of `shape` whose copies are at most `width` devices
/// wide, first devices at least `stride` apart (as for stage_floor), on any graph: the least
/// over its widths of M (f + g) of the whole model and its exposed all-reduce (the stage's
/// ends are the model's, as in evaluate).
Seconds one_stage_floor(const CostModel& cost, const PipelineShapeChoice& shape, int width,
                        int stride);

}  // namespace pe::detail
