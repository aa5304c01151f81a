// tg's C++ errors -> Python exceptions, with the same message. Each keeps the Python type a Python user
// expects (ValueError for a bad shape or value, IndexError, TypeError) and is also what torch's and
// tinygrad v0.9's users catch around the same mistake: torch raises RuntimeError for shape and dtype
// errors, tinygrad v0.9 an AssertionError (its checks are asserts). So:
//   tg.TensorError(RuntimeError, AssertionError)       the base of the three below
//   tg::Error (a bad shape or value) -> tg.TensorValueError(TensorError, ValueError)
//   tg::IndexError                   -> tg.TensorIndexError(TensorError, IndexError)
//   tg::TypeError                    -> tg.TensorTypeError(TensorError, TypeError)
//   tg::IOError -> OSError, tg::RuntimeError -> RuntimeError, tg::JitError -> tg.JitError (a RuntimeError),
//   tg::InternalError (our bug) -> RuntimeError.
// A pybind11 cast_error (a value of the wrong Python type, e.g. pad(value="x")) -> TypeError. pybind11 itself maps
// std::bad_alloc to MemoryError and other std::exceptions to RuntimeError.
#include "bindings.h"

namespace tgpy {

namespace {

// A new exception class `tg.<name>` deriving from every one of `bases`, added to the module.
py::object new_exception(py::module_& m, const char* name, std::initializer_list<py::handle> bases, const char* doc) {
  py::tuple b(bases.size());
  size_t i = 0;
  for (py::handle h : bases) b[i++] = py::reinterpret_borrow<py::object>(h);
  std::string qualified = std::string("tg.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, b.ptr(), nullptr);
  if (!cls) throw py::error_already_set();
  py::object o = py::reinterpret_steal<py::object>(cls);
  m.attr(name) = o;
  return o;
}

}  // namespace

void bind_errors(py::module_& m) {
  // tinygrad's JitError: a RuntimeError
  static py::exception<tg::JitError> jit_error(m, "JitError", PyExc_RuntimeError);
  // Kept alive for the interpreter's life, as pybind11's own exception objects are.
  static PyObject* tensor_error = new_exception(m, "TensorError", {PyExc_RuntimeError, PyExc_AssertionError},
                                                "A mistake in a use of tg (a shape, value, index or dtype): also a RuntimeError "
                                                "(torch's type) and an AssertionError (tinygrad v0.9's)").release().ptr();
  static PyObject* value_error = new_exception(m, "TensorValueError", {tensor_error, PyExc_ValueError},
                                               "A bad shape or value (a ValueError, RuntimeError and AssertionError)").release().ptr();
  static PyObject* index_error = new_exception(m, "TensorIndexError", {tensor_error, PyExc_IndexError},
                                               "An index, axis or dim out of range (an IndexError, RuntimeError and AssertionError)")
                                     .release().ptr();
  static PyObject* type_error = new_exception(m, "TensorTypeError", {tensor_error, PyExc_TypeError},
                                              "A wrong dtype or kind of argument (a TypeError, RuntimeError and AssertionError)")
                                    .release().ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tg::JitError& e) {
      PyErr_SetString(jit_error.ptr(), e.what());
    } catch (const tg::IndexError& e) {
      PyErr_SetString(index_error, e.what());
    } catch (const tg::TypeError& e) {
      PyErr_SetString(type_error, e.what());
    } catch (const tg::IOError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const tg::RuntimeError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const tg::Error& e) {
      PyErr_SetString(value_error, e.what());
    } catch (const tg::InternalError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const py::cast_error& e) {  // a Python value of the wrong type where a number/str/bool was needed
      PyErr_SetString(PyExc_TypeError, e.what());
    }
  });
}

}  // namespace tgpy
