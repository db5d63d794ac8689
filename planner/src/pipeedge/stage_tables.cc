#include "pipeedge/stage_tables.h"

#include <algorithm>
#include <cmath>

namespace pe::detail::edge {

StageTables::StageTables(const EdgeCostModel& cost, const EdgeCluster& cluster, Sampler& sampler)
    : layers_(cost.layers()), used_(cluster.types.size(), false) {
  for (const EdgeHost& host : cluster.hosts) used_[host.type] = true;
  const std::size_t types = cluster.types.size();
  facts_.assign(types * layers_, StartFact{});
  windows_.resize(types);
  for (const EdgeDeviceType& type : cluster.types) times_.push_back(&type.layer_seconds);
  for (std::size_t type = 0; type < types; ++type)
    if (used_[type]) scan_type(cost, type, sampler);
  add_transfers(cost, cluster);
}

// Walks the stages (i, j] from each start while their weights alone fit, summing weights
// and times left to right from 0.0 as EdgeCostModel does, so the values are bit-identical.
// The loop makes no calls, so its two sums stay in registers.
void StageTables::scan_type(const EdgeCostModel& cost, std::size_t type, Sampler& sampler) {
  const Bytes capacity = cost.capacity_bytes(type);
  const Seconds* times = times_[type]->data();
  const double buffers_in = static_cast<double>(cost.settings().buffers_in);
  const double buffers_out = static_cast<double>(cost.settings().buffers_out);
  std::vector<Bytes> weights(layers_ + 1, 0.0);
  std::vector<Bytes> outputs(layers_ + 1, 0.0);
  for (std::size_t layer = 1; layer <= layers_; ++layer) {
    weights[layer] = cost.layer_weight_bytes(layer);
    outputs[layer] = cost.output_bytes(layer);
  }
  // A stage's buffers grow with the output of its last layer, so the ends with the least
  // and the most output bound them; the exact buffers are needed only in between.
  const Bytes least_output = *std::min_element(outputs.begin() + 1, outputs.end());
  const Bytes most_output = *std::max_element(outputs.begin() + 1, outputs.end());
  std::vector<std::size_t> fitting(layers_ + 1);  // ends in (full, last] that fit
  for (std::size_t start = 0; start < layers_; ++start) {
    const Bytes input = cost.input_bytes(start + 1);
    const auto buffers = [&](Bytes output) {
      return EdgeCostModel::buffer_bytes(start == 0, input, output, buffers_in, buffers_out);
    };
    const Bytes least_buffers = buffers(least_output);
    const Bytes most_buffers = buffers(most_output);
    std::size_t full = start;
    std::size_t last = start;
    std::size_t finite = start;
    std::size_t fitting_count = 0;
    Seconds at_last = 0.0;
    Seconds at_finite = 0.0;
    bool run = true;
    Bytes weight = 0.0;
    Seconds compute = 0.0;
    for (std::size_t end = start + 1; end <= layers_; ++end) {
      weight += weights[end];
      if (!(weight < capacity)) break;
      compute += times[end - 1];
      const bool finite_compute = std::isfinite(compute);
      if (finite_compute) {
        finite = end;
        at_finite = compute;
      }
      const bool fit =
          capacity > weight + most_buffers ||
          (capacity > weight + least_buffers && capacity > weight + buffers(outputs[end]));
      if (!fit) {
        run = false;
        continue;
      }
      if (finite_compute) {
        sampler.add(compute);
        ++candidate_count_;
      }
      last = end;
      at_last = compute;
      if (run)
        full = end;
      else
        fitting[fitting_count++] = end;
    }
    StartFact& fact = facts_[type * layers_ + start];
    fact.full = static_cast<std::uint32_t>(full);
    fact.last = static_cast<std::uint32_t>(last);
    fact.finite = static_cast<std::uint32_t>(std::min(finite, last));
    if (fact.finite > start) {
      const Seconds largest = last <= finite ? at_last : at_finite;
      largest_candidate_ = has_candidates_ ? std::max(largest_candidate_, largest) : largest;
      has_candidates_ = true;
    }
    if (last > full) store_window(type, fact, fitting.data(), fitting_count);
  }
}

void StageTables::store_window(std::size_t type, StartFact& fact, const std::size_t* fitting,
                               std::size_t count) {
  std::vector<Word>& words = windows_[type];
  const std::size_t first_word = (std::size_t{fact.full} + 1) / kWordBits;
  fact.window_offset = words.size();
  words.resize(words.size() + fact.last / kWordBits - first_word + 1, 0);
  for (std::size_t k = 0; k < count; ++k)
    set_bit(words.data() + fact.window_offset, fitting[k] - first_word * kWordBits);
}

void StageTables::add_transfers(const EdgeCostModel& cost, const EdgeCluster& cluster) {
  transfers_.assign(used_.size() * layers_, 0.0);
  for (std::size_t type = 0; type < used_.size(); ++type) {
    if (!used_[type]) continue;
    for (std::size_t cut = 1; cut < layers_; ++cut) {
      const Seconds seconds = cost.transfer(cut, cluster.types[type].bandwidth_mbps);
      transfers_[type * layers_ + cut] = seconds;
      if (std::isfinite(seconds)) transfer_candidates_.push_back(seconds);
    }
  }
  std::sort(transfer_candidates_.begin(), transfer_candidates_.end());
  candidate_count_ += transfer_candidates_.size();
  if (transfer_candidates_.empty()) return;
  const Seconds largest = transfer_candidates_.back();
  largest_candidate_ = has_candidates_ ? std::max(largest_candidate_, largest) : largest;
  has_candidates_ = true;
}

bool StageTables::fits(std::size_t type, std::size_t start, std::size_t end) const {
  const StartFact& f = fact(type, start);
  if (end <= f.full) return true;
  if (end > f.last) return false;
  const std::size_t first_word = (std::size_t{f.full} + 1) / kWordBits;
  return test_bit(windows_[type].data() + f.window_offset, end - first_word * kWordBits);
}

WindowView StageTables::window(std::size_t type, std::size_t start) const {
  const StartFact& f = fact(type, start);
  if (f.last == f.full) return {};
  const std::size_t first_word = (std::size_t{f.full} + 1) / kWordBits;
  return WindowView{windows_[type].data() + f.window_offset, first_word,
                    f.last / kWordBits - first_word + 1};
}

}  // namespace pe::detail::edge
