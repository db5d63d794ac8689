// pe._core: the compiled part of the Python package pe (python/pe/__init__.py is the rest).
#include <pybind11/pybind11.h>

#include "bindings.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "pe-plan's planner: profiles, clusters, the hybrid-parallel search and its reports";
  m.attr("__version__") = PE_VERSION;
  pe::python::bind_errors(m);
  pe::python::bind_inputs(m);
  pe::python::bind_results(m);
  pe::python::bind_planner(m);
}
