#include "stage_tables.h"

#include <algorithm>
#include <cmath>

namespace pe::edge {

StageTables::StageTables(const EdgeCostModel& cost, const EdgeCluster& cluster)
    : layers_(cost.layers()), used_(cluster.types.size(), false) {
  for (const EdgeHost& host : cluster.hosts) used_[host.type] = true;
  const std::size_t types = cluster.types.size();
  reach_.assign(types * layers_, 0);
  fit_offset_.assign(types * layers_, 0);
  rows_.assign(types * layers_, RowSpan{});
  row_words_.assign(types, 0);
  for (std::size_t type = 0; type < types; ++type)
    if (used_[type]) scan_type(cost, cluster, type);
  add_transfer_candidates(cost, cluster);
  std::sort(candidates_.begin(), candidates_.end());
  candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
}

void StageTables::append_fit_bit(bool fits) {
  if (fit_count_ % kWordBits == 0) fit_bits_.push_back(0);
  if (fits) set_bit(fit_bits_.data(), fit_count_);
  ++fit_count_;
}

// Walks every stage (i, j] that might fit `type`, left to right from each start, summing
// weights and times in the same order as EdgeCostModel, so the values are bit-identical.
void StageTables::scan_type(const EdgeCostModel& cost, const EdgeCluster& cluster,
                            std::size_t type) {
  const Bytes capacity = cost.capacity_bytes(type);
  const std::vector<Seconds>& times = cluster.types[type].layer_seconds;
  std::vector<std::size_t> first_start(layers_ + 1, layers_);
  for (std::size_t start = 0; start < layers_; ++start) {
    const std::size_t at = type * layers_ + start;
    fit_offset_[at] = fit_count_;
    reach_[at] = start;
    Bytes weights = 0.0;
    Seconds compute = 0.0;
    for (std::size_t end = start + 1; end <= layers_; ++end) {
      weights += cost.layer_weight_bytes(end);
      if (!(weights < capacity)) break;
      compute += times[end - 1];
      const bool fits = capacity > weights + cost.buffer_bytes(start + 1, end);
      append_fit_bit(fits);
      reach_[at] = end;
      if (!fits) continue;
      if (std::isfinite(compute)) candidates_.push_back(compute);
      first_start[end] = std::min(first_start[end], start);
    }
  }
  lay_out_rows(type, first_start);
}

void StageTables::lay_out_rows(std::size_t type, const std::vector<std::size_t>& first_start) {
  std::size_t offset = 0;
  for (std::size_t end = 1; end <= layers_; ++end) {
    RowSpan& span = rows_[type * layers_ + end - 1];
    span.offset = offset;
    if (first_start[end] >= end) continue;
    span.first_word = first_start[end] / kWordBits;
    span.words = (end - 1) / kWordBits - span.first_word + 1;
    offset += span.words;
  }
  row_words_[type] = offset;
}

void StageTables::add_transfer_candidates(const EdgeCostModel& cost, const EdgeCluster& cluster) {
  for (std::size_t type = 0; type < used_.size(); ++type) {
    if (!used_[type]) continue;
    for (std::size_t cut = 1; cut < layers_; ++cut) {
      const Seconds seconds = cost.transfer(cut, cluster.types[type].bandwidth_mbps);
      if (std::isfinite(seconds)) candidates_.push_back(seconds);
    }
  }
}

std::size_t StageTables::reach(std::size_t type, std::size_t start) const {
  return reach_[type * layers_ + start];
}

bool StageTables::fits(std::size_t type, std::size_t start, std::size_t end) const {
  return test_bit(fit_bits_.data(), fit_offset_[type * layers_ + start] + end - start - 1);
}

const RowSpan& StageTables::row(std::size_t type, std::size_t end) const {
  return rows_[type * layers_ + end - 1];
}

}  // namespace pe::edge
