#include "cost/cost_model.h"

#include <algorithm>
#include <limits>

#include "pe/baselines.h"

namespace pe::detail {
namespace {

std::vector<double> prefix(const ModelProfile& model, double CutState::*field) {
  std::vector<double> sums(model.size() + 1, 0.0);
  for (std::size_t i = 0; i < model.size(); ++i) sums[i + 1] = model.states[i].*field;
  return sums;
}

}  // namespace

CostModel::CostModel(const ModelProfile& model, const Cluster& cluster,
                     const TrainingSettings& settings)
    : states_(model.size()),
      later_(model.later),
      spine_(model.spine),
      spine_position_(model.size(), -1),
      cluster_(cluster),
      settings_(settings),
      profile_batch_(model.profile_batch_size),
      forward_(prefix(model, &CutState::forward)),
      backward_(prefix(model, &CutState::backward)),
      activation_(prefix(model, &CutState::activation)),
      parameters_(prefix(model, &CutState::parameters)) {
  for (std::size_t k = 0; k < spine_.size(); ++k) spine_position_[spine_[k]] = static_cast<long>(k);
  crossing_.reserve(states_);
  for (const CutState& s : model.states) crossing_.push_back(s.crossing);
  const Bytes profile_per_sample = model.whole().activation / profile_batch_;
  activation_per_sample_ = settings.activation_bytes_per_sample.value_or(profile_per_sample);
  activation_scale_ = profile_per_sample > 0 ? activation_per_sample_ / profile_per_sample : 0;
}

bool CostModel::stage(std::size_t first, std::size_t last) const {
  if (first > last || last >= states_) return false;
  if (first == 0 || chain()) return true;
  const std::vector<std::uint32_t>& l = later_[first - 1];
  return std::binary_search(l.begin(), l.end(), static_cast<std::uint32_t>(last));
}

double CostModel::range(const std::vector<double>& prefix_sums, std::size_t first,
                        std::size_t last) const {
  return prefix_sums[last + 1] - prefix_sums[first];
}

Seconds CostModel::forward(std::size_t first, std::size_t last, double samples) const {
  return range(forward_, first, last) * samples / profile_batch_;
}

Seconds CostModel::backward(std::size_t first, std::size_t last, double samples) const {
  return range(backward_, first, last) * samples / profile_batch_;
}

Seconds CostModel::whole_model_time(double samples) const {
  return (forward_.back() + backward_.back()) * samples / profile_batch_;
}

Bytes CostModel::parameters(std::size_t first, std::size_t last) const {
  return range(parameters_, first, last);
}

Bytes CostModel::crossing(std::size_t last, double samples) const {
  return crossing_[last] * samples / profile_batch_;
}

Bytes CostModel::weight_memory(std::size_t first, std::size_t last) const {
  return settings_.optimizer_scaling * parameters(first, last);
}

Bytes CostModel::activation_memory(std::size_t first, std::size_t last, double samples) const {
  return range(activation_, first, last) * activation_scale_ * samples / profile_batch_;
}

Seconds CostModel::transfer(Bytes bytes, bool intra_machine) const {
  if (bytes <= 0) return 0;
  return bytes / (intra_machine ? cluster_.network.intra : cluster_.network.inter_p2p);
}

Seconds CostModel::allreduce(Bytes bytes, int devices, bool intra_machine) const {
  return ring_allreduce(bytes, devices,
                        intra_machine ? cluster_.network.intra : cluster_.network.inter_allreduce);
}

CostModel::ExposedScan::ExposedScan(const CostModel& cost, std::size_t first, double samples,
                                    int devices, bool intra_machine)
    : cost_(cost),
      first_(first),
      per_byte_(cost.allreduce(1.0, devices, intra_machine)),
      per_backward_(samples / cost.profile_batch_),
      peak_(-std::numeric_limits<double>::infinity()) {
  from_ = first == 0 ? -1 : cost.spine_position(first - 1);
  on_spine_ = first == 0 ? cost.chain() || !cost.spine_.empty() : from_ >= 0;
  scanned_ = from_;
}

Seconds CostModel::ExposedScan::one_piece(std::size_t last) const {
  return per_byte_ * (cost_.parameters_[last + 1] - cost_.parameters_[first_]);
}

// With AR_j = k * P_j and g_j = s * B_j over the spine's states from first - 1 to `last`, the
// link finishes the stage's gradients max_i (sum AR_j up to i - sum g_j before i) after the
// last backward ends; resumed where the previous call stopped (restarted when `last` comes
// before it).
Seconds CostModel::ExposedScan::along_spine(std::size_t last) {
  const long to = cost_.spine_position(last);
  if (to <= from_) return one_piece(last);
  if (to < scanned_) {
    scanned_ = from_;
    peak_ = -std::numeric_limits<double>::infinity();
  }
  for (long k = scanned_ + 1; k <= to; ++k) {
    const double reduced =
        per_byte_ * (cost_.parameters_[cost_.spine_state(k) + 1] - cost_.parameters_[first_]);
    const double before =
        k == from_ + 1 ? 0.0
                       : cost_.backward_[cost_.spine_state(k - 1) + 1] - cost_.backward_[first_];
    peak_ = std::max(peak_, reduced - per_backward_ * before);
  }
  scanned_ = to;
  return std::max(0.0, peak_);
}

Seconds CostModel::ExposedScan::extend_to(std::size_t last) {
  if (!on_spine_ || cost_.spine_position(last) < 0) return one_piece(last);
  return along_spine(last);
}

Seconds CostModel::exposed_allreduce(std::size_t first, std::size_t last, double samples,
                                     int devices, bool intra_machine) const {
  return ExposedScan(*this, first, samples, devices, intra_machine).extend_to(last);
}

}  // namespace pe::detail
