// Plan one global batch size or a sweep of them: the library entry point.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pe/baselines.h"
#include "pe/cluster.h"
#include "pe/model.h"
#include "pe/plan.h"
#include "pe/plan_layout.h"
#include "pe/settings.h"

namespace pe {

/// Default SearchOptions::effort (steps per global batch size).
inline constexpr std::uint64_t kDefaultSearchEffort = 100'000'000;

/// Default SearchOptions::pass_memory: 4 GiB. At the default effort, of the scaling table's
/// cells of GNMT-16, ResNet-101 and NASNet-A large on 64 to 1,024 GPUs (bench/README.md: GBS 512,
/// machines of 8), the largest pass holds 1.9 GB (GNMT-16 on 64 GPUs), the others under 1 GB;
/// with no step limit NASNet-A large's passes at GBS 32 on 2 x 8 GPUs grew past 20 GB.
inline constexpr std::uint64_t kDefaultPassMemory = std::uint64_t{4} << 30;

/// Bytes in a mebibyte: the unit of --search-memory-mb and of search_memory_mb in Python and
/// JSON, which give SearchOptions::pass_memory.
inline constexpr std::uint64_t kMebibyte = std::uint64_t{1} << 20;

/// What the hybrid search may choose.
struct SearchOptions {
  /// Schedules to consider; the plan with the lower simulated time wins, 1F1B on ties.
  /// Schedule::Interleaved (off by default) adds the interleaved plans of
  /// detail::interleaved_specs: equal-width device groups, chunks of about equal work, every
  /// copy count, group width, micro-batch size, chunk count up to max_chunks and stage
  /// variant, each costed and bounded (README, "Interleaved 1F1B").
  std::vector<Schedule> schedules = {Schedule::OneFOneB, Schedule::GPipe};
  /// How many plans to return per batch size (the best of distinct shapes). Above 1, the
  /// runners-up come from a second search with the same effort, which starts from the best
  /// plan: the best plan is the one top 1 returns, or one faster by more than 0.1 %.
  int top = 1;
  /// Search effort per global batch size, in steps of the exact search (a cell, a stage tried, a
  /// suffix entry extended, or eight comparisons of two entries or checks of a stage no suffix can
  /// follow; 5 to 30 ns each on one core); 0 = unlimited. The pipeline shapes share it in a fixed
  /// order (what one leaves passes on). A shape that needs more counts in PointResult::lower_bound
  /// with the bound of a relaxed pass (the same dynamic program keeping one entry per group, run
  /// before the exact pass, which a shape it proves unable to beat the best plan does not need; the
  /// relaxed passes share twice the effort), or with a floor bound (its busiest stage's share of
  /// the work) when that runs out too and so does a last relaxed pass (half the effort more, shared
  /// by the shapes left at their floor, narrowest first), instead of its searched one. At the end,
  /// shapes no exact pass finished get a relaxed pass where theirs all ran out, then finer ones
  /// (refining passes), least bound first, sharing three times the effort (for a graph searched
  /// also on its spine, with the steps the spine's refining passes left unused on top). The best
  /// plans found are returned, never worse than the seeds (one-stage data parallelism inside each
  /// copy and equal-work pipelines). On copies wider than 16 devices, greedy passes (one suffix per
  /// cell and group, stages a power of two wide) and coarse passes (stages on granules of devices)
  /// share a quarter of it more each, for candidate plans; narrower copies get greedy passes after
  /// the first round, for the shapes whose exact pass ran out, and before those are searched again
  /// the ones whose relaxed pass ran out get another, pruned by the plans found since. Above the
  /// default, a batch size is first searched with the default effort and, unless that is exact,
  /// then with this one from the plans found (which prune from the start); the answer keeps the
  /// faster plan and the larger lower bound, so more effort never gives a slower plan (beyond
  /// the simplicity margin, 0.1 %) or a wider gap than the default, for the default search's
  /// time on top. Where a batch size on two machines or more has a gap above 5 %, the cluster's
  /// first machines (the largest power of two below its machine count) are planned the same way
  /// on their own, unless their work over their devices cannot beat the plan found, and where
  /// their plan is faster the cluster is searched again from it; so a cluster's plan is never
  /// slower than its first 1, 2, 4, ... machines' by more than 5 % (beyond the margin), for
  /// those searches' time on top.
  /// See README, "Exactness and gaps" and "More devices never hurt".
  std::uint64_t effort = kDefaultSearchEffort;
  /// Most bytes one search pass (the dynamic program of one pipeline shape) may hold: its
  /// table of suffixes, and the candidates of the cell being filled; 0 = no limit. A pass that
  /// would hold more stops as one out of effort does and counts the whole effort it was given
  /// as spent, so the search goes on with what it has proved (a larger gap, never a wrong one).
  /// Up to one pass a thread runs at once. See README, "Exactness and gaps".
  std::uint64_t pass_memory = kDefaultPassMemory;
  /// Most devices any stage may have in one pipeline copy (its width); 0 = no limit. 1
  /// keeps every stage on one device, as PipeEdge's runtime needs (one host per stage).
  /// Applies to one-stage plans too, so with 1 a one-stage plan runs on one device of each
  /// copy. Must be 0 or more.
  int max_stage_width = 0;
  /// Most copies of the whole pipeline (data parallelism across pipelines); 0 = no limit.
  /// 1 gives a single pipeline, the only kind a PipeEdge schedule describes. Must be 0 or
  /// more. With either limit set, plans are the best within it, which may be slower than
  /// plain data parallelism.
  int max_pipeline_copies = 0;
  /// Most chunks per device group the interleaved schedule tries (from 2). Must be at least 2.
  int max_chunks = 4;
};

/// Everything known about one global batch size.
struct PointResult {
  int global_batch = 0;        ///< The batch size planned; 0 for a point skipped by cancel.
  Baselines baselines;         ///< Plain data parallelism on all devices.
  std::vector<Plan> plans;     ///< Best first; empty when no plan fits.
  std::string no_plan_reason;  ///< Why `plans` is empty ("" otherwise).
  /// True when the search proved the best plan optimal over the whole search space: the
  /// fastest plan found meets lower_bound, and the best plan is it or the simplest within
  /// 0.1 % of it (README, "Exactness and gaps"); otherwise `gap()` says how far from
  /// optimal it may be.
  bool exact = true;
  /// A proven lower bound on the simulated iteration time of every plan in the search
  /// space (0 when nothing fits).
  Seconds lower_bound = 0;
  /// 1 - lower_bound / the best plan's iteration time: the most the best plan can be
  /// slower than the optimum, as a fraction of its time (0 when exact or no plan).
  double gap() const {
    const Plan* b = best();
    return b && !exact && b->iteration_time > 0 ? 1 - lower_bound / b->iteration_time : 0;
  }
  /// The same for one of `plans`: 1 - lower_bound / its time (gap() for the best plan).
  double gap_of(const Plan& plan) const {
    if (&plan == best()) return gap();
    return plan.iteration_time > 0 ? 1 - lower_bound / plan.iteration_time : 0;
  }
  /// The first (best) plan, or nullptr when none fits.
  const Plan* best() const { return plans.empty() ? nullptr : &plans.front(); }
};

/// Progress and cancellation for long sweeps. Both are optional.
struct SweepControl {
  /// Called after each finished point with (points done, points in all); may be called
  /// from worker threads, one call at a time.
  std::function<void(std::size_t, std::size_t)> progress;
  /// When set to true, points not yet started are skipped (left with global_batch = 0).
  const std::atomic<bool>* cancel = nullptr;
};

/// Plans a model on a cluster. Thread-safe: plan() and sweep() may run concurrently.
/// Results never depend on the number of threads (see README, "Determinism").
class Planner {
 public:
  /// Throws InputError when the model or cluster is invalid (also when the model has no
  /// compute time at all: no speedup is defined), UsageError for bad settings.
  Planner(ModelProfile model, Cluster cluster, TrainingSettings settings = {},
          SearchOptions options = {});

  /// The model being planned.
  const ModelProfile& model() const { return model_; }
  /// The cluster being planned on.
  const Cluster& cluster() const { return cluster_; }
  /// The training settings in use.
  const TrainingSettings& settings() const { return settings_; }

  /// Baselines and best plans for one global batch size (UsageError if < 1). The plans
  /// searched include those of the cluster's first machines and of its first device (the
  /// other devices idle), and those of the machines from each place where the machine kind
  /// changes (GPUs, GPU type, memory; the first 16 places), whose stages list the devices they
  /// run on; so a cluster never gets a slower plan than such a run of its machines, nor than
  /// one device, when the search finishes (within the simplicity margin of README's
  /// "Exactness and gaps": the simplest plan within 0.1% of the fastest is reported).
  PointResult plan(int global_batch) const;
  /// plan() for every batch size, in parallel, then share_plans(); results in the order given.
  std::vector<PointResult> sweep(const std::vector<int>& global_batches,
                                 const SweepControl& control = {}) const;
  /// What sweep() does once every point is planned: each point whose search stopped short
  /// also tries the best plans of the other points, with the micro-batches of its own batch
  /// size (the same copies, stages, devices and micro-batch size), and reports the fastest
  /// where it beats its own plan by more than the simplicity margin (README, "Sweeps share their
  /// plans"). Its lower bound stays, so its gap only shrinks. For callers that plan() the points
  /// themselves (the command line does, to show progress); points with global_batch 0 or
  /// without a plan take no part. Deterministic for any thread count.
  void share_plans(std::vector<PointResult>& points) const;
  /// The cost of a hand-written plan at `global_batch` under the same model as the search's
  /// plans (see PlanLayout for how it is placed and split). A plan that does not fit memory
  /// is an answer (LayoutCost::fits false, with the numbers); UsageError, naming the stage,
  /// when the stages do not cover the model once in order, when the plan needs more devices
  /// than the cluster has, when the batch does not split as the layout says, or when a
  /// stage of a pipeline has more data-parallel replicas than a micro-batch has samples.
  LayoutCost evaluate(const PlanLayout& layout, int global_batch) const;

 private:
  ModelProfile model_;
  Cluster cluster_;
  TrainingSettings settings_;
  SearchOptions options_;
};

/// Parses a batch-size list: "512", "128,256", or "FIRST:LAST:STEP" (HPGO style: FIRST,
/// then every multiple of STEP above FIRST up to LAST, e.g. 32:4096:64 is 32, 64, 128, ...,
/// 4096). Throws UsageError.
std::vector<int> parse_batch_sizes(const std::string& text);

}  // namespace pe
