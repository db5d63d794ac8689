#include "search/transfer_fill.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "search/stage_runs.h"

namespace pe::detail {
namespace {

constexpr Seconds kUnfilled = std::numeric_limits<Seconds>::infinity();

// A copy's devices are counted in at most this many units.
constexpr int kFillUnits = 64;

// How a stage of the shape can run (StageRun, where `intra` says its all-reduce may stay inside
// a machine), its devices, the units they count and whether they are at least a machine.
struct FillWay {
  StageRun run;
  int devices = 0;
  int units = 0;
  bool wide = false;
};

// Each way a stage of at most `width` devices, copies at least `stride` apart, can run
// (each_run, which visits a way inside a machine right after the same way across).
std::vector<FillWay> stage_ways(const CostModel& cost, const PipelineShapeChoice& shape, int width,
                                int stride, int units) {
  std::vector<FillWay> ways;
  each_run(cost, shape, width, stride, false, [&](const StageRun& run) {
    if (run.intra) {
      ways.back().run.intra = true;
      return;
    }
    const int devices = run.reducers / shape.replicas * run.variant.tensor_parallel;
    ways.push_back({run, devices, devices * units / width, devices >= cost.largest_machine()});
  });
  return ways;
}

// The least share of a stage's round trip its forward and transfers take: f / (f + g) of any
// stage, and 1/2 (a transfer each way; tensor-parallel all-reduces and weight gathers, the same
// in both passes, only move a stage's share towards 1/2), so P_f >= share x P. On a chain a
// stage's f and g add up its states', so the least over single states; on a graph a state's
// are differences of two cuts', so the least over every stage.
double forward_share(const CostModel& cost) {
  double share = 0.5;
  auto take = [&](std::size_t first, std::size_t last) {
    const Seconds f = cost.forward(first, last, 1), g = cost.backward(first, last, 1);
    if (f + g > 0) share = std::min(share, std::max(0.0, f) / (f + g));
  };
  for (std::size_t i = 0; i < cost.states(); ++i)
    if (cost.chain()) {
      take(i, i);
    } else {
      for (std::size_t j = i; j < cost.states(); ++j)
        if (cost.stage(i, j)) take(i, j);
    }
  return share;
}

// Per state j, the least f + g of one sample (at the model's speed) that states j + 1 .. j'
// add, over every j' >= j (0 for none): stages grow from j by at least this.
std::vector<Seconds> largest_drops(const CostModel& cost) {
  const std::size_t n = cost.states();
  std::vector<Seconds> drops(n, 0);
  Seconds least = kUnfilled;  // least f + g of states [0, j'] over j' > j
  for (std::size_t j = n; j-- > 0;) {
    const Seconds through = cost.forward(0, j, 1) + cost.backward(0, j, 1);
    drops[j] = std::min(0.0, least - through);
    least = std::min(least, through);
  }
  return drops;
}

// The least exposed all-reduce of a stage from state `first` run as `way`, to a growing last
// state: across machines, and inside one where its devices fit one (either link may be the
// faster), overlapped with the slowest GPUs' backward (as the stage floor takes it).
class Exposure {
 public:
  Exposure(const CostModel& cost, std::size_t first, const FillWay& way)
      : across_(cost, first, way.run.samples, way.run.reducers, false, way.run.variant,
                cost.slowest()),
        inside_(cost, first, way.run.samples, way.run.reducers, true, way.run.variant,
                cost.slowest()),
        intra_(way.run.intra) {}
  Seconds to(std::size_t last) {
    const Seconds across = across_.extend_to(last);
    return std::max(0.0, intra_ ? std::min(across, inside_.extend_to(last)) : across);
  }

 private:
  CostModel::ExposedScan across_, inside_;
  bool intra_;
};

// The dynamic program of transfer_fill_check for one time.
class FillProgram {
 public:
  FillProgram(const CostModel& cost, const PipelineShapeChoice& shape, int width, int stride,
              Seconds time)
      : cost_(cost),
        shape_(shape),
        n_(cost.states()),
        units_(std::min(width, kFillUnits)),
        ways_(stage_ways(cost, shape, width, stride, units_)),
        forward_share_(forward_share(cost)),
        drop_(cost.chain() ? std::vector<Seconds>() : largest_drops(cost)),
        time_(time) {}

  FillCheck run(std::uint64_t limit, std::uint64_t& steps) {
    // Its cells, where the steps allow them (a check that could not fill them takes none).
    const std::size_t cells = (n_ + 1) * static_cast<std::size_t>(units_ + 1) * 2;
    if (steps + cells > limit) return FillCheck::Stopped;
    steps += cells;
    least_.assign(cells, kUnfilled);
    least_[cell(0, 0, false)] = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      // The least P of no more units, so far, ending with a narrow stage (or none) and with any.
      Seconds narrow = kUnfilled, any = kUnfilled;
      for (int u = 0; u <= units_; ++u) {
        const Seconds p_narrow = least_[cell(i, u, false)], p_wide = least_[cell(i, u, true)];
        if (p_narrow < narrow && !extend(i, u, false, p_narrow, limit, steps))
          return FillCheck::Stopped;
        narrow = std::min(narrow, p_narrow);
        any = std::min(any, narrow);
        if (p_wide < any && !extend(i, u, true, p_wide, limit, steps)) return FillCheck::Stopped;
        any = std::min(any, p_wide);
      }
    }
    for (int u = 0; u <= units_; ++u)
      if (least_[cell(n_, u, false)] < kUnfilled || least_[cell(n_, u, true)] < kUnfilled)
        return FillCheck::Possible;
    return FillCheck::Impossible;
  }

 private:
  std::size_t cell(std::size_t state, int units, bool wide) const {
    return (state * static_cast<std::size_t>(units_ + 1) + static_cast<std::size_t>(units)) * 2 +
           (wide ? 1 : 0);
  }

  // The least transfer of the cut after state `last` into a stage run as `way`: across
  // machines where a stage next to it is a machine wide, else either way (either link may be
  // the faster).
  Seconds transfer(std::size_t last, const FillWay& way, bool wide_before) const {
    const Bytes bytes = cost_.crossing(last, shape_.micro_batch) / way.run.variant.tensor_parallel;
    const Seconds across = cost_.transfer(bytes, false);
    return way.wide || wide_before ? across : std::min(across, cost_.transfer(bytes, true));
  }

  // Tries every stage from state i after stages that used u units, the last of them wide or
  // not, with round trip p; false where the steps ran out.
  bool extend(std::size_t i, int u, bool wide_before, Seconds p, std::uint64_t limit,
              std::uint64_t& steps) {
    const int m = shape_.micro_batches;
    for (const FillWay& way : ways_) {
      if (u + way.units > units_) continue;
      const Seconds c = i == 0 ? 0 : transfer(i - 1, way, wide_before);
      const Seconds before = p + 2 * c;  // P of the stage
      if (before + (m - 1) * c > time_) continue;
      Exposure exposed(cost_, i, way);
      const bool plain = way.run.variant.tensor_parallel == 1;  // its times scale the profile's
      for (std::size_t j = i; j < n_; ++j) {
        if (++steps > limit) return false;
        const Seconds t =
            cost_.forward(i, j, way.run.samples, way.run.variant, 0, cost_.fastest()) +
            cost_.backward(i, j, way.run.samples, way.run.variant, 0, cost_.fastest());
        auto late = [&](Seconds time) {  // its operations or its cut's end after T
          return before + std::max(m * time, (m - 1) * c + time) > time_;
        };
        // On a chain a longer stage takes no less; on a graph no less than the least of the
        // longer ones (drop_), for stages that scale the profile's times.
        if (cost_.chain() ? late(t)
                          : plain && late(t + drop_[j] * way.run.samples / cost_.fastest()))
          break;
        if (!cost_.stage(i, j) || late(t)) continue;
        // Its all-reduce: after its last backward, which ends no earlier than P_f + M (f + g).
        const Seconds reduced = forward_share_ * before + m * t + exposed.to(j);
        if (reduced > time_) {
          if (cost_.chain()) break;  // longer stages leave no less exposed
          continue;
        }
        if (i == 0 && j + 1 == n_) continue;  // one stage
        Seconds& least = least_[cell(j + 1, u + way.units, way.wide)];
        least = std::min(least, before + t);
      }
    }
    return true;
  }

  const CostModel& cost_;
  const PipelineShapeChoice& shape_;
  std::size_t n_;
  int units_;
  std::vector<FillWay> ways_;
  double forward_share_;
  // On a graph, per state j, the most f + g of one sample a stage's times can fall as it
  // grows past j (0 or less): its states' f + g are differences of two cuts'.
  std::vector<Seconds> drop_;
  Seconds time_;
  // Per state, units used and whether the last stage is wide: the least round trip of stages
  // that hold the states before it.
  std::vector<Seconds> least_;
};

// Whether the check claims anything: two stages need two states and a copy of two devices, and
// interleaved chunks loop through the devices (not these terms).
bool applies(const CostModel& cost, const PipelineShapeChoice& shape, int width) {
  return width >= 2 && cost.states() >= 2 && shape.schedule != Schedule::Interleaved;
}

}  // namespace

FillCheck transfer_fill_check(const CostModel& cost, const PipelineShapeChoice& shape, int width,
                              int stride, Seconds time, std::uint64_t limit, std::uint64_t& steps) {
  if (!applies(cost, shape, width)) return FillCheck::Possible;  // claims nothing
  return FillProgram(cost, shape, width, stride, time).run(limit, steps);
}

}  // namespace pe::detail
