// pe-plan's output must not depend on the number of worker threads (README, "Determinism and
// ties").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cli/program.h"

namespace pe::testing {
namespace {

using ::testing::HasSubstr;

// The full default sweep (ResNet-50, GBS 32:4096:64, 2 x 8 GPUs) with TBB_NUM_THREADS set.
ProgramResult default_sweep(int threads, const std::vector<std::string>& format) {
  return pe_plan(format, {{"TBB_NUM_THREADS", std::to_string(threads)}});
}

TEST(PePlanDeterminism, DefaultSweepIsByteIdenticalWithOneTwoAndEightThreads) {
  for (const std::vector<std::string>& format :
       {std::vector<std::string>{}, std::vector<std::string>{"--format", "json"}}) {
    const ProgramResult one = default_sweep(1, format);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    ASSERT_THAT(one.out, HasSubstr("4096")) << "the sweep did not reach GBS 4096";
    for (int threads : {2, 8}) {
      const ProgramResult many = default_sweep(threads, format);
      ASSERT_EQ(many.exit_code, 0) << many.err;
      EXPECT_TRUE(many.out == one.out) << threads << " threads differ from 1 thread (format "
                                       << (format.empty() ? "table" : format.back()) << ")";
    }
  }
}

}  // namespace
}  // namespace pe::testing
