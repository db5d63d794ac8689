// pe-plan names the flag where the library names the API field a bad setting belongs to.
#include "field_flags.h"

#include <gmock/gmock.h>
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
  EXPECT_EQ(flag_for_field("SearchOptions::max_stage_width"), "--max-stage-width");
  EXPECT_EQ(flag_for_field("SearchOptions::max_pipeline_copies"), "--max-copies");
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

// What the library says when no plan fits names the API; pe-plan names its flags.
TEST(FieldFlags, NoPlanReasonsNameTheFlags) {
  EXPECT_EQ(
      cli_wording("micro-batches of at least 4 samples (TrainingSettings::min_micro_batch 4)"),
      "micro-batches of at least 4 samples (--mbs 4)");
  EXPECT_EQ(cli_wording("not proven; SearchOptions::effort 0 searches to the end"),
            "not proven; --search-effort 0 searches to the end");
  EXPECT_EQ(
      cli_wording("which is 1F1B: SearchOptions::schedules with Schedule::OneFOneB can plan it"),
      "which is 1F1B: --schedule 1f1b or best can plan it");
  EXPECT_EQ(cli_wording("nothing to replace"), "nothing to replace");
  // A real reason from the library, reworded.
  // One sample per device fits; a floor of 4 on 2 devices needs 2 per device in every step.
  ModelProfile model = make_chain_model("m", 1, {{"a", 1e-3, 2e-3, 1e9, 1e9}});
  TrainingSettings settings;
  settings.min_micro_batch = 4;
  Cluster cluster = cluster_from_machine_ends({2});
  cluster.device_memory = 2e9 + 1.5e9;
  const PointResult point = Planner(model, cluster, settings).plan(8);
  ASSERT_EQ(point.best(), nullptr);
  EXPECT_THAT(point.no_plan_reason, ::testing::HasSubstr("TrainingSettings::min_micro_batch 4"));
  EXPECT_THAT(cli_wording(point.no_plan_reason), ::testing::HasSubstr("(--mbs 4)"));
}

// A search limit that leaves nothing that fits is named in the reason, as its flag in pe-plan.
TEST(FieldFlags, NoPlanReasonsNameTheSearchLimits) {
  // The weights fit only when split over two stages; stages of one device on one device
  // cannot hold them.
  ModelProfile model =
      make_chain_model("m", 1, {{"a", 1e-3, 2e-3, 1e6, 1e9}, {"b", 1e-3, 2e-3, 1e6, 1e9}});
  Cluster cluster = cluster_from_machine_ends({1});
  cluster.device_memory = 3e9;
  SearchOptions options;
  options.max_stage_width = 1;
  options.max_pipeline_copies = 1;
  const PointResult point = Planner(model, cluster, {}, options).plan(8);
  ASSERT_EQ(point.best(), nullptr);
  EXPECT_THAT(point.no_plan_reason,
              ::testing::AllOf(::testing::HasSubstr("(SearchOptions::max_stage_width)"),
                               ::testing::HasSubstr("(SearchOptions::max_pipeline_copies)")));
  EXPECT_THAT(cli_wording(point.no_plan_reason),
              ::testing::AllOf(::testing::HasSubstr("stages are limited to 1 device(s) "
                                                    "(--max-stage-width)"),
                               ::testing::HasSubstr("pipeline copies are limited to 1 "
                                                    "(--max-copies)")));
  options.max_stage_width = -1;
  EXPECT_THROW(Planner(model, cluster, {}, options), UsageError);
  try {
    Planner(model, cluster, {}, options);
  } catch (const UsageError& e) {
    EXPECT_EQ(usage_message(e), "--max-stage-width must be 0 (no limit) or more");
  }
}

}  // namespace
}  // namespace pe::cli
