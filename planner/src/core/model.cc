#include "pe/model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

#include "pe/error.h"

namespace pe {
namespace {

// Cumulative value of `field` just before state `first` (0 for the first state).
template <typename Field>
double before(const ModelProfile& model, std::size_t first, Field field) {
  return first == 0 ? 0.0 : model.states[first - 1].*field;
}

template <typename Field>
double range(const ModelProfile& model, std::size_t first, std::size_t last, Field field) {
  return model.states[last].*field - before(model, first, field);
}

bool bad(double value) { return !std::isfinite(value) || value < 0; }

std::string describe(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

struct Field {
  const char* name;
  double CutState::*member;
  bool cumulative;
  bool bytes;  // a byte count (else a time)
};

constexpr Field kFields[] = {
    {"forward", &CutState::forward, true, false},
    {"backward", &CutState::backward, true, false},
    {"activation", &CutState::activation, true, true},
    {"parameters", &CutState::parameters, true, true},
    {"crossing", &CutState::crossing, false, true},
    {"recomputed activation", &CutState::recomputed_activation, true, true},
    {"tensor-parallel bytes", &CutState::tensor_parallel, true, true}};

// The largest value of `member` over the states whose cut is inside state i's: the previous
// state in a chain, else those listing i in `later` (0 when there are none).
double largest_inside(const ModelProfile& model, std::size_t i, double CutState::*member) {
  if (model.chain()) return i > 0 ? model.states[i - 1].*member : 0;
  double largest = 0;
  for (std::size_t j = 0; j < i; ++j)
    if (model.nested(j, i)) largest = std::max(largest, model.states[j].*member);
  return largest;
}

// Throws when a field of state i is not finite and non-negative or, for cumulative fields,
// smaller than in a state whose cut it contains. An infinite cumulative value after finite
// ones is a sum that overflowed, which the message says.
void check_state(const ModelProfile& model, std::size_t i, const std::string& where) {
  const CutState& s = model.states[i];
  const std::string at = "state " + std::to_string(i) + " (" + s.name + "): ";
  for (const Field& field : kFields) {
    const double value = s.*field.member;
    const double previous = field.cumulative ? largest_inside(model, i, field.member) : 0;
    if (field.cumulative && std::isinf(value) && std::isfinite(previous))
      throw InputError(where, at + "cumulative " + field.name + " is " + describe(value) +
                                  ": the sum of the layers' values overflows a double");
    if (bad(value))
      throw InputError(where, at + field.name + " is " + describe(value) +
                                  ", expected a finite non-negative number");
    if (value < previous)
      throw InputError(where, at + "cumulative " + field.name + " decreases from " +
                                  describe(previous) + " to " + describe(value));
  }
}

// Throws when state i brings the model past kMaxModelSeconds or kMaxModelBytes.
void check_limits(const ModelProfile& model, std::size_t i, const std::string& where) {
  const CutState& s = model.states[i];
  const std::string at = "state " + std::to_string(i) + " (" + s.name + "): ";
  if (s.forward + s.backward > kMaxModelSeconds)
    throw InputError(where, at + "forward + backward time reaches " +
                                describe(s.forward + s.backward) +
                                " s at the profile batch, "
                                "expected at most 1e9 s (about 32 years) for the whole model");
  for (const Field& field : kFields)
    if (field.bytes && s.*field.member > kMaxModelBytes)
      throw InputError(where, at + (field.cumulative ? "cumulative " : "") + field.name + " is " +
                                  describe(s.*field.member) +
                                  " bytes, expected at most 1e18 (an exabyte)");
}

// Throws unless `later` is empty or lists, for every state but the last, ascending later
// states ending with the last one (which contains every cut).
void check_later(const ModelProfile& model, const std::string& where) {
  if (model.chain()) return;
  const std::size_t n = model.states.size();
  if (model.later.size() != n)
    throw InputError(where, "the containment lists ('later') have " +
                                std::to_string(model.later.size()) + " entries, expected " +
                                std::to_string(n) + ", one per state");
  for (std::size_t i = 0; i < n; ++i) {
    const std::vector<std::uint32_t>& l = model.later[i];
    const bool sorted = std::adjacent_find(l.begin(), l.end(), std::greater_equal<>()) == l.end();
    const bool ends_last = i + 1 == n ? l.empty() : !l.empty() && l.back() == n - 1;
    if (!sorted || !ends_last || (!l.empty() && l.front() <= i))
      throw InputError(where, "state " + std::to_string(i) +
                                  ": its containing states ('later') are not ascending states "
                                  "after it ending with the last state");
  }
}

// A spine, when given, is a chain of nested states from a first one to the last state.
void check_spine(const ModelProfile& model, const std::string& where) {
  if (model.spine.empty()) return;
  const std::size_t n = model.states.size();
  if (model.chain())
    throw InputError(where, "a spine is given but the states are a chain ('later' is empty)");
  for (std::size_t k = 0; k < model.spine.size(); ++k) {
    const std::size_t state = model.spine[k];
    const bool inside = state < n && (k == 0 || model.nested(model.spine[k - 1], state));
    if (!inside)
      throw InputError(where, "spine entry " + std::to_string(k) + " (state " +
                                  std::to_string(state) + ") does not contain the entry before it");
  }
  if (model.spine.back() != n - 1)
    throw InputError(where, "the spine ends at state " + std::to_string(model.spine.back()) +
                                ", expected the last state " + std::to_string(n - 1));
}

}  // namespace

const char* ModelProfile::states_cover() const {
  if (cut_limit > 0) return "one order";
  return chain() ? "chain" : "every cut";
}

bool ModelProfile::nested(std::size_t inner, std::size_t outer) const {
  if (chain()) return inner < outer;
  const std::vector<std::uint32_t>& l = later[inner];
  return std::binary_search(l.begin(), l.end(), static_cast<std::uint32_t>(outer));
}

Seconds ModelProfile::forward(std::size_t first, std::size_t last) const {
  return range(*this, first, last, &CutState::forward);
}
Seconds ModelProfile::backward(std::size_t first, std::size_t last) const {
  return range(*this, first, last, &CutState::backward);
}
Bytes ModelProfile::activation(std::size_t first, std::size_t last) const {
  return range(*this, first, last, &CutState::activation);
}
Bytes ModelProfile::parameters(std::size_t first, std::size_t last) const {
  return range(*this, first, last, &CutState::parameters);
}

ModelProfile make_chain_model(std::string name, double profile_batch_size,
                              const std::vector<Layer>& layers) {
  ModelProfile model;
  model.name = std::move(name);
  model.source = "code";
  model.profile_batch_size = profile_batch_size;
  model.operator_count = layers.size();
  CutState sum;
  for (const Layer& layer : layers) {
    sum.name = layer.name;
    sum.forward += layer.forward;
    sum.backward += layer.backward;
    sum.activation += layer.activation;
    sum.parameters += layer.parameters;
    sum.crossing = layer.activation;
    model.states.push_back(sum);
  }
  if (!model.states.empty()) model.states.back().crossing = 0;
  validate(model, model.name);
  return model;
}

void validate(const ModelProfile& model, const std::string& where) {
  const double pbs = model.profile_batch_size;
  if (bad(pbs) || pbs < kMinProfileBatch || pbs > kMaxProfileBatch)
    throw InputError(
        where, "profile batch size must be a number from 0.001 to 2^30, got " + describe(pbs));
  if (model.states.empty()) throw InputError(where, "the model has no layers");
  if (model.tensor_parallel_unit < 0)
    throw InputError(where, "tensor_parallel_unit is " +
                                std::to_string(model.tensor_parallel_unit) +
                                ", expected 0 (no tensor parallelism) or a positive number");
  check_later(model, where);
  check_spine(model, where);
  for (std::size_t i = 0; i < model.states.size(); ++i) check_state(model, i, where);
  for (std::size_t i = 0; i < model.states.size(); ++i) check_limits(model, i, where);
}

}  // namespace pe
