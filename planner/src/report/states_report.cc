// The model's cut states, so a reader can turn a plan's FIRST-LAST ranges into operators
// and see what a cut costs: text, CSV and JSON of the same columns.
#include "pe/report.h"

#include <nlohmann/json.hpp>

#include "report/format.h"

namespace pe {
namespace {

using Json = nlohmann::ordered_json;
using detail::format::csv_field;
using detail::format::fixed;
using detail::format::json_number;

}  // namespace

std::string states_table(const ModelProfile& model) {
  std::vector<std::vector<std::string>> cells{
      {"state", "forward_ms", "backward_ms", "activation_MB", "parameters_MB", "crossing_MB"}};
  for (std::size_t i = 0; i < model.size(); ++i) {
    const CutState& s = model.states[i];
    cells.push_back({std::to_string(i), fixed(s.forward * 1e3, 3), fixed(s.backward * 1e3, 3),
                     fixed(s.activation / 1e6, 3), fixed(s.parameters / 1e6, 3),
                     fixed(s.crossing / 1e6, 3)});
  }
  const std::vector<std::string> lines =
      detail::format::right_columns(cells, {5, 11, 12, 14, 14, 12});
  std::string text = model.name + ": " + detail::format::counted(model.size(), "state") +
                     ", profile batch " + json_number(model.profile_batch_size) +
                     "; cumulative up to each state, crossing = bytes crossing a cut right "
                     "after it\n" +
                     lines[0] + "  operator\n";
  for (std::size_t i = 0; i < model.size(); ++i)
    text += lines[i + 1] + "  " + model.states[i].name + "\n";
  return text;
}

std::string states_csv(const ModelProfile& model) {
  std::string text =
      "state,name,forward_s,backward_s,activation_bytes,parameter_bytes,crossing_bytes\n";
  for (std::size_t i = 0; i < model.size(); ++i) {
    const CutState& s = model.states[i];
    text += std::to_string(i) + "," + csv_field(s.name) + "," + json_number(s.forward) + "," +
            json_number(s.backward) + "," + json_number(s.activation) + "," +
            json_number(s.parameters) + "," + json_number(s.crossing) + "\n";
  }
  return text;
}

std::string states_json(const ModelProfile& model) {
  Json states = Json::array();
  for (std::size_t i = 0; i < model.size(); ++i) {
    const CutState& s = model.states[i];
    states.push_back({{"state", i},
                      {"name", s.name},
                      {"forward_s", s.forward},
                      {"backward_s", s.backward},
                      {"activation_bytes", s.activation},
                      {"parameter_bytes", s.parameters},
                      {"crossing_bytes", s.crossing}});
  }
  const Json doc{{"model", model.name},
                 {"source", model.source},
                 {"profile_batch_size", model.profile_batch_size},
                 {"states", states}};
  return detail::format::json_line(doc, {", ", ": ", json_number}) + "\n";
}

}  // namespace pe
