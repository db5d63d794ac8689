// Heterogeneous pipeline search (sched-pipeline) on synthetic edge clusters. Layers follow
// ViT's repeating 4-layer block (attention, projection, MLP up, MLP down) with per-type
// speed and per-block-kind factors, memory that limits stage length and NICs of 100 to
// 1000 Mbit/s, so memory and cut transfers both bind.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pe/edge.h"

namespace {

/// One ViT-like model of `layers` layers; `weight_scale` scales per-layer weights (MiB).
pe::EdgeModel vit_like(std::size_t layers, double weight_scale) {
  static constexpr double kWeights[4] = {26.8, 18.9, 26.5, 25.9};
  static constexpr std::uint64_t kOutputs[4] = {302592, 151296, 756480, 151296};
  pe::EdgeModel model;
  model.name = "vit-like";
  model.parameters_in = 150528;
  for (std::size_t k = 0; k < layers; ++k) {
    model.weights_mib.push_back(kWeights[k % 4] * weight_scale);
    model.parameters_out.push_back(kOutputs[k % 4]);
  }
  return model;
}

/// Device type `index` of a family: speeds, block-kind factors, memory and NIC vary.
pe::EdgeDeviceType edge_type(std::size_t index, std::size_t layers,
                             const std::vector<double>& memory) {
  static constexpr double kBase[4] = {0.46, 0.08, 0.35, 0.30};
  static constexpr double kBandwidth[4] = {1000, 500, 250, 100};
  pe::EdgeDeviceType type;
  type.name = "type-" + std::to_string(index);
  type.bandwidth_mbps = kBandwidth[index % 4];
  type.memory_mib = memory[index % memory.size()];
  const double speed = 0.4 + 0.15 * static_cast<double>(index);
  for (std::size_t k = 0; k < layers; ++k) {
    const double kind = 1.0 + 0.1 * static_cast<double>((index + k) % 4);
    const double jitter = 1.0 + 0.01 * static_cast<double>((k * 7 + index * 3) % 5);
    type.layer_seconds.push_back(kBase[k % 4] * speed * kind * jitter);
  }
  return type;
}

/// `types` device types with `hosts_per_type` hosts each, hosts interleaved by type.
pe::EdgeCluster edge_cluster(std::size_t types, std::size_t hosts_per_type, std::size_t layers,
                             const std::vector<double>& memory) {
  pe::EdgeCluster cluster;
  for (std::size_t t = 0; t < types; ++t) cluster.types.push_back(edge_type(t, layers, memory));
  for (std::size_t h = 0; h < hosts_per_type; ++h)
    for (std::size_t t = 0; t < types; ++t)
      cluster.hosts.push_back({"host-" + std::to_string(t) + "-" + std::to_string(h), t});
  return cluster;
}

void run_schedule(benchmark::State& state, const pe::EdgeModel& model,
                  const pe::EdgeCluster& cluster) {
  const pe::EdgeSettings settings;
  pe::EdgeSchedule result;
  for (auto _ : state) {
    result = pe::schedule_pipeline(model, cluster, settings);
    benchmark::DoNotOptimize(result.stages.data());
  }
  state.counters["stages"] = static_cast<double>(result.stages.size());
  state.counters["bottleneck_s"] = result.bottleneck;
  state.counters["checks"] = static_cast<double>(result.stats.feasibility_checks);
  state.counters["states"] = static_cast<double>(result.stats.largest_state_count);
  state.counters["table_MiB"] = static_cast<double>(result.stats.peak_table_bytes) / (1 << 20);
  state.counters["candidates"] = static_cast<double>(result.stats.candidate_bounds);
  state.counters["hosts_left_out"] = static_cast<double>(result.stats.hosts_left_out);
}

// 48 layers on 16 hosts, each its own device type (PipeEdge: 203 s, 1.4 GB).
void BM_EdgeSchedule_Layers48Types16(benchmark::State& state) {
  const pe::EdgeModel model = vit_like(48, 1.0);
  run_schedule(state, model, edge_cluster(16, 1, 48, {384, 512, 768, 1024}));
}
BENCHMARK(BM_EdgeSchedule_Layers48Types16)->Unit(benchmark::kMillisecond);

// 48 layers on 32 hosts, 16 device types of 2 hosts each: the exact tables would need 3^16
// count vectors, more than the default 64 MiB, so the search runs on a restricted pool.
void BM_EdgeSchedule_Layers48Types16Hosts32(benchmark::State& state) {
  const pe::EdgeModel model = vit_like(48, 1.0);
  run_schedule(state, model, edge_cluster(16, 2, 48, {384, 512, 768, 1024}));
}
BENCHMARK(BM_EdgeSchedule_Layers48Types16Hosts32)->Unit(benchmark::kMillisecond);

// 96 layers on 32 hosts of 4 types (PipeEdge: 8.5 s, 114 MB).
void BM_EdgeSchedule_Layers96Hosts32Types4(benchmark::State& state) {
  const pe::EdgeModel model = vit_like(96, 1.3);
  run_schedule(state, model, edge_cluster(4, 8, 96, {384, 512, 768, 1024}));
}
BENCHMARK(BM_EdgeSchedule_Layers96Hosts32Types4)->Unit(benchmark::kMillisecond);

// 500 layers on 64 hosts of 4 types.
void BM_EdgeSchedule_Layers500Hosts64Types4(benchmark::State& state) {
  const pe::EdgeModel model = vit_like(500, 0.4);
  run_schedule(state, model, edge_cluster(4, 16, 500, {256, 384, 512, 768}));
}
BENCHMARK(BM_EdgeSchedule_Layers500Hosts64Types4)->Unit(benchmark::kMillisecond);

// 10,000 layers of 1 MiB on 4 hosts of 2 types with 4 GiB each, so stages of up to
// ~4,000 layers fit: the instance of docs/bad-inputs.md K4 and of the test
// NumericEdge.TenThousandLayersScheduleInSeconds (before: about 19 s and 550 MB).
void BM_EdgeSchedule_Layers10000Hosts4Types2(benchmark::State& state) {
  constexpr std::size_t kLayers = 10000;
  const pe::EdgeModel model{"uniform", std::vector<double>(kLayers, 1.0), 1000,
                            std::vector<std::uint64_t>(kLayers, 100)};
  pe::EdgeCluster cluster{{{"A", 1000, 4096, std::vector<double>(kLayers, 1e-3)},
                           {"B", 100, 4096, std::vector<double>(kLayers, 2e-3)}},
                          {}};
  for (std::size_t t = 0; t < 2; ++t)
    for (std::size_t k = 0; k < 2; ++k)
      cluster.hosts.push_back({cluster.types[t].name + "-" + std::to_string(k), t});
  run_schedule(state, model, cluster);
}
BENCHMARK(BM_EdgeSchedule_Layers10000Hosts4Types2)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
