// pe-plan names the flag where the library names the API field a bad setting belongs to.
#include "field_flags.h"

#include <gtest/gtest.h>

#include "pe/cluster.h"
#include "pe/planner.h"

namespace pe::cli {
namespace {

TEST(FieldFlags, EachFieldWithAFlagMapsToIt) {
  EXPECT_EQ(flag_for_field("TrainingSettings::min_micro_batch"), "--mbs");
  EXPECT_EQ(flag_for_field("TrainingSettings::optimizer_scaling"), "--optimizer-scaling");
  EXPECT_EQ(flag_for_field("TrainingSettings::activation_bytes_per_sample"),
            "--activation-bytes-per-sample");
  EXPECT_EQ(flag_for_field("SearchOptions::top"), "--top");
  EXPECT_EQ(flag_for_field("parse_batch_sizes"), "--gbs");
  EXPECT_EQ(flag_for_field("parse_machine_ends"), "--devices");
  EXPECT_EQ(flag_for_field("cluster_from_machine_ends"), "--devices");
  EXPECT_EQ(flag_for_field("SearchOptions::schedules"), "");
  EXPECT_EQ(flag_for_field(""), "");
}

TEST(FieldFlags, MessagesNameTheFlagInsteadOfTheField) {
  EXPECT_EQ(
      usage_message(UsageError("SearchOptions::top", "SearchOptions::top must be at least 1")),
      "--top must be at least 1");
  EXPECT_EQ(
      usage_message(UsageError("parse_batch_sizes", "parse_batch_sizes: 'x' or parse_batch_sizes")),
      "--gbs: 'x' or --gbs");
}

TEST(FieldFlags, MessagesWithoutAKnownFieldStayAsTheyAre) {
  EXPECT_EQ(usage_message(UsageError("no schedule to search")), "no schedule to search");
  EXPECT_EQ(usage_message(UsageError("Other::field", "Other::field is bad")),
            "Other::field is bad");
}

// The library's real messages read as pe-plan's messages always did.
TEST(FieldFlags, LibraryMessagesReadAsBefore) {
  try {
    parse_batch_sizes("0");
    ADD_FAILURE() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(usage_message(e),
              "--gbs: '0' in '0' is not a batch size (a whole number from 1 to 2^30)");
  }
  try {
    parse_machine_ends("");
    ADD_FAILURE() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(usage_message(e), "--devices: expected comma-separated machine ends, e.g. 8,16");
  }
}

}  // namespace
}  // namespace pe::cli
