#include "search/candidate_pool.h"

#include <algorithm>
#include <functional>

#include "cost/evaluate.h"
#include "pe/timeline.h"

namespace pe::detail {

Simplicity simplicity(const Plan& p) {
  return {p.stages.size(),          p.device_count(),    p.pipeline_replicas,
          p.uneven_micro_batches(), -p.micro_batch_size, static_cast<int>(p.schedule)};
}

void rank(std::vector<Candidate>& plans, Seconds fastest) {
  if (plans.empty()) return;
  for (const Candidate& c : plans) fastest = std::min(fastest, c.time());
  auto key = [&](const Candidate& c) {
    const bool tied = c.time() <= fastest * (1 + kSimpler);
    return std::make_tuple(!tied, tied ? 0.0 : c.time(), std::cref(c.simple), c.time(),
                           std::cref(c.stages));
  };
  std::stable_sort(plans.begin(), plans.end(),
                   [&](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
}

Candidate candidate(Plan plan) {
  Simplicity simple = simplicity(plan);
  std::string stages = stages_string(plan);
  return {std::move(plan), simple, std::move(stages)};
}

void Pool::add(Plan plan) { waiting_.push_back(candidate(std::move(plan))); }

void Pool::simulate_promising() {
  std::stable_sort(waiting_.begin(), waiting_.end(), [](const Candidate& a, const Candidate& b) {
    return std::tuple_cat(std::tie(a.plan.lower_bound), a.order()) <
           std::tuple_cat(std::tie(b.plan.lower_bound), b.order());
  });
  std::size_t i = 0;
  for (; i < waiting_.size() && waiting_[i].plan.lower_bound <= cutoff(); ++i) {
    Plan& plan = waiting_[i].plan;
    if (too_large_to_simulate(plan.stages.size(), plan.micro_batches)) {
      least_unsimulated_ = std::min(least_unsimulated_, plan.lower_bound);
      continue;
    }
    set_simulated(plan, simulated_makespan(plan.shape()));
    insert(std::move(waiting_[i]));
  }
  for (; i < waiting_.size(); ++i)
    least_unsimulated_ = std::min(least_unsimulated_, waiting_[i].plan.lower_bound);
  waiting_.clear();
}

Seconds Pool::cutoff() const {
  return static_cast<int>(kept_.size()) < top_ ? std::numeric_limits<Seconds>::infinity()
                                               : kept_.back().time() * (1 + kSimpler);
}

Seconds Pool::best_time() const {
  return kept_.empty() ? std::numeric_limits<Seconds>::infinity() : kept_.front().time();
}

Seconds Pool::cutoff_for(const PipelineShapeChoice& shape) const {
  for (const Candidate& kept : kept_)
    if (matches(kept.plan, shape) && !kept.plan.uneven_micro_batches())
      return std::min(cutoff(), kept.time() * (1 + kSimpler));
  return cutoff();
}

int Pool::stages_to_lead() const {
  if (top_ != 1 || kept_.empty()) return 0;
  return static_cast<int>(answer().front().stages.size());
}

std::vector<Plan> Pool::answer() const {
  std::vector<Candidate> ranked = kept_;
  rank(ranked, fastest_);
  std::vector<Plan> plans;
  for (Candidate& c : ranked)
    if (static_cast<int>(plans.size()) < top_) plans.push_back(std::move(c.plan));
  return plans;
}

// Keeps the best simulated plan of each shape, and of those the best `top` shapes (plus
// any within the margin of the last, which a simpler plan may still need).
void Pool::insert(Candidate candidate) {
  fastest_ = std::min(fastest_, candidate.time());
  candidate.shape_fastest = candidate.time();
  for (Candidate& kept : kept_)
    if (matches(kept.plan, shape_of(candidate.plan))) {
      const Seconds shape_fastest = std::min(kept.shape_fastest, candidate.time());
      std::vector<Candidate> pair{std::move(kept), std::move(candidate)};
      rank(pair, shape_fastest);
      kept = std::move(pair.front());
      kept.shape_fastest = shape_fastest;
      sort_and_trim();
      return;
    }
  kept_.push_back(std::move(candidate));
  sort_and_trim();
}

void Pool::sort_and_trim() {
  std::stable_sort(kept_.begin(), kept_.end(), [](const Candidate& a, const Candidate& b) {
    return std::tuple_cat(std::make_tuple(a.time()), a.order()) <
           std::tuple_cat(std::make_tuple(b.time()), b.order());
  });
  while (static_cast<int>(kept_.size()) > top_ &&
         kept_.back().time() > kept_[top_ - 1].time() * (1 + kSimpler))
    kept_.pop_back();
}

}  // namespace pe::detail
