// Python values <-> the C++ API's arguments and tensors (see bindings.h for the rules).
//
// Lists are walked once in C++ (shape first, then the values into one host buffer); NumPy arrays are
// read through the buffer protocol in one copy, after NumPy makes them C-contiguous and native-endian
// if they are not. Every mismatch is a Python TypeError/ValueError/OverflowError raised here.

#include <cstring>

#include "bindings.h"
#include "runtime/device.h"

namespace tgpy {

namespace {

[[noreturn]] void type_error(const std::string& msg) { throw py::type_error(msg); }
[[noreturn]] void value_error(const std::string& msg) { throw py::value_error(msg); }

std::string type_name(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")); }

bool is_numpy_array(py::handle h) { return py::isinstance<py::array>(h); }
// A NumPy scalar (np.float32(1), np.int64(2), np.bool_(True)): it has a dtype and no dims.
bool is_numpy_scalar(py::handle h) {
  if (py::isinstance<tg::Tensor>(h) || !py::hasattr(h, "dtype")) return false;  // cheap tests first: no NumPy import
  return py::isinstance(h, py::module_::import("numpy").attr("generic"));
}

// The scalar kinds a Python value can have, in tinygrad's order of inference: bool < int < float.
enum class Kind { Bool, Int, Float };

// A Python bool/int/float (or a NumPy scalar of those kinds) as (kind, value); nullopt for anything else.
struct Scalar { Kind kind; int64_t i; double f; };
std::optional<Scalar> scalar_of(py::handle h) {
  if (PyBool_Check(h.ptr())) { bool b = h.ptr() == Py_True; return Scalar{Kind::Bool, b, b ? 1.0 : 0.0}; }
  if (PyLong_Check(h.ptr())) { int64_t i = to_int(h, "Tensor value"); return Scalar{Kind::Int, i, static_cast<double>(i)}; }
  if (PyFloat_Check(h.ptr())) { double f = PyFloat_AsDouble(h.ptr()); return Scalar{Kind::Float, 0, f}; }
  if (is_numpy_scalar(h)) {
    std::string kind = py::str(h.attr("dtype").attr("kind"));
    if (kind == "b") return scalar_of(py::bool_(h.attr("item")()));
    if (kind == "i" || kind == "u") return scalar_of(h.attr("item")());
    if (kind == "f") return Scalar{Kind::Float, 0, h.attr("item")().cast<double>()};
  }
  return std::nullopt;
}

// A nested list: its shape, found along the first elements, then every leaf checked against it.
struct ListData {
  tg::Shape shape;
  std::vector<double> f;    // every value as a double (used when any is a float)
  std::vector<int64_t> i;   // every value as an int64 (used otherwise)
  Kind kind = Kind::Bool;   // the widest kind seen
};

bool is_seq(py::handle h) { return PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()); }

void walk(py::handle h, size_t depth, ListData& d) {
  if (depth == d.shape.size()) {
    auto s = scalar_of(h);
    if (!s) {
      if (is_seq(h)) value_error("Tensor: the nested list is ragged (a list where a number was expected at depth " + std::to_string(depth) + ")");
      type_error("Tensor: cannot make a tensor from a list holding " + type_name(h) + " (expected bool, int or float)");
    }
    d.kind = std::max(d.kind, s->kind);
    d.f.push_back(s->f);
    d.i.push_back(s->i);
    return;
  }
  if (!is_seq(h)) value_error("Tensor: the nested list is ragged (a number where a list of " + std::to_string(d.shape[depth]) + " was expected at depth " + std::to_string(depth) + ")");
  py::sequence seq = py::reinterpret_borrow<py::sequence>(h);
  if (static_cast<int64_t>(seq.size()) != d.shape[depth])
    value_error("Tensor: the nested list is ragged (a list of " + std::to_string(seq.size()) + " where " + std::to_string(d.shape[depth]) +
                " were expected at depth " + std::to_string(depth) + ")");
  for (py::handle x : seq) walk(x, depth + 1, d);
}

tg::Tensor from_list(py::handle data, std::optional<tg::DType> dtype, const std::string& device) {
  ListData d;
  for (py::handle h = data; is_seq(h);) {
    py::sequence s = py::reinterpret_borrow<py::sequence>(h);
    d.shape.push_back(static_cast<int64_t>(s.size()));
    if (s.size() == 0) break;
    h = s[0];
  }
  walk(data, 0, d);
  if (d.f.empty()) d.kind = Kind::Float;  // Tensor([]) is float32, as tinygrad
  tg::Tensor t = [&] {
    if (d.kind == Kind::Float) return tg::Tensor::from_host(d.f.data(), d.f.size(), d.shape, tg::dtypes::float64, device);
    if (d.kind == Kind::Int) return tg::Tensor::from_host(d.i.data(), d.i.size(), d.shape, tg::dtypes::int64, device);
    std::vector<uint8_t> b(d.i.begin(), d.i.end());
    return tg::Tensor::from_host(b.data(), b.size(), d.shape, tg::dtypes::bool_, device);
  }();
  tg::DType want = dtype ? *dtype : d.kind == Kind::Float ? tg::dtypes::default_float
                                  : d.kind == Kind::Int   ? tg::dtypes::default_int
                                                          : tg::dtypes::bool_;
  return t.dtype() == want ? t : t.cast(want);
}

tg::Tensor from_numpy(py::handle data, std::optional<tg::DType> dtype, const std::string& device) {
  py::array arr = py::reinterpret_borrow<py::array>(data);
  py::object np_dtype = arr.attr("dtype");
  std::optional<tg::DType> dt = dtype_from_numpy(np_dtype);
  if (!dt)
    type_error("Tensor: NumPy dtype " + std::string(py::str(np_dtype)) +
               " is not supported (bool, int8..int64, uint8..uint64, float16, float32, float64 are)");
  bool native = std::string(py::str(np_dtype.attr("byteorder"))) != ">";
  if (!native || !(arr.flags() & py::array::c_style))
    arr = py::module_::import("numpy").attr("ascontiguousarray")(arr, np_dtype.attr("newbyteorder")("="));
  tg::Shape shape(arr.shape(), arr.shape() + arr.ndim());
  tg::Tensor t = tg::Tensor::from_host(arr.data(), static_cast<size_t>(arr.size()), shape, *dt, device);
  return dtype && *dtype != *dt ? t.cast(*dtype) : t;
}

}  // namespace

int64_t to_int(py::handle h, const char* what) {
  if (PyFloat_Check(h.ptr())) type_error(std::string(what) + " must be an int, got float");
  PyObject* idx = PyNumber_Index(h.ptr());  // int, bool, NumPy integers, anything with __index__
  if (!idx) {
    PyErr_Clear();
    type_error(std::string(what) + " must be an int, got " + type_name(h));
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
  Py_DECREF(idx);
  if (overflow) {
    PyErr_SetString(PyExc_OverflowError, (std::string(what) + " does not fit in int64").c_str());
    throw py::error_already_set();
  }
  return v;
}

tg::DType to_dtype(py::handle h) {
  if (py::isinstance<tg::DType>(h)) return h.cast<tg::DType>();
  if (py::isinstance<py::str>(h)) {
    try {
      return tg::dtypes::from_name(h.cast<std::string>());
    } catch (const tg::Error& e) {
      type_error(e.what());
    }
  }
  type_error("dtype must be a tg.dtypes member or a dtype name, got " + type_name(h));
}

std::optional<tg::DType> to_opt_dtype(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_dtype(h);
}

std::string to_device(py::handle h) {
  if (h.is_none()) return "";
  if (!py::isinstance<py::str>(h)) type_error("device must be a str or None, got " + type_name(h));
  return tg::Device::canonicalize(h.cast<std::string>());
}

std::vector<int64_t> int_list(py::handle h, const char* what) {
  if (is_seq(h)) {
    std::vector<int64_t> v;
    for (py::handle x : py::reinterpret_borrow<py::sequence>(h)) v.push_back(to_int(x, what));
    return v;
  }
  return {to_int(h, what)};
}

tg::Shape shape_from_args(const py::args& args, const char* op) {
  std::string what = std::string(op) + ": shape";
  if (args.size() == 1 && is_seq(args[0])) return int_list(args[0], what.c_str());
  tg::Shape shape;
  for (py::handle x : args) shape.push_back(to_int(x, what.c_str()));
  return shape;
}

std::vector<int> axes(py::handle axis, const char* op) {
  if (axis.is_none()) return {};
  std::string what = std::string(op) + ": axis";
  std::vector<int> out;
  for (int64_t a : int_list(axis, what.c_str())) {
    if (a < INT32_MIN || a > INT32_MAX) throw tg::IndexError(what + " " + std::to_string(a) + " out of range");
    out.push_back(static_cast<int>(a));
  }
  if (out.empty()) value_error(what + " must not be an empty sequence (None means every axis)");
  return out;
}

tg::Tensor tensor_from_python(py::handle data, std::optional<tg::DType> dtype, const std::string& device) {
  if (py::isinstance<tg::Tensor>(data)) {
    tg::Tensor t = data.cast<tg::Tensor>();
    if (!device.empty() && t.device() != device) t = t.to(device);
    return dtype && *dtype != t.dtype() ? t.cast(*dtype) : t;
  }
  if (data.is_none()) return tg::Tensor::empty({0}, dtype.value_or(tg::dtypes::default_float), device);
  if (is_numpy_array(data)) return from_numpy(data, dtype, device);
  if (is_seq(data)) return from_list(data, dtype, device);
  if (PyBytes_Check(data.ptr())) {
    std::string b = data.cast<std::string>();
    tg::Tensor t = tg::Tensor::from_host(b.data(), b.size(), {static_cast<int64_t>(b.size())}, tg::dtypes::uint8, device);
    return dtype && *dtype != tg::dtypes::uint8 ? t.cast(*dtype) : t;
  }
  if (auto s = scalar_of(data)) {
    if (s->kind == Kind::Float) return tg::Tensor(s->f, dtype.value_or(tg::dtypes::default_float), device);
    if (s->kind == Kind::Int) return tg::Tensor(s->i, dtype.value_or(tg::dtypes::default_int), device);
    return tg::Tensor(s->i != 0, dtype.value_or(tg::dtypes::bool_), device);
  }
  type_error("Tensor: cannot make a tensor from " + type_name(data) +
             " (expected a Tensor, bool, int, float, a nested list or tuple, a NumPy array, bytes or None)");
}

std::optional<tg::Tensor> operand(const tg::Tensor& self, py::handle other, bool true_division) {
  if (py::isinstance<tg::Tensor>(other)) return other.cast<tg::Tensor>();
  if (PyBool_Check(other.ptr())) return tg::scalar_like(self, other.ptr() == Py_True ? 1 : 0, tg::dtypes::bool_);
  if (PyLong_Check(other.ptr()))  // true division takes the int at its value, as a float (as C++'s operator/)
    return tg::scalar_like(self, static_cast<double>(to_int(other, "operand")), true_division ? tg::dtypes::default_float : tg::dtypes::default_int);
  if (PyFloat_Check(other.ptr())) return tg::scalar_like(self, PyFloat_AsDouble(other.ptr()), tg::dtypes::default_float);
  if (is_numpy_array(other) || is_numpy_scalar(other) || is_seq(other)) return tensor_from_python(other, std::nullopt, self.device());
  return std::nullopt;
}

tg::Tensor as_tensor(py::handle h, const char* op) {
  if (!py::isinstance<tg::Tensor>(h)) type_error(std::string(op) + ": expected a Tensor, got " + type_name(h));
  return h.cast<tg::Tensor>();
}

tg::Tensor operand_or_throw(const tg::Tensor& self, py::handle other, const char* op, bool true_division) {
  if (auto t = operand(self, other, true_division)) return *t;
  type_error(std::string(op) + ": expected a Tensor or a number, got " + type_name(other));
}

// ---- NumPy ---------------------------------------------------------------------------------------------

// tg's scalar dtypes have NumPy's names ("bool", "int8" ... "float64"), so names translate both ways.
py::object numpy_dtype(tg::DType d) {
  if (d == tg::dtypes::void_) type_error("dtype void has no NumPy equivalent");
  return py::module_::import("numpy").attr("dtype")(d.name());
}

std::optional<tg::DType> dtype_from_numpy(py::handle np_dtype) {
  std::string name = py::str(np_dtype.attr("name"));  // byte order aside: ">f4" is "float32" too
  for (tg::DType d : tg::dtypes::all())
    if (d != tg::dtypes::void_ && d.name() == name) return d;
  return std::nullopt;  // complex, object, str, datetime...
}

py::array to_numpy(const tg::Tensor& t) {
  auto* data = new std::vector<uint8_t>();
  py::capsule owner(data, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
  {
    py::gil_scoped_release release;
    *data = t.bytes();
  }
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  if (data->empty()) return py::array(py::dtype::from_args(numpy_dtype(t.dtype())), shape);
  return py::array(py::dtype::from_args(numpy_dtype(t.dtype())), shape, data->data(), owner);
}

}  // namespace tgpy
