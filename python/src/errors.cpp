// tg's C++ errors -> the Python exceptions a Python user expects, with the same message:
//   tg::IndexError -> IndexError, tg::TypeError -> TypeError, tg::IOError -> OSError, tg::RuntimeError -> RuntimeError,
//   tg::JitError -> tg.JitError (a RuntimeError),
//   any other tg::Error (a bad shape or value) -> ValueError, tg::InternalError (our bug) -> RuntimeError.
// A pybind11 cast_error (a value of the wrong Python type, e.g. pad(value="x")) -> TypeError. pybind11 itself maps
// std::bad_alloc to MemoryError and other std::exceptions to RuntimeError.
#include "bindings.h"

namespace tgpy {

void bind_errors(py::module_& m) {
  // tinygrad's JitError: a RuntimeError
  static py::exception<tg::JitError> jit_error(m, "JitError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tg::JitError& e) {
      PyErr_SetString(jit_error.ptr(), e.what());
    } catch (const tg::IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const tg::TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const tg::IOError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const tg::RuntimeError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const tg::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const tg::InternalError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const py::cast_error& e) {  // a Python value of the wrong type where a number/str/bool was needed
      PyErr_SetString(PyExc_TypeError, e.what());
    }
  });
}

}  // namespace tgpy
