// Every exception of the library is a pe::Error; UsageError names the API field at fault.
#include "pe/error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pe/cluster.h"
#include "pe/edge.h"
#include "pe/output_file.h"
#include "pe/planner.h"

namespace pe {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The UsageError `call` throws (fails the test when it throws none).
template <typename Call>
UsageError usage_error_of(Call call) {
  try {
    call();
  } catch (const UsageError& e) {
    return e;
  }
  ADD_FAILURE() << "no UsageError";
  return UsageError("none");
}

TEST(Error, EveryExceptionTypeIsAPeError) {
  EXPECT_THROW(throw InputError("f.txt:3", "bad"), Error);
  EXPECT_THROW(throw UsageError("bad"), Error);
  EXPECT_THROW(throw OutputError("cannot write"), Error);
  EXPECT_THROW(throw SearchLimitError("too big"), Error);
  EXPECT_STREQ(InputError("f.txt:3", "bad").what(), "f.txt:3: bad");
}

TEST(Error, UsageErrorKeepsItsFieldAndMessage) {
  const UsageError plain("no schedule to search");
  EXPECT_EQ(plain.field(), "");
  const UsageError field("SearchOptions::top", "SearchOptions::top must be at least 1");
  EXPECT_EQ(field.field(), "SearchOptions::top");
  EXPECT_STREQ(field.what(), "SearchOptions::top must be at least 1");
}

TEST(Error, LibraryMessagesNameTheApiFieldTheyBelongTo) {
  const ModelProfile m = make_chain_model("m", 1, {{"a", 1, 1, 1, 1}});
  const Cluster c = cluster_from_machine_ends({2});
  TrainingSettings settings;
  settings.min_micro_batch = 0;
  const UsageError mbs = usage_error_of([&] { Planner(m, c, settings); });
  EXPECT_EQ(mbs.field(), "TrainingSettings::min_micro_batch");
  EXPECT_STREQ(mbs.what(), "TrainingSettings::min_micro_batch must be at least 1");
  SearchOptions top;
  top.top = 0;
  EXPECT_EQ(usage_error_of([&] { Planner(m, c, {}, top); }).field(), "SearchOptions::top");

  const UsageError gbs = usage_error_of([] { parse_batch_sizes("8:1:1"); });
  EXPECT_EQ(gbs.field(), "parse_batch_sizes");
  EXPECT_THAT(gbs.what(), StartsWith("parse_batch_sizes: range '8:1:1' ends before it starts"));
  const UsageError ends = usage_error_of([] { parse_machine_ends("0"); });
  EXPECT_EQ(ends.field(), "parse_machine_ends");
  EXPECT_THAT(ends.what(), StartsWith("parse_machine_ends: '0' is not a GPU count"));
  const UsageError order = usage_error_of([] { cluster_from_machine_ends({8, 8}); });
  EXPECT_EQ(order.field(), "cluster_from_machine_ends");
  EXPECT_THAT(order.what(), HasSubstr("got 8 after 8"));
}

}  // namespace
}  // namespace pe
