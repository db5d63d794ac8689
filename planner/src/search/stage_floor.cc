#include "search/stage_floor.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "search/stage_runs.h"

namespace pe::detail {
namespace {

constexpr Seconds kNone = std::numeric_limits<Seconds>::infinity();

// Lowers least[i], for each state i, to the floor of a stage holding i that runs as `run`:
// max(M (f + g) of i, M (f + g) of [i', i] + reach(i) - origin(i')) at its least over i' <= i.
void bound_states(const CostModel& cost, int micro_batches, const StageRun& run,
                  std::vector<Seconds>& least) {
  const CostModel::ExposedScan scan(cost, 0, run.samples, run.reducers, run.intra, run.variant,
                                    cost.slowest());
  const double speed = cost.fastest();
  Seconds before = 0;      // M (f + g) of states [0, i)
  Seconds ahead = -kNone;  // max over i' <= i of origin(i') + M (f + g) of [0, i')
  for (std::size_t i = 0; i < least.size(); ++i) {
    ahead = std::max(ahead, scan.origin(i) + before);
    const Seconds through =
        micro_batches * (cost.forward(0, i, run.samples, run.variant, 0, speed) +
                         cost.backward(0, i, run.samples, run.variant, 0, speed));
    least[i] = std::min(least[i], std::max(through - before, through + scan.reach(i) - ahead));
    before = through;
  }
}

// Lowers least[p], for each operator p of the spine of a model that is not a chain (its
// operator: what spine state p's cut adds to state p - 1's), to the floor of a stage holding
// it that runs as `run`: M (f + g) of the operator and its own all-reduce. The operator's last
// backward is followed only by the backwards of the stage's operators in front of it (y, no
// more than the rest x of the stage's work for one micro-batch), so the stage ends no earlier
// than M (f + g) of the operator + M x + (its all-reduce - y), which is no less.
void bound_operators(const CostModel& cost, int micro_batches, const StageRun& run,
                     std::vector<Seconds>& least) {
  const std::vector<std::uint32_t>& spine = cost.spine();
  const double speed = cost.fastest();
  for (std::size_t p = 0; p < spine.size(); ++p) {
    const std::size_t first = p == 0 ? 0 : spine[p - 1] + 1, last = spine[p];
    const Seconds work =
        micro_batches * (cost.forward(first, last, run.samples, run.variant, 0, speed) +
                         cost.backward(first, last, run.samples, run.variant, 0, speed));
    least[p] = std::min(
        least[p], work + cost.gradient_sync(first, last, run.variant, run.reducers, run.intra));
  }
}

// The least a one-stage plan running as `run` takes: M (f + g) of the whole model and its
// exposed all-reduce.
Seconds one_stage(const CostModel& cost, int micro_batches, const StageRun& run) {
  const std::size_t last = cost.states() - 1;
  CostModel::ExposedScan scan(cost, 0, run.samples, run.reducers, run.intra, run.variant,
                              cost.slowest());
  const double speed = cost.fastest();
  return micro_batches * (cost.forward(0, last, run.samples, run.variant, 0, speed) +
                          cost.backward(0, last, run.samples, run.variant, 0, speed)) +
         scan.extend_to(last);
}

}  // namespace

Seconds stage_floor(const CostModel& cost, const PipelineShapeChoice& shape, int width, int stride,
                    Seconds above) {
  if (cost.states() == 0 || (!cost.chain() && cost.spine().empty())) return 0;
  const int m = shape.micro_batches;
  const int share = shape.micro_batch * m;
  // Some stage holds each state of a chain, and each operator of a graph's spine.
  auto bound = [&cost, m](const StageRun& run, std::vector<Seconds>& least) {
    if (cost.chain()) {
      bound_states(cost, m, run, least);
    } else {
      bound_operators(cost, m, run, least);
    }
  };
  // The widest way, with as many replicas as a stage can take, reduced across machines: the
  // floor is no more than its bound, so where that is no more than `above` (the model's work
  // over the copy's devices: any model whose states' all-reduces do not bind), no other way
  // is tried.
  const StageRun widest_one{{},
                            stage_samples(true, share, shape.micro_batch, m, width).timed,
                            width * shape.replicas,
                            false};
  // The screen's bounds are those of one of the ways below: the search starts from them.
  Seconds single = one_stage(cost, m, widest_one);
  std::vector<Seconds> least(cost.chain() ? cost.states() : cost.spine().size(), kNone);
  if (width >= 2) {
    const int replicas = std::min(width, shape.micro_batch);
    const StageRun widest{{},
                          stage_samples(false, share, shape.micro_batch, m, replicas).timed,
                          replicas * shape.replicas,
                          false};
    bound(widest, least);
  }
  const Seconds pipelines = width >= 2 ? *std::max_element(least.begin(), least.end()) : kNone;
  if (std::min(single, pipelines) <= above) return 0;
  single = std::min(single, one_stage_floor(cost, shape, width, stride));
  if (width < 2) return single;
  each_run(cost, shape, width, stride, false, [&](const StageRun& run) { bound(run, least); });
  return std::min(single, *std::max_element(least.begin(), least.end()));
}

Seconds one_stage_floor(const CostModel& cost, const PipelineShapeChoice& shape, int width,
                        int stride) {
  if (cost.states() == 0) return 0;
  Seconds least = kNone;  // each_run visits one replica without tensor parallelism at least
  each_run(cost, shape, width, stride, true, [&](const StageRun& run) {
    least = std::min(least, one_stage(cost, shape.micro_batches, run));
  });
  return least;
}

}  // namespace pe::detail
