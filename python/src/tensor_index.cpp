// tg.Tensor, part 4: t[...] and t[...] = v with Python's index forms: ints (negative from the end), slices
// with any step (negative too), None, Ellipsis, and advanced indices (Tensors, lists of ints, NumPy arrays
// of integers, or bool masks), in a tuple or alone. Reading is Tensor::index.
//
// Writing (tinygrad: the tensor is updated in place, through assign):
// - basic indices (ints, slices, None, Ellipsis): the value, broadcast to the indexed shape, is placed in
//   the full shape by padding (strided slices through a reshape/pad/shrink), and a mask built the same way
//   picks it: one lazy `where`, no scatter.
// - with advanced indices: the flat positions of the selection (an arange read through the same index)
//   take the values by Tensor::scatter, whose cost is the selection's size times the tensor's size.
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

// One dim's part of a basic selection: `count` elements from `start` every `step` (step may be negative).
struct DimSel {
  int64_t start = 0, step = 1, count = 0;
  bool keep = true;  // false for an int index (the dim is dropped from the view)
};

// The selection of basic indices per dim, and the shape t[indices] has (None dims included).
std::vector<DimSel> basic_selection(const Tensor& t, const std::vector<TensorIndex>& idx, tg::Shape& view_shape) {
  size_t named = 0, ellipses = 0, n = t.shape().size();
  for (auto& i : idx) {
    named += std::holds_alternative<int64_t>(i.value()) || std::holds_alternative<ix::Slice>(i.value());
    ellipses += std::holds_alternative<ix::EllipsisIndex>(i.value());
  }
  if (named > n) throw py::index_error("index: too many indices for a tensor of " + std::to_string(n) + " dims");
  if (ellipses > 1) throw py::index_error("index: an index can only have a single ellipsis ('...')");
  std::vector<DimSel> sel;
  auto whole = [&] {
    int64_t size = t.shape()[sel.size()];
    sel.push_back({0, 1, size, true});
    view_shape.push_back(size);
  };
  for (auto& i : idx) {
    const auto& v = i.value();
    if (std::holds_alternative<ix::NoneIndex>(v)) {
      view_shape.push_back(1);
    } else if (std::holds_alternative<ix::EllipsisIndex>(v)) {
      for (size_t k = 0; k < n - named; k++) whole();  // the dims no other index names
    } else if (auto* k = std::get_if<int64_t>(&v)) {
      int64_t size = t.shape()[sel.size()], j = *k < 0 ? *k + size : *k;
      if (j < 0 || j >= size)
        throw py::index_error("index: index " + std::to_string(*k) + " is out of bounds for dimension " + std::to_string(sel.size()) +
                              " with size " + std::to_string(size));
      sel.push_back({j, 1, 1, false});
    } else {
      const auto& s = std::get<ix::Slice>(v);
      Py_ssize_t start = s.start ? *s.start : PY_SSIZE_T_MAX, stop = s.stop ? *s.stop : PY_SSIZE_T_MAX, step = s.step.value_or(1);
      if (!s.start) start = step > 0 ? 0 : PY_SSIZE_T_MAX;
      if (!s.stop) stop = step > 0 ? PY_SSIZE_T_MAX : PY_SSIZE_T_MIN;
      Py_ssize_t count = PySlice_AdjustIndices(t.shape()[sel.size()], &start, &stop, step);
      sel.push_back({start, step, count, true});
      view_shape.push_back(count);
    }
  }
  while (sel.size() < n) whole();  // trailing dims not indexed
  return sel;
}

// x (one dim per tensor dim, of the selection's counts) placed at the selection in the full shape; the
// rest is `fill`.
Tensor embed(Tensor x, const std::vector<DimSel>& sel, const tg::Shape& full, double fill) {
  for (size_t d = 0; d < sel.size(); d++) {
    const DimSel& s = sel[d];
    int64_t first = s.step > 0 ? s.start : s.start + (s.count - 1) * s.step, step = s.step > 0 ? s.step : -s.step;
    if (s.step < 0) x = x.flip({static_cast<int>(d)});
    if (step > 1) {  // (..., count, ...) -> (..., count, step, ...) padded -> (..., count*step, ...) -> first (count-1)*step+1
      tg::Shape sh = x.shape();
      tg::Shape split = sh;
      split.insert(split.begin() + static_cast<long>(d) + 1, 1);
      std::vector<std::pair<int64_t, int64_t>> p(split.size(), {0, 0});
      p[d + 1] = {0, step - 1};
      x = x.reshape(split).pad(p, fill);
      sh[d] = s.count * step;
      x = x.reshape(sh);
      std::vector<std::pair<int64_t, int64_t>> b;
      for (size_t k = 0; k < sh.size(); k++) b.emplace_back(0, k == d ? (s.count - 1) * step + 1 : sh[k]);
      x = x.shrink(b);
    }
    std::vector<std::pair<int64_t, int64_t>> p(full.size(), {0, 0});
    p[d] = {first, full[d] - first - x.shape()[d]};
    x = x.pad(p, fill);
  }
  return x;
}

// v with leading 1s added, expanded to `shape` (NumPy's broadcasting of an assigned value).
Tensor broadcast_to(const Tensor& v, const tg::Shape& shape) {
  tg::Shape vshape = v.shape();
  if (vshape.size() < shape.size()) vshape.insert(vshape.begin(), shape.size() - vshape.size(), 1);
  return v.reshape(vshape).expand(shape);
}

void setitem(Tensor& t, py::handle idx, py::handle value) {
  std::vector<TensorIndex> indices = to_indices(t, idx);
  Tensor v = py::isinstance<Tensor>(value) ? value.cast<Tensor>() : tensor_from_python(value, t.dtype(), t.device());
  if (v.dtype() != t.dtype()) v = v.cast(t.dtype());
  bool advanced = false;
  for (auto& i : indices) advanced = advanced || std::holds_alternative<Tensor>(i.value());
  if (advanced) {
    Tensor positions = Tensor::arange(0, static_cast<double>(t.numel()), 1, tg::dtypes::int64, t.device()).reshape(t.shape());
    Tensor sel = positions.index(indices);
    Tensor values = broadcast_to(v, sel.shape());
    t.assign(t.reshape({-1}).scatter(0, sel.reshape({-1}), values.reshape({-1})).reshape(t.shape()));
    return;
  }
  tg::Shape view_shape;
  std::vector<DimSel> sel = basic_selection(t, indices, view_shape);
  for (auto& s : sel)
    if (s.count == 0) return;  // an empty selection writes nothing
  // v broadcast to the view, then None dims dropped and int dims put back as size 1
  v = broadcast_to(v, view_shape);
  tg::Shape counts;
  for (auto& s : sel) counts.push_back(s.count);
  v = v.reshape(counts);
  Tensor mask = Tensor::ones(counts, tg::dtypes::bool_, t.device());
  t.assign(embed(mask, sel, t.shape(), 0).where(embed(v, sel, t.shape(), 0), t));
}

}  // namespace

void bind_tensor_index(py::class_<Tensor>& cls) {
  cls.def("__getitem__", [](const Tensor& t, py::handle idx) { return t.index(to_indices(t, idx)); })
      .def("__setitem__", [](Tensor& t, py::handle idx, py::handle value) { setitem(t, idx, value); });
}

}  // namespace tgpy
