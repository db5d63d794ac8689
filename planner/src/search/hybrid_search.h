// The hybrid search for one global batch size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "cost/cost_model.h"
#include "pe/plan.h"
#include "pe/planner.h"
#include "search/pipeline_shapes.h"

namespace pe::detail {

/// Plans within this relative margin of the fastest count as tied; the simplest of them
/// (fewer stages, devices, copies; even and larger micro-batches; 1F1B) is reported.
inline constexpr double kSimpler = 1e-3;
/// Relative rounding tolerance of "exact": the lower bound meets the best time.
inline constexpr double kTie = 1e-9;
/// Plans of more (stage, micro-batch) pairs than this are not simulated by the search, so
/// not candidates (their lower bounds still count in the certificate). The search simulates
/// many plans, so it stays well below the most pe::simulate takes at all (kMaxPairs in
/// simulate/simulate.cc, 2^26 pairs, also plan_layout.cc's limit): a sixteenth of it.
inline constexpr double kMaxSimulatedPairs = 1 << 22;
/// Whether a plan of `stages` stages and `micro_batches` micro-batches has more pairs than the
/// search simulates (kMaxSimulatedPairs).
inline bool too_large_to_simulate(std::size_t stages, int micro_batches) {
  return static_cast<double>(stages) * micro_batches > kMaxSimulatedPairs;
}

/// The cost model of the same model and settings on another cluster: here always a part of
/// the one searched (its first machines), whose plans are plans of the whole cluster too.
using PartCostModel = std::function<CostModel(const Cluster&)>;
/// The PartCostModel of `model` under `settings` (both must outlive it).
inline PartCostModel part_cost_of(const ModelProfile& model, const TrainingSettings& settings) {
  return [&model, &settings](const Cluster& c) { return CostModel(model, c, settings); };
}

/// The part of `cluster` that is its first `machines` machines (at least 1; 0: its first
/// device alone).
Cluster part_cluster(const Cluster& cluster, int machines);

/// Every plan of `global_batch` on `used` devices of the cluster of `cost` takes at least the
/// batch's work over them (shape_floor), more on fewer devices.
Seconds work_floor(const CostModel& cost, int global_batch, int used);

/// The search's answer for one global batch size.
struct SearchResult {
  std::vector<Plan> plans;  ///< Best first (simulated); empty when nothing fits.
  /// A proven lower bound on the simulated time of every plan of the search space.
  Seconds lower_bound = 0;
  /// True when lower_bound meets the fastest plan simulated: no plan is faster than it, and
  /// the plan reported is it or the simplest within kSimpler of it.
  bool exact = true;
  /// The fastest plan simulated: plans.front() is it or the simplest within kSimpler of it.
  Seconds fastest = std::numeric_limits<Seconds>::infinity();
  /// The steps the refining phase was given and did not use (HybridSearch::refined; 0 before
  /// it ran).
  std::uint64_t refine_left = 0;
};

/// Whether every plan on all devices of `part` (a part of the cluster `found` was searched on)
/// is already no faster than `found`'s fastest plan, by the batch's work over them (work_floor):
/// then the part need not be searched. False where `found` has no plan.
bool part_cannot_beat(const CostModel& part, int global_batch, const SearchResult& found);

/// The `top` best plans of distinct shapes by simulated time (best first, the simplest
/// within kSimpler of the fastest leading), with a lower bound on the whole space. Each
/// shape's pass shares options.effort (narrowest copies first; a shape that runs out is searched
/// again, least bound first, with what the others left, up to three rounds; a shape never finished
/// counts with the bound of its relaxed pass, DpQuery::relaxed, or its floor when that runs out
/// too: the relaxed passes share twice the effort; a relaxed pass that ran out with the first
/// round's share is tried again after the rounds, with equal parts of what is left, up to three
/// times). Interleaved plans (with Schedule::Interleaved) are enumerated (interleaved_specs) and
/// offered after the rounds. Where 1F1B is searched, every GPipe candidate's 1F1B twin
/// (one_f_one_b_twin) is a candidate too. Deterministic for any thread count.
///
/// With `part_cost`, the space also holds the plans of the parts of the cluster: its first
/// machines, and its first device (the other devices stay idle). Each part's shapes are
/// searched after the whole cluster's as the part's own search would, except shapes whose
/// plans a shape of the whole cluster holds (one copy, or copies that start on machine
/// boundaries of equal machines in both) with a bound there no less than the best time, and
/// parts whose floor (the batch's work over their devices) cannot beat the best plan found
/// (counted with that floor). So more machines, or devices, never give a slower answer than
/// a part's when the search finishes.
///
/// `hints`, plans of the same model, cluster and batch found another way (a search of the
/// spine's chain, search_with_spine), are candidates from the start: the search prunes with
/// the best of them as it would with its own.
///
/// Last, where no exact pass finished a shape whose bound is below the fastest plan, a
/// relaxed pass (where its own all ran out; on a chain, block passes before it, and on copies
/// of 32 devices or more a class pass) and then refining relaxed passes (DpQuery::buckets)
/// share three times the effort to raise its bound, and `refine_effort` more steps (what
/// another search of the batch left unused: search_with_spine).
SearchResult search_plans(const CostModel& cost, int global_batch, const SearchOptions& options,
                          const PartCostModel& part_cost = {}, const std::vector<Plan>& hints = {},
                          std::uint64_t refine_effort = 0);

/// search_plans in two steps: the search (the constructor; result()), then the refining
/// passes on its certificate (refined()), which a caller whose bound goes unused, or that
/// searches again from better plans, may leave out (search_with_spine).
class HybridSearch {
 public:
  /// What a search proved of the whole cluster's shapes (one entry per shape): a lower bound
  /// of each shape's plans (`own`), and one of the plans of the same copies, micro-batches
  /// and schedule on the cluster's first machines too (`anywhere`, Search::anywhere).
  struct ShapeBounds {
    std::vector<PipelineShapeChoice> shapes;
    std::vector<Seconds> own;
    std::vector<Seconds> anywhere;
    /// The most steps a relaxed pass of each shape ran out with (0: none did), which the
    /// next search does not try one with again.
    std::vector<std::uint64_t> ran_out_with;
  };
  /// With `known`, the bounds another search of the same cost model and batch proved
  /// (shape_bounds()): they start the bounds of the same shapes, and a shape whose bound is
  /// above its cutoff is not searched again.
  HybridSearch(const CostModel& cost, int global_batch, const SearchOptions& options,
               const PartCostModel& part_cost = {}, const std::vector<Plan>& hints = {},
               const ShapeBounds& known = {});
  ~HybridSearch();
  HybridSearch(const HybridSearch&) = delete;
  HybridSearch& operator=(const HybridSearch&) = delete;
  /// The answer without the refining passes.
  SearchResult result() const;
  /// The answer after them (search_plans'), with `more` (plans of the same model, cluster
  /// and batch found another way, simulated) among the candidates first, and `more_effort`
  /// steps for them on top of their own.
  SearchResult refined(const std::vector<Plan>& more = {}, std::uint64_t more_effort = 0);
  /// The bounds of the whole cluster's shapes the search proved before its refining passes.
  const ShapeBounds& shape_bounds() const;

 private:
  struct State;
  static void narrow(State& s);
  std::unique_ptr<State> state_;
};

}  // namespace pe::detail
