#include "pipeedge/bound_search.h"

#include <algorithm>
#include <limits>

namespace pe::detail::edge {

BoundSearch::BoundSearch(const StageTables& tables)
    : tables_(tables),
      low_(-std::numeric_limits<double>::infinity()),
      high_(tables.largest_candidate()),
      low_end_(tables.type_count()),
      low_sum_(tables.type_count()),
      high_end_(tables.type_count()),
      trial_end_(tables.type_count()),
      trial_sum_(tables.type_count()) {
  const std::size_t layers = tables.layers();
  for (std::size_t type = 0; type < tables.type_count(); ++type) {
    if (!tables.used(type)) continue;
    low_end_[type].resize(layers);
    low_sum_[type].assign(layers, 0.0);
    high_end_[type].resize(layers);
    trial_end_[type].resize(layers);
    trial_sum_[type].resize(layers);
    for (std::size_t start = 0; start < layers; ++start) {
      low_end_[type][start] = static_cast<std::uint32_t>(start);
      high_end_[type][start] = static_cast<std::uint32_t>(tables.finite(type, start));
    }
  }
}

EndsByType BoundSearch::view(const std::vector<std::vector<std::uint32_t>>& ends) const {
  EndsByType result(ends.size(), nullptr);
  for (std::size_t type = 0; type < ends.size(); ++type)
    if (tables_.used(type)) result[type] = ends[type].data();
  return result;
}

void BoundSearch::try_bound(Seconds bound) {
  trial_ = bound;
  for (std::size_t type = 0; type < tables_.type_count(); ++type) {
    if (!tables_.used(type)) continue;
    const Seconds* times = tables_.times(type).data();
    for (std::size_t start = 0; start < tables_.layers(); ++start) {
      std::size_t end = low_end_[type][start];
      const std::size_t high = high_end_[type][start];
      Seconds compute = low_sum_[type][start];
      while (end < high) {
        const Seconds next = compute + times[end];  // layer end + 1
        if (next > bound) break;
        compute = next;
        ++end;
      }
      trial_end_[type][start] = static_cast<std::uint32_t>(end);
      trial_sum_[type][start] = compute;
    }
  }
}

void BoundSearch::keep_as_high() {
  high_ = trial_;
  high_end_.swap(trial_end_);
}

void BoundSearch::keep_as_low() {
  low_ = trial_;
  low_end_.swap(trial_end_);
  low_sum_.swap(trial_sum_);
}

void BoundSearch::sample(Sampler& sampler) const {
  for (std::size_t type = 0; type < tables_.type_count(); ++type) {
    if (!tables_.used(type)) continue;
    const Seconds* times = tables_.times(type).data();
    for (std::size_t start = 0; start < tables_.layers(); ++start) {
      Seconds compute = low_sum_[type][start];
      const std::size_t full = tables_.full(type, start);
      for (std::size_t end = low_end_[type][start]; end < high_end_[type][start]; ++end) {
        compute += times[end];          // the compute of (start, end + 1]
        if (!(compute < high_)) break;  // the rest equal high
        if (end + 1 <= full || tables_.fits(type, start, end + 1)) sampler.add(compute);
      }
    }
  }
  const std::vector<double>& cuts = tables_.transfer_candidates();
  auto first = std::upper_bound(cuts.begin(), cuts.end(), low_);
  auto last = std::lower_bound(cuts.begin(), cuts.end(), high_);
  for (; first < last; ++first) sampler.add(*first);
}

}  // namespace pe::detail::edge
