// The C++ parts of tg.nn: the optimizers (tinygrad's nn/optim.py, over lists of Tensors), the safetensors
// files (nn/state.py) and the idx dataset reader (nn/datasets.py). The layers and the walking of a model's
// attributes are Python (python/tg/nn/), calling Tensor ops.
#include "bindings.h"
#include "nn/torch_load.h"

namespace tgpy {

namespace {

using tg::Tensor;
namespace optim = tg::nn::optim;
using PV = tg::nn::detail::PickleValue;

// torch_load's object as Python values: dicts, lists, tuples, sets, numbers, strings, bytes and Tensors.
py::object to_python(const tg::nn::detail::TorchFile& tf, size_t v, int depth, const std::string& path) {
  if (depth >= 256) throw tg::Error("torch_load: " + path + ": the object is nested more than 256 levels deep (or refers to itself)");
  const PV& x = tf.values[v];
  auto items = [&](auto&& add) {
    for (size_t i : x.items) add(to_python(tf, i, depth + 1, path));
  };
  switch (x.kind) {
    case PV::Kind::None: return py::none();
    case PV::Kind::Bool: return py::bool_(x.i != 0);
    case PV::Kind::Int:
      if (x.big) return py::module_::import("builtins").attr("int").attr("from_bytes")(py::bytes(x.s), "little", py::arg("signed") = true);
      return py::int_(x.i);
    case PV::Kind::Float: return py::float_(x.f);
    case PV::Kind::Str: {
      PyObject* s = PyUnicode_DecodeUTF8(x.s.data(), static_cast<Py_ssize_t>(x.s.size()), "replace");
      if (!s) throw py::error_already_set();
      return py::reinterpret_steal<py::object>(s);
    }
    case PV::Kind::Bytes: return py::bytes(x.s);
    case PV::Kind::Global: return py::str(x.s);
    case PV::Kind::Tuple: {
      py::list l;
      items([&](py::object o) { l.append(o); });
      return py::tuple(l);
    }
    case PV::Kind::List: {
      py::list l;
      items([&](py::object o) { l.append(o); });
      return l;
    }
    case PV::Kind::Set: {
      py::set s;
      items([&](py::object o) { s.add(o); });
      return s;
    }
    case PV::Kind::Dict: {
      py::dict d;
      for (size_t j = 0; j + 1 < x.items.size(); j += 2)
        d[to_python(tf, x.items[j], depth + 1, path)] = to_python(tf, x.items[j + 1], depth + 1, path);
      return d;
    }
    case PV::Kind::Object:
      if (x.s == "tensor") return py::cast(tf.tensors[static_cast<size_t>(x.i)]);
      throw tg::Error("torch_load: " + path + ": a bare " + x.s + " (not inside a tensor) is not supported");
  }
  throw tg::Error("torch_load: " + path + ": unknown value");
}

}  // namespace

void bind_nn(py::module_& m) {
  // step() realizes every updated parameter and optimizer state: the GIL is released meanwhile.
  py::class_<optim::Optimizer>(m, "Optimizer", "Base of the optimizers: zero_grad(), step(), lr (a Tensor)")
      .def("zero_grad", &optim::Optimizer::zero_grad)
      .def("step", &optim::Optimizer::step, py::call_guard<py::gil_scoped_release>())
      .def("schedule_step", &optim::Optimizer::schedule_step, "the tensors step() realizes (assigned, not yet realized)")
      .def_readonly("params", &optim::Optimizer::params)
      .def_readonly("buffers", &optim::Optimizer::buffers)
      .def_readwrite("lr", &optim::Optimizer::lr);
  py::class_<optim::LARS, optim::Optimizer>(m, "LARS")
      .def(py::init<const std::vector<Tensor>&, double, double, double, bool, bool, double>(), py::arg("params"), py::arg("lr") = 0.001,
           py::arg("momentum") = 0.9, py::arg("weight_decay") = 1e-4, py::arg("nesterov") = false, py::arg("classic") = true,
           py::arg("tcoef") = 0.001)
      .def_readonly("momentum", &optim::LARS::momentum)
      .def_readonly("wd", &optim::LARS::wd)
      .def_readonly("nesterov", &optim::LARS::nesterov)
      .def_readonly("classic", &optim::LARS::classic)
      .def_readonly("tcoef", &optim::LARS::tcoef)
      .def_readonly("b", &optim::LARS::b);
  py::class_<optim::SGD, optim::LARS>(m, "SGD")
      .def(py::init<const std::vector<Tensor>&, double, double, double, bool, bool>(), py::arg("params"), py::arg("lr") = 0.001,
           py::arg("momentum") = 0.0, py::arg("weight_decay") = 0.0, py::arg("nesterov") = false, py::arg("classic") = false);
  py::class_<optim::LAMB, optim::Optimizer>(m, "LAMB")
      .def(py::init<const std::vector<Tensor>&, double, double, double, double, double, bool>(), py::arg("params"), py::arg("lr") = 0.001,
           py::arg("b1") = 0.9, py::arg("b2") = 0.999, py::arg("eps") = 1e-6, py::arg("weight_decay") = 0.0, py::arg("adam") = false)
      .def_readonly("b1", &optim::LAMB::b1)
      .def_readonly("b2", &optim::LAMB::b2)
      .def_readonly("eps", &optim::LAMB::eps)
      .def_readonly("wd", &optim::LAMB::wd)
      .def_readonly("adam", &optim::LAMB::adam)
      .def_readonly("b1_t", &optim::LAMB::b1_t)
      .def_readonly("b2_t", &optim::LAMB::b2_t)
      .def_readonly("m", &optim::LAMB::m)
      .def_readonly("v", &optim::LAMB::v);
  py::class_<optim::AdamW, optim::LAMB>(m, "AdamW")
      .def(py::init<const std::vector<Tensor>&, double, double, double, double, double>(), py::arg("params"), py::arg("lr") = 0.001,
           py::arg("b1") = 0.9, py::arg("b2") = 0.999, py::arg("eps") = 1e-8, py::arg("weight_decay") = 0.01);
  py::class_<optim::Adam, optim::LAMB>(m, "Adam")
      .def(py::init<const std::vector<Tensor>&, double, double, double, double>(), py::arg("params"), py::arg("lr") = 0.001,
           py::arg("b1") = 0.9, py::arg("b2") = 0.999, py::arg("eps") = 1e-8);

  // safetensors and .npy files. Loading reads the file with the GIL released.
  m.def("safe_load", &tg::nn::state::safe_load, py::arg("path"), py::call_guard<py::gil_scoped_release>());
  m.def("safe_load_metadata", &tg::nn::state::safe_load_metadata, py::arg("path"), py::call_guard<py::gil_scoped_release>());
  m.def("safe_save", &tg::nn::state::safe_save, py::arg("tensors"), py::arg("path"),
        py::arg("metadata") = std::map<std::string, std::string>{}, py::call_guard<py::gil_scoped_release>());
  m.def("torch_load", [](const std::string& path) {
    std::optional<tg::nn::detail::TorchFile> tf;
    {
      py::gil_scoped_release release;
      tf = tg::nn::detail::torch_load_file(path);
    }
    return to_python(*tf, tf->root, 0, path);
  }, py::arg("path"));
  m.def("npy_load", &tg::nn::state::npy_load, py::arg("path"), py::call_guard<py::gil_scoped_release>());
  m.def("npy_save", &tg::nn::state::npy_save, py::arg("tensor"), py::arg("path"), py::call_guard<py::gil_scoped_release>());

  // Datasets: the four Fashion-MNIST tensors, and one idx file.
  m.def("fashion_mnist", [](const std::string& dir, const std::string& device) {
    std::optional<tg::nn::datasets::MNISTLike> d;
    {
      py::gil_scoped_release release;
      d = tg::nn::datasets::fashion_mnist(dir, device);
    }
    return py::make_tuple(d->X_train, d->Y_train, d->X_test, d->Y_test);
  }, py::arg("dir") = "/usr/share/datasets/fashion-mnist", py::arg("device") = "");
  m.def("load_idx", &tg::nn::datasets::load_idx, py::arg("path"), py::arg("device") = "", py::call_guard<py::gil_scoped_release>());
}

}  // namespace tgpy
