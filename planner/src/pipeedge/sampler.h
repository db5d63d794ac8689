// An evenly spaced sample of a stream of values of unknown length, in bounded memory.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace pe::detail::edge {

/// Keeps every s-th value added (the 0th, s-th, 2s-th, ...), starting with s = 1; when
/// `capacity` values are kept, drops every other one and doubles s. So at most `capacity`
/// values are kept, the sample is complete while fewer than `capacity` were added, and a
/// stream of sorted runs (the compute times of one start, end by end) is sampled at evenly
/// spaced ranks.
class Sampler {
 public:
  explicit Sampler(std::size_t capacity)
      : capacity_(capacity < 2 ? 2 : capacity + capacity % 2),
        kept_(std::make_unique_for_overwrite<double[]>(capacity_)) {}

  /// Call-free, so that loops adding values keep their sums in registers.
  void add(double value) {
    if (--skip_ != 0) return;
    kept_[size_++] = value;
    skip_ = stride_;
    if (size_ < capacity_) return;
    // The value just kept is the (capacity - 1)-th, an odd one, so it is dropped; the next
    // one kept is `stride_` values on, at a multiple of the doubled stride.
    for (std::size_t k = 0; k < capacity_; k += 2) kept_[k / 2] = kept_[k];
    size_ = capacity_ / 2;
    stride_ *= 2;
  }

  /// Whether every value added is in the sample.
  bool complete() const { return stride_ == 1; }
  /// The values kept, in the order they were added.
  std::vector<double> values() const { return {kept_.get(), kept_.get() + size_}; }

 private:
  std::size_t capacity_;
  std::unique_ptr<double[]> kept_;
  std::size_t size_ = 0;
  std::size_t stride_ = 1;
  std::size_t skip_ = 1;  ///< Values until the next one kept, counting that one.
};

}  // namespace pe::detail::edge
