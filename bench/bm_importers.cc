// Importing bundled graph.txt profiles into cut states: reading the file, parsing, the
// greedy topological order and the prefix sums. Profiles come from the catalogue
// (profiles_directory(), or $PE_PROFILES_DIR). Also generated graphs (wide: parallel
// branches all open at once; deep: a chain) and a work list whose items form one chain.
#include <benchmark/benchmark.h>

#include <string>

#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "pe/importers/work_yaml.h"

namespace {

void BM_PipedreamGraph_Import(benchmark::State& state, const char* profile) {
  const pe::ProfileEntry entry = pe::find_profile(profile);
  std::size_t states = 0;
  for (auto _ : state) {
    const pe::ModelProfile model = pe::import_pipedream_graph(entry.path, entry.profile_batch_size);
    states = model.size();
    benchmark::DoNotOptimize(states);
  }
  state.counters["states"] = static_cast<double>(states);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(states));
}

BENCHMARK_CAPTURE(BM_PipedreamGraph_Import, vgg19, "vgg19")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PipedreamGraph_Import, resnet50, "resnet50")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PipedreamGraph_Import, resnet101, "resnet101")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PipedreamGraph_Import, gnmt_16, "gnmt_16")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PipedreamGraph_Import, inception_v3, "inception_v3")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PipedreamGraph_Import, nasnetalarge, "nasnetalarge")
    ->Unit(benchmark::kMicrosecond);

std::string node(const std::string& id, long activation) {
  return id + " -- op -- forward_compute_time=1, backward_compute_time=2, activation_size=" +
         std::to_string(activation) + ", parameter_size=4\n";
}

std::string edge(const std::string& from, const std::string& to) {
  return "\t" + from + " -- " + to + "\n";
}

// About `operators` operators: s feeds branches b_i -> d_i; every b_i also feeds the join j,
// whose output is large, so j's change is updated once per branch.
std::string wide_graph(long operators) {
  const long branches = operators / 2;
  std::string text = node("s", 1000) + node("j", 1000000000000) + node("t", 1);
  for (long i = 0; i < branches; ++i)
    text += node("b" + std::to_string(i), 10) + node("d" + std::to_string(i), 50);
  for (long i = 0; i < branches; ++i) {
    const std::string b = "b" + std::to_string(i), d = "d" + std::to_string(i);
    text += edge("s", b) + edge(b, d) + edge(b, "j") + edge(d, "t");
  }
  return text + edge("j", "t");
}

std::string deep_graph(long operators) {
  std::string text;
  for (long i = 0; i < operators; ++i) text += node("n" + std::to_string(i), 1000 + i % 11);
  for (long i = 1; i < operators; ++i)
    text += edge("n" + std::to_string(i - 1), "n" + std::to_string(i));
  return text;
}

void import_text(benchmark::State& state, const std::string& text) {
  std::size_t states = 0;
  for (auto _ : state) {
    states = pe::parse_pipedream_graph(text, "generated.txt", 1).size();
    benchmark::DoNotOptimize(states);
  }
  state.counters["states"] = static_cast<double>(states);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(states));
}

void BM_PipedreamGraph_Wide(benchmark::State& state) {
  import_text(state, wide_graph(state.range(0)));
}
void BM_PipedreamGraph_Deep(benchmark::State& state) {
  import_text(state, deep_graph(state.range(0)));
}
BENCHMARK(BM_PipedreamGraph_Wide)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PipedreamGraph_Deep)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

// A work list of N items, each after the previous one.
void BM_WorkYaml_Chain(benchmark::State& state) {
  std::string text = "items:\n";
  for (long i = 0; i < state.range(0); ++i)
    text += "  - {name: w" + std::to_string(i) + ", duration_ms: 1" +
            (i > 0 ? ", after: w" + std::to_string(i - 1) : std::string()) + "}\n";
  for (auto _ : state) benchmark::DoNotOptimize(pe::parse_work_yaml(text, "work.yml"));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_WorkYaml_Chain)->Arg(30000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
