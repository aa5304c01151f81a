// Settings and counters: Context (scoped overrides of DEBUG, NOOPT, BEAM...), the ContextVars themselves,
// GlobalCounters and Device, with tinygrad's names. python/tg/helpers.py re-exports them.
#include <memory>

#include "bindings.h"
#include "runtime/device.h"

namespace tgpy {

namespace {

// `with Context(DEBUG=2, NOOPT=1):` sets the variables on entry and restores them on exit (a tg::Context
// lives for the `with` block). Every key is checked when the Context is made, before any value changes.
class Context {
 public:
  explicit Context(std::vector<std::pair<std::string, int>> overrides) : overrides_(std::move(overrides)) {
    for (auto& kv : overrides_)
      if (!tg::ContextVar::find(kv.first)) throw py::value_error("Context: unknown setting '" + kv.first + "'");
  }
  void enter() {
    if (active_) throw py::value_error("Context: already entered (make a new Context for each `with`)");
    active_ = std::make_unique<tg::Context>(overrides_);
  }
  void exit() { active_.reset(); }

 private:
  std::vector<std::pair<std::string, int>> overrides_;
  std::unique_ptr<tg::Context> active_;  // a pointer: pybind11 moves the Context when it makes it
};

}  // namespace

void bind_helpers(py::module_& m) {
  py::class_<Context>(m, "Context", "with Context(DEBUG=2, NOOPT=1): ... -- scoped overrides of the ContextVars")
      .def(py::init([](py::kwargs kw) {
        std::vector<std::pair<std::string, int>> o;
        for (auto [k, v] : kw) o.emplace_back(py::str(k), static_cast<int>(to_int(v, "Context value")));
        return Context(std::move(o));
      }))
      .def("__enter__", [](Context& c) { c.enter(); return &c; }, py::return_value_policy::reference_internal)
      .def("__exit__", [](Context& c, py::args) { c.exit(); return false; });

  py::class_<tg::ContextVar>(m, "ContextVar", "An integer setting read from the environment (DEBUG, BEAM...)")
      .def_readwrite("value", &tg::ContextVar::value)
      .def_property_readonly("key", [](const tg::ContextVar& c) { return std::string(c.key); })
      .def("__int__", [](const tg::ContextVar& c) { return c.value; })
      .def("__index__", [](const tg::ContextVar& c) { return c.value; })
      .def("__bool__", [](const tg::ContextVar& c) { return c.value != 0; })
      .def("__repr__", [](const tg::ContextVar& c) { return "ContextVar(" + std::string(c.key) + "=" + std::to_string(c.value) + ")"; });
  m.def("context_var", [](const std::string& key) {
    tg::ContextVar* cv = tg::ContextVar::find(key);
    if (!cv) throw py::key_error("no ContextVar named '" + key + "'");
    return cv;
  }, py::arg("key"), py::return_value_policy::reference);

  py::class_<tg::GlobalCounters>(m, "GlobalCounters", "What has run since the last reset()")
      .def_property_static("kernel_count", [](py::object) { return tg::GlobalCounters::kernel_count; },
                           [](py::object, int64_t v) { tg::GlobalCounters::kernel_count = v; })
      .def_property_static("global_ops", [](py::object) { return tg::GlobalCounters::global_ops; },
                           [](py::object, int64_t v) { tg::GlobalCounters::global_ops = v; })
      .def_property_static("global_mem", [](py::object) { return tg::GlobalCounters::global_mem; },
                           [](py::object, int64_t v) { tg::GlobalCounters::global_mem = v; })
      .def_property_static("time_sum_s", [](py::object) { return tg::GlobalCounters::time_sum_s; },
                           [](py::object, double v) { tg::GlobalCounters::time_sum_s = v; })
      .def_property_readonly_static("mem_used", [](py::object) { return tg::GlobalCounters::mem_used; })
      .def_property_readonly_static("mem_live", [](py::object) { return tg::GlobalCounters::mem_live; })
      .def_property_readonly_static("mem_peak", [](py::object) { return tg::GlobalCounters::mem_peak; })
      .def_property_readonly_static("schedules", [](py::object) { return tg::GlobalCounters::schedules; })
      .def_property_readonly_static("schedule_hits", [](py::object) { return tg::GlobalCounters::schedule_hits; })
      .def_property_readonly_static("lowered", [](py::object) { return tg::GlobalCounters::lowered; })
      .def_property_readonly_static("compiles", [](py::object) { return tg::GlobalCounters::compiles; })
      .def_static("reset", &tg::GlobalCounters::reset);

  py::class_<tg::ProgressBar>(m, "_ProgressBar", "The C++ progress bar (tg/progress.h); tg.helpers.tqdm wraps it")
      .def(py::init([](int64_t total, const std::string& desc) { return std::make_unique<tg::ProgressBar>(total, desc); }), py::arg("total"),
           py::arg("desc") = "")
      .def("update", &tg::ProgressBar::update, py::arg("n") = 1)
      .def("set_postfix", &tg::ProgressBar::set_postfix, py::arg("text"))
      .def("set_description", &tg::ProgressBar::set_description, py::arg("desc"))
      .def("close", &tg::ProgressBar::close)
      .def_property_readonly("rate", &tg::ProgressBar::rate)
      .def("line", &tg::ProgressBar::line);

  py::class_<tg::Device>(m, "Device", "The device registry: Device.DEFAULT, Device.canonicalize(name)")
      .def_property_readonly_static("DEFAULT", [](py::object) { return tg::Device::DEFAULT(); })
      .def_static("canonicalize", &tg::Device::canonicalize, py::arg("device"))
      .def_static("backends", &tg::Device::backends);
}

}  // namespace tgpy
