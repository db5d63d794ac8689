// The transfer fill of a pipeline shape: whether any plan of two stages or more can fill and
// drain its pipeline by a time T on a copy's devices, with the transfers its cuts make.
#pragma once

#include <cstdint>

#include "cost/cost_model.h"
#include "search/pipeline_shapes.h"

namespace pe::detail {

/// What transfer_fill_check found about a time T.
enum class FillCheck {
  Possible,    ///< some cut of the model and stage widths passes every test below by T
  Impossible,  ///< none does: every plan of two stages or more takes longer than T
  Stopped      ///< the check ran out of steps
};

/// Whether some plan of `shape` (1F1B or GPipe) of two stages or more, on copies of at most
/// `width` devices whose first devices are at least `stride` apart, can end by T (`time`),
/// from terms of the path bound (cost/path_bound.h) that hold for every plan, each with the
/// least its stages and cuts can cost:
///   - B: stage k's operations, after micro-batch 0's forward reached it and before the last
///     one's backward leaves it: T >= P_k + M (f + g)_k, where P_k is the round trip of the
///     stages before k (their f + g and twice each cut's transfer, k's own cut included);
///   - C and L: the cut into stage k carries M transfers one after another, and micro-batch 0
///     crosses it both ways: T >= P_k + (M - 1) c_k + (f + g)_k;
///   - the all-reduce of stage k starts after its last backward, which ends no earlier than
///     micro-batch 0's forward reached it and the stage ran its M forwards and backwards:
///     T >= P_f + M (f + g)_k + what is left of it then (CostModel::ExposedScan), where P_f,
///     the forwards and transfers of P_k, is at least s P_k, s the least f / (f + g) of any
///     stage (on a chain, of any state), and at most 1/2;
///   - the copy's devices: the stages' widths add up to at most `width`.
/// A stage of w replicas of t GPUs runs ceil(b / w) samples on each at the fastest GPUs'
/// speed, and its all-reduce is overlapped with the slowest's backward, across machines or
/// inside one where its devices in every copy may fit one, whichever leaves less (as the stage
/// floor takes them: stage_runs.h). Its cut to the next stage carries the micro-batch's
/// crossing bytes / t (the least of the two stages' degrees is at most t), across machines
/// where a stage next to it is at least a machine wide (two stages then span more than the
/// largest machine), otherwise over the faster link. So every plan passes the tests with its own
/// cuts and widths, and a T no cut passes is below every plan's path bound, hence below its
/// simulated time. A dynamic program over the states finds the least P up to each state for each
/// number of device units used
/// (`width` counted in at most 64 units, a stage counting floor(its devices x units / width):
/// the units of a plan's stages add up to at most the copy's) and whether its last stage is a
/// machine wide; a state dominated by one of no more units, no wider last stage and no larger
/// P is not extended. On a chain a stage's times and exposed all-reduce grow with its states,
/// so the first stage that fails ends the stages tried from a state; on a graph, whose stages'
/// times are differences of two cuts', only one where the least any longer stage can take
/// (the largest fall of the cuts' f + g past its last state) fails B, C or L.
/// It binds where transfers bind: copies of few devices per micro-batch sample, whose cuts
/// carry large micro-batches across machines. NASNet-A large at GBS 512 on 1,024 GPUs, one
/// copy of 8 micro-batches of 64: above the best plan of any shape (67 ms), where its work and
/// fill floors give 23 ms. Each step is a stage tried or a cell allocated; at more than `limit`
/// steps (added to `steps`) the check stops.
FillCheck transfer_fill_check(const CostModel& cost, const PipelineShapeChoice& shape, int width,
                              int stride, Seconds time, std::uint64_t limit, std::uint64_t& steps);

}  // namespace pe::detail
