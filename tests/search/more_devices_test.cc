// More devices never hurt: on clusters of growing machine counts (machines of 1, 2 and 8
// GPUs), the best plan's iteration time never grows, and it is never above the best plan on
// one device. The search holds every plan of the cluster's first machines
// (search_plans' parts), so this holds by construction whenever the search finishes; the
// reported plan is the simplest within kSimpler of the fastest, so it may sit that much above
// the fastest, which never grows. Where the search stops short, a cluster's plan is never
// slower than its first 1, 2, 4, ... machines' by more than 5 % (search_point searches them too
// where its gap is above that).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "cost/evaluate.h"
#include "pe/gpu.h"
#include "pe/importers/pipedream_graph.h"
#include "pe/importers/profile_catalog.h"
#include "pe/plan_layout.h"
#include "pe/planner.h"
#include "pe/timeline.h"
#include "random_trials.h"
#include "search/hybrid_search.h"
#include "search/point_search.h"
#include "search/random_instances.h"

namespace pe {
namespace {

Cluster machines_of(int gpus, int machines, const Cluster& like) {
  std::vector<int> ends;
  for (int m = 1; m <= machines; ++m) ends.push_back(m * gpus);
  Cluster cluster = cluster_from_machine_ends(ends);
  cluster.network = like.network;
  cluster.device_memory = like.device_memory;
  return cluster;
}

// Plans `batches` on 1..max_machines machines of `gpus` and checks the best times; returns
// how many points had a plan on some cluster and got strictly faster with more machines
// somewhere (so that the check is not vacuous).
int expect_never_slower(const ModelProfile& model, const TrainingSettings& settings,
                        const Cluster& like, int gpus, int max_machines,
                        const std::vector<int>& batches, const std::string& label) {
  SearchOptions options;
  options.effort = 0;  // the property holds for finished searches
  // The whole batch on one device, as a plan (its memory may ask for micro-batches).
  const std::vector<PointResult> one_device =
      Planner(model, machines_of(1, 1, like), settings, options).sweep(batches);
  std::vector<double> previous(batches.size(), 0);
  int faster = 0;
  for (int machines = 1; machines <= max_machines; ++machines) {
    const Planner planner(model, machines_of(gpus, machines, like), settings, options);
    const std::vector<PointResult> points = planner.sweep(batches);
    for (std::size_t i = 0; i < points.size(); ++i) {
      const std::string where = label + " on " + std::to_string(machines) + " x " +
                                std::to_string(gpus) + " GPUs, GBS " + std::to_string(batches[i]);
      const Plan* best = points[i].best();
      // A plan of fewer machines (or of one device) is a plan of more.
      if (!best) {
        EXPECT_EQ(previous[i], 0) << where;
        EXPECT_EQ(one_device[i].best(), nullptr) << where;
        continue;
      }
      const double margin = 1 + detail::kSimpler + 1e-12;
      if (const Plan* alone = one_device[i].best()) {
        EXPECT_LE(best->iteration_time, alone->iteration_time * margin) << where;
      }
      if (previous[i] > 0) {
        EXPECT_LE(best->iteration_time, previous[i] * margin) << where;
        faster += best->iteration_time < previous[i] * (1 - detail::kSimpler);
      }
      previous[i] = best->iteration_time;
    }
  }
  return faster;
}

Cluster reference_links() { return cluster_from_machine_ends({8}); }

TEST(MoreDevices, NeverSlowerOnBundledProfiles) {
  const std::vector<int> batches{32, 96, 250, 1024};
  for (const std::string name : {"resnet50", "vgg19", "alexnet"}) {
    const ProfileEntry e = find_profile(name);
    const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
    const TrainingSettings settings = training_settings(e);
    int faster = 0;
    faster += expect_never_slower(model, settings, reference_links(), 1, 8, batches, name);
    faster += expect_never_slower(model, settings, reference_links(), 2, 5, batches, name);
    // AlexNet at GBS 32 on three machines takes half a minute at unlimited effort.
    const int machines_of_8 = name == std::string("alexnet") ? 2 : 3;
    faster +=
        expect_never_slower(model, settings, reference_links(), 8, machines_of_8, batches, name);
    EXPECT_GT(faster, 0) << name;
  }
}

// Where the search stops short: VGG-19 and GNMT-16 at GBS 256 on 1 to 8 machines of 4 GPUs, at
// a fifth of a thousandth of the default effort. The whole cluster's own search
// (search_finished) gives a slower plan than its first machines somewhere (VGG-19 on 4 machines:
// speedup 5.05, on their first 2: 6.68); the planner never does against its first 2^k machines,
// as the planner plans them, by more than kFirstMachinesGap (where its gap is above that it
// searches them too; below, its bound shows it), beyond the simplicity margin, and its lower
// bound stays below its plan.
TEST(MoreDevices, NeverSlowerThanTheFirstPowerOfTwoMachinesWhereTheSearchStopsShort) {
  SearchOptions options;
  options.effort = 20'000;
  const double margin = (1 + detail::kSimpler + 1e-12) / (1 - detail::kFirstMachinesGap);
  int alone_slower = 0;
  for (const std::string name : {"vgg19", "gnmt_16"}) {
    const ProfileEntry e = find_profile(name);
    const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
    const TrainingSettings settings = training_settings(e);
    std::vector<double> planned{0};  // by machines
    for (int machines = 1; machines <= 8; ++machines) {
      const Cluster cluster = machines_of(4, machines, reference_links());
      const std::string where = name + " on " + std::to_string(machines) + " machines";
      const PointResult point = Planner(model, cluster, settings, options).plan(256);
      const detail::CostModel cost(model, cluster, settings);
      const detail::SearchResult alone = detail::search_finished(model, cost, 256, options);
      ASSERT_NE(point.best(), nullptr) << where;
      ASSERT_FALSE(alone.plans.empty()) << where;
      const double time = point.best()->iteration_time;
      EXPECT_LE(point.lower_bound, time) << where;
      for (int part = 1; part < machines; part *= 2) {
        EXPECT_LE(time, planned[part] * margin) << where << ", first " << part;
        alone_slower += alone.plans.front().iteration_time > planned[part] * margin;
      }
      planned.push_back(time);
    }
  }
  EXPECT_GE(alone_slower, 1);
}

// The largest cluster a cluster file takes, 100,000 single-GPU machines, plans VGG-19 at
// GBS 32 as 256 machines do (the best plan uses 5 GPUs). Every first-machines part of it can
// beat the whole cluster's first plans, so the search visits nearly 100,000 parts: they are
// built one at a time, and a part whose shapes the whole cluster's bounds settle keeps no cost
// model. Before, every part was built up front and kept: 15 GB on 32,768 machines, and out of
// memory on 100,000 (24 GB).
TEST(MoreDevices, TheLargestClusterAFileTakesPlansAsItsFirstMachinesDo) {
  const ProfileEntry e = find_profile("vgg19");
  const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
  const TrainingSettings settings = training_settings(e);
  Cluster huge = reference_links();
  huge.machine_gpus.assign(100000, 1);
  const PointResult small = Planner(model, machines_of(1, 256, huge), settings).plan(32);
  const PointResult large = Planner(model, huge, settings).plan(32);
  ASSERT_NE(small.best(), nullptr);
  ASSERT_NE(large.best(), nullptr);
  EXPECT_TRUE(small.exact);
  EXPECT_TRUE(large.exact);
  EXPECT_EQ(stages_string(*large.best()), stages_string(*small.best()));
  EXPECT_DOUBLE_EQ(large.best()->iteration_time, small.best()->iteration_time);
}

TEST(MoreDevices, NeverSlowerOnRandomSmallModels) {
  std::mt19937 rng(20261125);
  int faster = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const testing::Instance in = testing::random_instance(rng, 6, 8);
    const std::vector<int> batches{in.global_batch, 2 * in.global_batch + 1, 12};
    const std::string label = "trial " + std::to_string(trial);
    const int gpus = trial % 3 == 0 ? 1 : trial % 3 == 1 ? 2 : 4;
    faster +=
        expect_never_slower(in.model, in.settings, in.cluster, gpus, 8 / gpus + 2, batches, label);
  }
  EXPECT_GT(faster, 10);
}

// Machines of 2 GPUs: the first `fast` run twice as fast as the model's GPU (the same memory),
// the others are the model's GPU.
Cluster fast_then_slow(int fast, int machines, const testing::Instance& like) {
  Cluster cluster = machines_of(2, machines, like.cluster);
  GpuSpec twice;
  twice.name = "twice";
  twice.peak_flops = 2 * like.model.gpu.peak_flops;
  twice.memory = like.cluster.device_memory;
  for (int m = 0; m < machines; ++m) cluster.machine_gpu.push_back(m < fast ? twice : GpuSpec{});
  return cluster;
}

// A random small model whose times are a V100's (so that GPU types scale it), and a search
// that runs to the end (the properties below hold for finished searches).
testing::Instance v100_instance(std::mt19937& rng) {
  testing::Instance in = testing::random_instance(rng, 6, 8);
  in.model.gpu = find_gpu("V100-16GB", "test");
  return in;
}
SearchOptions unlimited() {
  SearchOptions options;
  options.effort = 0;
  return options;
}

// Where machines have different GPUs, the whole cluster's copies may sit on slower machines
// than a part's: two fast machines then two slow ones never plan slower than the two fast
// ones alone (BERT-48 at GBS 128 reported a plan 0.7 % slower as exact, when a shape of two
// copies on the first machines took the bound of the same copies on all four).
TEST(MoreDevices, NeverSlowerThanTheFastMachinesAlone) {
  std::mt19937 rng(20261130);
  for (int trial = 0; trial < 12; ++trial) {
    const testing::Instance in = v100_instance(rng);
    const SearchOptions options = unlimited();
    const std::vector<int> batches{in.global_batch, 2 * in.global_batch, 16};
    const auto fast =
        Planner(in.model, fast_then_slow(2, 2, in), in.settings, options).sweep(batches);
    const auto all =
        Planner(in.model, fast_then_slow(2, 4, in), in.settings, options).sweep(batches);
    for (std::size_t i = 0; i < batches.size(); ++i) {
      if (!fast[i].best()) continue;
      ASSERT_NE(all[i].best(), nullptr) << "trial " << trial;
      EXPECT_LE(all[i].best()->iteration_time,
                fast[i].best()->iteration_time * (1 + detail::kSimpler + 1e-12))
          << "trial " << trial << ", GBS " << batches[i];
    }
  }
  const ProfileEntry e = find_profile("bert_48");
  ModelProfile bert = import_pipedream_graph(e.path, e.profile_batch_size);
  Cluster fast2 = cluster_from_machine_ends({2, 4});
  fast2.machine_gpu.assign(2, find_gpu("H100-80GB", "test"));
  Cluster all4 = cluster_from_machine_ends({2, 4, 6, 8});
  all4.machine_gpu = fast2.machine_gpu;
  all4.machine_gpu.resize(4);
  for (int gbs : {128, 512}) {
    const PointResult part = Planner(bert, fast2, training_settings(e)).plan(gbs);
    const PointResult whole = Planner(bert, all4, training_settings(e)).plan(gbs);
    ASSERT_NE(part.best(), nullptr);
    ASSERT_NE(whole.best(), nullptr);
    EXPECT_LE(whole.best()->iteration_time,
              part.best()->iteration_time * (1 + detail::kSimpler + 1e-12))
        << "GBS " << gbs;
    EXPECT_LE(whole.lower_bound, part.best()->iteration_time) << "GBS " << gbs;
  }
}

// Slow machines first: the search covers the plans on the cluster's first machines, and
// searches the machines from each place where the kind changes on their own (machine_runs),
// so a cluster never plans slower than its last machines alone. Random small models on one
// or two machines of 2 GPUs at the model's speed, then two twice as fast; and on a machine
// of 1 GPU then one of 4, against the machine of 4 alone.
TEST(MoreDevices, NeverSlowerThanTheMachinesAfterTheFirstKind) {
  std::mt19937 rng(20261205);
  int found_there = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const testing::Instance in = v100_instance(rng);
    const SearchOptions options = unlimited();
    const std::vector<int> batches{in.global_batch, 2 * in.global_batch, 16};
    const int slow = 1 + trial % 2;
    Cluster all = fast_then_slow(2, 2 + slow, in);
    std::rotate(all.machine_gpu.begin(), all.machine_gpu.begin() + 2, all.machine_gpu.end());
    Cluster small_first = machines_of(1, 1, in.cluster);
    small_first.machine_gpus = {1, 4};
    Cluster four = machines_of(4, 1, in.cluster);
    const auto fast =
        Planner(in.model, fast_then_slow(2, 2, in), in.settings, options).sweep(batches);
    const auto slow_first = Planner(in.model, all, in.settings, options).sweep(batches);
    const auto alone = Planner(in.model, four, in.settings, options).sweep(batches);
    const auto after_one = Planner(in.model, small_first, in.settings, options).sweep(batches);
    for (std::size_t i = 0; i < batches.size(); ++i) {
      const std::string where =
          "trial " + std::to_string(trial) + ", GBS " + std::to_string(batches[i]);
      for (const auto& [part, whole] :
           {std::pair{&fast[i], &slow_first[i]}, {&alone[i], &after_one[i]}}) {
        if (!part->best()) continue;
        ASSERT_NE(whole->best(), nullptr) << where;
        EXPECT_LE(whole->best()->iteration_time,
                  part->best()->iteration_time * (1 + detail::kSimpler + 1e-12))
            << where;
        EXPECT_LE(whole->lower_bound, part->best()->iteration_time * (1 + 1e-12)) << where;
        // A plan that leaves the first machines idle starts on the first device after them.
        const Plan& best = *whole->best();
        if (best.stages.front().devices.front() > 0) {
          ++found_there;
          EXPECT_EQ(best.stages.front().devices.front(), whole == &slow_first[i] ? 2 * slow : 1)
              << where;
        }
      }
    }
  }
  EXPECT_GT(found_there, 0);  // not vacuous: some best plans leave the first machines idle
}

// Two kinds of machines plan as fast listed either way: the machines from where the kind
// changes are searched with the first ones after them (machine_runs), so a plan on the fast
// machines and then some slow ones is found whichever comes first (VGG-19 at GBS 1,024 on 4
// V100s and 4 H100s gave 31.648 listed V100s first, the H100s alone, and 31.793 listed H100s
// first, both exact). Random small models on one or two fast machines of 2 GPUs and one or two
// at the model's speed; each plan whose devices go round past the last one is costed again from
// its layout (stages, first device, copy stride) to the same time.
TEST(MoreDevices, TwoKindsPlanAsFastListedEitherWay) {
  std::mt19937 rng(20261206);
  int round = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const testing::Instance in = v100_instance(rng);
    const int fast = 1 + trial % 2, machines = fast + 1 + trial / 2 % 2;
    const Cluster fast_first = fast_then_slow(fast, machines, in);
    Cluster slow_first = fast_first;
    std::rotate(slow_first.machine_gpu.begin(), slow_first.machine_gpu.begin() + fast,
                slow_first.machine_gpu.end());
    const std::vector<int> batches{in.global_batch, 2 * in.global_batch, 16};
    const Planner one(in.model, fast_first, in.settings, unlimited());
    const Planner other(in.model, slow_first, in.settings, unlimited());
    const std::vector<PointResult> a = one.sweep(batches), b = other.sweep(batches);
    for (std::size_t i = 0; i < batches.size(); ++i) {
      const std::string where =
          "trial " + std::to_string(trial) + ", GBS " + std::to_string(batches[i]);
      ASSERT_EQ(a[i].best() == nullptr, b[i].best() == nullptr) << where;
      if (!a[i].best()) continue;
      EXPECT_TRUE(a[i].exact && b[i].exact) << where;
      EXPECT_LE(a[i].best()->iteration_time,
                b[i].best()->iteration_time * (1 + detail::kSimpler + 1e-12))
          << where;
      EXPECT_LE(b[i].best()->iteration_time,
                a[i].best()->iteration_time * (1 + detail::kSimpler + 1e-12))
          << where;
      for (const auto& [planner, point] : {std::pair{&one, &a[i]}, {&other, &b[i]}}) {
        const Plan& best = *point->best();
        const std::vector<int>& devices = best.stages.back().devices;
        if (best.chunks > 1 || best.uneven_micro_batches() || devices.back() >= best.first_device())
          continue;
        ++round;
        PlanLayout layout = parse_plan_layout(stages_string(best));
        layout.micro_batches = best.micro_batches;
        layout.schedule = best.schedule;
        layout.pipeline_replicas = best.pipeline_replicas;
        layout.first_device = best.first_device();
        layout.copy_stride = best.copy_stride();
        const LayoutCost again = planner->evaluate(layout, batches[i]);
        EXPECT_TRUE(again.fits) << where;
        EXPECT_NEAR(again.plan.iteration_time, best.iteration_time, best.iteration_time * 1e-12)
            << where;
      }
    }
  }
  EXPECT_GT(round, 0);  // not vacuous: some best plans go round past the last device
}

// VGG-19 at GBS 32 on a machine of 1 GPU and one of 8: the 8-GPU machine alone runs it 2.3
// times as fast as any plan that starts on the first GPU (2.53x over one GPU: 4 GPUs of the
// convolutions crossing the machines), which the search had reported as exact.
TEST(MoreDevices, TheSecondMachineAlonePlansAsItDoesOnItsOwn) {
  const ProfileEntry e = find_profile("vgg19");
  const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
  const TrainingSettings settings = training_settings(e);
  const PointResult alone = Planner(model, cluster_from_machine_ends({8}), settings).plan(32);
  const PointResult both = Planner(model, cluster_from_machine_ends({1, 9}), settings).plan(32);
  ASSERT_NE(alone.best(), nullptr);
  ASSERT_NE(both.best(), nullptr);
  EXPECT_TRUE(both.exact);
  EXPECT_DOUBLE_EQ(both.best()->iteration_time, alone.best()->iteration_time);
  EXPECT_EQ(stages_string(*both.best()), stages_string(*alone.best()));
  const Plan& plan = *both.best();
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    ASSERT_EQ(plan.stages[s].devices.size(), alone.best()->stages[s].devices.size());
    for (std::size_t d = 0; d < plan.stages[s].devices.size(); ++d)
      EXPECT_EQ(plan.stages[s].devices[d], alone.best()->stages[s].devices[d] + 1);
  }
}

// A first machine whose GPUs hold nothing: every plan that starts on it fails memory, so the
// search of the first machines finds none, and the answer was "no plan fits" (as exact). The
// machines after it plan on their own: VGG-19 at GBS 32 on 2 GPUs of 10 MB and then 8 V100s
// runs on the V100s as on them alone.
TEST(MoreDevices, AFirstMachineThatHoldsNothingLeavesThePlanToTheOthers) {
  const ProfileEntry e = find_profile("vgg19");
  const ModelProfile model = import_pipedream_graph(e.path, e.profile_batch_size);
  const TrainingSettings settings = training_settings(e);
  Cluster cluster = cluster_from_machine_ends({2, 10});
  GpuSpec tiny = find_gpu("V100-16GB", "test");
  tiny.name = "tiny";
  tiny.memory = 0.01 * kGB;
  cluster.machine_gpu = {tiny, find_gpu("V100-16GB", "test")};
  Cluster v100s = cluster_from_machine_ends({8});
  v100s.machine_gpu = {find_gpu("V100-16GB", "test")};
  const PointResult alone = Planner(model, v100s, settings).plan(32);
  const PointResult both = Planner(model, cluster, settings).plan(32);
  ASSERT_NE(alone.best(), nullptr);
  ASSERT_NE(both.best(), nullptr) << both.no_plan_reason;
  EXPECT_TRUE(both.exact);
  EXPECT_DOUBLE_EQ(both.best()->iteration_time, alone.best()->iteration_time);
  EXPECT_EQ(both.best()->stages.front().devices.front(), 2);
}

// The premise of held_by's copies off machine boundaries (hybrid_search.cc): on machines of
// one GPU type whose links inside are no slower than those between them, a plan of R copies
// on the first machines, copies that do not start on machine boundaries, is no faster than
// the same stages in copies of the whole cluster that do (each copy of its own machines), as
// long as no stage's replicas in every copy can share one machine.
TEST(MoreDevices, CopiesOnMachineBoundariesAreNeverSlowerThanCopiesAcrossThem) {
  std::mt19937 rng(20261201);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng); };
  // GPUs a machine, machines of the part and of the whole cluster, copies.
  struct Layouts {
    int gpus, part, whole, copies;
  };
  const Layouts layouts[] = {{2, 3, 4, 2}, {4, 3, 4, 2}, {2, 6, 8, 4}, {4, 5, 8, 4}};
  int faster = 0, compared = 0;
  for (int trial = 0; trial < random_trials(400); ++trial) {
    testing::Instance in = testing::random_instance(rng, 8, 8);
    const Layouts l = layouts[trial % 4];
    Network& links = in.cluster.network;
    links.intra = std::max({links.intra, links.inter_p2p, links.inter_allreduce});
    const Cluster part = machines_of(l.gpus, l.part, in.cluster);
    const Cluster whole = machines_of(l.gpus, l.whole, in.cluster);
    const int width = part.device_count() / l.copies;
    ASSERT_NE(width % l.gpus, 0);
    ASSERT_GT((l.copies - 1) * width + 1, l.gpus);
    detail::PipelineSpec spec;
    spec.replicas = l.copies;
    spec.replica_width = width;
    spec.micro_batch = 1 << pick(0, 2);
    spec.micro_batches = pick(1, 6);
    spec.schedule = pick(0, 1) ? Schedule::GPipe : Schedule::OneFOneB;
    const int states = static_cast<int>(in.model.size());
    const int stages = pick(1, std::min(states, width));
    std::size_t first = 0;
    int offset = 0;
    for (int s = 0; s < stages; ++s) {
      const std::size_t last =
          s + 1 == stages ? states - 1 : pick(static_cast<int>(first), states - stages + s);
      const int most = width - offset - (stages - 1 - s);
      const int w = pick(1, std::min(most, spec.micro_batch));
      spec.stages.push_back({first, last, offset, w, {}});
      first = last + 1, offset += w;
    }
    const int gbs = l.copies * spec.micro_batch * spec.micro_batches;
    const detail::Evaluation across =
        detail::evaluate(detail::CostModel(in.model, part, in.settings), spec, gbs);
    spec.replica_width = whole.device_count() / l.copies;
    const detail::Evaluation on =
        detail::evaluate(detail::CostModel(in.model, whole, in.settings), spec, gbs);
    EXPECT_EQ(on.fits, across.fits) << "trial " << trial;
    const Seconds aligned = simulated_makespan(on.plan.shape());
    const Seconds unaligned = simulated_makespan(across.plan.shape());
    EXPECT_LE(aligned, unaligned * (1 + 1e-12)) << "trial " << trial;
    faster += aligned < unaligned * (1 - 1e-9);
    ++compared;
  }
  EXPECT_GT(faster, compared / 20);
}

}  // namespace
}  // namespace pe
