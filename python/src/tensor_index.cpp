// tg.Tensor, part 4: t[...] and t[...] = v with Python's index forms: ints (negative from the end), slices
// with any step (negative too), None, Ellipsis, and advanced indices (Tensors, lists of ints, NumPy arrays
// of integers, or bool masks), in a tuple or alone. Reading is Tensor::index.
//
// Writing is Tensor::index_put, assigned in place (as tinygrad): one lazy `where` for basic indices, a
// scatter to the selection's flat positions with index tensors.
#include "bindings.h"

namespace tgpy {

namespace {

using tg::Tensor;
using tg::TensorIndex;
namespace ix = tg::indexing;

std::optional<int64_t> opt_int(py::handle h, const char* what) {
  if (h.is_none()) return std::nullopt;
  return to_int(h, what);
}

TensorIndex one_index(const Tensor& t, py::handle h) {
  if (h.is_none()) return ix::None;
  if (h.ptr() == Py_Ellipsis) return ix::Ellipsis;
  if (PySlice_Check(h.ptr())) {
    py::object start = h.attr("start"), stop = h.attr("stop"), step = h.attr("step");
    std::optional<int64_t> st = opt_int(step, "index: slice step");
    if (st && *st == 0) throw py::value_error("index: slice step cannot be zero");
    return ix::Slice(opt_int(start, "index: slice start"), opt_int(stop, "index: slice stop"), st);
  }
  if (py::isinstance<Tensor>(h)) return h.cast<Tensor>();
  if (PyBool_Check(h.ptr())) throw py::type_error("index: a bare bool is not a supported index (use a bool tensor mask)");
  if (PyList_Check(h.ptr()) || py::isinstance<py::array>(h)) return tensor_from_python(h, std::nullopt, t.device());
  if (PyLong_Check(h.ptr()) || py::hasattr(h, "__index__")) return to_int(h, "index");
  throw py::type_error("index: unsupported index of type " + std::string(py::str(py::type::handle_of(h).attr("__name__"))) +
                       " (ints, slices, None, Ellipsis, lists, NumPy arrays and Tensors are)");
}

// A list of ints is one tensor index; any other list is a tuple of indices (tinygrad, and torch's rule):
// t[[[0, 1], [2, 3]]] is t[[0, 1], [2, 3]].
bool is_index_tuple(py::handle idx) {
  if (PyTuple_Check(idx.ptr())) return true;
  if (!PyList_Check(idx.ptr())) return false;
  for (py::handle h : py::reinterpret_borrow<py::list>(idx))
    if (!PyLong_Check(h.ptr())) return true;  // (bools are ints: a list of them is one mask)
  return false;
}

std::vector<TensorIndex> to_indices(const Tensor& t, py::handle idx) {
  std::vector<TensorIndex> out;
  if (is_index_tuple(idx)) {
    for (py::handle h : py::reinterpret_borrow<py::sequence>(idx)) out.push_back(one_index(t, h));
  } else {
    out.push_back(one_index(t, idx));
  }
  return out;
}

void setitem(Tensor& t, py::handle idx, py::handle value) {
  std::vector<TensorIndex> indices = to_indices(t, idx);
  Tensor v = py::isinstance<Tensor>(value) ? value.cast<Tensor>().to(t.device()) : tensor_from_python(value, t.dtype(), t.device());
  if (v.dtype() != t.dtype()) v = v.cast(t.dtype());
  t.index_put_(indices, v);
}

}  // namespace

void bind_tensor_index(py::class_<Tensor>& cls) {
  cls.def("__getitem__", [](const Tensor& t, py::handle idx) { return t.index(to_indices(t, idx)); })
      .def("__setitem__", [](Tensor& t, py::handle idx, py::handle value) { setitem(t, idx, value); });
}

}  // namespace tgpy
