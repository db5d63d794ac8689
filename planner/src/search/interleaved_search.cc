#include "search/interleaved_search.h"

#include <algorithm>
#include <numeric>

#include "cost/layout.h"
#include "cost/stage_variants.h"
#include "search/balanced_ends.h"

namespace pe::detail {
namespace {

std::vector<int> divisors_of(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// The variants allowed on every one of the p groups of width w.
std::vector<StageVariant> common_variants(const CostModel& cost, const Layout& layout, int groups,
                                          int width, int micro_batch) {
  std::vector<StageVariant> common = stage_variants(cost, layout, 0, width, micro_batch);
  for (int g = 1; g < groups; ++g) {
    const std::vector<StageVariant> here =
        stage_variants(cost, layout, g * width, width, micro_batch);
    std::erase_if(common, [&](const StageVariant& v) {
      return std::none_of(here.begin(), here.end(), [&](const StageVariant& h) {
        return h.tensor_parallel == v.tensor_parallel && h.recompute == v.recompute;
      });
    });
  }
  return common;
}

// The p v chunks of about equal work, or nothing when a chunk would be empty.
std::vector<StageSpec> chunks_of(const CostModel& cost, int groups, int chunks, int width,
                                 int micro_batch) {
  const std::vector<double> equal(static_cast<std::size_t>(groups * chunks), 1.0);
  const std::vector<std::size_t> ends = balanced_ends(cost, equal, micro_batch);
  if (ends.size() != equal.size()) return {};
  std::vector<StageSpec> stages;
  std::size_t first = 0;
  for (std::size_t j = 0; j < ends.size(); ++j) {
    if (ends[j] < first) return {};
    const int group = static_cast<int>(j) % groups;
    stages.push_back({first, ends[j], group * width, width, {}});
    first = ends[j] + 1;
  }
  return stages;
}

}  // namespace

std::vector<PipelineSpec> interleaved_specs(const CostModel& cost, int global_batch,
                                            const SearchOptions& options) {
  std::vector<PipelineSpec> specs;
  const int devices = cost.device_count();
  const int states = static_cast<int>(cost.states());
  for (int r : divisors_of(std::gcd(global_batch, devices))) {
    if (options.max_pipeline_copies > 0 && r > options.max_pipeline_copies) break;
    const int copy = devices / r, share = global_batch / r;
    const int floor = std::min(cost.settings().min_micro_batch, share);
    const Layout layout = cost.layout(r, copy);
    for (int w : divisors_of(copy)) {
      const int p = copy / w;
      if (p < 2 || (options.max_stage_width > 0 && w > options.max_stage_width)) continue;
      for (int b : divisors_of(share)) {
        if (b < floor || (share / b) % p != 0) continue;
        const std::vector<StageVariant> variants = common_variants(cost, layout, p, w, b);
        for (int v = 2; v <= options.max_chunks && p * v <= states; ++v) {
          std::vector<StageSpec> stages = chunks_of(cost, p, v, w, b);
          if (stages.empty()) continue;
          for (const StageVariant& variant : variants) {
            PipelineSpec spec{r, copy, b, share / b, Schedule::Interleaved, stages, v};
            for (StageSpec& s : spec.stages) s.variant = variant;
            specs.push_back(std::move(spec));
          }
        }
      }
    }
  }
  return specs;
}

}  // namespace pe::detail
