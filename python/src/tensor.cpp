// tg.Tensor, part 1: construction, data out (numpy/tolist/item), properties, autograd, realization and the
// creation functions (Tensor.zeros, Tensor.randn(2, 3), Tensor.arange...), with tinygrad's keywords.
//
// Kernels compile and run with the GIL released: realize, numpy, tolist, item, backward, __repr__.
// A Python object wraps a tg::Tensor handle; handles share data, grad and requires_grad, so `b = a`
// and the same tensor returned twice behave as Python references to one tinygrad Tensor.

#include <sstream>

#include "bindings.h"

namespace tgpy {

namespace {

using tg::Tensor;

// The dtype tinygrad infers for a Python fill value: bool, int -> default_int, float -> default_float.
tg::DType dtype_of_value(py::handle v) {
  if (PyBool_Check(v.ptr())) return tg::dtypes::bool_;
  if (PyFloat_Check(v.ptr())) return tg::dtypes::default_float;
  return tg::dtypes::default_int;
}
double to_double(py::handle v, const char* what) {
  if (PyBool_Check(v.ptr()) || PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr()) || py::hasattr(v, "__float__")) {
    double d = PyFloat_AsDouble(v.ptr());
    if (PyErr_Occurred()) throw py::error_already_set();
    return d;
  }
  throw py::type_error(std::string(what) + " must be a number, got " + std::string(py::str(py::type::handle_of(v).attr("__name__"))));
}

// Realizes and reads back: one element as the Python scalar of its kind.
py::object item(const Tensor& t) {
  if (t.numel() != 1)
    throw tg::Error("item: tensor of shape " + std::string(py::str(py::tuple(py::cast(t.shape())))) + " has " + std::to_string(t.numel()) +
                          " elements, expected exactly 1");
  return to_numpy(t).attr("item")();
}

std::string repr(const Tensor& t) {
  std::ostringstream os;
  {
    py::gil_scoped_release release;
    os << t;
  }
  return os.str();
}

// A creation function over a shape given as *args: f(2, 3) or f((2, 3)).
template <class F> auto shaped(const char* op, F f) {
  return [op, f](py::args args, py::kwargs kw) -> Tensor { return f(shape_from_args(args, op), kw); };
}
// keyword `name` of `kw`, or `def` when absent; unknown keywords are a TypeError (checked by `allow`).
py::object kwarg(const py::kwargs& kw, const char* name, py::object def = py::none()) {
  return kw.contains(name) ? py::reinterpret_borrow<py::object>(kw[name]) : def;
}
void allow(const py::kwargs& kw, std::initializer_list<const char*> names, const char* op) {
  for (auto [k, v] : kw) {
    (void)v;
    std::string key = py::str(k);
    bool ok = false;
    for (const char* n : names) ok = ok || key == n;
    if (!ok) throw py::type_error(std::string(op) + "() got an unexpected keyword argument '" + key + "'");
  }
}
tg::DType kw_dtype(const py::kwargs& kw, tg::DType def) { return to_opt_dtype(kwarg(kw, "dtype")).value_or(def); }
std::string kw_device(const py::kwargs& kw) { return to_device(kwarg(kw, "device")); }
// requires_grad= on creation functions, as tinygrad.
Tensor with_grad(Tensor t, const py::kwargs& kw) {
  py::object rg = kwarg(kw, "requires_grad");
  if (!rg.is_none()) t.requires_grad_(rg.cast<bool>());
  return t;
}
// Tensor.zeros(2, 3, dtype=..., device=..., requires_grad=...) for a creation function make(shape, dtype, device)
auto filled(const char* op, Tensor (*make)(const tg::Shape&, tg::DType, const std::string&)) {
  return shaped(op, [op, make](const tg::Shape& s, const py::kwargs& kw) {
    allow(kw, {"dtype", "device", "requires_grad"}, op);
    return with_grad(make(s, kw_dtype(kw, tg::dtypes::default_float), kw_device(kw)), kw);
  });
}

}  // namespace

void bind_tensor(py::module_&, py::class_<Tensor>& cls) {
  cls.def(py::init([](py::object data, py::object device, py::object dtype, py::object requires_grad) {
            Tensor t = tensor_from_python(data, to_opt_dtype(dtype), to_device(device));
            if (py::isinstance<Tensor>(data)) t = t.detach();  // a new tensor (own grad, requires_grad), same data
            if (!requires_grad.is_none()) t.requires_grad_(requires_grad.cast<bool>());
            return t;
          }),
          py::arg("data") = py::none(), py::arg("device") = py::none(), py::arg("dtype") = py::none(),
          py::arg("requires_grad") = py::none());

  // ---- data out --------------------------------------------------------------------------------------
  cls.def("numpy", &to_numpy, "the realized data as a new NumPy array")
      .def("tolist", [](const Tensor& t) { return to_numpy(t).attr("tolist")(); })
      .def("item", &item)
      .def("data", [](const Tensor& t) { return py::memoryview(to_numpy(t)); }, "the realized data as a memoryview")
      .def("__array__", [](const Tensor& t, py::object dtype, py::object) {
             py::array a = to_numpy(t);
             return dtype.is_none() ? py::object(a) : a.attr("astype")(dtype);
           }, py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def("__repr__", &repr)
      .def("__str__", &repr)
      .def("__bool__", [](const Tensor& t) {
        if (t.numel() != 1)
          throw std::runtime_error("the truth value of a tensor with " + std::to_string(t.numel()) + " elements is ambiguous");
        int truth = PyObject_IsTrue(item(t).ptr());
        if (truth < 0) throw py::error_already_set();
        return truth != 0;
      })
      .def("__float__", [](const Tensor& t) { return py::float_(item(t)); })
      .def("__int__", [](const Tensor& t) { return py::int_(item(t)); })
      .def("__index__", [](const Tensor& t) {
        if (!t.dtype().is_int() && !t.dtype().is_bool()) throw py::type_error("only integer tensors of one element can be an index, got " + t.dtype().name());
        return py::int_(item(t));
      })
      .def("__len__", [](const Tensor& t) {
        if (t.ndim() == 0) throw py::type_error("len() of a 0-d tensor");
        return t.shape()[0];
      })
      .def("__hash__", [](py::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); })
      .def("__iter__", [](py::object self) {
        const Tensor& t = self.cast<const Tensor&>();
        if (t.ndim() == 0) throw py::type_error("iteration over a 0-d tensor");
        py::list rows;
        for (int64_t i = 0; i < t.shape()[0]; i++) rows.append(t[i]);
        return py::iter(rows);
      });

  // ---- properties ------------------------------------------------------------------------------------
  cls.def_property_readonly("shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("device", &Tensor::device)
      .def_property_readonly("ndim", &Tensor::ndim)
      .def_property_readonly("T", &Tensor::T)
      .def("numel", &Tensor::numel)
      .def("size", [](const Tensor& t, py::object dim) -> py::object {
        if (dim.is_none()) return py::tuple(py::cast(t.shape()));
        return py::int_(t.size(static_cast<int>(to_int(dim, "size: dim"))));
      }, py::arg("dim") = py::none())
      .def("element_size", [](const Tensor& t) { return t.dtype().itemsize(); })
      .def("nbytes", &Tensor::nbytes)
      .def("is_floating_point", [](const Tensor& t) { return t.dtype().is_float(); });

  // ---- autograd --------------------------------------------------------------------------------------
  cls.def_property("requires_grad", &Tensor::requires_grad,
                   [](Tensor& t, bool v) { t.requires_grad_(v); })
      .def("requires_grad_", [](py::object self, bool v) {
        self.cast<Tensor&>().requires_grad_(v);
        return self;
      }, py::arg("requires_grad") = true)
      .def_property("grad", [](const Tensor& t) -> std::optional<Tensor> {
                      if (!t.has_grad()) return std::nullopt;
                      return t.grad();
                    },
                    [](Tensor& t, std::optional<Tensor> g) { t.set_grad(g); })
      .def("backward", [](py::object self, std::optional<Tensor> gradient) {
             Tensor& t = self.cast<Tensor&>();
             {
               py::gil_scoped_release release;
               gradient ? t.backward(*gradient) : t.backward();
             }
             return self;
           }, py::arg("gradient") = py::none())
      .def("detach", &Tensor::detach)
      .def("replace", [](py::object self, const Tensor& x) {
        self.cast<Tensor&>().replace(x);
        return self;
      }, py::arg("x"))
      .def("assign", [](py::object self, py::object x) {
        Tensor& t = self.cast<Tensor&>();
        // as tinygrad: a Tensor as it is, other data as Tensor(x, dtype=self.dtype)
        t.assign(py::isinstance<Tensor>(x) ? x.cast<Tensor>() : tensor_from_python(x, t.dtype(), t.device()));
        return self;
      }, py::arg("x"))
      .def_property_static("training", [](py::object) { return Tensor::training; },
                           [](py::object, bool v) { Tensor::training = v; })
      .def_property_static("no_grad", [](py::object) { return Tensor::no_grad; },
                           [](py::object, bool v) { Tensor::no_grad = v; });

  // ---- realization -----------------------------------------------------------------------------------
  cls.def("realize", [](py::object self, py::args more) {
        std::vector<Tensor> all{self.cast<Tensor>()};
        for (py::handle h : more) all.push_back(as_tensor(h, "realize"));
        {
          py::gil_scoped_release release;
          Tensor::corealize(all);
        }
        return self;
      }, "realizes this tensor and any given with it in one schedule")
      .def("contiguous", &Tensor::contiguous)
      .def("contiguous_backward", &Tensor::contiguous_backward)
      .def("to", [](const Tensor& t, py::object device) { return t.to(to_device(device)); }, py::arg("device"))
      .def_static("corealize", [](const std::vector<Tensor>& ts) {
        py::gil_scoped_release release;
        Tensor::corealize(ts);
      }, py::arg("tensors"));

  // ---- creation --------------------------------------------------------------------------------------
  cls.def_static("empty", filled("empty", &Tensor::empty))
      .def_static("zeros", filled("zeros", &Tensor::zeros))
      .def_static("ones", filled("ones", &Tensor::ones))
      .def_static("full", [](py::object shape, py::object fill_value, py::object dtype, py::object device, py::object rg) {
        tg::DType d = to_opt_dtype(dtype).value_or(dtype_of_value(fill_value));
        Tensor t = Tensor::full(int_list(shape, "full: shape"), to_double(fill_value, "full: fill_value"), d, to_device(device));
        if (!rg.is_none()) t.requires_grad_(rg.cast<bool>());
        return t;
      }, py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
         py::arg("requires_grad") = py::none())
      .def_static("arange", [](py::object start, py::object stop, py::object step, py::object dtype, py::object device) {
        if (stop.is_none()) { stop = start; start = py::int_(0); }
        bool any_float = PyFloat_Check(start.ptr()) || PyFloat_Check(stop.ptr()) || PyFloat_Check(step.ptr());
        std::optional<tg::DType> d = to_opt_dtype(dtype);
        if (!d && any_float) d = tg::dtypes::default_float;
        return Tensor::arange(to_double(start, "arange: start"), to_double(stop, "arange: stop"), to_double(step, "arange: step"), d,
                              to_device(device));
      }, py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = 1, py::arg("dtype") = py::none(), py::arg("device") = py::none())
      .def_static("linspace", [](double start, double stop, int64_t steps, py::object dtype, py::object device) {
        return Tensor::linspace(start, stop, steps, to_opt_dtype(dtype).value_or(tg::dtypes::default_float), to_device(device));
      }, py::arg("start"), py::arg("stop"), py::arg("steps"), py::arg("dtype") = py::none(), py::arg("device") = py::none())
      .def_static("eye", [](int64_t n, py::object m, py::object dtype, py::object device) {
        tg::DType dt = to_opt_dtype(dtype).value_or(tg::dtypes::default_float);
        if (m.is_none()) return Tensor::eye(n, dt, to_device(device));
        return Tensor::eye(n, to_int(m, "eye: m"), dt, to_device(device));
      }, py::arg("n"), py::arg("m") = py::none(), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none())
      .def("full_like", [](const Tensor& t, py::object v, py::object dtype) {
        return t.full_like(to_double(v, "full_like: fill_value"), to_opt_dtype(dtype));
      }, py::arg("fill_value"), py::arg("dtype") = py::none())
      .def("zeros_like", [](const Tensor& t, py::object dtype) { return t.zeros_like(to_opt_dtype(dtype)); }, py::arg("dtype") = py::none())
      .def("ones_like", [](const Tensor& t, py::object dtype) { return t.ones_like(to_opt_dtype(dtype)); }, py::arg("dtype") = py::none())
      .def("rand_like", [](const Tensor& t, py::object dtype) { return t.rand_like(to_opt_dtype(dtype)); }, py::arg("dtype") = py::none())
      .def_static("manual_seed", &Tensor::manual_seed, py::arg("seed") = 0)
      .def_static("rand", filled("rand", &Tensor::rand))
      .def_static("randn", filled("randn", &Tensor::randn))
      .def_static("randint", shaped("randint", [](const tg::Shape& s, const py::kwargs& kw) {
        allow(kw, {"low", "high", "dtype", "device"}, "randint");
        return Tensor::randint(s, to_int(kwarg(kw, "low", py::int_(0)), "randint: low"), to_int(kwarg(kw, "high", py::int_(10)), "randint: high"),
                               kw_dtype(kw, tg::dtypes::int32), kw_device(kw));
      }))
      .def_static("normal", shaped("normal", [](const tg::Shape& s, const py::kwargs& kw) {
        allow(kw, {"mean", "std", "dtype", "device", "requires_grad"}, "normal");
        return with_grad(Tensor::normal(s, to_double(kwarg(kw, "mean", py::float_(0.0)), "normal: mean"),
                                        to_double(kwarg(kw, "std", py::float_(1.0)), "normal: std"),
                                        kw_dtype(kw, tg::dtypes::default_float), kw_device(kw)), kw);
      }))
      .def_static("uniform", shaped("uniform", [](const tg::Shape& s, const py::kwargs& kw) {
        allow(kw, {"low", "high", "dtype", "device", "requires_grad"}, "uniform");
        return with_grad(Tensor::uniform(s, to_double(kwarg(kw, "low", py::float_(0.0)), "uniform: low"),
                                         to_double(kwarg(kw, "high", py::float_(1.0)), "uniform: high"),
                                         kw_dtype(kw, tg::dtypes::default_float), kw_device(kw)), kw);
      }))
      .def_static("scaled_uniform", filled("scaled_uniform", &Tensor::scaled_uniform))
      .def_static("glorot_uniform", filled("glorot_uniform", &Tensor::glorot_uniform))
      .def_static("kaiming_uniform", shaped("kaiming_uniform", [](const tg::Shape& s, const py::kwargs& kw) {
        allow(kw, {"a", "dtype", "device", "requires_grad"}, "kaiming_uniform");
        return with_grad(Tensor::kaiming_uniform(s, to_double(kwarg(kw, "a", py::float_(0.01)), "kaiming_uniform: a"),
                                                 kw_dtype(kw, tg::dtypes::default_float), kw_device(kw)), kw);
      }))
      .def_static("kaiming_normal", shaped("kaiming_normal", [](const tg::Shape& s, const py::kwargs& kw) {
        allow(kw, {"a", "dtype", "device", "requires_grad"}, "kaiming_normal");
        return with_grad(Tensor::kaiming_normal(s, to_double(kwarg(kw, "a", py::float_(0.01)), "kaiming_normal: a"),
                                                kw_dtype(kw, tg::dtypes::default_float), kw_device(kw)), kw);
      }));
}

}  // namespace tgpy
