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

// Sparse table of range maxima of each state's own value of `field` (its cumulative value
// less the previous state's; a chain).
std::vector<std::vector<double>> range_maxima(const ModelProfile& model, double CutState::*field) {
  std::vector<std::vector<double>> table(1);
  double before = 0;
  for (const CutState& s : model.states) {
    table[0].push_back(s.*field - before);
    before = s.*field;
  }
  for (std::size_t span = 1; 2 * span <= model.size(); span *= 2) {
    const std::vector<double>& below = table.back();
    std::vector<double> level(below.size() - span);
    for (std::size_t i = 0; i < level.size(); ++i) level[i] = std::max(below[i], below[i + span]);
    table.push_back(std::move(level));
  }
  return table;
}

// The GPUs of the smallest machine.
int smallest_machine(const Cluster& cluster) {
  return *std::min_element(cluster.machine_gpus.begin(), cluster.machine_gpus.end());
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
  recomputable_ = settings.recomputation && model.recomputable && model.chain();
  tensor_parallel_unit_ = model.tensor_parallel_unit;
  if (tensor_parallel_unit_ > 0 && !cluster.machine_gpus.empty()) {
    const int limit =
        settings.max_tensor_parallel > 0 ? settings.max_tensor_parallel : smallest_machine(cluster);
    max_tensor_parallel_ =
        std::max(1, std::min({limit, tensor_parallel_unit_, smallest_machine(cluster)}));
  }
  if (recomputable_) recomputed_ = prefix(model, &CutState::recomputed_activation);
  if (max_tensor_parallel_ > 1) tensor_parallel_ = prefix(model, &CutState::tensor_parallel);
  if (recomputable_) largest_activation_ = range_maxima(model, &CutState::activation);
  if (model.chain()) largest_parameters_ = range_maxima(model, &CutState::parameters);
  // Machines without GPU types all run at the model's speed with device_memory (place() needs
  // no table then): a cost model of 100,000 single-GPU machines needs no 200,000 entries.
  for (int m = 0; m < cluster.machine_count() && !cluster.machine_gpu.empty(); ++m) {
    const bool typed = cluster.machine_gpu[m].peak_flops > 0 && model.gpu.peak_flops > 0;
    speed_.push_back(typed ? cluster.machine_gpu[m].peak_flops / model.gpu.peak_flops : 1.0);
    memory_.push_back(typed ? cluster.machine_gpu[m].memory : cluster.device_memory);
  }
  for (int gpus : cluster.machine_gpus) largest_machine_ = std::max(largest_machine_, gpus);
  devices_ = cluster.device_count();
  machine_size_ = uniform_machine_size(cluster);
  if (!speed_.empty()) {
    fastest_ = *std::max_element(speed_.begin(), speed_.end());
    slowest_ = *std::min_element(speed_.begin(), speed_.end());
    smallest_memory_ = *std::min_element(memory_.begin(), memory_.end());
    largest_memory_ = *std::max_element(memory_.begin(), memory_.end());
  } else if (cluster.machine_count() > 0) {  // no GPU types: speed 1 (fastest_, slowest_)
    smallest_memory_ = largest_memory_ = cluster.device_memory;
  }
}

CostModel::Place CostModel::place(const Layout& layout, int offset, int width) const {
  if (cluster_.machine_gpu.empty()) return {1, cluster_.device_memory, ""};
  Place p{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(), ""};
  for (int k = 0; k < layout.replicas(); ++k)
    for (int m = layout.machine(k, offset); m <= layout.machine(k, offset + width - 1); ++m) {
      if (speed_[m] < p.speed) p.speed = speed_[m], p.gpu = cluster_.machine_gpu[m].name;
      p.memory = std::min(p.memory, memory_[m]);
    }
  return p;
}

bool CostModel::tensor_parallel_allowed(int t) const {
  return t == 1 || (t > 1 && t <= max_tensor_parallel_ && tensor_parallel_unit_ % t == 0);
}

double CostModel::largest(const std::vector<std::vector<double>>& table, std::size_t first,
                          std::size_t last) const {
  std::size_t level = 0;
  while ((std::size_t{2} << level) <= last - first + 1) ++level;
  return std::max(table[level][first], table[level][last + 1 - (std::size_t{1} << level)]);
}

double CostModel::split(const StageVariant& v) const {
  return v.tensor_parallel == 1 ? 1.0 : v.tensor_parallel * settings_.tensor_parallel_efficiency;
}

Seconds CostModel::tensor_parallel_time(std::size_t first, std::size_t last, double samples,
                                        const StageVariant& v) const {
  if (v.tensor_parallel == 1) return 0;
  const Bytes bytes = range(tensor_parallel_, first, last) * samples / profile_batch_;
  return allreduce(bytes, v.tensor_parallel, true);
}

Seconds CostModel::split_forward(std::size_t first, std::size_t last, double samples,
                                 const StageVariant& v, Seconds gather, double speed) const {
  return forward(first, last, samples) / (split(v) * speed) +
         tensor_parallel_time(first, last, samples, v) + gather;
}

Seconds CostModel::recompute_time(std::size_t first, std::size_t last, double samples,
                                  const StageVariant& v, double speed) const {
  return v.recompute ? forward(first, last, samples) / (split(v) * speed) : 0;
}

Seconds CostModel::split_backward(std::size_t first, std::size_t last, double samples,
                                  const StageVariant& v, Seconds gather, double speed) const {
  const Seconds again = v.recompute ? recompute_time(first, last, samples, v, speed) +
                                          tensor_parallel_time(first, last, samples, v)
                                    : 0;
  return backward(first, last, samples) / (split(v) * speed) +
         tensor_parallel_time(first, last, samples, v) + gather + again;
}

Seconds CostModel::weight_gather(std::size_t first, std::size_t last, const StageVariant& v,
                                 int reducers, bool intra_machine) const {
  if (settings_.zero_stage < 3) return 0;
  // An all-gather moves half of what a ring all-reduce of the same bytes does.
  return allreduce(parameters(first, last) / v.tensor_parallel, reducers, intra_machine) / 2;
}

Bytes CostModel::weight_memory(std::size_t first, std::size_t last, const StageVariant& v,
                               int reducers) const {
  const double scaling = settings_.optimizer_scaling;
  const double gradients = std::min(1.0, scaling - 1), state = scaling - 1 - gradients;
  const double d = reducers;
  double per_weight_byte = scaling;
  if (settings_.zero_stage == 1) per_weight_byte = 1 + gradients + state / d;
  if (settings_.zero_stage == 2) per_weight_byte = 1 + (gradients + state) / d;
  if (settings_.zero_stage == 3) per_weight_byte = scaling / d;
  return per_weight_byte * parameters(first, last) / v.tensor_parallel;
}

Bytes CostModel::activation_memory(std::size_t first, std::size_t last, double samples,
                                   const StageVariant& v) const {
  const Bytes kept = v.recompute ? range(recomputed_, first, last) * samples / profile_batch_
                                 : activation_memory(first, last, samples);
  return kept / v.tensor_parallel;
}

Bytes CostModel::working_memory(std::size_t first, std::size_t last, double samples,
                                const StageVariant& v) const {
  Bytes working = 0;
  if (v.recompute)
    working +=
        largest(largest_activation_, first, last) * activation_scale_ * samples / profile_batch_;
  if (settings_.zero_stage == 3)
    working += largest_parameters_.empty() ? parameters(first, last)
                                           : largest(largest_parameters_, first, last);
  return working / v.tensor_parallel;
}

double CostModel::sync_share() const { return settings_.zero_stage == 3 ? 0.5 : 1.0; }

Seconds CostModel::gradient_sync(std::size_t first, std::size_t last, const StageVariant& v,
                                 int reducers, bool intra_machine) const {
  return sync_share() *
         allreduce(parameters(first, last) / v.tensor_parallel, reducers, intra_machine);
}

bool CostModel::stage(std::size_t first, std::size_t last) const {
  if (first > last || last >= states_) return false;
  if (first == 0 || chain()) return true;
  const std::vector<std::uint32_t>& l = later_[first - 1];
  return std::binary_search(l.begin(), l.end(), static_cast<std::uint32_t>(last));
}

Seconds CostModel::whole_model_time(double samples) const {
  return (forward_.back() + backward_.back()) * samples / profile_batch_;
}

Bytes CostModel::crossing(std::size_t last, double samples) const {
  return crossing_[last] * samples / profile_batch_;
}

Bytes CostModel::activation_memory(std::size_t first, std::size_t last, double samples) const {
  return range(activation_, first, last) * activation_scale_ * samples / profile_batch_;
}

Seconds CostModel::allreduce(Bytes bytes, int devices, bool intra_machine) const {
  return ring_allreduce(bytes, devices,
                        intra_machine ? cluster_.network.intra : cluster_.network.inter_allreduce);
}

CostModel::ExposedScan::ExposedScan(const CostModel& cost, std::size_t first, double samples,
                                    int devices, bool intra_machine, const StageVariant& v,
                                    double speed)
    : cost_(cost),
      first_(first),
      per_byte_(cost.sync_share() * cost.allreduce(1.0, devices, intra_machine) /
                v.tensor_parallel),
      per_backward_(samples / cost.profile_batch_ / (cost.split(v) * speed)),
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

}  // namespace pe::detail
