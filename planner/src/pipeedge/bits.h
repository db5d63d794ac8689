// Small fixed-width bit sets over cut positions, stored as 64-bit words.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace pe::detail::edge {

using Word = std::uint64_t;
inline constexpr std::size_t kWordBits = 64;

/// Words needed for `bits` bits.
inline std::size_t word_count(std::size_t bits) { return (bits + kWordBits - 1) / kWordBits; }

/// Whether bit `i` of `words` is set.
inline bool test_bit(const Word* words, std::size_t i) {
  return ((words[i / kWordBits] >> (i % kWordBits)) & 1U) != 0;
}

/// Sets bit `i` of `words`.
inline void set_bit(Word* words, std::size_t i) {
  words[i / kWordBits] |= Word{1} << (i % kWordBits);
}

/// Calls `visit(i)` for every set bit i of words[0..count), in increasing order.
template <class Visit>
void for_each_bit(const Word* words, std::size_t count, Visit visit) {
  for (std::size_t w = 0; w < count; ++w) {
    Word bits = words[w];
    while (bits != 0) {
      visit(w * kWordBits + static_cast<std::size_t>(std::countr_zero(bits)));
      bits &= bits - 1;
    }
  }
}

}  // namespace pe::detail::edge
