#include "search/balanced_ends.h"

namespace pe::detail {

std::vector<std::size_t> balanced_ends(const CostModel& cost, const std::vector<double>& speeds,
                                       int micro_batch) {
  const int stages = static_cast<int>(speeds.size());
  const std::size_t n = cost.states();
  const Seconds total = cost.forward(0, n - 1, micro_batch) + cost.backward(0, n - 1, micro_batch);
  std::vector<std::size_t> ends;
  auto joins = [&](std::size_t e) { return ends.empty() || cost.stage(ends.back() + 1, e); };
  auto work = [&](std::size_t e) {
    return cost.forward(0, e, micro_batch) + cost.backward(0, e, micro_batch);
  };
  double all = 0, before = 0;
  for (double speed : speeds) all += speed;
  std::size_t e = 0;
  for (int s = 1; s < stages; ++s) {
    before += speeds[static_cast<std::size_t>(s - 1)];
    const Seconds target = total * before / all;
    while (e + 1 < n && (work(e) < target || !joins(e))) ++e;
    // The end nearest the target: the one before it when that is closer (and a stage).
    if (e > 0 && (ends.empty() || e - 1 > ends.back()) && target - work(e - 1) < work(e) - target &&
        joins(e - 1))
      --e;
    if (e + 1 >= n) break;
    ends.push_back(e);
  }
  ends.push_back(n - 1);
  return ends;
}

}  // namespace pe::detail
