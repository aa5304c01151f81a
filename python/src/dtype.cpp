// tg.DType: a scalar dtype as a small immutable value (itemsize, name, comparisons, hashing), and the list
// of user-facing dtypes from which python/tg/dtype.py builds `dtypes`.
#include <pybind11/operators.h>

#include "bindings.h"

namespace tgpy {

void bind_dtype(py::module_& m) {
  py::class_<tg::DType>(m, "DType", "A scalar data type, as tinygrad's DType (use the members of tg.dtypes)")
      .def_property_readonly("itemsize", &tg::DType::itemsize, "bytes per element")
      .def_property_readonly("name", &tg::DType::name)
      .def_property_readonly("count", [](const tg::DType& d) { return d.count; })
      .def_property_readonly("np", [](const tg::DType& d) { return numpy_dtype(d); }, "the NumPy dtype")
      .def("is_float", &tg::DType::is_float)
      .def("is_int", &tg::DType::is_int)
      .def("is_unsigned", &tg::DType::is_unsigned)
      .def("is_bool", &tg::DType::is_bool)
      .def_property_readonly("min", &tg::DType::min)
      .def_property_readonly("max", &tg::DType::max)
      .def(py::self == py::self)
      .def(py::self != py::self)
      .def("__hash__", [](const tg::DType& d) { return std::hash<std::string>()(d.name()); })
      .def("__repr__", [](const tg::DType& d) { return "dtypes." + d.name(); })
      .def(py::pickle([](const tg::DType& d) { return d.name(); },
                      [](const std::string& name) { return tg::dtypes::from_name(name); }));
  m.def("all_dtypes", &tg::dtypes::all, "every user-facing scalar dtype");
  m.def("dtype_from_name", &tg::dtypes::from_name, py::arg("name"));
  m.def("least_upper_dtype", [](py::args ds) {
    std::vector<tg::DType> v;
    for (py::handle d : ds) v.push_back(to_dtype(d));
    return tg::least_upper_dtype(v);
  });
  m.def("least_upper_float", &tg::least_upper_float, py::arg("dtype"));
  m.def("dtype_from_numpy", [](py::object np_dtype) {
    np_dtype = py::module_::import("numpy").attr("dtype")(np_dtype);
    auto d = dtype_from_numpy(np_dtype);
    if (!d) throw py::type_error("NumPy dtype " + std::string(py::str(np_dtype)) + " has no tg dtype");
    return *d;
  }, py::arg("np_dtype"));
}

}  // namespace tgpy
