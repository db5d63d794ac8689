#include "pe/planner.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <vector>

#include "cost/cost_model.h"
#include "pe/error.h"
#include "report/format.h"
#include "search/hybrid_search.h"
#include "search/machine_runs.h"
#include "search/pipeline_shapes.h"
#include "search/point_search.h"
#include "search/runners_up.h"
#include "search/sweep_plans.h"

namespace pe {
namespace {

using detail::format::gigabytes;

// Why no plan fits: the smallest possible per-device footprint is one state on its own
// stage with one sample in flight; otherwise the batch and the micro-batch floor, or the
// search effort when the search stopped before it could prove that nothing fits.
std::string no_plan_reason(const detail::CostModel& cost, int global_batch, bool exact,
                           std::uint64_t effort) {
  // The least a state can need: the widest split, recomputation, sharding over every device.
  int t = cost.max_tensor_parallel();
  while (!cost.tensor_parallel_allowed(t)) --t;
  const detail::StageVariant least{t, cost.recomputable()};
  const int reducers = cost.device_count() / t;
  Bytes worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < cost.states(); ++i) {
    Bytes need = cost.weight_memory(i, i, least, reducers) + cost.working_memory(i, i, 1, least) +
                 cost.activation_memory(i, i, 1, least);
    if (need > worst) worst = need, at = i;
  }
  const Bytes memory = cost.largest_memory();
  std::string how;
  if (t > 1) how += ", split " + std::to_string(t) + " ways";
  if (least.recompute) how += ", recomputed";
  if (cost.settings().zero_stage > 0 && reducers > 1)
    how += ", its training state sharded over " + std::to_string(reducers) + " devices";
  if (worst > memory)
    return "no plan fits: state " + std::to_string(at) + " alone needs " + gigabytes(worst) +
           " (weights x optimizer scaling + one sample of activations" + how +
           ") but a device has " + gigabytes(memory);
  if (!exact)
    return "no plan found within the search effort (" + std::to_string(effort) +
           " steps), so none is proven to fit or not; SearchOptions::effort 0 searches to the end";
  const int floor = std::min(cost.settings().min_micro_batch, global_batch);
  std::string reason = "no plan fits in " + gigabytes(memory) + " per device at GBS " +
                       std::to_string(global_batch) + " with micro-batches of at least " +
                       std::to_string(floor) + " samples";
  if (floor > 1)
    reason += " (TrainingSettings::min_micro_batch " +
              std::to_string(cost.settings().min_micro_batch) + ")";
  return reason;
}

// The API fields the settings checks name (UsageError::field).
const std::string kMinMicroBatch = "TrainingSettings::min_micro_batch";
const std::string kScaling = "TrainingSettings::optimizer_scaling";
const std::string kActivation = "TrainingSettings::activation_bytes_per_sample";
const std::string kMaxTp = "TrainingSettings::max_tensor_parallel";
const std::string kTpEfficiency = "TrainingSettings::tensor_parallel_efficiency";
const std::string kZero = "TrainingSettings::zero_stage";
const std::string kTopOption = "SearchOptions::top";
const std::string kMaxWidth = "SearchOptions::max_stage_width";
const std::string kMaxCopies = "SearchOptions::max_pipeline_copies";
const std::string kMaxChunks = "SearchOptions::max_chunks";

// A tensor-parallel limit above 1 is a degree the model can split into: asking for 3 ways of
// 32 heads, or any split of a model that cannot, is a mistake to report, not to round down.
void check_split_limit(int limit, const ModelProfile& model) {
  if (limit <= 1) return;
  const int unit = model.tensor_parallel_unit;
  if (unit == 0)
    throw UsageError(kMaxTp, kMaxTp + " is " + std::to_string(limit) + ", but the model '" +
                                 model.name +
                                 "' cannot be split (only transformers from their "
                                 "configuration can)");
  if (unit % limit != 0)
    throw UsageError(kMaxTp, kMaxTp + " is " + std::to_string(limit) + ", which does not divide " +
                                 std::to_string(unit) + ", the heads (and key/value heads) of '" +
                                 model.name + "' that a split must divide");
}

void check_settings(const TrainingSettings& s) {
  if (s.min_micro_batch < 1)
    throw UsageError(kMinMicroBatch, kMinMicroBatch + " must be at least 1");
  if (!(s.optimizer_scaling >= 1 && s.optimizer_scaling <= kMaxOptimizerScaling))
    throw UsageError(kScaling, kScaling + " must be a number from 1 to 1e6");
  if (s.activation_bytes_per_sample &&
      !(*s.activation_bytes_per_sample >= 0 && *s.activation_bytes_per_sample <= kMaxModelBytes))
    throw UsageError(kActivation, kActivation + " must be a number from 0 to 1e18");
  if (s.max_tensor_parallel < 0 || s.max_tensor_parallel > (1 << 20))
    throw UsageError(kMaxTp, kMaxTp + " must be 0 (a machine's GPUs) or 1 to 2^20");
  if (!(s.tensor_parallel_efficiency > 0 && s.tensor_parallel_efficiency <= 1))
    throw UsageError(kTpEfficiency, kTpEfficiency + " must be a number in (0, 1]");
  if (s.zero_stage < 0 || s.zero_stage > 3)
    throw UsageError(kZero, kZero + " must be 0, 1, 2 or 3");
}

}  // namespace

Planner::Planner(ModelProfile model, Cluster cluster, TrainingSettings settings,
                 SearchOptions options)
    : model_(std::move(model)),
      cluster_(std::move(cluster)),
      settings_(settings),
      options_(std::move(options)) {
  const std::string where = model_.source.empty() ? model_.name : model_.source;
  validate(model_, where);
  const Seconds work = model_.forward(0, model_.size() - 1) + model_.backward(0, model_.size() - 1);
  if (!(work > 0))
    throw InputError(where,
                     "every forward and backward time is 0, expected some compute "
                     "time (a speedup over one device is undefined without it)");
  validate(cluster_, "cluster");
  const bool typed = std::any_of(cluster_.machine_gpu.begin(), cluster_.machine_gpu.end(),
                                 [](const GpuSpec& g) { return g.peak_flops > 0; });
  if (typed && !(model_.gpu.peak_flops > 0))
    throw InputError("cluster",
                     "the machines name GPU types, but the GPU the model's times are "
                     "for is unknown (ModelProfile::gpu), so they cannot be scaled");
  check_settings(settings_);
  check_split_limit(settings_.max_tensor_parallel, model_);
  if (options_.schedules.empty()) throw UsageError("no schedule to search");
  if (options_.top < 1) throw UsageError(kTopOption, kTopOption + " must be at least 1");
  if (options_.max_stage_width < 0)
    throw UsageError(kMaxWidth, kMaxWidth + " must be 0 (no limit) or more");
  if (options_.max_pipeline_copies < 0)
    throw UsageError(kMaxCopies, kMaxCopies + " must be 0 (no limit) or more");
  if (options_.max_chunks < 2) throw UsageError(kMaxChunks, kMaxChunks + " must be at least 2");
}

PointResult Planner::plan(int global_batch) const {
  if (global_batch < 1) throw UsageError("global batch size must be at least 1");
  const detail::CostModel cost(model_, cluster_, settings_);
  PointResult result;
  result.global_batch = global_batch;
  result.baselines = data_parallel_baselines(model_, cluster_, settings_, global_batch);
  // search_point finds the best plan alone (whatever options.top), so it never depends on
  // --top; the runners-up come from one more search after it (with_runners_up).
  detail::SearchResult found = detail::search_point(model_, cost, global_batch, options_);
  // A search covers the plans on the cluster's first machines; those on the machines from
  // where their kind changes, and then the first ones, are searched on their own
  // (machine_runs), unless no plan there can beat the fastest found, whose time their work
  // over their devices already exceeds.
  std::vector<int> searched;
  for (int first : detail::machine_runs(cluster_)) {
    const detail::CostModel run(model_, detail::rotated(cluster_, first), settings_);
    if (detail::part_cannot_beat(run, global_batch, found)) continue;
    detail::SearchResult there = detail::search_point(model_, run, global_batch, options_);
    for (Plan& plan : there.plans) detail::move_to_machine(plan, cluster_, first);
    found = detail::merged(std::move(found), std::move(there), 1);
    searched.push_back(first);
  }
  found = detail::with_runners_up(model_, cost, global_batch, options_, std::move(found), searched);
  result.plans = std::move(found.plans);
  result.exact = found.exact;
  result.lower_bound = result.plans.empty() ? 0 : found.lower_bound;
  // The search ranked the plans by simulated_makespan; simulate_plan builds the timeline
  // the reporters read, whose makespan is that same number (tested), so a plan reports the
  // time it was ranked by.
  for (Plan& plan : result.plans) simulate_plan(plan);
  // The bound holds over the search space; a plan outside it (finish_plan's one-stage plans
  // of gradient accumulation, whose micro-batches differ by a sample) can be faster, and then
  // bounds the answer instead: XLNet-36 at GBS 17 on 16 GPUs reported 614.43 ms (2 micro-
  // batches of 9 and 8) with a lower bound of 614.71 ms, the fastest plan the search had.
  for (const Plan& plan : result.plans)
    result.lower_bound = std::min(result.lower_bound, plan.iteration_time);
  if (result.plans.empty()) {
    result.no_plan_reason = no_plan_reason(cost, global_batch, found.exact, options_.effort);
    if (options_.max_stage_width > 0)
      result.no_plan_reason += "; stages are limited to " +
                               std::to_string(options_.max_stage_width) + " device(s) (" +
                               kMaxWidth + ")";
    if (options_.max_pipeline_copies > 0)
      result.no_plan_reason += "; pipeline copies are limited to " +
                               std::to_string(options_.max_pipeline_copies) + " (" + kMaxCopies +
                               ")";
    // Accumulation plans are 1F1B (GPipe keeps every micro-batch's activations).
    if (result.baselines.fits && found.exact &&
        !detail::searches(options_.schedules, Schedule::OneFOneB))
      result.no_plan_reason +=
          "; data parallelism fits with gradient accumulation, which is "
          "1F1B: SearchOptions::schedules with Schedule::OneFOneB can plan it";
  }
  return result;
}

std::vector<PointResult> Planner::sweep(const std::vector<int>& global_batches,
                                        const SweepControl& control) const {
  for (int gbs : global_batches)
    if (gbs < 1) throw UsageError("global batch size must be at least 1");
  std::vector<PointResult> results(global_batches.size());
  std::mutex progress_mutex;
  std::size_t done = 0;
  tbb::parallel_for(std::size_t{0}, global_batches.size(), [&](std::size_t i) {
    if (control.cancel && control.cancel->load()) return;
    results[i] = plan(global_batches[i]);
    if (!control.progress) return;
    std::lock_guard<std::mutex> lock(progress_mutex);
    control.progress(++done, global_batches.size());
  });
  share_plans(results);
  return results;
}

void Planner::share_plans(std::vector<PointResult>& points) const {
  const detail::CostModel cost(model_, cluster_, settings_);
  detail::share_sweep_plans(model_, cost, settings_, options_, points);
}

}  // namespace pe
