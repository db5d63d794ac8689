// A hybrid-parallel training plan and the numbers behind it.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pe/bubbles.h"
#include "pe/schedule.h"
#include "pe/timeline.h"
#include "pe/units.h"

namespace pe {

/// The term that limits a plan's iteration time the most.
enum class Limiter {
  Compute,    ///< The slowest stage's compute sets the steady-state slot.
  Transfer,   ///< A cut's activation/gradient transfer sets the slot.
  AllReduce,  ///< Exposed gradient all-reduce after the last backward dominates.
  Bubble,     ///< Warm-up and drain (few micro-batches for many stages) dominate.
};
/// "compute", "transfer", "allreduce" or "bubble".
std::string to_string(Limiter limiter);

/// One pipeline stage: a contiguous range of model states on `width` devices per
/// pipeline replica. `devices` lists the global device ids of every replica of the stage,
/// replica by replica (width * pipeline_replicas ids).
struct PlanStage {
  std::size_t first_state = 0;  ///< First state index (inclusive).
  std::size_t last_state = 0;   ///< Last state index (inclusive).
  int width = 1;                ///< Devices of this stage in one pipeline replica.
  /// GPUs that split each operator of the stage (tensor parallelism): its `width` devices run
  /// width / tensor_parallel data-parallel replicas of the stage.
  int tensor_parallel = 1;
  bool recompute = false;  ///< The backward recomputes the forward instead of keeping it.
  int zero_stage = 0;      ///< ZeRO sharding of the training state (TrainingSettings).
  /// Data-parallel replicas of the stage in one pipeline copy: width / tensor_parallel.
  int data_parallel() const { return tensor_parallel > 0 ? width / tensor_parallel : width; }
  std::vector<int> devices;  ///< Global device ids, replica by replica.
  StageTimes times;          ///< Per micro-batch, as used by the cost model.
  /// The tensor-parallel all-reduces inside times.forward + times.backward (0 when
  /// tensor_parallel is 1).
  Seconds tensor_parallel_time = 0;
  /// The forward pass recomputed inside times.backward (0 unless recompute).
  Seconds recompute_time = 0;
  Seconds allreduce_total = 0;          ///< Whole gradient all-reduce of the stage (times.allreduce
                                        ///< is the part left after its last backward).
  bool cut_intra_machine = true;        ///< The cut after this stage stays in one machine.
  bool allreduce_intra_machine = true;  ///< All copies of the stage sit on one machine.
  Bytes weight_memory = 0;              ///< Weights, gradients and optimizer state per device.
  Bytes activation_memory = 0;          ///< Activations kept in flight per device.
  /// Memory held only while working on a micro-batch: the largest operator's activations
  /// when recomputing, its gathered weights under ZeRO-3.
  Bytes working_memory = 0;
  /// The memory of the stage's smallest GPU, which its peak must fit.
  Bytes device_memory = 0;
  /// The type of the stage's slowest GPU, whose speed sets its times ("" when the cluster
  /// gives no GPU types: the model's own GPU).
  std::string gpu;
  /// Weight, activation and working memory per device, in bytes.
  Bytes peak_memory() const { return weight_memory + activation_memory + working_memory; }
};

/// The event-driven simulation of a plan: its timeline (simulate(plan.shape())) and the
/// bubbles of that timeline.
struct Simulation {
  Timeline timeline;     ///< Every event of one iteration.
  BubbleReport bubbles;  ///< bubbles(timeline).
};

/// A complete plan for one global batch size.
struct Plan {
  int global_batch = 0;       ///< Global batch size: samples per iteration, all replicas.
  int pipeline_replicas = 1;  ///< Copies of the whole pipeline (plain data parallelism).
  /// Samples per micro-batch entering one pipeline replica. Where micro_batches does not
  /// divide a replica's share of the batch (only one-stage plans that run as gradient
  /// accumulation), the share is split as evenly as possible and this is the largest part.
  int micro_batch_size = 1;
  int micro_batches = 1;                   ///< Micro-batches per iteration and replica.
  Schedule schedule = Schedule::OneFOneB;  ///< How micro-batches flow through the stages.
  /// In pipeline order. Interleaved: one per chunk, p x chunks of them; chunk j runs on the
  /// devices of stage j % p (its device group), and every chunk of a group reports the
  /// group's memory per device (weights of all its chunks, the activations its order keeps).
  std::vector<PlanStage> stages;
  /// Chunks (virtual stages) per device group: >= 2 for Schedule::Interleaved, else 1.
  int chunks = 1;

  Seconds slot = 0;               ///< Steady-state slot of the estimate: slowest stage or cut.
  Seconds fill_drain = 0;         ///< One micro-batch through every stage and cut, both ways.
  Seconds exposed_allreduce = 0;  ///< All-reduce not hidden behind remaining backward work.
  /// The analytic estimate (M-1)*slot + fill_drain + exposed: an explanation of the time,
  /// not what plans are ranked by.
  Seconds estimate = 0;
  /// The path lower bound of the simulated time (docs/timeline.md, "Lower bounds"): what
  /// the search minimizes to prove that no plan is faster. Never above iteration_time.
  Seconds lower_bound = 0;
  /// The iteration time plans are ranked and reported by: the event simulation of the
  /// plan's schedule (simulate_plan). Before a plan is simulated it holds the estimate.
  Seconds iteration_time = 0;
  Seconds simulated_time = 0;          ///< The simulated makespan (0: not simulated yet).
  Seconds one_device_time = 0;         ///< The whole global batch on one device.
  double speedup = 0;                  ///< one_device_time / iteration_time.
  Limiter limiter = Limiter::Compute;  ///< What limits the estimate the most.
  /// The plan simulated once, when it was made: Planner::plan sets it on every plan it
  /// returns, simulate_plan() on any other. Reporters and renderers read it instead of
  /// simulating again. Copies of a plan share it (it is never changed in place); null for
  /// a plan not simulated, and stale once the stages, micro-batches or schedule change
  /// (simulate_plan() again).
  std::shared_ptr<const Simulation> simulation;
  /// The devices of the cluster, for a plan that starts on a later machine, whose device ids
  /// may go round past the cluster's last device to device 0 (Planner::plan's plans on the
  /// machines from where their kind changes and then the first ones, or a
  /// PlanLayout::first_device); 0 for the others, whose devices never go round.
  int cluster_devices = 0;

  /// Devices the plan uses: the device groups' widths summed, times pipeline_replicas.
  int device_count() const;
  /// The first device the plan runs on, that of its first stage's first copy: 0 unless it
  /// starts on a later machine (a plan Planner::plan found on the machines from a place where
  /// the machine kind changes, or PlanLayout::first_device; its devices may then go round to
  /// device 0: cluster_devices); 0 for a plan without devices.
  int first_device() const;
  /// Devices from one pipeline copy's first device to the next copy's (its stages and the
  /// devices it leaves idle; counted round past the last device, cluster_devices): the devices
  /// of the part of the cluster the plan was found on over its copies
  /// (PlanLayout::copy_stride); 0 for one copy.
  int copy_stride() const;
  /// Device groups: stages.size() / chunks (the stages, unless interleaved).
  int device_groups() const { return static_cast<int>(stages.size()) / std::max(1, chunks); }
  /// True when micro_batch_size x micro_batches x pipeline_replicas is not global_batch:
  /// an accumulation plan whose micro-batches differ by one sample.
  bool uneven_micro_batches() const;
  /// The stages' times, micro-batches and schedule, for simulate().
  PipelineShape shape() const;
};

/// Simulates `plan` (simulate(plan.shape())) and stores the timeline and its bubbles in
/// plan.simulation, the makespan in plan.simulated_time and plan.iteration_time, and the
/// speedup from it: for plans built or changed by hand. Throws as simulate() does.
void simulate_plan(Plan& plan);

/// "FIRST-LAST:WIDTH" per stage joined by ';' (e.g. "0-20:8;21-25:8"), WIDTH followed by
/// "tT" for a stage split T ways (tensor parallelism) and "r" for one that recomputes
/// (e.g. "0-40:8t4r"). Interleaved: one entry per device group, its chunks' ranges joined by
/// ',' (e.g. "0-5,12-17:2;6-11,18-23:2").
std::string stages_string(const Plan& plan);

/// One label per stage for timelines and charts: "stage S (states FIRST-LAST, W GPUs)";
/// interleaved, one per device group, its chunks' ranges joined by ", ".
std::vector<std::string> stage_labels(const Plan& plan);

}  // namespace pe
