// Benchmarks of the hybrid search. Commands and numbers: bench/README.md.
#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pe/gpu.h"
#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "pe/importers/transformer_yaml.h"
#include "pe/planner.h"

namespace {

pe::Planner make_planner(const pe::ProfileEntry& e, const std::vector<int>& machine_ends) {
  return pe::Planner(pe::import_pipedream_graph(e.path, e.profile_batch_size),
                     pe::cluster_from_machine_ends(machine_ends), pe::training_settings(e));
}
pe::Planner make_planner(const std::string& profile, const std::vector<int>& machine_ends) {
  return make_planner(pe::find_profile(profile), machine_ends);
}

std::vector<int> machines(int devices, int per_machine) {
  std::vector<int> ends;
  for (int end = per_machine; end <= devices; end += per_machine) ends.push_back(end);
  return ends;
}

// The README's default job: ResNet-50, GBS 32:4096:64 (65 points), 2 machines x 8 GPUs.
// Argument: worker threads (a cap: on a machine with fewer cores, the cores).
void BM_Planner_DefaultSweep(benchmark::State& state) {
  tbb::global_control cap(tbb::global_control::max_allowed_parallelism,
                          static_cast<std::size_t>(state.range(0)));
  const pe::Planner planner = make_planner("resnet50", {8, 16});
  const std::vector<int> batches = pe::parse_batch_sizes("32:4096:64");
  for (auto _ : state) benchmark::DoNotOptimize(planner.sweep(batches));
  state.counters["points"] = static_cast<double>(batches.size());
}
BENCHMARK(BM_Planner_DefaultSweep)
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Arg(16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// How time grows with states: the default sweep for VGG-19 (25 states), ResNet-50 (176)
// and ResNet-101 (346) on 2 x 8 GPUs, 2 threads.
void BM_Planner_SweepByModel(benchmark::State& state, const char* profile) {
  const pe::Planner planner = make_planner(profile, {8, 16});
  const std::vector<int> batches = pe::parse_batch_sizes("32:4096:64");
  for (auto _ : state) benchmark::DoNotOptimize(planner.sweep(batches));
  state.counters["states"] = static_cast<double>(planner.model().size());
}
BENCHMARK_CAPTURE(BM_Planner_SweepByModel, vgg19, "vgg19")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Planner_SweepByModel, resnet50, "resnet50")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Planner_SweepByModel, resnet101, "resnet101")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Plans one batch size per iteration; counter exact = 1 when the search finished within
// the default effort (SearchOptions::effort).
void time_point(benchmark::State& state, const pe::Planner& planner, int global_batch) {
  bool exact = true;
  for (auto _ : state) {
    const pe::PointResult point = planner.plan(global_batch);
    exact = point.exact;
    benchmark::DoNotOptimize(point);
  }
  state.counters["exact"] = exact;
}

// The largest batch size pe-plan takes, GBS 2^30 (docs/bad-inputs.md, A15): ResNet-50 on
// 2 x 8 GPUs, whose candidates have up to 2^22 (stage, micro-batch) pairs to simulate.
void BM_Planner_LargestBatchPoint(benchmark::State& state) {
  const pe::Planner planner = make_planner("resnet50", {8, 16});
  time_point(state, planner, 1 << 30);
}
BENCHMARK(BM_Planner_LargestBatchPoint)->Unit(benchmark::kMillisecond)->UseRealTime();

// How time grows with devices: ResNet-50 at GBS 512 on 8, 16, 64 and 256 GPUs in machines
// of 8 (one point; a sweep multiplies it by the number of points over the threads).
void BM_Planner_PointByDevices(benchmark::State& state) {
  const int devices = static_cast<int>(state.range(0));
  const pe::Planner planner = make_planner("resnet50", machines(devices, 8));
  time_point(state, planner, 512);
  state.counters["devices"] = devices;
}
BENCHMARK(BM_Planner_PointByDevices)
    ->Arg(8)
    ->Arg(16)
    ->Arg(64)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The scaling table of bench/README.md: one point, GBS 512, of six profiles on 16 to 4,096
// GPUs in machines of 8 (2 threads). Counters: gap_percent (0 when exact), the plan's speedup,
// exact, devices.
const char* const kScalingProfiles[] = {"vgg19",   "resnet50", "resnet101",
                                        "gnmt_16", "bert_48",  "nasnetalarge"};
void BM_Planner_Scaling(benchmark::State& state) {
  tbb::global_control cap(tbb::global_control::max_allowed_parallelism, 2);
  const std::string profile = kScalingProfiles[state.range(0)];
  const int devices = static_cast<int>(state.range(1));
  const pe::Planner planner = make_planner(profile, machines(devices, 8));
  double gap = 0, speedup = 0;
  bool exact = true;
  for (auto _ : state) {
    const pe::PointResult point = planner.plan(512);
    gap = point.best() ? point.gap() : 1;
    speedup = point.best() ? point.best()->speedup : 0;
    exact = point.exact;
    benchmark::DoNotOptimize(point);
  }
  state.SetLabel(profile);
  state.counters["gap_percent"] = 100 * gap;
  state.counters["speedup"] = speedup;
  state.counters["exact"] = exact;
  state.counters["devices"] = devices;
}
BENCHMARK(BM_Planner_Scaling)
    ->ArgsProduct({{0, 1, 2, 3, 4, 5}, {16, 64, 256, 1024, 4096}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The default sweep (GBS 32:4096:64, 65 points) of a planner, 2 threads. Counters:
// inexact points and the largest gap.
void time_sweep(benchmark::State& state, const pe::Planner& planner) {
  tbb::global_control cap(tbb::global_control::max_allowed_parallelism, 2);
  const std::vector<int> batches = pe::parse_batch_sizes("32:4096:64");
  int inexact = 0;
  double largest = 0;
  for (auto _ : state) {
    const std::vector<pe::PointResult> points = planner.sweep(batches);
    inexact = 0, largest = 0;
    for (const pe::PointResult& p : points) {
      inexact += !p.exact;
      largest = std::max(largest, p.gap());
    }
  }
  state.counters["inexact"] = inexact;
  state.counters["gap_percent"] = 100 * largest;
}

// Every bundled profile's default sweep on the cluster of `machine_ends`, registered by
// main(): on 2 x 8 GPUs (BM_Planner_SweepEveryProfile) and on 16 single-GPU machines
// (BM_Planner_SweepSingleGpuMachines, where every cut crosses machines: the slow links make
// pipelines the hardest to bound).
void sweep_profile(benchmark::State& state, const pe::ProfileEntry& entry,
                   const std::vector<int>& machine_ends) {
  std::optional<pe::Planner> planner;
  try {
    planner.emplace(make_planner(entry, machine_ends));
  } catch (const std::exception& e) {  // the catalogue's test graphs include degenerate ones
    state.SkipWithError(e.what());
    return;
  }
  time_sweep(state, *planner);
}

// Two kinds of machines, listed either way (README, "Machines that differ"): one point, 2
// threads. Arguments: the case (0: VGG-19 at GBS 1,024 on a machine of 4 V100s and one of 4
// H100s; 1 and 2: GNMT-16 at GBS 128 and 512 on a machine of 8 A100-40GB and one of 4 V100s)
// and the listing (0: as written, 1: the other machine first). Counters: the plan's speedup,
// exact, and its first device (not 0: it starts on the later machine and goes round).
struct TwoKinds {
  const char* profile;
  int global_batch;
  int gpus[2];
  const char* types[2];
};
const TwoKinds kTwoKinds[] = {{"vgg19", 1024, {4, 4}, {"V100-16GB", "H100-80GB"}},
                              {"gnmt_16", 128, {8, 4}, {"A100-40GB", "V100-16GB"}},
                              {"gnmt_16", 512, {8, 4}, {"A100-40GB", "V100-16GB"}}};
void BM_Planner_TwoKinds(benchmark::State& state) {
  tbb::global_control cap(tbb::global_control::max_allowed_parallelism, 2);
  const TwoKinds& c = kTwoKinds[state.range(0)];
  const int first = static_cast<int>(state.range(1)), second = 1 - first;
  const pe::ProfileEntry e = pe::find_profile(c.profile);
  pe::Cluster cluster =
      pe::cluster_from_machine_ends({c.gpus[first], c.gpus[first] + c.gpus[second]});
  cluster.machine_gpu = {pe::find_gpu(c.types[first], "bench"),
                         pe::find_gpu(c.types[second], "bench")};
  const pe::Planner planner(pe::import_pipedream_graph(e.path, e.profile_batch_size), cluster,
                            pe::training_settings(e));
  double speedup = 0;
  bool exact = false;
  int first_device = 0;
  for (auto _ : state) {
    const pe::PointResult point = planner.plan(c.global_batch);
    speedup = point.best() ? point.best()->speedup : 0;
    exact = point.exact;
    first_device = point.best() ? point.best()->first_device() : 0;
    benchmark::DoNotOptimize(point);
  }
  state.SetLabel(c.profile);
  state.counters["speedup"] = speedup;
  state.counters["exact"] = exact;
  state.counters["first_device"] = first_device;
}
BENCHMARK(BM_Planner_TwoKinds)
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The slowest bundled point we know: NASNet-A large (1,250 states) at GBS 32 on 2 x 8 GPUs,
// where the search stops at the default effort (SearchOptions::effort). Argument: threads.
void BM_Planner_EffortBoundPoint(benchmark::State& state) {
  tbb::global_control cap(tbb::global_control::max_allowed_parallelism,
                          static_cast<std::size_t>(state.range(0)));
  const pe::Planner planner = make_planner("nasnetalarge", {8, 16});
  time_point(state, planner, 32);
}
BENCHMARK(BM_Planner_EffortBoundPoint)
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Arg(16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

// A bundled transformer on machines of 8 H100s (NVLink 450 GB/s, 50 GB/s per GPU between
// machines), every dimension on: tensor parallelism up to 8, recomputation, ZeRO-1, and with
// a third argument of 1 the interleaved schedule too (--schedule all).
// Arguments: 7 or 70 (llama2-7b or llama2-70b), devices, schedules; one point, GBS 4096
// sequences.
void BM_Planner_Transformer(benchmark::State& state) {
  const std::string name = state.range(0) == 7 ? "llama2-7b" : "llama2-70b";
  const pe::TransformerInput t = pe::load_transformer_yaml(pe::find_transformer(name));
  pe::Cluster cluster =
      pe::cluster_from_machine_ends(machines(static_cast<int>(state.range(1)), 8));
  cluster.network = {450 * pe::kGB, 50 * pe::kGB, 50 * pe::kGB};
  cluster.device_memory = t.gpu.memory;
  pe::TrainingSettings s;
  s.optimizer_scaling = pe::transformer_optimizer_scaling(t.config);
  s.zero_stage = 1;
  pe::SearchOptions options;
  if (state.range(2) == 1)
    options.schedules = {pe::Schedule::OneFOneB, pe::Schedule::GPipe, pe::Schedule::Interleaved};
  const pe::Planner planner(pe::transformer_model(t.config, t.gpu, t.efficiency), cluster, s,
                            options);
  double gap = 0, speedup = 0;
  for (auto _ : state) {
    const pe::PointResult point = planner.plan(4096);
    gap = point.best() ? point.gap() : 1;
    speedup = point.best() ? point.best()->speedup : 0;
    benchmark::DoNotOptimize(point);
  }
  state.counters["gap_percent"] = 100 * gap;
  state.counters["speedup"] = speedup;
}
BENCHMARK(BM_Planner_Transformer)
    ->ArgsProduct({{7, 70}, {64, 512, 1024, 4096}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::pair<std::string, std::vector<int>>> clusters = {
      {"BM_Planner_SweepEveryProfile/", {8, 16}},
      {"BM_Planner_SweepSingleGpuMachines/", machines(16, 1)}};
  for (const auto& [prefix, ends] : clusters)
    for (const pe::ProfileEntry& entry : pe::bundled_profiles())
      benchmark::RegisterBenchmark((prefix + entry.name).c_str(), sweep_profile, entry, ends)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->Iterations(1);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
