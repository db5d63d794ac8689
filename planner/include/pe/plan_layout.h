// A plan written by hand (the layout a user runs today), costed like the plans the search
// finds: "how fast is what I run now, and how much better is the plan pe-plan found?"
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "pe/plan.h"
#include "pe/schedule.h"

namespace pe {

/// One stage of a hand-written plan: states [first_state, last_state] on `width` devices of
/// each pipeline copy, each operator split over `tensor_parallel` of them (which must divide
/// `width`, and be a degree the model and settings allow, its GPUs on one machine), and
/// recomputing its forward pass in the backward when `recompute` (a model that can).
struct StageLayout {
  std::size_t first_state = 0;
  std::size_t last_state = 0;
  int width = 1;
  int tensor_parallel = 1;
  bool recompute = false;
};

/// A hand-written plan: stages in pipeline order (covering every state once, in order),
/// micro-batches per iteration and copy, schedule and copies of the whole pipeline. Copy k
/// uses devices [k * D / copies, ...) of a cluster of D devices (counted from first_device,
/// round past the last device to device 0; copy_stride, where given, instead of D / copies),
/// its stages packed in order from the first. The micro-batch size follows from the global batch:
/// GBS / copies / micro_batches samples, which must be whole for a pipeline of two or more stages;
/// a one-stage plan runs as gradient accumulation (micro-batches of at most ceil(GBS / copies /
/// micro_batches) samples), as the search's one-stage plans do. TrainingSettings::min_micro_batch
/// does not apply: the layout says what it runs.
///
/// Interleaved (schedule Schedule::Interleaved, chunks >= 2): `stages` holds p x chunks
/// chunks in pipeline order, chunk j on the devices of device group j % p; the chunks of a
/// group share its width, tensor-parallel degree and recomputation, and micro_batches is a
/// multiple of p.
struct PlanLayout {
  std::vector<StageLayout> stages;
  int micro_batches = 1;
  Schedule schedule = Schedule::OneFOneB;
  int pipeline_replicas = 1;
  int chunks = 1;  ///< Chunks per device group: >= 2 when interleaved, else 1.
  /// The first device of a machine: the plan runs on the machines from it on, and then on
  /// the first ones (its devices go round from the last device to device 0), as a cluster of
  /// their own. One copy may take them all; copies split the devices from first_device on
  /// unless copy_stride says otherwise. The plans Planner::plan finds on the machines from a
  /// place where the kind changes say theirs (Plan::first_device).
  int first_device = 0;
  /// Devices from copy k's first device to copy k + 1's, at least a copy's width, counted
  /// round past the last device; 0 (the default): the devices from first_device on over the
  /// copies. The plans the search finds on the cluster's first machines say theirs
  /// (Plan::copy_stride).
  int copy_stride = 0;
};

/// Parses stages written as pe-plan prints them, "FIRST-LAST:WIDTH[tT][r]" joined by ';'
/// (e.g. "0-20:15;21-24:1" or "0-40:8t4r;41-81:8t8"; stages_string() is the inverse). Throws
/// UsageError naming the stage (counted from 0) that is not of that form.
std::vector<StageLayout> parse_stage_layout(const std::string& text);

/// A layout's stages and chunks from the same text, where a device group may also list its
/// chunks' ranges joined by ',' ("0-5,12-17:2;6-11,18-23:2", as stages_string() prints an
/// interleaved plan): then every group lists as many, `chunks` is that count, `stages` the
/// chunks in pipeline order (chunk c of group g is stage c x groups + g) and `schedule`
/// Schedule::Interleaved. Other fields keep their defaults. Throws UsageError naming the
/// group that is malformed or lists a different number of chunks.
PlanLayout parse_plan_layout(const std::string& text);

/// What a hand-written plan costs at one global batch size (Planner::evaluate).
struct LayoutCost {
  /// Devices, per-stage times and memory, the estimate and the simulated time, exactly as
  /// for a plan the search returns.
  Plan plan;
  /// False when some device needs more memory than it has; the plan's numbers are still
  /// filled in, and `memory_note` says which stage needs how much.
  bool fits = true;
  std::string memory_note;  ///< "" when the plan fits.
};

}  // namespace pe
