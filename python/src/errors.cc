// The library's exceptions as Python exceptions whose messages are the ones pe-plan prints
// (after "pe-plan: "): a UsageError names the flag where the library names an API field.
#include <Python.h>

#include <exception>

#include "bindings.h"
#include "field_flags.h"
#include "pe/error.h"
#include "pe/output_file.h"

namespace py = pybind11;

namespace pe::python {
namespace {

// A new exception class pe.<name> with the given bases, added to `m`.
PyObject* add_exception(py::module_& m, const char* name, py::handle bases) {
  const std::string qualified = std::string("pe.") + name;
  PyObject* type = PyErr_NewException(qualified.c_str(), bases.ptr(), nullptr);
  if (!type) throw py::error_already_set();
  m.attr(name) = py::handle(type);
  return type;
}

}  // namespace

void bind_errors(py::module_& m) {
  // Class objects live as long as the interpreter: the module keeps a reference to each.
  static PyObject* error = add_exception(m, "Error", PyExc_RuntimeError);
  static PyObject* input = add_exception(
      m, "InputError", py::make_tuple(py::handle(error), py::handle(PyExc_ValueError)));
  static PyObject* usage = add_exception(
      m, "UsageError", py::make_tuple(py::handle(error), py::handle(PyExc_ValueError)));
  static PyObject* output =
      add_exception(m, "OutputError", py::make_tuple(py::handle(error), py::handle(PyExc_OSError)));
  static PyObject* cancelled = add_exception(m, "CancelledError", error);
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const UsageError& e) {
      PyErr_SetString(usage, cli::usage_message(e).c_str());
    } catch (const InputError& e) {
      PyErr_SetString(input, e.what());
    } catch (const OutputError& e) {
      PyErr_SetString(output, e.what());
    } catch (const CancelledError& e) {
      PyErr_SetString(cancelled, e.what());
    } catch (const Error& e) {
      PyErr_SetString(error, e.what());
    }
  });
}

}  // namespace pe::python
