// Importing bundled graph.txt profiles into cut states: reading the file, parsing, the
// greedy topological order and the prefix sums. Profiles come from the catalogue
// (profiles_directory(), or $PE_PROFILES_DIR).
#include <benchmark/benchmark.h>

#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"

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

}  // namespace

BENCHMARK_MAIN();
