// pe-plan --states and --list-profiles: what a user reads before planning.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli/program.h"
#include "test_paths.h"

namespace pe::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(Listings, StatesOfABundledProfileInsteadOfAPlan) {
  const ProgramResult r = pe_plan({"--profile", "vgg19", "--states"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("vgg19: 25 states, profile batch 32;"));
  EXPECT_THAT(r.out, HasSubstr("  FC1\n"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("GBS")));
  const ProgramResult json = pe_plan({"--profile", "vgg19", "--states", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out).at("states").size(), 25u);
}

TEST(Listings, ListProfilesNamesEveryBundledProfile) {
  const ProgramResult r =
      pe_plan({"--list-profiles", "--format", "json"}, {{"PE_PROFILES_DIR", PE_TEST_PROFILES_DIR}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json profiles = nlohmann::json::parse(r.out).at("profiles");
  EXPECT_GE(profiles.size(), 45u);
  bool resnet50 = false;
  for (const nlohmann::json& p : profiles)
    if (p.at("name") == "resnet50") {
      resnet50 = true;
      EXPECT_EQ(p.at("states"), 240);
      EXPECT_EQ(p.at("profile_batch_size"), 32);
      EXPECT_EQ(p.at("file"), "pipedream/resnet50/graph.txt");
    }
  EXPECT_TRUE(resnet50);
  const ProgramResult table =
      pe_plan({"--list-profiles"}, {{"PE_PROFILES_DIR", PE_TEST_PROFILES_DIR}});
  EXPECT_THAT(table.out, StartsWith("name "));
  EXPECT_THAT(table.out, HasSubstr("\nresnet50 "));
}

}  // namespace
}  // namespace pe::testing
