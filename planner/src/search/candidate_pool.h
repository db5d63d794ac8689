// The search's candidate plans: every plan offered, simulated in order of its lower bound
// while that can still make the answer, the fastest plan found (the incumbent), and the
// ranking of the answer (ties within kSimpler go to the simplest plan).
#pragma once

#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "pe/plan.h"
#include "search/hybrid_search.h"
#include "search/pipeline_shapes.h"

namespace pe::detail {

/// How simple a plan is, simplest first: fewer stages, devices, copies; even micro-batches;
/// larger micro-batches; 1F1B. The stage string (Candidate::stages) makes the order total.
using Simplicity = std::tuple<std::size_t, int, int, bool, int, int>;
Simplicity simplicity(const Plan& p);

/// A plan with its simplicity and stage string, computed once, and the fastest time of its
/// shape seen.
struct Candidate {
  Plan plan;
  Simplicity simple;
  std::string stages;
  Seconds shape_fastest = std::numeric_limits<Seconds>::infinity();
  Seconds time() const { return plan.iteration_time; }
  auto order() const { return std::tie(simple, stages); }
};

/// `plan` as a candidate: its simplicity and stage string computed.
Candidate candidate(Plan plan);

/// Plans within kSimpler of `fastest` (by default the fastest of them) count as tied and the
/// simplest of them leads, of equally simple ones the fastest; the rest follow by time.
/// Measuring every tie against one fastest plan keeps a chain of simpler plans, each within
/// the margin of the one before, from drifting further from it (VGG-19 at GBS 128 on 2 x 8
/// GPUs: four plans 0.06 % apart ended 0.18 % slower than the fastest).
void rank(std::vector<Candidate>& plans,
          Seconds fastest = std::numeric_limits<Seconds>::infinity());

/// Every candidate plan offered, simulated or not, and the incumbent.
class Pool {
 public:
  explicit Pool(int top) : top_(top) {}

  void add(Plan plan);
  /// Simulates waiting candidates in order of lower bound while a bound can still make the
  /// best `top` (with the simplicity margin); the rest stay waiting, their bounds kept for
  /// the certificate. A plan too large to simulate (kMaxSimulatedPairs) is left out.
  void simulate_promising();
  /// Plans with a lower bound above this cannot enter the answer.
  Seconds cutoff() const;
  Seconds best_time() const;
  /// The fastest plan simulated, also where a simpler one of its shape within the margin
  /// took its place: the certificate is measured against it.
  Seconds fastest() const { return fastest_; }
  /// The bound for one shape's pass: only one plan per shape is kept, so a plan slower than
  /// the shape's kept one (beyond the margin) can never be reported, whatever `top` is.
  Seconds cutoff_for(const PipelineShapeChoice& shape) const;
  /// Devices the fastest plan kept uses (Plan::device_count; 0 with none).
  int fastest_devices() const { return kept_.empty() ? 0 : kept_.front().plan.device_count(); }
  /// The most stages a plan may have to enter the answer once no plan can be faster than the
  /// fastest beyond kTie (only a simpler plan within the margin can then change it): with
  /// `top` 1, the stages of the plan that leads it; 0 (any) with more, or none yet.
  int stages_to_lead() const;
  /// The least bound of the plans never simulated.
  Seconds least_unsimulated() const { return least_unsimulated_; }
  /// The best `top` plans, ranked (rank).
  std::vector<Plan> answer() const;
  /// No plan simulated yet: answer() is empty.
  bool empty() const { return kept_.empty(); }

 private:
  void insert(Candidate candidate);
  void sort_and_trim();

  int top_;
  std::vector<Candidate> waiting_, kept_;
  Seconds least_unsimulated_ = std::numeric_limits<Seconds>::infinity();
  Seconds fastest_ = std::numeric_limits<Seconds>::infinity();
};

}  // namespace pe::detail
