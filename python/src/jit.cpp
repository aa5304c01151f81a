// TinyJit for Python (tg/jit.h): the C++ TinyJit around a Python callable that takes the list of input
// Tensors and returns a list of Tensors. python/tg/jit.py wraps it as tinygrad's decorator (arguments and
// return values in any structure). A call runs with the GIL released; the callable takes it back when
// the C++ side runs the function (warm-up and capture), so a replay holds no Python lock at all.
#include "bindings.h"

namespace tgpy {

void bind_jit(py::module_& m) {
  py::class_<tg::TinyJit>(m, "_TinyJit", "The C++ TinyJit; use tg.TinyJit")
      .def(py::init([](py::function fn, const std::string& name) {
             // shared: std::function copies the callable, and a py::function may only be copied or freed under the GIL
             auto f = std::shared_ptr<py::function>(new py::function(std::move(fn)), [](py::function* p) {
               py::gil_scoped_acquire gil;
               delete p;
             });
             return tg::TinyJit([f](const std::vector<tg::Tensor>& in) {
               py::gil_scoped_acquire gil;
               return (*f)(in).cast<std::vector<tg::Tensor>>();
             }, name);
           }),
           py::arg("fn"), py::arg("name"))
      .def("__call__", [](tg::TinyJit& j, const std::vector<tg::Tensor>& in) { return j(in); }, py::arg("inputs"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("cnt", &tg::TinyJit::cnt)
      .def_property_readonly("captured_kernels", &tg::TinyJit::captured_kernels)
      .def_property_readonly("planned_bytes", &tg::TinyJit::planned_bytes)
      .def_property_readonly("unplanned_bytes", &tg::TinyJit::unplanned_bytes)
      .def("reset", &tg::TinyJit::reset);
}

}  // namespace tgpy
