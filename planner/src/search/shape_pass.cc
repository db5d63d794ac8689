#include "search/shape_pass.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "cost/evaluate.h"
#include "search/fill_floor.h"
#include "search/hybrid_search.h"
#include "search/pipeline_dp.h"
#include "search/polish.h"
#include "search/stage_floor.h"

namespace pe::detail {
namespace {

// A time no bound reaches (relaxed_bound's `meets` where it does not apply).
constexpr Seconds kNever = std::numeric_limits<Seconds>::infinity();

// A closing pass (closing_passes.cc, Search::close_gaps) returns more: its shape's bound is still
// below the fastest plan, and its tighter bound ranks plans differently from the first pass's. On
// GNMT at GBS 32 on 2 x 8 GPUs, its 64 plans of least bound hold one 1.4 % faster than the
// best the search found with 16 (speedup 5.52 -> 5.59, gap 1.7 % -> 0.3 %).
constexpr int kPlansPerClosingPass = 64;
// A relaxed pass that finishes returns this many plans of least merged bound, real plans of
// the shape (DpQuery::relaxed): candidates, which cost it nothing more. They matter where the
// shape's exact pass runs out: ResNet-101 at GBS 512 on 32 machines of 8 GPUs, one copy a
// machine of 16 micro-batches of 1 under GPipe: its relaxed pass finishes in 0.7 M steps with
// a plan simulated at 53.7 ms, its exact pass needs 259 M; the search had reported 67.7 ms.
constexpr int kPlansPerRelaxedPass = 4;
// A closing pass that finishes with its shape still open (some plan's bound below the fastest
// plan) goes on to enumerate every plan of the shape whose bound is below the fastest
// (DpQuery::enumerate), all of them candidates: when it finishes, the shape has no plan faster
// than the fastest simulated. It gets at most this many times the pass's own steps more, on
// top of the pass's cap (within the effort left), and at most kEnumeratedPairs simulated
// (stage, micro-batch) pairs' worth of plans (counted with as many stages as devices or
// states), or kEnumeratedPlans plans where that is more: a bound a fraction of a percent below
// the fastest often leaves few plans (GNMT-16 at GBS 448 on 2 x 8 GPUs: 18 plans, in 0.4 times
// the pass's steps; AlexNet at GBS 512: 54 plans, 0.5 times), a wider band many (GNMT at
// GBS 32, 0.3 %: more than 16,000 plans), and each plan costs a simulation. Sixteen times, on
// top of the cap, and at least 4,096 plans: with once the steps within the cap and the pairs
// alone, DAPPLE's simplified GNMT-32 stayed inexact at 7 batch sizes on 2 x 8 GPUs (gaps
// 0.02-0.24 %; its enumerations ran out of steps, at GBS 192 of plans: 682, of 96
// micro-batches each) and GNMT-16 at GBS 32 on 16 single-GPU machines at 0.19 %; now both are
// exact, in the same time (bench/README.md). One that does not finish still offers the first
// kPlansPerClosingPass plans it found: where many plans share the least bound (GNMT-16 at
// GBS 64 on 16 single-GPU machines, whose stages of one GPU leave slack to most cuts: 2,000
// plans), they hold others of that bound, of which one may simulate at it and settle the batch
// size. Only where the pass's least bound is within kEnumerateBand of the fastest: wider bands
// hold more plans (NASNet-A large's shapes on 2 x 8 GPUs stay open by up to 43 %, where an
// enumeration could only run out). It was 1 % until a chain of 40 random layers at GBS 256 on
// 16 single-GPU machines stayed 1.3 % open after every closing pass had finished: its band held
// few plans, enumerated in 15 K steps; within 5 % no bundled profile's default sweep on 2 x 8
// GPUs or 16 single-GPU machines changed, and VGG-19 at GBS 512 on 16 single-GPU machines with
// one-GPU stages and one copy (README, PipeEdge's --straight) went from 3.2 % to exact.
constexpr std::uint64_t kEnumerateFactor = 16;
constexpr double kEnumerateBand = 0.05;
constexpr double kEnumeratedPairs = 1 << 20;
constexpr double kEnumeratedPlans = 1 << 12;
// A shape whose relaxed pass runs out, on copies of at least kClassWidth devices, gets one
// over classes of devices (DpQuery::device_class), kClassCells classes a copy, with the same
// limit: a looser bound for a fraction of the steps on wide copies (about (kClassCells / W)^2
// of the stages on a chain), which may settle the shape and otherwise bounds it above its
// floor (VGG-19 at GBS 512 on 256 GPUs, one copy of 4 micro-batches of 128: 0.087 s in 0.2 M
// steps, where the relaxed pass takes 33 M for 0.113 s and the floor is 0.009 s). Not
// before: where the relaxed pass finishes, its bound prunes far more (Llama 2 7B on 32 GPUs
// of two types took 5x as long with class passes first). One that finishes below the best
// plan is followed by passes over classes half as wide, up to kClassRefinements times, each
// with the same limit (class_bound): VGG-19 at that batch size on 256 GPUs, gap 52 % -> 5 %,
// on 1,024 GPUs 83 % -> 34 %; BERT-48 on 1,024 GPUs, 26 % -> 1.7 %. Four: with two, VGG-19 on
// 1,024 GPUs stayed at 60 %; with as many as the copies allow, passes that run out took the
// effort of other shapes' (54 %).
constexpr int kClassCells = 8;
constexpr int kClassRefinements = 4;
constexpr int kClassWidth = 32;
// first_class_bound runs on copies of at least kFirstClassWidth devices: on narrower ones its
// classes (of two devices at least) would be one a copy, or the devices themselves.
constexpr int kFirstClassWidth = 4;
// One copy on machines of one size starts on device 0, so its class passes see which
// stages cross a machine's end (Dp::split). On more than 2 kClassCells machines, the pass
// after the first has classes a machine wide, the widest that see every machine's end, with
// kMachineClassEffort times the limit: GNMT-16 at GBS 512 on 256 GPUs (machines of 8), whose
// one-copy shapes' passes over classes of 32 devices mostly bounded them at 23 to 34 ms and
// over 16 mostly ran out, against a best plan of 110 ms; over classes of a machine they
// finish in 3.9 to 7 M steps (the limit: 2 M) at 63 to 75 ms or settle (gap 64.5 % ->
// 44.1 %; VGG-19 at GBS 512 on 4,096 GPUs 46.5 % -> 0.8 %). Not first: as the first pass,
// ResNet-50 at GBS 512 on 256 GPUs took 3.5 to 21 M steps a shape to settle what classes of
// 32 devices settle in 0.4 to 2.8 M, and the point was no longer exact.
constexpr std::uint64_t kMachineClassEffort = 4;
// On copies of at least kScreenWidth devices, where the search asks for it (Search::screening,
// branch_and_bound.h), the first class pass (kClassCells classes, each at least kScreenWidth /
// kClassCells devices) runs before the relaxed pass, as a screen: where it settles the shape,
// no relaxed pass runs; otherwise the relaxed pass runs as it would have, and where that runs
// out, the class passes as above (the screen's is their first). There the relaxed passes
// mostly run out, and the screen settles most shapes for a few percent of their steps:
// BERT-48 at GBS 512 on 1,024 GPUs, 58 of 84 shapes for 30 to 60 k steps each, where relaxed
// passes run out at 2.4 M (4.1 -> 1.9 s on one thread), ResNet-50 on 1,024 GPUs all 26 for
// 0.4 to 1.7 M, where relaxed passes run out at 6.7 M (8.2 -> 3.3 s). On narrower copies the
// screen costs about what a relaxed pass does and settles few shapes (from 32 devices:
// GNMT-16 on 64 GPUs, 4 of 43, 20.6 -> 30.9 s). Only the first class pass: with the finer ones
// too, they took effort the exact and refining passes needed (VGG-19 on 256 GPUs, exact ->
// 0.05 %). Nor with less effort than a relaxed pass gets: with a quarter, ResNet-50 on 256
// GPUs took 7.2 s instead of 6.0 (6.9 without screens).
constexpr int kScreenWidth = 128;
// Where the screen does not settle a shape of one copy that gets free-width passes
// (free_bound), one runs next, within 1 / kFreeScreenShare of the relaxed pass's effort: its
// cells do not grow with the copy's devices, and where the devices do not bind it settles the
// shape before a relaxed pass that runs out. On VGG-19 at GBS 512 on 1,024 GPUs (best plan on
// 136 GPUs) it settles 8 of the 9 one-copy shapes in 0.23 to 2.4 M steps each, where their
// relaxed passes ran out at 14 to 20 M, and bounds the best plan's shape at its time in 1.5 M:
// 12.6 -> 5.1 s, the same plan. On copies of more it settled most shapes too, but the
// relaxed effort they left went to larger passes that ran out (GNMT-16 at GBS 512 on 4,096
// GPUs: 22 -> 42 s, the same gap) and ResNet-101 on 1,024 GPUs lost its certificate (3.4 % ->
// 35 %), so only one copy.
constexpr std::uint64_t kFreeScreenShare = 4;
// A shape whose relaxed pass runs out on a chain of at least kBlockPassStates states
// (and whose class passes, on copies of kClassWidth devices and more, do not finish) gets one
// over kBlockRows blocks of states (DpQuery::state_block): about (kBlockRows / n)^2 of the
// stages, looser by about a block's work at each cut. One that finishes below the best plan
// is followed by passes over twice as many blocks, up to kBlockRefinements times, while the
// next, at about kBlockGrowth times the last one's steps, fits in what is left of the limit
// (all of them within it). NASNet-A large (1,250 states) on 16 single-GPU machines: gaps of
// 60.8 to 28.2 % at GBS 32 to 192, its shapes of one copy at their floor, fell to 5.4 % and
// less, with faster plans, since the effort went to the shapes that needed it. Fewer states:
// blocks of a few states lose too much at each cut to help, and their passes take effort
// that others use (Llama 2 70B at GBS 1024 on 512 GPUs, 82 states, went from exact to
// 14.9 % with them).
constexpr int kBlockRows = 32;
constexpr int kBlockRefinements = 6;
constexpr std::uint64_t kBlockGrowth = 4;
static_assert(kBlockPassStates == 4 * kBlockRows, "blocks of at least 4 states at first");

// A lower bound on every plan: some micro-batch goes forward through every stage and back
// (or, in a one-stage plan, its devices run at least one sample), with at least one sample
// on each device it meets (stage_samples), at the fastest GPUs' speed and split as many
// ways as the settings allow. It binds where the copies have more devices than samples: on
// ResNet-50 at GBS 32 on a million GPUs it certifies the 32-GPU plan within 0.1 %, where
// the work floor (shape_floor) allows a plan 31,250 times faster.
Seconds path_floor(const CostModel& cost) {
  const double split =
      std::max(1.0, cost.max_tensor_parallel() * cost.settings().tensor_parallel_efficiency);
  return cost.whole_model_time(1) / (split * cost.fastest());
}

// The relaxed pass of a shape (DpQuery::relaxed, with the window cycles) within `effort`.
DpQuery relaxed_query(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                      std::uint64_t effort, PassLimits limits) {
  // No plans: only its bound is wanted.
  DpQuery query =
      shape_query(shape, cost.device_count() / shape.replicas, bound, effort, 0, limits);
  query.relaxed = true;
  query.terms.windows = true;
  return query;
}

// The devices of a class when a copy of `width` devices is cut into `cells` classes (at least
// two: a class of one is the relaxed pass).
int class_devices(int width, int cells) { return std::max(2, (width + cells - 1) / cells); }

// The class pass of a shape (DpQuery::device_class, classes of `devices` devices) within
// `effort`.
DpResult class_pass(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                    std::uint64_t effort, PassLimits limits, int narrowest_copy, int devices) {
  DpQuery query = relaxed_query(cost, shape, bound, effort, limits);
  query.device_class = devices;
  query.narrowest_copy = narrowest_copy;
  return best_pipeline(cost, query);
}

// A shape's first class pass (kClassCells classes a copy, for copies of any width): the
// screen's (relaxed_bound) and first_class_bound's.
DpResult first_class_pass(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                          std::uint64_t effort, PassLimits limits) {
  const int width = cost.device_count() / shape.replicas;
  return class_pass(cost, shape, bound, effort, limits, 0, class_devices(width, kClassCells));
}

// The simulated time of a plan of `shape` (its global batch is the shape's: pipeline_shapes),
// none where it does not fit or has more pairs than the search simulates (kMaxSimulatedPairs).
std::optional<Seconds> simulated_time(const CostModel& cost, const PipelineShapeChoice& shape,
                                      const PipelineSpec& spec) {
  if (too_large_to_simulate(spec.stages.size(), spec.micro_batches)) return std::nullopt;
  const std::optional<Plan> plan =
      simulated_plan(cost, spec, shape.replicas * shape.micro_batch * shape.micro_batches);
  if (!plan) return std::nullopt;
  return plan->iteration_time;
}

// Makes `query` enumerate the plans of `shape` whose bound is within `within`, or within the
// least simulated time of those it finds (DpQuery::time_plan), in at most `effort` steps with
// its pass (DpQuery::enumerate), where the pass's least bound is within `band` of it.
void enumerate_in(const CostModel& cost, const PipelineShapeChoice& shape, Seconds within,
                  std::uint64_t effort, DpQuery& query, double band = kEnumerateBand) {
  const int width = cost.device_count() / shape.replicas;
  query.enumerate = kEnumerateFactor;
  query.enumerate_step_limit = effort;
  query.enumerate_bound = within;
  query.enumerate_from = within * (1 - band);
  query.time_plan = [&cost, shape](const PipelineSpec& spec) {
    return simulated_time(cost, shape, spec);
  };
  query.enumerate_plans = static_cast<int>(std::max(
      kEnumeratedPlans,
      kEnumeratedPairs /
          (shape.micro_batches * std::min<double>(width, static_cast<double>(cost.states())))));
}

}  // namespace

DpQuery shape_query(const PipelineShapeChoice& shape, int width, Seconds bound,
                    std::uint64_t effort, int plans, PassLimits limits) {
  DpQuery query{
      shape.replicas, width, shape.micro_batch, shape.micro_batches, shape.schedule, bound,
      effort,         plans, limits.max_width};
  query.memory_limit = limits.memory;
  return query;
}

ShapeFloor shape_floor(const CostModel& cost, const PipelineShapeChoice& shape, int width) {
  const Seconds floor = std::max(
      shape.micro_batches * cost.whole_model_time(shape.micro_batch) / (width * cost.fastest()),
      path_floor(cost));
  // The fill floor bounds the plans of two stages or more, one_stage_floor the others: it
  // counts only where it is above what the other floors give.
  const Seconds fill = fill_floor(cost, shape, width);
  auto filled = [&](int stride, Seconds above) {
    return fill > above ? std::min(fill, one_stage_floor(cost, shape, width, stride)) : 0;
  };
  const Seconds anywhere =
      std::max({floor, stage_floor(cost, shape, width, 1, floor), filled(1, floor)});
  // One copy, or more copies than a machine has GPUs: where copies sit changes nothing.
  if (shape.replicas == 1 || shape.replicas > cost.largest_machine()) return {anywhere, anywhere};
  return {std::max({anywhere, stage_floor(cost, shape, width, width, anywhere),
                    filled(width, anywhere)}),
          anywhere};
}

int uniform_machines(const CostModel& cost) {
  const bool one_type =
      cost.fastest() == cost.slowest() && cost.smallest_memory() == cost.largest_memory();
  return one_type ? cost.machine_size() : 0;
}

PassBound class_bound(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                      std::uint64_t effort, PassLimits limits, int narrowest_copy,
                      const DpResult* first) {
  const int width = cost.device_count() / shape.replicas;
  // One copy of more than 2 kClassCells machines of one size: a machine's classes second.
  const int machine = cost.machine_size();
  const bool by_machine = shape.replicas == 1 && machine > 1 && width % machine == 0 &&
                          width / machine > 2 * kClassCells;
  PassBound found;
  for (int cells = kClassCells, level = 0, last = 0; level <= kClassRefinements;
       cells *= 2, ++level) {
    const bool jump = level == 1 && by_machine;
    if (jump) cells = width / machine;
    const int devices = class_devices(width, cells);
    if (devices == last) break;  // already pairs
    last = devices;
    const DpResult pass =
        level == 0 && first
            ? *first
            : class_pass(cost, shape, bound, jump ? kMachineClassEffort * effort : effort, limits,
                         narrowest_copy, devices);
    found.steps += pass.steps;
    if (pass.stopped) break;
    found.least_bound = std::max(found.least_bound, pass.least_bound);
    found.finished = true;
    if (found.least_bound > bound) break;  // settled
  }
  return found;
}

PassBound first_class_bound(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                            std::uint64_t effort, PassLimits limits) {
  const int width = cost.device_count() / shape.replicas;
  if (width < kFirstClassWidth) return {};
  const DpResult pass = first_class_pass(cost, shape, bound, effort, limits);
  return {pass.least_bound, !pass.stopped, pass.steps, {}};
}

PassBound block_bound(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                      std::uint64_t effort, PassLimits limits, int least_states, bool timed,
                      int buckets) {
  const auto states = static_cast<int>(cost.states());
  PassBound found;
  std::uint64_t last = 0;  // steps of the last pass
  if (!cost.chain() || states < least_states) return found;
  for (int rows = kBlockRows, level = 0; level <= kBlockRefinements; rows *= 2, ++level) {
    const int block = (states + rows - 1) / rows;
    if (block <= 1) break;  // single states: the relaxed pass, which ran out
    // A pass on twice the blocks takes about four times the steps: one that would not
    // finish in what is left is not started.
    const std::uint64_t left = effort - found.steps;
    if (last > left / kBlockGrowth) break;
    DpQuery query = relaxed_query(cost, shape, bound, left, limits);
    query.state_block = block;
    query.buckets = buckets;
    query.plans = kPlansPerPass;
    if (timed) query.timed = query.terms.arrivals = true;  // as refined_bound's
    DpResult pass = best_pipeline(cost, query);
    found.steps += pass.steps;
    last = pass.steps;
    if (pass.stopped) break;
    found.least_bound = std::max(found.least_bound, pass.least_bound);
    found.finished = true;
    found.plans = std::move(pass.plans);   // the finest blocks'
    if (found.least_bound > bound) break;  // settled
  }
  return found;
}

PassBound merged_bound(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                       std::uint64_t effort, PassLimits limits, int fields) {
  DpQuery query = shape_query(shape, cost.device_count() / shape.replicas, bound, effort,
                              kPlansPerPass, limits);
  query.terms = BoundTerms{};
  query.merged_fields = fields;
  DpResult pass = best_pipeline(cost, query);
  return {pass.least_bound, !pass.stopped, pass.steps, std::move(pass.plans)};
}

bool free_widths_apply(const CostModel& cost, const PipelineShapeChoice& shape) {
  const int machine = uniform_machines(cost);
  return machine > 0 && cost.device_count() / shape.replicas > 2 * machine;
}

PassBound free_bound(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                     std::uint64_t effort, PassLimits limits) {
  if (!free_widths_apply(cost, shape)) return {};
  DpQuery query = relaxed_query(cost, shape, bound, effort, limits);
  query.free_widths = uniform_machines(cost);
  const DpResult pass = best_pipeline(cost, query);
  return {pass.least_bound, !pass.stopped, pass.steps, {}};
}

PassBound refined_bound(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                        std::uint64_t effort, PassLimits limits, int buckets, bool worst_buckets,
                        Seconds enumerate_within, bool timed, double enumerate_band) {
  DpQuery query = relaxed_query(cost, shape, bound, effort, limits);
  query.plans = kPlansPerPass;
  query.buckets = buckets;
  query.worst_buckets = worst_buckets;
  query.timed = timed;
  if (enumerate_within > 0)
    enumerate_in(cost, shape, enumerate_within, effort, query,
                 enumerate_band > 0 ? enumerate_band : kEnumerateBand);
  // The delayed arrivals too, which certificates need: they cost every entry extended more
  // time, for no change in the first relaxed passes, which prune shapes (every bundled
  // profile's default sweep on 2 x 8 GPUs gave the same answers with them there, NASNet-A
  // large's in 77 s instead of 74).
  query.terms.arrivals = true;
  DpResult pass = best_pipeline(cost, query);
  // An enumeration bounds the plans it did not list (DpResult::unlisted_bound).
  const Seconds least = std::max(pass.least_bound, pass.unlisted_bound);
  return {least, !pass.stopped, pass.steps, std::move(pass.plans)};
}

RelaxedBound relaxed_bound(const CostModel& cost, const PipelineShapeChoice& shape, Seconds bound,
                           std::uint64_t effort, PassLimits limits, bool screen, Seconds meets) {
  const int width = cost.device_count() / shape.replicas;
  const ShapeFloor floors = shape_floor(cost, shape, width);
  Seconds floor = floors.own;
  if (floor > bound) return {floor, true, 0, false, floors.anywhere};
  // The screen (kScreenWidth): the first class pass, whose bound also holds for the plans of
  // the cluster's first machines (`anywhere`).
  std::optional<DpResult> first;
  if (screen && width >= kScreenWidth) first = first_class_pass(cost, shape, bound, effort, limits);
  const bool screened = first && !first->stopped;
  const Seconds classed = screened ? std::min(first->least_bound, bound) : Seconds{0};
  std::uint64_t screen_steps = first ? first->steps : 0;
  // A screen settled the shape: no relaxed pass runs.
  auto settled_by_screen = [&]() -> RelaxedBound {
    return {std::max(floor, bound),
            true,
            screen_steps,
            false,
            std::max(floors.anywhere, classed),
            true,
            true};
  };
  if (screened && first->least_bound > bound) return settled_by_screen();
  // The free-width screen (kFreeScreenShare): its bound holds for every plan of the shape.
  if (first && shape.replicas == 1 && free_widths_apply(cost, shape)) {
    const PassBound free = free_bound(cost, shape, bound, effort / kFreeScreenShare, limits);
    screen_steps += free.steps;
    if (free.finished && free.least_bound > bound) return settled_by_screen();
    if (free.finished) floor = std::max(floor, std::min(free.least_bound, bound));
  }
  // No plan of the shape beats the fastest: a relaxed pass would add nothing the search needs.
  if (std::max(floor, classed) >= meets)
    return {
        std::max(floor, classed), false, screen_steps, false, std::max(floors.anywhere, classed),
        first.has_value(),        false};
  DpQuery query = relaxed_query(cost, shape, bound, effort, limits);
  query.plans = kPlansPerRelaxedPass;
  DpResult relaxed = best_pipeline(cost, query);
  if (!relaxed.stopped)
    // Plans it left out have bounds above `bound`.
    return {std::max({floor, classed, std::min(relaxed.least_bound, bound)}),
            relaxed.least_bound > bound,
            relaxed.steps + screen_steps,
            false,
            std::max(floors.anywhere, classed),
            first.has_value(),
            false,
            std::move(relaxed.plans)};
  // Class passes (from the screen's on, where it finished), whose bound also holds for the
  // plans of the cluster's first machines (`anywhere`); where none ran or finished, block
  // passes.
  PassBound coarse = width >= kClassWidth ? class_bound(cost, shape, bound, effort, limits, 0,
                                                        screened ? &*first : nullptr)
                                          : PassBound{};
  if (first && !screened) coarse.steps += first->steps;
  const bool classes = coarse.finished;
  if (!classes) {
    const PassBound blocks = block_bound(cost, shape, bound, effort, limits, kBlockPassStates);
    coarse = {blocks.least_bound, blocks.finished, coarse.steps + blocks.steps, {}};
  }
  const std::uint64_t steps = relaxed.steps + coarse.steps;
  if (!coarse.finished)
    return {floor, false, steps, true, floors.anywhere, first.has_value(), false};
  const Seconds proven = std::min(coarse.least_bound, bound);
  return {std::max(floor, proven),
          coarse.least_bound > bound,
          steps,
          coarse.least_bound <= bound,
          classes ? std::max(floors.anywhere, proven) : floors.anywhere,
          first.has_value(),
          false};
}

void add_fitting(const CostModel& cost, int global_batch, const std::vector<DpPlan>& found,
                 std::vector<CostedPlan>& to) {
  for (const DpPlan& plan : found) {
    Evaluation ev = evaluate(cost, plan.spec, global_batch);
    if (ev.fits) to.push_back({plan.spec, std::move(ev.plan)});
  }
}

ShapeResult search_shape(const CostModel& cost, int global_batch, const PipelineShapeChoice& shape,
                         Seconds bound, std::uint64_t effort, std::uint64_t relaxed_effort,
                         PassLimits limits, int closing, Seconds enumerate_within,
                         std::uint64_t enumerate_effort, bool screen, bool timed, int max_stages,
                         Seconds meets, int lead) {
  const int width = cost.device_count() / shape.replicas;
  // No plan of the shape can make the bound: its floor is a bound of every one of them.
  const ShapeFloor floors = shape_floor(cost, shape, width);
  if (floors.own > bound) return {{}, floors.own, true, 0, 0, false, floors.anywhere};
  // `meets` applies where the pass is not limited already and a plan leads.
  const Seconds screens_meet = lead > 0 && max_stages == 0 ? meets : kNever;
  const RelaxedBound relaxed =
      relaxed_effort > 0
          ? relaxed_bound(cost, shape, bound, relaxed_effort, limits, screen, screens_meet)
          : RelaxedBound{floors.own, false, 0, true, floors.anywhere};
  // Every plan of the shape is no faster than the fastest: only plans simpler than the one
  // that leads may still matter (its bound is then theirs alone, not the shape's).
  const bool leads = relaxed_effort > 0 && relaxed.lower_bound >= screens_meet;
  if (leads) max_stages = lead;
  ShapeResult result;
  result.relaxed_steps = relaxed.steps;
  result.anywhere = relaxed.anywhere;
  result.screened = relaxed.screened;
  result.screen_settled = relaxed.screen_settled;
  if (relaxed.settled) {
    result.lower_bound = relaxed.lower_bound;
    return result;
  }
  DpQuery query = shape_query(shape, width, bound, effort,
                              closing > 0 ? kPlansPerClosingPass : kPlansPerPass, limits);
  query.terms.windows = closing >= 1;
  query.terms.last_pairs = closing >= 2;
  query.terms.last_drains = closing == 3;
  query.terms.paced_afters = closing == 4;
  // The forwards' paths from the second on: in the first they made GNMT's shape of 16
  // micro-batches of 2 at GBS 32 on 2 x 8 GPUs run out of its steps (4.2 M), and the point
  // lost the plan that pass finds; from the second they settle that point (gap 0.33 %).
  query.terms.forwards = closing >= 2;
  query.timed = timed || closing > 0;
  if (closing > 0) query.timed_most = kClosingTimedMicroBatches;
  query.max_stages = max_stages;
  if (enumerate_within > 0 && std::isfinite(enumerate_within))
    enumerate_in(cost, shape, enumerate_within, enumerate_effort, query);
  const DpResult dp = best_pipeline(cost, query);
  result.steps = dp.steps;
  result.enumeration_steps = dp.enumeration_steps;
  if (dp.stopped) {
    add_fitting(cost, global_batch, relaxed.plans, result.plans);
    result.lower_bound = relaxed.lower_bound;
    result.complete = false;
    result.relaxed_ran_out = relaxed.ran_out;
    return result;
  }
  // Every plan left out has a bound above `bound` (above unlisted_bound where the pass
  // enumerated). The relaxed pass's bound (at least the floor) holds too, and follows the
  // window cycles, which a first exact pass leaves out (BoundTerms::windows).
  const Seconds left_out = dp.unlisted_bound > 0 ? dp.unlisted_bound
                           : dp.plans.empty()    ? bound
                                                 : dp.plans.front().lower_bound;
  result.lower_bound = leads ? relaxed.lower_bound : std::max(relaxed.lower_bound, left_out);
  add_fitting(cost, global_batch, dp.plans, result.plans);
  return result;
}

}  // namespace pe::detail
