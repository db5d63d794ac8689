// Builders of graph.txt text and readers of imported states, shared by the importer tests.
#pragma once

#include <string>
#include <vector>

#include "pe/model.h"

namespace pe::testing {

/// An edge line of graph.txt: "\tFROM -- TO".
inline std::string graph_edge(const std::string& from, const std::string& to) {
  return "\t" + from + " -- " + to + "\n";
}

/// The names of a model's states, in order.
inline std::vector<std::string> state_names(const ModelProfile& model) {
  std::vector<std::string> result;
  for (const CutState& s : model.states) result.push_back(s.name);
  return result;
}

}  // namespace pe::testing
