// Never worse than data parallelism (and the baselines in order): for every bundled profile, every
// batch size of the default sweep (and six the GPUs do not divide) and both reference clusters, the
// best hybrid plan's speedup is at least plain data parallelism's whenever data parallelism fits
// memory.
//
// The search offers a one-stage plan (data parallelism with per-layer all-reduce overlap)
// as a seed before any exact pass, so the property holds at any search effort. The suite
// runs with a small effort (kSmallEffort) to cover all 45 profiles x 65 batch sizes x 2
// clusters in seconds; NeverWorseAtDefaultEffort covers HPGO's two examples at the default
// effort.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "pe/error.h"
#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "pe/planner.h"

namespace pe {
namespace {

std::vector<std::string> profile_names() {
  std::vector<std::string> names;
  for (const ProfileEntry& e : bundled_profiles()) names.push_back(e.name);
  return names;
}

std::vector<int> flat_machines(int n) {
  std::vector<int> ends;
  for (int i = 1; i <= n; ++i) ends.push_back(i);
  return ends;
}

// Steps a batch size: some points still finish exact (VGG-19 on 2 x 8 GPUs: 33 of 65), the
// others run out and go through the later phases (relaxed, closing, refining passes). With
// 10 times more the suite took 3 minutes of CPU, most of it on the GNMT graphs.
constexpr std::uint64_t kSmallEffort = 20'000;

Planner planner_for(const ProfileEntry& e, const Cluster& cluster, std::uint64_t effort) {
  SearchOptions options;
  options.effort = effort;
  return Planner(import_pipedream_graph(e.path, e.profile_batch_size), cluster,
                 training_settings(e), options);
}

std::vector<PointResult> default_sweep(const Planner& planner) {
  return planner.sweep(parse_batch_sizes("32:4096:64"));
}

// Checks every point; returns how many had data parallelism fit. Also checks the
// baselines' order DP <= DP+overlap <= DP+P3 <= devices on real profiles.
int expect_never_worse(const std::vector<PointResult>& points, const std::string& label,
                       int devices) {
  int checked = 0;
  for (const PointResult& p : points) {
    const Baselines& b = p.baselines;
    EXPECT_LE(b.dp, b.dp_overlap * (1 + 1e-12)) << label << " GBS " << p.global_batch;
    EXPECT_LE(b.dp_overlap, b.dp_p3 * (1 + 1e-12)) << label << " GBS " << p.global_batch;
    EXPECT_LE(b.dp_p3, devices * (1 + 1e-12)) << label << " GBS " << p.global_batch;
    if (!p.baselines.fits) continue;
    ++checked;
    const Plan* best = p.best();
    if (!best) {
      ADD_FAILURE() << label << " GBS " << p.global_batch << ": DP fits but no hybrid plan";
      continue;
    }
    // A relative 1e-9 is the search's tie margin.
    EXPECT_GE(best->speedup, p.baselines.dp * (1 - 1e-9))
        << label << " GBS " << p.global_batch << ": " << stages_string(*best);
  }
  return checked;
}

class NeverWorse : public ::testing::TestWithParam<std::string> {};

TEST_P(NeverWorse, HybridAtLeastDataParallelOnBothClusters) {
  const ProfileEntry e = find_profile(GetParam());
  const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
  if (model.forward(0, model.size() - 1) + model.backward(0, model.size() - 1) == 0) {
    // PipeDream's zero-cost test graphs: no speedup is defined, and the planner says so.
    EXPECT_THROW(planner_for(e, cluster_from_machine_ends({8, 16}), kSmallEffort), InputError);
    return;
  }
  int checked = 0;
  for (const Cluster& cluster :
       {cluster_from_machine_ends({8, 16}), cluster_from_machine_ends(flat_machines(16))})
    checked +=
        expect_never_worse(default_sweep(planner_for(e, cluster, kSmallEffort)),
                           e.name + " on " + std::to_string(cluster.machine_count()) + " machines",
                           cluster.device_count());
  // Every bundled profile with compute has points where data parallelism fits, or the
  // check would be vacuous.
  EXPECT_GT(checked, 0) << e.name;
}

// Batch sizes 16 GPUs do not divide (63 of 1000 per GPU): data parallelism then runs
// uneven shares, and gradient accumulation where memory asks for it; a one-stage plan does
// the same (stage_samples), so the hybrid speedup is still at least DP's.
TEST_P(NeverWorse, HybridAtLeastDataParallelOnBatchSizesTheGpusDoNotDivide) {
  const ProfileEntry e = find_profile(GetParam());
  const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
  if (model.forward(0, model.size() - 1) + model.backward(0, model.size() - 1) == 0) return;
  const std::vector<int> uneven{100, 250, 1000, 1500, 3000, 4001};
  int checked = 0;
  for (const Cluster& cluster :
       {cluster_from_machine_ends({8, 16}), cluster_from_machine_ends(flat_machines(16))})
    checked +=
        expect_never_worse(planner_for(e, cluster, kSmallEffort).sweep(uneven),
                           e.name + " on " + std::to_string(cluster.machine_count()) + " machines",
                           cluster.device_count());
  EXPECT_GT(checked, 0) << e.name;
}

// HPGO's example models at the default effort: never worse, and every point's lower bound
// is a real one (positive, never above the plan's own time).
TEST(NeverWorseAtDefaultEffort, HpgoExamplesOnBothClusters) {
  for (const std::string name : {"vgg19", "resnet50"}) {
    const ProfileEntry e = find_profile(name);
    for (const Cluster& cluster :
         {cluster_from_machine_ends({8, 16}), cluster_from_machine_ends(flat_machines(16))}) {
      const std::vector<PointResult> points =
          default_sweep(planner_for(e, cluster, kDefaultSearchEffort));
      EXPECT_GT(expect_never_worse(points, name, cluster.device_count()), 0);
      for (const PointResult& p : points) {
        ASSERT_NE(p.best(), nullptr) << name << " GBS " << p.global_batch;
        EXPECT_GT(p.lower_bound, 0) << name << " GBS " << p.global_batch;
        EXPECT_LE(p.lower_bound, p.best()->iteration_time * (1 + 1e-12))
            << name << " GBS " << p.global_batch;
        EXPECT_EQ(p.exact, p.gap() == 0) << name << " GBS " << p.global_batch;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BundledProfiles, NeverWorse, ::testing::ValuesIn(profile_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace pe
