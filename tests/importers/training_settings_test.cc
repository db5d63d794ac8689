// A profile's catalogue entry gives the TrainingSettings to plan it with.
#include <gtest/gtest.h>

#include "pe/importers/profile_catalog.h"

namespace pe {
namespace {

TEST(TrainingSettingsFromProfile, TakeTheEntrysDefaults) {
  ProfileEntry entry;
  entry.min_micro_batch = 4;
  entry.optimizer_scaling = 3;
  entry.activation_bytes_per_sample = 7e7;
  const TrainingSettings settings = training_settings(entry);
  EXPECT_EQ(settings.min_micro_batch, 4);
  EXPECT_DOUBLE_EQ(settings.optimizer_scaling, 3);
  ASSERT_TRUE(settings.activation_bytes_per_sample);
  EXPECT_DOUBLE_EQ(*settings.activation_bytes_per_sample, 7e7);
}

TEST(TrainingSettingsFromProfile, AnEntryWithoutActivationSizeLeavesItDerived) {
  ProfileEntry entry;
  entry.min_micro_batch = 2;
  const TrainingSettings settings = training_settings(entry);
  EXPECT_EQ(settings.min_micro_batch, 2);
  EXPECT_FALSE(settings.activation_bytes_per_sample);
}

TEST(TrainingSettingsFromProfile, BundledProfilesGiveTheirCatalogueValues) {
  for (const ProfileEntry& entry : bundled_profiles()) {
    const TrainingSettings settings = training_settings(find_profile(entry.name));
    EXPECT_EQ(settings.min_micro_batch, entry.min_micro_batch) << entry.name;
    EXPECT_DOUBLE_EQ(settings.optimizer_scaling, entry.optimizer_scaling) << entry.name;
    EXPECT_EQ(settings.activation_bytes_per_sample, entry.activation_bytes_per_sample)
        << entry.name;
  }
}

}  // namespace
}  // namespace pe
