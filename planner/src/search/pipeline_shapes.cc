#include "search/pipeline_shapes.h"

#include <algorithm>
#include <numeric>

namespace pe::detail {

std::vector<PipelineShapeChoice> pipeline_shapes(int global_batch, int devices, int min_micro_batch,
                                                 const std::vector<Schedule>& schedules,
                                                 int max_copies) {
  // With one micro-batch GPipe and 1F1B run the same plan: only 1F1B's is kept then.
  const bool has_1f1b = searches(schedules, Schedule::OneFOneB);
  std::vector<PipelineShapeChoice> shapes;
  for (int r : divisors(std::gcd(global_batch, devices))) {
    if (max_copies > 0 && r > max_copies) break;  // divisors ascend
    const int share = global_batch / r;
    const int floor = std::min(min_micro_batch, share);
    for (int b : divisors(share))
      if (b >= floor)
        for (Schedule s : schedules)
          if (s != Schedule::Interleaved && !(has_1f1b && s == Schedule::GPipe && b == share))
            shapes.push_back({r, b, share / b, s});
  }
  return shapes;
}

bool searches(const std::vector<Schedule>& schedules, Schedule s) {
  return std::find(schedules.begin(), schedules.end(), s) != schedules.end();
}

// By trial division up to sqrt(n).
std::vector<int> divisors(int n) {
  std::vector<int> small, large;
  for (int d = 1; d <= n / d; ++d)
    if (n % d == 0) {
      small.push_back(d);
      if (d != n / d) large.push_back(n / d);
    }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

bool matches(const Plan& plan, const PipelineShapeChoice& shape) {
  return plan.pipeline_replicas == shape.replicas && plan.micro_batch_size == shape.micro_batch &&
         plan.schedule == shape.schedule;
}
PipelineShapeChoice shape_of(const Plan& plan) {
  return {plan.pipeline_replicas, plan.micro_batch_size, plan.micro_batches, plan.schedule};
}

bool same_shape(const PipelineShapeChoice& a, const PipelineShapeChoice& b) {
  return a.replicas == b.replicas && a.micro_batch == b.micro_batch &&
         a.micro_batches == b.micro_batches && a.schedule == b.schedule;
}

}  // namespace pe::detail
