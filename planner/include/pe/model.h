// A layer-wise training profile reduced to pipeline cut points ("states").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pe/gpu.h"
#include "pe/units.h"

namespace pe {

/// One cut point of the model: the set of operators that run before the cut. In a chain
/// model state i holds everything in states 0..i (cuts are nested); otherwise
/// ModelProfile::later says which cuts contain which. A pipeline stage "first-last" holds the
/// operators of state last's cut that are not in state first-1's (none for first = 0), which
/// must be contained in it; its cost is a difference of the cumulative sums below.
/// All values are for one mini-batch of the profile batch size.
struct CutState {
  std::string name;      ///< The operator that closes this state (its description).
  Seconds forward = 0;   ///< Cumulative forward time of all operators up to the cut.
  Seconds backward = 0;  ///< Cumulative backward time up to the cut.
  Bytes activation = 0;  ///< Cumulative activation (output) bytes up to the cut.
  Bytes parameters = 0;  ///< Cumulative parameter (fp32 weight) bytes up to the cut.
  Bytes crossing = 0;    ///< Bytes that cross a cut placed right after this state.
  /// The id of that operator in the source file (a graph.txt node id); empty for models
  /// built in code.
  std::string operator_id;
  /// Cumulative activation bytes kept with full recomputation (each operator keeps only its
  /// input); read only when ModelProfile::recomputable.
  Bytes recomputed_activation = 0;
  /// Cumulative bytes the forward pass all-reduces among the GPUs that split the operators
  /// up to the cut t ways (tensor parallelism; the backward pass all-reduces as many); read
  /// only when ModelProfile::tensor_parallel_unit > 0.
  Bytes tensor_parallel = 0;
};

/// A model as the planner sees it: an ordered list of cut states.
/// Invariant: cumulative fields do not decrease from a cut to one that contains it; the last
/// state holds the whole model.
struct ModelProfile {
  std::string name;                ///< Short name, e.g. "resnet50".
  std::string source;              ///< Where it came from (a path or "code").
  double profile_batch_size = 1;   ///< Batch size the times and activations were taken at.
  std::size_t operator_count = 0;  ///< Operators in the source graph (after clean-up).
  std::vector<CutState> states;    ///< Cut states in execution order, indexed from 0.
  /// Empty for a chain (each state's cut contains every earlier one). Otherwise, per state i,
  /// ascending, the states j > i whose cut strictly contains state i's; states are sorted so
  /// that a contained cut comes first, and the last state contains every other.
  std::vector<std::vector<std::uint32_t>> later;
  /// Empty for a chain. Otherwise, optionally, the states that are the prefixes of one
  /// topological order of the operators, shortest first (one per operator, the last the
  /// whole model): each step adds one operator, so a stage whose ends lie on this spine
  /// all-reduces its gradients layer by layer as a chain's stage does, and the
  /// data-parallel baselines overlap along it. Stages off the spine, and every stage when
  /// it is empty, all-reduce their gradients as one piece after their last backward.
  std::vector<std::uint32_t> spine;
  /// 0 when the states are every cut of the source graph (or the model is a chain, or was
  /// built in code). Otherwise the graph has more cuts than this limit, and the states are
  /// the prefixes of one topological order: plans, and the gaps reported for them, then
  /// cover only stages between those prefixes.
  std::size_t cut_limit = 0;
  /// 0 when the model's operators cannot be split across GPUs. Otherwise a stage may split
  /// them t ways (tensor parallelism) for any t > 1 dividing this number (for a transformer
  /// the attention heads' and key/value heads' greatest common divisor): compute, weights
  /// and activations divided by t, CutState::tensor_parallel all-reduced.
  int tensor_parallel_unit = 0;
  /// True when a stage may recompute its forward pass in the backward instead of keeping
  /// its activations (CutState::recomputed_activation says what it keeps then).
  bool recomputable = false;
  /// The GPU the times are for (graph.txt profiles: V100-16GB, as measured by PipeDream and
  /// HPGO); peak_flops 0 when unknown. Machines of other GPU types (Cluster::machine_gpu) run
  /// the model at the ratio of the peaks.
  GpuSpec gpu;
  /// Forward + backward FLOPs of one sample through the whole model, without recomputation
  /// (transformers: transformer_training_flops); 0 when unknown. With `gpu` it gives a plan's
  /// model FLOP/s per GPU and MFU.
  double training_flops_per_sample = 0;

  /// What the states are: "chain" (nested in index order), "every cut" (of the source
  /// graph, not nested) or "one order" (the prefixes of one topological order of a graph
  /// with more than cut_limit cuts).
  const char* states_cover() const;
  /// True when the states are nested in index order (later is empty).
  bool chain() const { return later.empty(); }
  /// True when state `inner`'s cut is strictly inside state `outer`'s (for a chain:
  /// inner < outer). Both must be states. O(log) in the number of states containing `inner`.
  bool nested(std::size_t inner, std::size_t outer) const;

  /// Number of states.
  std::size_t size() const { return states.size(); }
  /// The last state: totals of the whole model. The model must have a state.
  const CutState& whole() const { return states.back(); }
  /// Forward time of the stage holding states first..last (inclusive), at profile batch.
  Seconds forward(std::size_t first, std::size_t last) const;
  /// Backward time of states first..last (inclusive), at profile batch.
  Seconds backward(std::size_t first, std::size_t last) const;
  /// Activation bytes of states first..last (inclusive), at profile batch.
  Bytes activation(std::size_t first, std::size_t last) const;
  /// Parameter bytes of states first..last (inclusive).
  Bytes parameters(std::size_t first, std::size_t last) const;
};

/// One operator of a model defined in code or by an importer, in execution order.
struct Layer {
  std::string name;      ///< Becomes the name of its state.
  Seconds forward = 0;   ///< Forward time of this layer alone, at the profile batch size.
  Seconds backward = 0;  ///< Backward time of this layer alone, at the profile batch size.
  Bytes activation = 0;  ///< Output bytes at the profile batch size.
  Bytes parameters = 0;  ///< Parameter (fp32 weight) bytes of this layer.
};

/// Builds a chain model (each layer feeds the next; one state per layer). Throws
/// InputError for negative, NaN or infinite values or an empty layer list.
ModelProfile make_chain_model(std::string name, double profile_batch_size,
                              const std::vector<Layer>& layers);

/// Largest total forward + backward time of a model at its profile batch (about 32 years):
/// larger finite values are data errors that would overflow the plan's arithmetic.
inline constexpr Seconds kMaxModelSeconds = 1e9;
/// Largest cumulative activation or parameter bytes, and bytes crossing a cut (1 EB).
inline constexpr Bytes kMaxModelBytes = 1e18;
/// Range of a profile batch size (the samples per profiled mini-batch).
inline constexpr double kMinProfileBatch = 1e-3;
inline constexpr double kMaxProfileBatch = 1073741824;  // 2^30, the largest batch size

/// Checks the invariants of a ModelProfile (finite, non-negative, non-decreasing
/// cumulative values, at least one state, a profile batch size from kMinProfileBatch to
/// kMaxProfileBatch) and the size limits above. Throws InputError naming `where` and the
/// first offending state.
void validate(const ModelProfile& model, const std::string& where);

}  // namespace pe
