// The default training cost model: a profile scaled to micro-batches on a
// cluster. Everything the search asks about a stage or a cut comes from here.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cost/layout.h"
#include "cost/pipeline_spec.h"
#include "pe/cluster.h"
#include "pe/model.h"
#include "pe/settings.h"
#include "pe/units.h"

namespace pe::detail {

/// Precomputed prefix sums of a profile plus the cluster's numbers. Stage ranges are
/// inclusive state indices [first, last]; sample counts are per device.
class CostModel {
 public:
  CostModel(const ModelProfile& model, const Cluster& cluster, const TrainingSettings& settings);

  std::size_t states() const { return states_; }
  /// True when the model's states are nested in index order (ModelProfile::chain).
  bool chain() const { return later_.empty(); }
  /// The states j > i whose cut contains state i's (only when !chain()).
  const std::vector<std::uint32_t>& later(std::size_t i) const { return later_[i]; }
  /// Whether states [first, last] form a stage: first = 0, or state first - 1's cut is
  /// strictly inside state last's (ModelProfile::nested).
  bool stage(std::size_t first, std::size_t last) const;
  const Cluster& cluster() const { return cluster_; }
  /// The cluster's GPUs (Cluster::device_count, kept: that sums every machine).
  int device_count() const { return devices_; }
  /// The GPUs of every machine when all have as many, else 0 (uniform_machine_size).
  int machine_size() const { return machine_size_; }
  /// The layout of `replicas` copies of `width` devices on the cluster (Layout).
  Layout layout(int replicas, int width) const {
    return Layout(cluster_, replicas, width, machine_size_);
  }
  const TrainingSettings& settings() const { return settings_; }

  /// Forward time of states [first, last] for `samples` samples on one device.
  Seconds forward(std::size_t first, std::size_t last, double samples) const {
    return range(forward_, first, last) * samples / profile_batch_;
  }
  /// Backward time of states [first, last] for `samples` samples on one device.
  Seconds backward(std::size_t first, std::size_t last, double samples) const {
    return range(backward_, first, last) * samples / profile_batch_;
  }
  /// Forward + backward time of the whole model for `samples` samples on one device.
  Seconds whole_model_time(double samples) const;
  /// Parameter bytes of states [first, last].
  Bytes parameters(std::size_t first, std::size_t last) const {
    return range(parameters_, first, last);
  }
  /// Bytes crossing the cut after state `last` for a micro-batch of `samples`.
  Bytes crossing(std::size_t last, double samples) const;
  /// Activations of states [first, last] for `samples` samples (override-scaled).
  Bytes activation_memory(std::size_t first, std::size_t last, double samples) const;
  /// Activation bytes per sample of the whole model (override or profile).
  Bytes activation_per_sample() const { return activation_per_sample_; }

  /// The stage variants (pipeline_spec.h) this model and settings allow, apart from where
  /// the devices sit: the largest tensor-parallel degree (1 when the model cannot split or
  /// the settings say 1; else the settings' limit, the smallest machine's GPUs for 0), and
  /// whether t divides the model's unit; whether stages may recompute.
  int max_tensor_parallel() const { return max_tensor_parallel_; }
  bool tensor_parallel_allowed(int t) const;
  bool recomputable() const { return recomputable_; }

  /// The same per device for a stage run as `v` (samples: per data-parallel replica of the
  /// stage, whose t GPUs share them) on GPUs `speed` times as fast as the model's:
  /// compute / (t x efficiency x speed), plus per micro-batch its tensor-parallel
  /// all-reduces inside the machine and `gather` (weight_gather); the backward of a
  /// recomputing stage runs its forward (all-reduces included) again first.
  Seconds forward(std::size_t first, std::size_t last, double samples, const StageVariant& v,
                  Seconds gather, double speed = 1) const {
    if (v.tensor_parallel == 1 && !v.recompute)
      return forward(first, last, samples) / speed + gather;
    return split_forward(first, last, samples, v, gather, speed);
  }
  Seconds backward(std::size_t first, std::size_t last, double samples, const StageVariant& v,
                   Seconds gather, double speed = 1) const {
    if (v.tensor_parallel == 1 && !v.recompute)
      return backward(first, last, samples) / speed + gather;
    return split_backward(first, last, samples, v, gather, speed);
  }

  /// Where a stage runs: the speed (relative to the model's GPU) of the slowest GPU among
  /// devices [offset, offset + width) of every copy, the memory of the smallest, and the name
  /// of the slowest GPU's type ("" when the cluster gives no types).
  struct Place {
    double speed = 1;
    Bytes memory = 0;
    std::string gpu;
  };
  Place place(const Layout& layout, int offset, int width) const;
  /// The fastest machine's speed (1 when the cluster gives no GPU types): work / (devices x
  /// fastest) is a floor on any plan's time.
  double fastest() const { return fastest_; }
  /// The slowest machine's speed and the smallest and largest device memory.
  double slowest() const { return slowest_; }
  Bytes smallest_memory() const { return smallest_memory_; }
  Bytes largest_memory() const { return largest_memory_; }
  /// The GPUs of the largest machine (0 for a cluster of none).
  int largest_machine() const { return largest_machine_; }
  /// The tensor-parallel all-reduces of one pass (forward or backward) of `samples` samples
  /// through states [first, last] split v.tensor_parallel ways (0 for t = 1).
  Seconds tensor_parallel_time(std::size_t first, std::size_t last, double samples,
                               const StageVariant& v) const;
  /// All the tensor-parallel all-reduces inside a micro-batch's forward() + backward(): one
  /// pass each way, and the recomputed forward's when `v` recomputes.
  Seconds tensor_parallel_total(std::size_t first, std::size_t last, double samples,
                                const StageVariant& v) const {
    return (v.recompute ? 3 : 2) * tensor_parallel_time(first, last, samples, v);
  }
  /// The compute of the forward pass a recomputing stage runs again in its backward
  /// (its all-reduces are tensor_parallel_time's); 0 when `v` does not recompute.
  Seconds recompute_time(std::size_t first, std::size_t last, double samples, const StageVariant& v,
                         double speed = 1) const;
  /// ZeRO-3 (TrainingSettings::zero_stage): the all-gather of a device's share of the
  /// stage's weights over its `reducers` data-parallel GPUs, once before each forward and
  /// each backward of a micro-batch; 0 below stage 3.
  Seconds weight_gather(std::size_t first, std::size_t last, const StageVariant& v, int reducers,
                        bool intra_machine) const;
  /// Weights, gradients and optimizer state per device of a stage run as `v` by `reducers`
  /// data-parallel GPUs: the parameters / t, the training state per weight byte
  /// (optimizer_scaling: 1 for the weights, up to 1 for the gradients, the rest optimizer
  /// state), parts of it divided by `reducers` under ZeRO (1: the optimizer state, 2: and
  /// the gradients, 3: everything).
  Bytes weight_memory(std::size_t first, std::size_t last, const StageVariant& v,
                      int reducers) const;
  /// Activations one micro-batch of `samples` keeps per device of a stage run as `v`: / t
  /// (tensor parallelism with sequence parallelism splits every activation), and only the
  /// recomputed activations when `v` recomputes.
  Bytes activation_memory(std::size_t first, std::size_t last, double samples,
                          const StageVariant& v) const;
  /// Memory a device holds only while it works on one micro-batch: the activations of the
  /// stage's largest operator while a recomputing stage runs its backward, and under ZeRO-3
  /// the gathered weights of its largest operator (both / t).
  Bytes working_memory(std::size_t first, std::size_t last, double samples,
                       const StageVariant& v) const;
  /// What is left of the stage's gradient synchronisation after its last backward: the
  /// all-reduce of its parameters / t over `reducers` GPUs (a reduce-scatter, half of it,
  /// under ZeRO-3), overlapped as ExposedScan says with backward times / (t x efficiency).
  Seconds gradient_sync(std::size_t first, std::size_t last, const StageVariant& v, int reducers,
                        bool intra_machine) const;

  /// Point-to-point time of `bytes` inside one machine or across machines. (Inline: the
  /// pipeline search calls it for every suffix entry it extends.)
  Seconds transfer(Bytes bytes, bool intra_machine) const {
    if (bytes <= 0) return 0;
    return bytes / (intra_machine ? cluster_.network.intra : cluster_.network.inter_p2p);
  }
  /// Ring all-reduce of `bytes` over `devices`, inside one machine or across machines.
  Seconds allreduce(Bytes bytes, int devices, bool intra_machine) const;
  /// The part of a stage's gradient synchronisation (gradient_sync over `devices` GPUs) still
  /// running when its last backward (of `samples` samples, run as `v` on GPUs `speed` times
  /// as fast as the model's) ends: each state's gradients are reduced, one state at a time,
  /// as soon as its backward is done (the backward runs from the last state to the first).
  /// When the states are not a chain, a stage whose ends lie on the model's spine
  /// (ModelProfile::spine) is reduced along the spine's operators; any other stage is one
  /// piece, its whole all-reduce exposed. For a fixed first state and growing last state.
  class ExposedScan {
   public:
    ExposedScan(const CostModel& cost, std::size_t first, double samples, int devices,
                bool intra_machine, const StageVariant& v = {}, double speed = 1);
    /// Exposed all-reduce of states [first, last], for stage ends in any order; in ascending
    /// order (last = first, first + 1, ... on a chain) each call takes amortized constant
    /// time along the spine.
    Seconds extend_to(std::size_t last);
    /// On a chain, the exposed all-reduce of states [first, last] is max(0, R - origin(first)),
    /// R the largest reach(k) for first <= k <= last: reach(k) is when state k's reduction
    /// would end, origin(i) when the stage's last backward ends, both measured from a common
    /// point (per state: its parameters' all-reduce, its backward). So a stage
    /// whose first state lies in [i0, i1] and which holds states [lo, hi] (i1 <= lo) leaves
    /// at least the largest reach over [lo, hi] minus the largest origin over [i0, i1].
    Seconds reach(std::size_t k) const {
      return per_byte_ * cost_.parameters_[k + 1] - per_backward_ * cost_.backward_[k];
    }
    Seconds origin(std::size_t i) const {
      return per_byte_ * cost_.parameters_[i] - per_backward_ * cost_.backward_[i];
    }

   private:
    Seconds one_piece(std::size_t last) const;
    Seconds along_spine(std::size_t last);

    const CostModel& cost_;
    std::size_t first_;
    double per_byte_, per_backward_;  // seconds per parameter byte / per profiled second
    double peak_;
    // Spine positions: of state first - 1 (-1 for first = 0), and the last one scanned.
    long from_ = -1, scanned_ = -1;
    bool on_spine_ = false;  // whether state first - 1 is on the spine (or first = 0 and
                             // there is a spine)
  };

  /// The model's spine (ModelProfile::spine); empty for a chain or when it has none.
  const std::vector<std::uint32_t>& spine() const { return spine_; }

 private:
  // A chain is its own spine: state i at position i. Otherwise the position of state i on
  // ModelProfile::spine (-1 when it is not on it), and the state at position k.
  long spine_position(std::size_t i) const {
    return chain() ? static_cast<long>(i) : spine_position_[i];
  }
  std::size_t spine_state(long k) const {
    return chain() ? static_cast<std::size_t>(k) : spine_[static_cast<std::size_t>(k)];
  }
  double range(const std::vector<double>& prefix, std::size_t first, std::size_t last) const {
    return prefix[last + 1] - prefix[first];
  }
  // forward() and backward() of a stage that splits or recomputes.
  Seconds split_forward(std::size_t first, std::size_t last, double samples, const StageVariant& v,
                        Seconds gather, double speed) const;
  Seconds split_backward(std::size_t first, std::size_t last, double samples, const StageVariant& v,
                         Seconds gather, double speed) const;
  double split(const StageVariant& v) const;  // t x efficiency (1 for t = 1)
  double sync_share() const;  // gradient synchronisation / all-reduce: 0.5 under ZeRO-3

  std::size_t states_;
  std::vector<std::vector<std::uint32_t>> later_;
  std::vector<std::uint32_t> spine_;
  std::vector<long> spine_position_;  // per state, its index in spine_, or -1
  Cluster cluster_;
  TrainingSettings settings_;
  double profile_batch_;
  double activation_scale_;  // override / profile activation per sample (1 if none)
  Bytes activation_per_sample_;
  // prefix_x[i] = cumulative value of states [0, i), size states_ + 1.
  std::vector<double> forward_, backward_, activation_, parameters_, crossing_;
  // Only for models that can split or recompute: prefix sums of the recomputed activations
  // and tensor-parallel bytes, and range maxima of each state's own activation and parameter
  // bytes (sparse tables: level j holds the maxima of 2^j states from each index).
  std::vector<double> recomputed_, tensor_parallel_;
  std::vector<std::vector<double>> largest_activation_, largest_parameters_;
  double largest(const std::vector<std::vector<double>>& table, std::size_t first,
                 std::size_t last) const;
  // Per machine, where the cluster has GPU types: speed relative to the model's GPU and
  // device memory.
  std::vector<double> speed_;
  std::vector<Bytes> memory_;
  double fastest_ = 1, slowest_ = 1;
  Bytes smallest_memory_ = 0, largest_memory_ = 0;
  int largest_machine_ = 0;
  int devices_ = 0;
  int machine_size_ = 0;  // uniform_machine_size(cluster_)
  int max_tensor_parallel_ = 1;
  int tensor_parallel_unit_ = 0;
  bool recomputable_ = false;
};

}  // namespace pe::detail
