#include "cost/stage_variants.h"

namespace pe::detail {

void stage_variants(const CostModel& cost, const Layout& layout, int offset, int width,
                    int max_replicas, std::vector<StageVariant>& out) {
  out.clear();
  for (int t = 1; t <= cost.max_tensor_parallel() && t <= width; ++t) {
    if (width % t != 0 || width / t > max_replicas || !cost.tensor_parallel_allowed(t) ||
        !layout.groups_compact(offset, width, t))
      continue;
    out.push_back({t, false});
    if (cost.recomputable()) out.push_back({t, true});
  }
}

std::vector<StageVariant> stage_variants(const CostModel& cost, const Layout& layout, int offset,
                                         int width, int max_replicas) {
  std::vector<StageVariant> variants;
  stage_variants(cost, layout, offset, width, max_replicas, variants);
  return variants;
}

}  // namespace pe::detail
