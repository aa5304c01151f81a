// The extension module tg._tg: everything the Python package `tg` runs in C++. Users import `tg`
// (python/tg/__init__.py), which re-exports these names beside the pure-Python parts.
#include "bindings.h"

PYBIND11_MODULE(_tg, m) {
  m.doc() = "tinygrad.cpp's C++ core (import the package `tg`, not this module)";
  tgpy::bind_errors(m);
  tgpy::bind_dtype(m);
  tgpy::bind_helpers(m);
  py::class_<tg::Tensor> tensor(m, "Tensor", "A lazy n-dimensional array with tinygrad's API");
  tgpy::bind_tensor(m, tensor);
  tgpy::bind_tensor_ops(tensor);
  tgpy::bind_tensor_operators(tensor);
  tgpy::bind_tensor_index(tensor);
  tgpy::bind_nn(m);
  tgpy::bind_jit(m);
}
