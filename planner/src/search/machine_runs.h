// Runs of a cluster's machines: the plans that leave the first machines idle.
#pragma once

#include <vector>

#include "pe/cluster.h"
#include "pe/plan.h"
#include "search/hybrid_search.h"

namespace pe::detail {

/// At most this many places where the machine kind changes are searched (machine_runs).
inline constexpr int kMaxMachineRuns = 16;

/// The first machine of each run of `cluster`'s machines searched on its own: every place,
/// of the first kMaxMachineRuns, where a machine differs from the one before it in GPUs,
/// GPU type or memory, unless the machines from there on, and then the ones before it, are,
/// kind by kind, the cluster's machines or those of a run before (the same search). A search
/// covers the plans on the cluster's first machines; a plan on the machines from such a place
/// on (leaving the ones before it idle), or on those and then the first machines, is none of
/// them, and can be the fastest: VGG-19 at GBS 32 on a machine of 1 GPU and one of 8 runs 2.3
/// times as fast on the second alone; VGG-19 at GBS 1,024 on 4 V100s and then 4 H100s, 0.46 %
/// faster on the H100s and then 2 of the V100s than on the H100s alone.
std::vector<int> machine_runs(const Cluster& cluster);

/// The machines of `cluster` from `first` on, and then those before it, as a cluster of their
/// own: its first machines are every run of consecutive machines that starts at `first`, going
/// round from the last machine to the first.
Cluster rotated(const Cluster& cluster, int first);

/// `plan`, a plan of rotated(cluster, first), on `cluster`: its devices move by the GPUs of the
/// machines before `first`, going round past the last device to device 0
/// (Plan::cluster_devices); its times stay (the machines, their GPUs and the links between
/// them are the same).
void move_to_machine(Plan& plan, const Cluster& cluster, int first);

/// The answer over the plans of both searches: the `top` best plans of distinct shapes (the
/// simplest within kSimpler of the fastest leading), the lesser of the two lower bounds
/// (each holds over its own plans; a search that proved no plan fits holds over none), and
/// exact where that bound meets the fastest plan.
SearchResult merged(SearchResult a, SearchResult b, int top);

}  // namespace pe::detail
