// The parts of the Python module pe._core, one function per area, and the types the module
// adds around the library's.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "pe/model.h"
#include "pe/planner.h"
#include "pe/settings.h"

namespace pe::python {

/// A loaded profile: the model and the catalogue's planning defaults for it.
struct Profile {
  ModelProfile model;
  TrainingSettings settings;  ///< The catalogue's defaults (min_micro_batch, ...).
  std::string path;           ///< The graph file ("" for a model built in code).
  /// A transformer from its configuration (load_transformer): pe-plan's --model, whose
  /// devices get its GPU's memory unless memory is given.
  bool transformer = false;
};

/// A Planner with the search options it was made with (the JSON report names them).
struct BoundPlanner {
  Planner planner;
  SearchOptions search;
};

/// pe.Error, pe.InputError, pe.UsageError, pe.OutputError, pe.CancelledError and the
/// translation of the library's exceptions into them, with pe-plan's messages.
void bind_errors(pybind11::module_& m);
/// Profile, Cluster, TrainingSettings, SearchOptions and their loaders.
void bind_inputs(pybind11::module_& m);
/// Plan, PlanStage, Baselines, StageBubbles, BubbleReport, PointResult, LayoutCost.
void bind_results(pybind11::module_& m);
/// Planner: plan, sweep, evaluate (without the GIL) and the reports.
void bind_planner(pybind11::module_& m);

}  // namespace pe::python
