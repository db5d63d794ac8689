#include "search/polish.h"

#include <algorithm>

#include "cost/evaluate.h"
#include "cost/layout.h"
#include "cost/stage_samples.h"
#include "cost/stage_variants.h"
#include "pe/timeline.h"
#include "search/candidate_pool.h"

namespace pe::detail {
namespace {

constexpr double kBetter = 1e-9;  // relative improvement a move must make
// What evaluating a plan costs beside its simulation, counted in simulated pairs.
constexpr std::int64_t kEvaluationPairs = 8192;

// Whether every stage of `spec` is a stage of the model, within the width limits and in a
// variant its devices allow; offsets are recomputed from the widths first.
bool valid(const CostModel& cost, PipelineSpec& spec, int width_limit) {
  const Layout layout = cost.layout(spec.replicas, spec.replica_width);
  const bool one = spec.stages.size() == 1;
  int offset = 0;
  for (StageSpec& s : spec.stages) {
    if (s.first > s.last || !cost.stage(s.first, s.last) || s.width < 1) return false;
    const int t = s.variant.tensor_parallel;
    if (s.width > max_stage_width(one, spec.micro_batch, s.width, t)) return false;
    if (width_limit > 0 && s.width > width_limit) return false;
    s.offset = offset;
    offset += s.width;
    const int most = one ? s.width : spec.micro_batch;
    const std::vector<StageVariant> allowed = stage_variants(cost, layout, s.offset, s.width, most);
    if (std::none_of(allowed.begin(), allowed.end(), [&](const StageVariant& v) {
          return v.tensor_parallel == t && v.recompute == s.variant.recompute;
        }))
      return false;
  }
  return offset <= spec.replica_width;
}

// Evaluates and simulates `spec` within the pair budget; empty when it does not fit or the
// budget is spent.
std::optional<CostedPlan> try_spec(const CostModel& cost, const PipelineSpec& spec,
                                   int global_batch, std::int64_t& pairs) {
  const std::int64_t cost_pairs =
      static_cast<std::int64_t>(spec.stages.size()) * spec.micro_batches + kEvaluationPairs;
  if (cost_pairs > pairs) return std::nullopt;
  pairs -= cost_pairs;
  std::optional<Plan> plan = simulated_plan(cost, spec, global_batch);
  if (!plan) return std::nullopt;
  return CostedPlan{spec, std::move(*plan)};
}

// A stage of at least two groups of t devices split into two stages, at its middle state,
// the first with half of its groups (rounded down).
void add_splits(const PipelineSpec& spec, std::vector<PipelineSpec>& out) {
  for (std::size_t i = 0; i < spec.stages.size(); ++i) {
    const StageSpec& stage = spec.stages[i];
    const int t = stage.variant.tensor_parallel;
    if (stage.width / t < 2 || stage.first == stage.last) continue;
    StageSpec front = stage, back = stage;
    front.last = (stage.first + stage.last) / 2;
    front.width = stage.width / t / 2 * t;
    back.first = front.last + 1;
    back.width = stage.width - front.width;
    PipelineSpec m = spec;
    m.stages[i] = front;
    m.stages.insert(m.stages.begin() + static_cast<std::ptrdiff_t>(i) + 1, back);
    out.push_back(std::move(m));
  }
}

// A stage's first or last state peeled off onto one device of its own: an idle one of the
// copy (the stage keeps its width), or one of the stage's. Stages split t > 1 ways keep their
// states together (their variant is the stage's).
void add_peels(const PipelineSpec& spec, std::vector<PipelineSpec>& out) {
  for (std::size_t i = 0; i < spec.stages.size(); ++i) {
    const StageSpec& stage = spec.stages[i];
    if (stage.first == stage.last || stage.variant.tensor_parallel != 1) continue;
    for (const int taken : {0, 1}) {  // devices the peeled state takes from the stage
      if (taken >= stage.width) continue;
      for (const bool last : {false, true}) {
        StageSpec peeled = stage, rest = stage;
        peeled.width = 1;
        peeled.variant.recompute = false;
        rest.width = stage.width - taken;
        peeled.first = peeled.last = last ? stage.last : stage.first;
        (last ? rest.last : rest.first) = last ? stage.last - 1 : stage.first + 1;
        PipelineSpec m = spec;
        m.stages[i] = last ? rest : peeled;
        m.stages.insert(m.stages.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                        last ? peeled : rest);
        out.push_back(std::move(m));
      }
    }
  }
}

// A stage one group of t devices wider, from the copy's idle devices.
void add_widenings(const PipelineSpec& spec, std::vector<PipelineSpec>& out) {
  for (std::size_t i = 0; i < spec.stages.size(); ++i) {
    PipelineSpec m = spec;
    m.stages[i].width += m.stages[i].variant.tensor_parallel;
    out.push_back(std::move(m));
  }
}

// Two neighbouring stages of one variant merged into one stage on their devices.
void add_merges(const PipelineSpec& spec, std::vector<PipelineSpec>& out) {
  for (std::size_t i = 0; i + 1 < spec.stages.size(); ++i) {
    const StageSpec &front = spec.stages[i], &back = spec.stages[i + 1];
    if (front.variant.tensor_parallel != back.variant.tensor_parallel ||
        front.variant.recompute != back.variant.recompute)
      continue;
    PipelineSpec m = spec;
    m.stages[i].last = back.last;
    m.stages[i].width += back.width;
    m.stages.erase(m.stages.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    out.push_back(std::move(m));
  }
}

// The moves from `spec`, in a fixed order: boundary shifts (largest first, up to an eighth
// of the model's states), device moves between neighbours, then splits and merges of stages,
// and with `peels` peeled states and widened stages.
std::vector<PipelineSpec> moves(const PipelineSpec& spec, std::size_t states, bool peels) {
  std::vector<PipelineSpec> out;
  const std::size_t n = spec.stages.size();
  long largest = 1;  // the largest power of two up to an eighth of the states, at least 16
  while (largest < 16 || largest * 16 <= static_cast<long>(states)) largest *= 2;
  for (std::size_t i = 0; i + 1 < n; ++i)
    for (long step = largest; step >= 1; step /= 2)
      for (long sign : {-1L, 1L}) {
        const long last = static_cast<long>(spec.stages[i].last) + sign * step;
        if (last < static_cast<long>(spec.stages[i].first) ||
            last >= static_cast<long>(spec.stages[i + 1].last))
          continue;
        PipelineSpec m = spec;
        m.stages[i].last = static_cast<std::size_t>(last);
        m.stages[i + 1].first = static_cast<std::size_t>(last) + 1;
        out.push_back(std::move(m));
      }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j : {i - 1, i + 1}) {  // from stage i to neighbour j (i - 1 wraps at 0)
      if (j >= n) continue;
      const int t = spec.stages[i].variant.tensor_parallel;
      if (spec.stages[j].variant.tensor_parallel != t) continue;
      // Groups of t devices: the most a power of two of them that leaves stage i some, then
      // halves of that, down to one group.
      int groups = 1;
      while ((2 * groups + 1) * t <= spec.stages[i].width) groups *= 2;
      for (; groups >= 1 && groups * t < spec.stages[i].width; groups /= 2) {
        PipelineSpec m = spec;
        m.stages[i].width -= groups * t;
        m.stages[j].width += groups * t;
        out.push_back(std::move(m));
      }
    }
  add_splits(spec, out);
  add_merges(spec, out);
  if (peels) {
    add_peels(spec, out);
    add_widenings(spec, out);
  }
  return out;
}

// The moves of simplify(), in its order: merges of neighbouring stages of one variant (on
// both widths, the wider's, the narrower's), then a group of t devices less on a stage.
std::vector<PipelineSpec> simpler(const PipelineSpec& spec) {
  std::vector<PipelineSpec> out;
  for (std::size_t i = 0; i + 1 < spec.stages.size(); ++i) {
    const StageSpec &front = spec.stages[i], &back = spec.stages[i + 1];
    if (front.variant.tensor_parallel != back.variant.tensor_parallel ||
        front.variant.recompute != back.variant.recompute)
      continue;
    const int widths[] = {front.width + back.width, std::max(front.width, back.width),
                          std::min(front.width, back.width)};
    for (int k = 0; k < 3; ++k) {
      if (k > 0 && widths[k] == widths[k - 1]) continue;
      PipelineSpec m = spec;
      m.stages[i].last = back.last;
      m.stages[i].width = widths[k];
      m.stages.erase(m.stages.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      out.push_back(std::move(m));
    }
  }
  for (std::size_t i = 0; i < spec.stages.size(); ++i) {
    const int t = spec.stages[i].variant.tensor_parallel;
    if (spec.stages[i].width <= t) continue;
    PipelineSpec m = spec;
    m.stages[i].width -= t;
    out.push_back(std::move(m));
  }
  return out;
}

// From `start`, the first of `moves_of` the plan so far (in order) that `better` takes over
// it, until none is taken or `pairs` runs out; empty when `start` does not fit or no move was
// taken.
template <typename Moves, typename Better>
std::optional<CostedPlan> descend(const CostModel& cost, const PipelineSpec& start,
                                  int global_batch, int width_limit, std::int64_t& pairs,
                                  Moves moves_of, Better better) {
  std::optional<CostedPlan> best = try_spec(cost, start, global_batch, pairs);
  if (!best) return std::nullopt;
  bool any = false;
  for (bool moved = true; moved && pairs > 0;) {
    moved = false;
    for (PipelineSpec& m : moves_of(best->spec)) {
      if (!valid(cost, m, width_limit)) continue;
      std::optional<CostedPlan> tried = try_spec(cost, m, global_batch, pairs);
      if (tried && better(tried->plan, best->plan)) {
        best = std::move(tried);
        moved = any = true;
        break;
      }
      if (pairs <= 0) break;
    }
  }
  if (!any) return std::nullopt;
  return best;
}

}  // namespace

std::optional<Plan> simulated_plan(const CostModel& cost, const PipelineSpec& spec,
                                   int global_batch) {
  Evaluation ev = evaluate(cost, spec, global_batch);
  if (!ev.fits) return std::nullopt;
  set_simulated(ev.plan, simulated_makespan(ev.plan.shape()));
  return std::move(ev.plan);
}

std::optional<CostedPlan> simplify(const CostModel& cost, const PipelineSpec& start,
                                   int global_batch, Seconds& fastest, double margin,
                                   int width_limit, std::int64_t& pairs) {
  return descend(
      cost, start, global_batch, width_limit, pairs, simpler,
      [&](const Plan& tried, const Plan& now) {
        if (tried.iteration_time > fastest * (1 + margin) || !(simplicity(tried) < simplicity(now)))
          return false;
        fastest = std::min(fastest, tried.iteration_time);
        return true;
      });
}

std::optional<CostedPlan> polish(const CostModel& cost, const PipelineSpec& start, int global_batch,
                                 int width_limit, std::int64_t& pairs, bool peels) {
  return descend(
      cost, start, global_batch, width_limit, pairs,
      [&](const PipelineSpec& spec) { return moves(spec, cost.states(), peels); },
      [](const Plan& tried, const Plan& now) {
        return tried.iteration_time < now.iteration_time * (1 - kBetter);
      });
}

std::optional<CostedPlan> one_f_one_b_twin(const CostModel& cost, const PipelineSpec& spec,
                                           int global_batch) {
  if (spec.schedule != Schedule::GPipe || spec.stages.size() < 2 || spec.micro_batches < 2)
    return std::nullopt;
  PipelineSpec twin = spec;
  twin.schedule = Schedule::OneFOneB;
  Evaluation ev = evaluate(cost, twin, global_batch);
  if (!ev.fits) return std::nullopt;
  return CostedPlan{std::move(twin), std::move(ev.plan)};
}

}  // namespace pe::detail
