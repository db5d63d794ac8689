// Shared helpers of the libFuzzer targets: reading fuzz bytes, building argument lists from
// a small vocabulary, and checking the contracts every result must keep. A broken contract
// aborts, which libFuzzer reports as a crash together with the input that caused it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pe/edge.h"
#include "pe/model.h"
#include "pe/planner.h"

namespace pe::fuzz {

/// Reads a fuzz input front to back. Reading past the end yields zeros.
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool empty() const { return offset_ >= size_; }
  /// The next byte, or 0 when none is left.
  std::uint8_t byte();
  /// Everything not read yet, as text.
  std::string rest();

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t offset_ = 0;
};

/// A flag of a command line and the values the fuzzer may give it. A flag with no values
/// takes none; an empty flag name stands for a bare value (a positional argument).
struct FlagVocabulary {
  std::string flag;
  std::vector<std::string> values;
};

/// Builds an argument list: each pair of bytes picks a flag (low 7 bits) and one of its
/// values; the high bit of the first byte writes the pair as `flag=value` instead of two
/// arguments. At most `max_pairs` pairs are read.
std::vector<std::string> vocabulary_args(ByteReader& in,
                                         const std::vector<FlagVocabulary>& vocabulary,
                                         std::size_t max_pairs);

/// Splits bytes at NUL characters into arguments (raw, any bytes allowed).
std::vector<std::string> split_args(const std::string& text);

/// `relative` resolved against the source tree (tests/data/..., profiles/...).
std::string source_path(const std::string& relative);

/// A private scratch folder for output files, created on first use, removed at exit.
const std::string& scratch_dir();

/// Aborts with `what` on stderr when `condition` is false.
void require(bool condition, const char* what);

/// Checks the contract of a planned point: stages are contiguous, cover every state,
/// and use no more devices than the cluster has; a point without plans says why.
void check_point(const PointResult& point, const ModelProfile& model, const Cluster& cluster);

/// Checks the contract of an edge schedule: layers 1..L covered contiguously by distinct
/// hosts, or no stages and a reason.
void check_schedule(const EdgeSchedule& schedule, const EdgeModel& model,
                    const EdgeCluster& cluster);

/// Plans `model` on `cluster` for a small global batch and checks the result. InputError
/// and UsageError (documented answers to bad values) are accepted.
void plan_and_check(const ModelProfile& model, const Cluster& cluster, int global_batch);

/// Runs the edge search and checks the result. UsageError and SearchLimitError (the
/// documented answers to inconsistent input and oversized searches) are accepted.
void schedule_and_check(const EdgeModel& model, const EdgeCluster& cluster);

}  // namespace pe::fuzz
