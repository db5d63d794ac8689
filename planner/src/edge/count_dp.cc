#include "count_dp.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "pe/edge.h"

namespace pe::edge {
namespace {

/// `value` in plain digits, or in %g form when it is astronomically large.
std::string count_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, value < 1e15 ? "%.0f" : "%.3g", value);
  return text;
}

std::string size_text(double bytes) {
  if (bytes < 1024.0 * 1024.0) return count_text(bytes / 1024.0) + " KiB";
  return count_text(bytes / (1024.0 * 1024.0)) + " MiB";
}

/// Bytes per count vector: its position set plus its reach bound.
std::size_t bytes_per_state(std::size_t words) { return (words + 1) * sizeof(Word); }

}  // namespace

CountDp::CountDp(const BoundGraph& graph, std::size_t memory_limit)
    : graph_(graph), words_(word_count(graph.layers() + 1)) {
  double wanted = 1;
  for (const StageClass& group : graph.classes()) {
    radices_.push_back(group.capacity + 1);
    wanted *= static_cast<double>(group.capacity + 1);
  }
  const double bytes = wanted * static_cast<double>(bytes_per_state(words_));
  if (bytes > static_cast<double>(memory_limit))
    throw SearchLimitError("the exact search needs " + count_text(wanted) +
                           " host-count combinations (" + size_text(bytes) + " of tables, limit " +
                           size_text(static_cast<double>(memory_limit)) + ") for " +
                           std::to_string(radices_.size()) +
                           " distinct device types; give device types with the same profile "
                           "one name, or raise the limit");
  for (std::size_t radix : radices_) {
    strides_.push_back(states_);
    states_ *= radix;
  }
  const std::size_t positions = graph.layers() + 1;
  rows_.resize(radices_.size() * positions);
  for (std::size_t k = 0; k < radices_.size(); ++k)
    for (std::size_t end = 1; end < positions; ++end) rows_[k * positions + end] = graph.starts(k, end);
}

std::size_t CountDp::table_bytes() const { return states_ * bytes_per_state(words_); }

std::size_t CountDp::digit(std::size_t code, std::size_t k) const {
  return code / strides_[k] % radices_[k];
}

std::size_t CountDp::stage_count(std::size_t code) const {
  std::size_t total = 0;
  for (std::size_t k = 0; k < radices_.size(); ++k) total += digit(code, k);
  return total;
}

bool CountDp::contains(std::size_t code, std::size_t position) const {
  return test_bit(table_.data() + code * words_, position);
}

void CountDp::add_predecessors(std::size_t k, const Word* from, Word* into) const {
  const RowView* rows = rows_.data() + k * (graph_.layers() + 1);
  for_each_bit(from, words_, [&](std::size_t end) {
    const RowView& row = rows[end];
    for (std::size_t w = 0; w < row.count; ++w) into[row.first_word + w] |= row.words[w];
  });
}

std::vector<std::size_t> CountDp::furthest_ends(std::size_t k) const {
  std::vector<std::size_t> furthest(graph_.layers() + 1, 0);
  for (std::size_t end = 1; end <= graph_.layers(); ++end) {
    const RowView& row = rows_[k * (graph_.layers() + 1) + end];
    for_each_bit(row.words, row.count,
                 [&](std::size_t bit) { furthest[row.first_word * kWordBits + bit] = end; });
  }
  for (std::size_t p = 1; p <= graph_.layers(); ++p)
    furthest[p] = std::max({furthest[p], furthest[p - 1], p});
  return furthest;
}

void CountDp::compute_reach_bounds() {
  std::vector<std::vector<std::size_t>> furthest;
  for (std::size_t k = 0; k < radices_.size(); ++k) furthest.push_back(furthest_ends(k));
  reach_bound_.assign(states_, 0);
  std::vector<std::size_t> digits(radices_.size(), 0);
  for (std::size_t code = 1; code < states_; ++code) {
    for (std::size_t k = 0; k < digits.size() && ++digits[k] == radices_[k]; ++k) digits[k] = 0;
    std::size_t bound = 0;
    for (std::size_t k = 0; k < digits.size(); ++k) {
      if (digits[k] == 0) continue;
      const std::size_t before = reach_bound_[code - strides_[k]];
      bound = std::max({bound, before, furthest[k][before]});
    }
    reach_bound_[code] = bound;
  }
}

void CountDp::keep_at_most(Word* set, std::size_t position) const {
  const std::size_t word = position / kWordBits;
  if (word >= words_) return;
  const std::size_t bit = position % kWordBits;
  if (bit + 1 < kWordBits) set[word] &= (Word{1} << (bit + 1)) - 1;
  for (std::size_t w = word + 1; w < words_; ++w) set[w] = 0;
}

bool CountDp::run(bool stop_at_first) {
  compute_reach_bounds();
  table_.assign(states_ * words_, 0);
  set_bit(table_.data(), graph_.layers());
  std::vector<std::size_t> digits(radices_.size(), 0);
  bool found = false;
  for (std::size_t code = 1; code < states_; ++code) {
    for (std::size_t k = 0; k < digits.size() && ++digits[k] == radices_[k]; ++k) digits[k] = 0;
    Word* into = table_.data() + code * words_;
    for (std::size_t k = 0; k < digits.size(); ++k)
      if (digits[k] > 0) add_predecessors(k, into - strides_[k] * words_, into);
    keep_at_most(into, reach_bound_[states_ - 1 - code]);
    if ((into[0] & 1U) != 0) {
      found = true;
      if (stop_at_first) return true;
    }
  }
  return found || graph_.layers() == 0;
}

}  // namespace pe::edge
