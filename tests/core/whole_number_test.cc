// The whole-number reader behind the batch-size and machine-end lists.
#include "core/whole_number.h"

#include <gtest/gtest.h>

namespace pe::detail {
namespace {

TEST(WholeNumber, ReadsWholeNumbersInRange) {
  EXPECT_EQ(whole_number("1", 10), 1);
  EXPECT_EQ(whole_number("10", 10), 10);
  EXPECT_EQ(whole_number("007", 10), 7);
}

TEST(WholeNumber, RefusesAnythingElse) {
  for (const char* text : {"", "0", "11", "-1", "1.5", "8x", "x8", "1e3", "99999999999999999999"})
    EXPECT_FALSE(whole_number(text, 10)) << text;
}

}  // namespace
}  // namespace pe::detail
