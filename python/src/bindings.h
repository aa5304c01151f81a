// The _tg extension: shared declarations.
//
// One bind_* function per file registers one part of the API on the module; the conversions below turn
// Python arguments into what the C++ API takes (tinygrad's Python conventions: `reshape(2, 3)` and
// `reshape((2, 3))`, `axis=None|int|tuple`, dtypes as tg.dtypes members or names, devices as strings or
// None). Anything a Python caller passes that does not fit raises TypeError or ValueError, never crashes.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include <tg/datasets.h>
#include <tg/tg.h>

namespace py = pybind11;

// tg::Shape crosses as a list of ints, as std::vector<int64_t> does.
namespace pybind11::detail {
template <> struct type_caster<tg::Shape> : list_caster<tg::Shape, int64_t> {};
}  // namespace pybind11::detail

namespace tgpy {

void bind_errors(py::module_& m);    // errors.cpp: tg::Error kinds -> Python exception types
void bind_dtype(py::module_& m);     // dtype.cpp: DType and the list of dtypes
void bind_helpers(py::module_& m);   // helpers.cpp: Context variables, getenv, GlobalCounters, Device
void bind_tensor(py::module_& m, py::class_<tg::Tensor>& cls);         // tensor.cpp: data, autograd, creation
void bind_tensor_ops(py::class_<tg::Tensor>& cls);                    // tensor_ops.cpp: math, reductions, movement, nn
void bind_tensor_operators(py::class_<tg::Tensor>& cls);              // tensor_operators.cpp: + - * / ... and in-place forms
void bind_tensor_index(py::class_<tg::Tensor>& cls);                  // tensor_index.cpp: __getitem__ / __setitem__
void bind_nn(py::module_& m);        // nn.cpp: optimizers, safetensors, datasets
void bind_jit(py::module_& m);       // jit.cpp: the C++ TinyJit (python/tg/jit.py is the decorator)

// ---- conversions (convert.cpp) -------------------------------------------------------------------------
// A tg DType, or a dtype name ("float32"); TypeError otherwise.
tg::DType to_dtype(py::handle h);
std::optional<tg::DType> to_opt_dtype(py::handle h);  // None -> nullopt
// None -> "" (the default device); a str is canonicalized by the C++ API when used.
std::string to_device(py::handle h);
// A Python int that must fit int64 (numpy integers too, through __index__); TypeError/OverflowError.
int64_t to_int(py::handle h, const char* what);
// The shape given as *args: f(2, 3), f((2, 3)), f([2, 3]) or f() for a 0-d shape.
tg::Shape shape_from_args(const py::args& args, const char* op);
// An int or a sequence of ints.
std::vector<int64_t> int_list(py::handle h, const char* what);
// axis=None -> {} (all axes), an int, or a sequence of ints.
std::vector<int> axes(py::handle axis, const char* op);

// Python data -> Tensor: a Tensor (kept), a bool/int/float scalar, a (nested) list or tuple, a NumPy array
// (any layout, through the buffer protocol, no per-element Python), bytes (uint8), or None (empty).
// `dtype` casts the result when given.
tg::Tensor tensor_from_python(py::handle data, std::optional<tg::DType> dtype, const std::string& device);
// The right operand of a binary op: a Tensor as is; a Python scalar as tinygrad does (an int keeps an int
// or float tensor's dtype, a float makes an int tensor float; for true_division an int is a float, at
// its value), a NumPy array or list through Tensor(...).
// nullopt when `other` is none of these (the operator then returns NotImplemented).
std::optional<tg::Tensor> operand(const tg::Tensor& self, py::handle other, bool true_division = false);
// h as a Tensor; a TypeError naming `op` for anything else.
tg::Tensor as_tensor(py::handle h, const char* op);
// Like operand, but a TypeError naming `op` instead of nullopt.
tg::Tensor operand_or_throw(const tg::Tensor& self, py::handle other, const char* op, bool true_division = false);

// Tensor -> Python data. Realize with the GIL released; the NumPy array owns a copy of the data.
py::array to_numpy(const tg::Tensor& t);
py::object numpy_dtype(tg::DType d);
std::optional<tg::DType> dtype_from_numpy(py::handle np_dtype);  // nullopt for kinds tg has no dtype for

}  // namespace tgpy
