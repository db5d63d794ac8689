#include "pe/model.h"

#include <cmath>
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

}  // namespace

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
  if (bad(model.profile_batch_size) || model.profile_batch_size == 0)
    throw InputError(where, "profile batch size must be a positive number, got " +
                                describe(model.profile_batch_size));
  if (model.states.empty()) throw InputError(where, "the model has no layers");
  const CutState* previous = nullptr;
  for (std::size_t i = 0; i < model.states.size(); ++i) {
    const CutState& s = model.states[i];
    const std::string at = "state " + std::to_string(i) + " (" + s.name + ")";
    for (double v : {s.forward, s.backward, s.activation, s.parameters, s.crossing})
      if (bad(v)) throw InputError(where, at + ": value " + describe(v) +
                                              " is not a finite non-negative number");
    if (previous && (s.forward < previous->forward || s.backward < previous->backward ||
                     s.activation < previous->activation ||
                     s.parameters < previous->parameters))
      throw InputError(where, at + ": cumulative values decrease");
    previous = &s;
  }
}

}  // namespace pe
