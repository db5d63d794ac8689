#include "pipeedge/pick_schedule.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace pe::detail::edge {
namespace {

/// The partial schedule built so far: stages cover layers 1..position using used[k] hosts
/// of class k; `live` holds the fewest-stage count vectors it can still be completed to.
struct Walk {
  std::size_t position = 0;
  std::size_t used_code = 0;
  std::vector<std::size_t> used;
  std::vector<std::size_t> live;
};

/// Codes of the vectors that cover all layers with the fewest stages.
std::vector<std::size_t> fewest_stage_vectors(const CountDp& dp) {
  std::vector<std::size_t> best;
  std::size_t least = std::numeric_limits<std::size_t>::max();
  for (std::size_t code = 0; code < dp.states(); ++code) {
    if (!dp.contains(code, 0)) continue;
    const std::size_t stages = dp.stage_count(code);
    if (stages < least) best.clear();
    least = std::min(least, stages);
    if (stages == least) best.push_back(code);
  }
  return best;
}

/// Whether adding stage (walk.position, end] on class k still leads to a live vector.
bool completes(const CountDp& dp, const Walk& walk, std::size_t k, std::size_t end) {
  const std::size_t after = walk.used_code + dp.stride(k);
  for (std::size_t code : walk.live)
    if (dp.digit(code, k) > walk.used[k] && dp.contains(code - after, end)) return true;
  return false;
}

/// Classes that still have hosts, ordered by the next host each would hand out.
std::vector<std::size_t> class_order(const BoundGraph& graph, const Walk& walk) {
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < graph.classes().size(); ++k)
    if (walk.used[k] < graph.classes()[k].capacity) order.push_back(k);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return graph.classes()[a].hosts[walk.used[a]] < graph.classes()[b].hosts[walk.used[b]];
  });
  return order;
}

/// Appends the next stage by the tie-break order and advances the walk.
void take_next_stage(const BoundGraph& graph, const CountDp& dp, Walk& walk,
                     std::vector<EdgeStage>& stages) {
  for (std::size_t k : class_order(graph, walk)) {
    for (std::size_t end = graph.furthest_end(k, walk.position); end > walk.position; --end) {
      if (!graph.allows(k, walk.position, end) || !completes(dp, walk, k, end)) continue;
      stages.push_back(
          EdgeStage{graph.classes()[k].hosts[walk.used[k]], walk.position + 1, end, 0, 0, 0});
      ++walk.used[k];
      walk.used_code += dp.stride(k);
      walk.position = end;
      std::erase_if(walk.live, [&](std::size_t code) {
        return dp.digit(code, k) < walk.used[k] || !dp.contains(code - walk.used_code, end);
      });
      return;
    }
  }
  throw std::logic_error("pick_schedule: no stage continues a schedule the table promised");
}

}  // namespace

std::vector<EdgeStage> pick_schedule(const BoundGraph& graph, const CountDp& dp) {
  Walk walk;
  walk.used.assign(graph.classes().size(), 0);
  walk.live = fewest_stage_vectors(dp);
  std::vector<EdgeStage> stages;
  while (walk.position < graph.layers()) take_next_stage(graph, dp, walk, stages);
  return stages;
}

}  // namespace pe::detail::edge
