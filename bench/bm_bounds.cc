// Single bounding passes of the shapes that hold open cells of the scaling table and the
// default sweeps: how far each kind of pass raises a shape's lower bound, and for how many
// steps. They reproduce bench/README.md, "What holds the open cells". Counters:
// lower_bound_ms (the pass's least bound; 0 when it stopped), steps_M, finished; an exact
// pass also reports its first plan's simulated time and path bounds with each set of terms.
#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cost/evaluate.h"
#include "cost/path_bound.h"
#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "pe/timeline.h"
#include "search/pipeline_dp.h"
#include "search/shape_pass.h"

namespace {

using pe::detail::PipelineShapeChoice;

// A shape whose bound holds a cell open, on machines of `per_machine` GPUs, and a cutoff a
// little below the best plan the search finds for its batch size (each pass prunes with it).
struct OpenShape {
  const char* name;
  const char* profile;
  int per_machine;
  int devices;
  PipelineShapeChoice shape;
  double cutoff_s;
};
// GNMT-16 at GBS 512 on 8 machines of 8 GPUs (best plan 100.21 ms): one copy of 128
// micro-batches of 4 holds the gap (3.2 %; the same shape on 256 to 4,096 GPUs). NASNet-A
// large at GBS 64 on 2 x 8 GPUs (best plan 119.76 ms, of this shape): one copy of 32
// micro-batches of 2 holds the gap (6.7 %). GNMT-16 at GBS 64 on 8 machines of 8 GPUs (best
// plan found 24.17 ms, with 10 times the default effort): one copy of 16 micro-batches of 4.
const OpenShape kShapes[] = {
    {"gnmt_16/64gpus/1x128x4", "gnmt_16", 8, 64, {1, 4, 128, pe::Schedule::OneFOneB}, 0.1002},
    {"nasnetalarge/2x8/1x32x2", "nasnetalarge", 8, 16, {1, 2, 32, pe::Schedule::OneFOneB}, 0.1197},
    {"gnmt_16/64gpus/1x16x4", "gnmt_16", 8, 64, {1, 4, 16, pe::Schedule::OneFOneB}, 0.02417},
};
constexpr std::uint64_t kEffort = 300'000'000;

pe::detail::CostModel cost_of(const OpenShape& s) {
  const pe::ProfileEntry e = pe::find_profile(s.profile);
  std::vector<int> ends;
  for (int end = s.per_machine; end <= s.devices; end += s.per_machine) ends.push_back(end);
  return pe::detail::CostModel(pe::import_pipedream_graph(e.path, e.profile_batch_size),
                               pe::cluster_from_machine_ends(ends), pe::training_settings(e));
}

void report(benchmark::State& state, const OpenShape& s, double lower_bound, bool finished,
            std::uint64_t steps) {
  state.SetLabel(s.name);
  state.counters["lower_bound_ms"] = finished ? 1e3 * lower_bound : 0;
  state.counters["cutoff_ms"] = 1e3 * s.cutoff_s;
  state.counters["steps_M"] = static_cast<double>(steps) / 1e6;
  state.counters["finished"] = finished;
}

// The exact pass of shape `s` on the cluster of `cost`, cut off at the shape's cutoff.
pe::detail::DpQuery exact_query(const OpenShape& s, const pe::detail::CostModel& cost) {
  const int width = cost.cluster().device_count() / s.shape.replicas;
  return {s.shape.replicas, width,  s.shape.micro_batch, s.shape.micro_batches, s.shape.schedule,
          s.cutoff_s,       kEffort};
}

// A refining relaxed pass (shape_pass.h, refined_bound). Arguments: shape, buckets, worst-term
// buckets (0 or 1).
void BM_Bounds_Refined(benchmark::State& state) {
  tbb::global_control cap(tbb::global_control::max_allowed_parallelism, 2);
  const OpenShape& s = kShapes[state.range(0)];
  const pe::detail::CostModel cost = cost_of(s);
  pe::detail::PassBound pass;
  for (auto _ : state)
    pass = pe::detail::refined_bound(cost, s.shape, s.cutoff_s, kEffort, pe::detail::PassLimits{},
                                     static_cast<int>(state.range(1)), state.range(2) != 0);
  report(state, s, pass.least_bound, pass.finished, pass.steps);
}
BENCHMARK(BM_Bounds_Refined)
    ->ArgsProduct({{0}, {16, 64, 256}, {1}})
    ->ArgsProduct({{1}, {16, 64, 256}, {0}})
    ->Args({1, 16, 1})
    ->ArgsProduct({{2}, {256, 1024}, {0}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// An exact pass, pruned by the cutoff, with the search's first terms (no window cycles) or with
// the relaxed passes' (window cycles, delayed arrivals), and its first plan: simulated, and
// bounded with each set of terms and with every term. Arguments: shape, terms (0 first, 1 the
// relaxed passes').
void BM_Bounds_Exact(benchmark::State& state) {
  tbb::global_control cap(tbb::global_control::max_allowed_parallelism, 2);
  const OpenShape& s = kShapes[state.range(0)];
  const pe::detail::CostModel cost = cost_of(s);
  pe::detail::BoundTerms relaxed = pe::detail::kFirstPassTerms;
  relaxed.windows = relaxed.arrivals = true;
  pe::detail::DpQuery query = exact_query(s, cost);
  if (state.range(1) != 0) query.terms = relaxed;
  pe::detail::DpResult pass;
  for (auto _ : state) pass = pe::detail::best_pipeline(cost, query);
  report(state, s, pass.least_bound, !pass.stopped, pass.steps);
  if (pass.plans.empty()) return;
  const int batch = s.shape.replicas * s.shape.micro_batch * s.shape.micro_batches;
  const pe::PipelineShape plan =
      pe::detail::evaluate(cost, pass.plans.front().spec, batch).plan.shape();
  state.counters["plan_simulated_ms"] = 1e3 * pe::simulate(plan).makespan;
  state.counters["plan_first_terms_ms"] =
      1e3 * pe::detail::path_lower_bound(plan, pe::detail::kFirstPassTerms);
  state.counters["plan_relaxed_terms_ms"] = 1e3 * pe::detail::path_lower_bound(plan, relaxed);
  state.counters["plan_every_term_ms"] = 1e3 * pe::detail::path_lower_bound(plan);
}
BENCHMARK(BM_Bounds_Exact)
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({2, 0})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A merged pass (shape_pass.h, merged_bound: DpQuery::merged_fields, every term), pruned by
// the cutoff: its cells keep the suffixes undominated in their first `fields` fields and merge
// the others. Arguments: shape, fields (the refining phase's first merged passes take
// kMergedFields, the later ones up to kMostMergedFields).
void BM_Bounds_Merged(benchmark::State& state) {
  tbb::global_control cap(tbb::global_control::max_allowed_parallelism, 2);
  const OpenShape& s = kShapes[state.range(0)];
  const pe::detail::CostModel cost = cost_of(s);
  pe::detail::PassBound pass;
  for (auto _ : state)
    pass = pe::detail::merged_bound(cost, s.shape, s.cutoff_s, kEffort, pe::detail::PassLimits{},
                                    static_cast<int>(state.range(1)));
  report(state, s, pass.least_bound, pass.finished, pass.steps);
}
BENCHMARK(BM_Bounds_Merged)
    ->ArgsProduct({{0, 2}, {1, 2, 3, 4}})
    ->Args({1, 3})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
