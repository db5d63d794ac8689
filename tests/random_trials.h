// How many random instances a property test draws.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace pe {

/// `n`, scaled by the environment variable PE_TEST_TRIALS: a fraction in (0, 1], 1 when
/// unset; at least one. The tests draw their instances from fixed seeds, so a fraction runs
/// the first instances of the same sequence. CI's sanitizer run (.ci/sanitize.sh) sets 0.1:
/// instrumented code runs 10 to 30 times slower there, and the release run draws them all.
inline int random_trials(int n) {
  static const double scale = [] {
    const char* text = std::getenv("PE_TEST_TRIALS");
    if (text == nullptr) return 1.0;
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(value > 0 && value <= 1))
      throw std::invalid_argument(
          std::string("PE_TEST_TRIALS: expected a fraction in (0, 1], got '") + text + "'");
    return value;
  }();
  return std::max(1, static_cast<int>(n * scale));
}

/// Whether PE_TEST_TRIALS cuts the trials (CI's sanitizer run): a test whose one large
/// instance takes minutes under instrumentation skips there, and the release run checks it.
inline bool trials_reduced() { return random_trials(100) < 100; }

}  // namespace pe
