// tg.Tensor, part 3: Python's operators. Binary operators take a Tensor, a Python scalar (an int keeps
// an int or float tensor's dtype, a float makes an int tensor float, as tinygrad), a NumPy array or a list,
// on either side; anything else gives NotImplemented, so Python raises its usual TypeError. Comparisons
// return bool tensors. The in-place forms assign the result to the tensor (tinygrad: `a += b` is
// `a.assign(a + b)`), so every handle to it sees the new value and dtype/shape must not change.
// __array_ufunc__ = None makes NumPy defer to these (`np_array + tensor` is a Tensor).
#include "bindings.h"

namespace tgpy {

namespace {

using tg::Tensor;
using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);

py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }

// The operator `name`, its reflected form `rname` and in-place form `iname` (each optional) computing fn.
// true_division: an int operand is taken at its value, as a float (operand()).
void binary(py::class_<Tensor>& cls, const char* name, const char* rname, const char* iname, BinaryFn fn, bool true_division = false) {
  if (name)
    cls.def(name, [fn, true_division](const Tensor& t, py::handle x) -> py::object {
      auto o = operand(t, x, true_division);
      return o ? py::cast(fn(t, *o)) : not_implemented();
    }, py::is_operator());
  if (rname)
    cls.def(rname, [fn, true_division](const Tensor& t, py::handle x) -> py::object {
      auto o = operand(t, x, true_division);
      return o ? py::cast(fn(*o, t)) : not_implemented();
    }, py::is_operator());
  if (iname)
    cls.def(iname, [fn, true_division](py::object self, py::handle x) -> py::object {
      Tensor& t = self.cast<Tensor&>();
      auto o = operand(t, x, true_division);
      if (!o) return not_implemented();
      t.assign(fn(t, *o));
      return self;  // the same Python object: `a += b` keeps `a` bound to it
    }, py::is_operator());
}

Tensor shift(const Tensor& t, py::handle x, bool left) {
  int64_t bits = to_int(x, left ? "<<: bits" : ">>: bits");
  return left ? t.lshift(bits) : t.rshift(bits);
}

}  // namespace

void bind_tensor_operators(py::class_<Tensor>& cls) {
  binary(cls, "__add__", "__radd__", "__iadd__", [](const Tensor& a, const Tensor& b) { return a.add(b); });
  binary(cls, "__sub__", "__rsub__", "__isub__", [](const Tensor& a, const Tensor& b) { return a.sub(b); });
  binary(cls, "__mul__", "__rmul__", "__imul__", [](const Tensor& a, const Tensor& b) { return a.mul(b); });
  binary(cls, "__truediv__", "__rtruediv__", "__itruediv__", [](const Tensor& a, const Tensor& b) { return a.div(b); }, true);
  binary(cls, "__floordiv__", "__rfloordiv__", "__ifloordiv__", [](const Tensor& a, const Tensor& b) { return a.floor_divide(b); });
  binary(cls, "__mod__", "__rmod__", "__imod__", [](const Tensor& a, const Tensor& b) { return a.mod(b); });
  // t ** number is Tensor::pow(double), as t.pow(number): the same dtype rules and errors either way
  cls.def("__pow__", [](const Tensor& t, py::handle x) -> py::object {
    if ((PyLong_Check(x.ptr()) || PyFloat_Check(x.ptr())) && !PyBool_Check(x.ptr())) return py::cast(t.pow(x.cast<double>()));
    auto o = operand(t, x);
    return o ? py::cast(t.pow(*o)) : not_implemented();
  }, py::is_operator());
  binary(cls, nullptr, "__rpow__", nullptr, [](const Tensor& a, const Tensor& b) { return a.pow(b); });
  cls.def("__ipow__", [](py::object self, py::handle x) -> py::object {
    py::object r = self.attr("__pow__")(x);
    if (r.is(py::reinterpret_borrow<py::object>(Py_NotImplemented))) return r;
    self.cast<Tensor&>().assign(r.cast<Tensor>());
    return self;
  }, py::is_operator());
  binary(cls, "__matmul__", "__rmatmul__", "__imatmul__", [](const Tensor& a, const Tensor& b) { return a.matmul(b); });
  binary(cls, "__and__", "__rand__", "__iand__", [](const Tensor& a, const Tensor& b) { return a.bitwise_and(b); });
  binary(cls, "__or__", "__ror__", "__ior__", [](const Tensor& a, const Tensor& b) { return a.bitwise_or(b); });
  binary(cls, "__xor__", "__rxor__", "__ixor__", [](const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); });
  // comparisons: Python reflects them itself (5 < t is t > 5)
  binary(cls, "__lt__", nullptr, nullptr, [](const Tensor& a, const Tensor& b) { return a.lt(b); });
  binary(cls, "__le__", nullptr, nullptr, [](const Tensor& a, const Tensor& b) { return a.le(b); });
  binary(cls, "__gt__", nullptr, nullptr, [](const Tensor& a, const Tensor& b) { return a.gt(b); });
  binary(cls, "__ge__", nullptr, nullptr, [](const Tensor& a, const Tensor& b) { return a.ge(b); });
  binary(cls, "__eq__", nullptr, nullptr, [](const Tensor& a, const Tensor& b) { return a.eq(b); });
  binary(cls, "__ne__", nullptr, nullptr, [](const Tensor& a, const Tensor& b) { return a.ne(b); });

  cls.def("__lshift__", [](const Tensor& t, py::handle x) { return shift(t, x, true); }, py::is_operator())
      .def("__rshift__", [](const Tensor& t, py::handle x) { return shift(t, x, false); }, py::is_operator())
      .def("__ilshift__", [](py::object self, py::handle x) {
        Tensor& t = self.cast<Tensor&>();
        t.assign(shift(t, x, true));
        return self;
      }, py::is_operator())
      .def("__irshift__", [](py::object self, py::handle x) {
        Tensor& t = self.cast<Tensor&>();
        t.assign(shift(t, x, false));
        return self;
      }, py::is_operator())
      .def("__neg__", &Tensor::neg)
      .def("__invert__", &Tensor::bitwise_not)
      .def("__abs__", &Tensor::abs)
      .def("__pos__", [](const Tensor& t) { return t; });
  cls.attr("__array_ufunc__") = py::none();
}

}  // namespace tgpy
