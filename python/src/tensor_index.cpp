// tg.Tensor, part 4: t[...] and t[...] = v with Python's index forms: ints (negative from the end), slices
// with any step (negative too), None, Ellipsis, and advanced indices (Tensors, lists or tuples of ints, NumPy
// arrays of integers, or bool masks, 0-d and bare bools too), in a tuple or alone, as torch reads them.
// Reading is Tensor::index.
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
    if (st && *st == 0) throw tg::Error("index: slice step cannot be zero");
    return ix::Slice(opt_int(start, "index: slice start"), opt_int(stop, "index: slice stop"), st);
  }
  if (py::isinstance<Tensor>(h)) return h.cast<Tensor>();
  // a bare bool is a 0-d mask (torch, NumPy): t[True] adds a dim of 1, t[False] one of 0
  if (PyBool_Check(h.ptr())) return Tensor(h.ptr() == Py_True, std::nullopt, t.device());
  // a list or tuple inside an index is one integer (or bool) tensor: t[(1, 0), b] is t[[1, 0], b]
  if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()) || py::isinstance<py::array>(h)) return tensor_from_python(h, std::nullopt, t.device());
  if (PyFloat_Check(h.ptr()))  // torch and NumPy raise IndexError
    throw tg::IndexError("index: only integers, slices, None, Ellipsis, lists and integer or bool tensors are valid indices (got float)");
  if (PyLong_Check(h.ptr()) || py::hasattr(h, "__index__")) return to_int(h, "index");
  throw py::type_error("index: unsupported index of type " + std::string(py::str(py::type::handle_of(h).attr("__name__"))) +
                       " (ints, slices, None, Ellipsis, lists, tuples, NumPy arrays and Tensors are)");
}

// torch's rule (treatSequenceAsTuple): a tuple is a tuple of indices, and so is a list of fewer than 32
// entries holding a sequence, slice, None, Ellipsis or Tensor: t[[[0, 1], (2, 3)]] is t[[0, 1], (2, 3)].
// Any other list (of ints or bools) is one tensor index.
bool is_index_tuple(py::handle idx) {
  if (PyTuple_Check(idx.ptr())) return true;
  if (!PyList_Check(idx.ptr())) return false;
  py::list l = py::reinterpret_borrow<py::list>(idx);
  if (l.size() >= 32) return false;
  for (py::handle h : l)
    if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()) || PySlice_Check(h.ptr()) || h.is_none() || h.ptr() == Py_Ellipsis ||
        py::isinstance<Tensor>(h) || py::isinstance<py::array>(h))
      return true;
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
