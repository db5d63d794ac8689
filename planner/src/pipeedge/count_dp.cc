#include "pipeedge/count_dp.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "pe/edge.h"

namespace pe::detail::edge {
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

/// Bookkeeping bytes per count vector: its set's span and its reach bound.
constexpr std::size_t kBytesPerState = 12;
/// Set spans address words with 16 bits and the pool with 32 bits.
constexpr std::size_t kMostWords = 65535;
constexpr std::size_t kMostPoolBytes = (std::size_t{1} << 32) * sizeof(Word);

}  // namespace

CountDp::CountDp(const BoundGraph& graph, std::size_t memory_limit)
    : graph_(graph),
      memory_limit_(std::min(memory_limit, kMostPoolBytes)),
      words_(word_count(graph.layers() + 1)) {
  if (words_ > kMostWords)
    throw SearchLimitError("the exact search handles at most " +
                           std::to_string(kMostWords * kWordBits - 1) + " layers");
  double wanted = 1;
  for (const StageClass& group : graph.classes()) {
    radices_.push_back(group.capacity + 1);
    wanted *= static_cast<double>(group.capacity + 1);
  }
  if (wanted * kBytesPerState > static_cast<double>(memory_limit_))
    fail_limit(wanted * kBytesPerState);
  for (std::size_t radix : radices_) {
    strides_.push_back(states_);
    states_ *= radix;
  }
}

void CountDp::fail_limit(double bytes) const {
  double wanted = 1;
  for (std::size_t radix : radices_) wanted *= static_cast<double>(radix);
  throw SearchLimitError("the exact search needs " + count_text(wanted) +
                         " host-count combinations and more than " + size_text(bytes) +
                         " of tables (limit " + size_text(static_cast<double>(memory_limit_)) +
                         ") for " + std::to_string(radices_.size()) +
                         " distinct device types; give device types with the same profile "
                         "one name, or raise the limit (EdgeSettings::search_memory_limit)");
}

std::size_t CountDp::most_vectors_within(std::size_t layers, std::size_t memory_limit) {
  const std::size_t per_vector = kBytesPerState + word_count(layers + 1) * sizeof(Word);
  return std::min(memory_limit, kMostPoolBytes) / per_vector;
}

std::size_t CountDp::table_bytes() const {
  return states_ * kBytesPerState + pool_.size() * sizeof(Word);
}

std::size_t CountDp::digit(std::size_t code, std::size_t k) const {
  return code / strides_[k] % radices_[k];
}

std::size_t CountDp::stage_count(std::size_t code) const {
  std::size_t total = 0;
  for (std::size_t k = 0; k < radices_.size(); ++k) total += digit(code, k);
  return total;
}

bool CountDp::contains(std::size_t code, std::size_t position) const {
  const SetSpan& span = spans_[code];
  const std::size_t word = position / kWordBits;
  if (word < span.first_word || word >= span.first_word + span.count) return false;
  return ((pool_[span.offset + word - span.first_word] >> (position % kWordBits)) & 1U) != 0;
}

void CountDp::add_predecessors(std::size_t k, const SetSpan& from, std::size_t limit, Word* into,
                               Touched& touched) const {
  if (from.count == 0) return;
  graph_.add_predecessors(k, pool_.data() + from.offset, from.first_word, from.count, limit, into,
                          touched.low, touched.high);
}

std::vector<std::size_t> CountDp::furthest_ends(std::size_t k) const {
  std::vector<std::size_t> furthest(graph_.layers() + 1, graph_.layers());
  for (std::size_t p = 0; p < graph_.layers(); ++p)
    furthest[p] = std::max(p > 0 ? furthest[p - 1] : 0, graph_.furthest_end(k, p));
  return furthest;
}

void CountDp::compute_reach_bounds() {
  const std::size_t positions = graph_.layers() + 1;
  std::vector<std::size_t> furthest;  // furthest_ends(k) at [k * positions]
  for (std::size_t k = 0; k < radices_.size(); ++k) {
    const std::vector<std::size_t> ends = furthest_ends(k);
    furthest.insert(furthest.end(), ends.begin(), ends.end());
  }
  reach_bound_.assign(states_, 0);
  std::vector<std::size_t> digits(radices_.size(), 0);
  for (std::size_t code = 1; code < states_; ++code) {
    for (std::size_t k = 0; k < digits.size() && ++digits[k] == radices_[k]; ++k) digits[k] = 0;
    std::size_t bound = 0;
    for (std::size_t k = 0; k < digits.size(); ++k) {
      // furthest[p] >= p, so this is max(U(S - e_k), E_k(U(S - e_k))) for S[k] > 0.
      // Branch-free (S[k] = 0 reads U(S) itself, still 0, and is masked off): digits
      // change too irregularly to predict.
      const std::size_t used = digits[k] > 0;
      const std::size_t reach = furthest[k * positions + reach_bound_[code - used * strides_[k]]];
      bound = std::max(bound, reach & (std::size_t{0} - used));
    }
    reach_bound_[code] = static_cast<std::uint32_t>(bound);
  }
}

// Clears positions above `limit_position`, moves the non-zero words of `scratch` into the
// pool as B(code) and leaves `scratch` all zero. Only words in `touched` can be non-zero.
void CountDp::store(std::size_t code, Word* scratch, Touched touched, std::size_t limit_position) {
  const std::size_t limit_word = limit_position / kWordBits;
  std::size_t first = touched.low;
  std::size_t last = std::min(touched.high, limit_word + 1);
  if (first < last && last == limit_word + 1 && limit_position % kWordBits + 1 < kWordBits)
    scratch[limit_word] &= (Word{1} << (limit_position % kWordBits + 1)) - 1;
  while (first < last && scratch[first] == 0) ++first;
  while (last > first && scratch[last - 1] == 0) --last;
  if (first >= last) first = last = 0;
  spans_[code] =
      SetSpan{static_cast<std::uint32_t>(pool_.size()), static_cast<std::uint16_t>(first),
              static_cast<std::uint16_t>(last - first)};
  pool_.insert(pool_.end(), scratch + first, scratch + last);
  if (touched.low < touched.high) std::fill(scratch + touched.low, scratch + touched.high, Word{0});
  if (table_bytes() > memory_limit_) fail_limit(static_cast<double>(table_bytes()));
}

bool CountDp::run(bool stop_at_first) {
  compute_reach_bounds();
  spans_.assign(states_, SetSpan{});
  pool_.clear();
  std::vector<Word> scratch(words_, 0);
  set_bit(scratch.data(), graph_.layers());
  const std::size_t last_word = graph_.layers() / kWordBits;
  store(0, scratch.data(), Touched{last_word, last_word + 1}, graph_.layers());
  std::vector<std::size_t> digits(radices_.size(), 0);
  bool found = false;
  for (std::size_t code = 1; code < states_; ++code) {
    for (std::size_t k = 0; k < digits.size() && ++digits[k] == radices_[k]; ++k) digits[k] = 0;
    Touched touched{words_, 0};
    const std::size_t limit = reach_bound_[states_ - 1 - code];
    for (std::size_t k = 0; k < digits.size(); ++k)
      if (digits[k] > 0)
        add_predecessors(k, spans_[code - strides_[k]], limit, scratch.data(), touched);
    store(code, scratch.data(), touched, limit);
    if (contains(code, 0)) {
      found = true;
      if (stop_at_first) return true;
    }
  }
  return found;
}

}  // namespace pe::detail::edge
