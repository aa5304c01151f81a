// tg.Tensor, part 2: the methods, one C++ call each (or a short composition of them), under tinygrad's
// names, keywords and defaults: math and activations, reductions and scans, movement, shaping, and the
// network ops (conv2d, pooling, norms, attention, losses).
//
// tinygrad's Python conventions handled here: shapes/orders as *args or one sequence (`reshape(2, 3)`,
// `permute((1, 0))`), `axis=None|int|tuple`, tinygrad's and torch's forms of `pad`, Python scalars
// wherever a tensor operand is accepted, and `dtype=` on softmax/log_softmax.
#include "bindings.h"

#include <map>

namespace tgpy {

namespace {

using tg::Tensor;

// The ints given as *args, or as one sequence: f(1, 0), f((1, 0)).
std::vector<int64_t> ints_from_args(const py::args& args, const char* what) {
  if (args.size() == 1 && (PyList_Check(args[0].ptr()) || PyTuple_Check(args[0].ptr()))) return int_list(args[0], what);
  std::vector<int64_t> v;
  for (py::handle h : args) v.push_back(to_int(h, what));
  return v;
}
std::vector<int> to_ints(const std::vector<int64_t>& v) { return std::vector<int>(v.begin(), v.end()); }
int to_axis(py::handle h, const char* what) { return static_cast<int>(to_int(h, what)); }

// reshape's shape: ints, -1 for one inferred dim, None to keep a dim (tinygrad).
tg::Shape reshape_shape(const Tensor& t, const py::args& args) {
  py::sequence seq = args.size() == 1 && (PyList_Check(args[0].ptr()) || PyTuple_Check(args[0].ptr()))
                         ? py::reinterpret_borrow<py::sequence>(args[0]) : py::reinterpret_borrow<py::sequence>(args);
  tg::Shape s;
  for (size_t i = 0; i < seq.size(); i++) {
    py::object d = seq[i];
    if (d.is_none()) {
      if (i >= t.shape().size()) throw tg::Error("reshape: None at dim " + std::to_string(i) + " but the tensor has " + std::to_string(t.ndim()) + " dims");
      s.push_back(t.shape()[i]);
    } else {
      s.push_back(to_int(d, "reshape: shape"));
    }
  }
  return s;
}

// pad's padding, in either of tinygrad's forms: ((before, after) or None per dim), or flat ints in
// torch's order (last dim first).
Tensor pad(const Tensor& t, py::object padding, py::object value, const std::string& mode) {
  static const std::map<std::string, tg::PadMode> modes = {{"constant", tg::PadMode::constant}, {"reflect", tg::PadMode::reflect},
                                                          {"replicate", tg::PadMode::replicate}, {"circular", tg::PadMode::circular}};
  auto m = modes.find(mode);
  if (m == modes.end()) throw tg::Error("pad: mode '" + mode + "' is not one of 'constant', 'reflect', 'replicate', 'circular'");
  double v = value.cast<double>();
  py::sequence seq = py::reinterpret_borrow<py::sequence>(padding);
  bool flat = true;
  for (py::handle h : seq) flat = flat && !h.is_none() && !PyList_Check(h.ptr()) && !PyTuple_Check(h.ptr());
  if (flat) return t.pad2d(int_list(padding, "pad: padding"), m->second, v);  // torch's order, last dim first
  std::vector<std::pair<int64_t, int64_t>> pairs;
  bool crops = false;
  for (py::handle h : seq) {
    if (h.is_none()) { pairs.emplace_back(0, 0); continue; }
    std::vector<int64_t> p = int_list(h, "pad: padding");
    if (p.size() != 2) throw tg::Error("pad: each dim's padding must be (before, after) or None");
    pairs.emplace_back(p[0], p[1]);
    crops = crops || p[0] < 0 || p[1] < 0;
  }
  if (m->second != tg::PadMode::constant) return t.pad(pairs, m->second, v);
  if (!crops || pairs.size() != t.shape().size()) return t.pad(pairs, v);
  std::vector<int64_t> torch_order;  // negative padding crops (tinygrad): pad2d's order, last dim first, does both
  for (auto it = pairs.rbegin(); it != pairs.rend(); ++it) torch_order.insert(torch_order.end(), {it->first, it->second});
  return t.pad2d(torch_order, v);
}

// shrink's bounds: (begin, end) or None (the whole dim) per dim.
Tensor shrink(const Tensor& t, py::object arg) {
  std::vector<std::pair<int64_t, int64_t>> b;
  size_t i = 0;
  for (py::handle h : py::reinterpret_borrow<py::sequence>(arg)) {
    if (h.is_none()) {
      if (i >= t.shape().size()) throw tg::Error("shrink: more bounds than dims");
      b.emplace_back(0, t.shape()[i]);
    } else {
      std::vector<int64_t> p = int_list(h, "shrink: bounds");
      if (p.size() != 2) throw tg::Error("shrink: each dim's bounds must be (begin, end) or None");
      b.emplace_back(p[0], p[1]);
    }
    i++;
  }
  return t.shrink(b);
}

std::optional<Tensor> opt_tensor(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return as_tensor(h, "optional tensor argument");
}

// cond.where(x, y) with tensors or Python scalars; two scalars take their dtype from the values.
Tensor where(const Tensor& cond, py::object x, py::object y) {
  bool xt = py::isinstance<Tensor>(x), yt = py::isinstance<Tensor>(y);
  Tensor tx = xt ? x.cast<Tensor>() : yt ? operand_or_throw(y.cast<Tensor>(), x, "where")
                                         : tensor_from_python(x, std::nullopt, cond.device());
  Tensor ty = operand_or_throw(tx, y, "where");
  return cond.where(tx, ty);
}

// a.cat(b, c, dim=) and Tensor.cat(a, b, dim=); the same for stack.
std::vector<Tensor> with_rest(const Tensor& first, const py::args& rest) {
  std::vector<Tensor> v{first};
  for (py::handle h : rest) v.push_back(as_tensor(h, "cat/stack/meshgrid"));
  return v;
}

py::tuple to_tuple(const std::vector<Tensor>& v) { return py::tuple(py::cast(v)); }

}  // namespace

void bind_tensor_ops(py::class_<Tensor>& cls) {
  // ---- unary math and activations --------------------------------------------------------------------
#define TG_UNARY(name) cls.def(#name, &Tensor::name);
  TG_UNARY(neg) TG_UNARY(exp) TG_UNARY(log) TG_UNARY(exp2) TG_UNARY(log2) TG_UNARY(sqrt) TG_UNARY(rsqrt)
  TG_UNARY(sin) TG_UNARY(cos) TG_UNARY(tan) TG_UNARY(asin) TG_UNARY(acos) TG_UNARY(atan) TG_UNARY(sinh)
  TG_UNARY(cosh) TG_UNARY(tanh) TG_UNARY(erf) TG_UNARY(reciprocal) TG_UNARY(square) TG_UNARY(abs) TG_UNARY(sign)
  TG_UNARY(trunc) TG_UNARY(floor) TG_UNARY(ceil) TG_UNARY(round) TG_UNARY(isnan) TG_UNARY(relu) TG_UNARY(relu6)
  TG_UNARY(sigmoid) TG_UNARY(gelu) TG_UNARY(quick_gelu) TG_UNARY(selu) TG_UNARY(swish) TG_UNARY(silu) TG_UNARY(mish)
  TG_UNARY(hardsigmoid) TG_UNARY(hardswish) TG_UNARY(logical_not) TG_UNARY(bitwise_not) TG_UNARY(asinh) TG_UNARY(acosh)
  TG_UNARY(atanh) TG_UNARY(logsigmoid) TG_UNARY(softsign)
#undef TG_UNARY
  cls.def("isinf", &Tensor::isinf, py::arg("detect_positive") = true, py::arg("detect_negative") = true)
      .def("softplus", &Tensor::softplus, py::arg("beta") = 1.0)
      .def("leaky_relu", &Tensor::leakyrelu, py::arg("neg_slope") = 0.01)
      .def("leakyrelu", &Tensor::leakyrelu, py::arg("neg_slope") = 0.01)
      .def("elu", &Tensor::elu, py::arg("alpha") = 1.0)
      .def("celu", &Tensor::celu, py::arg("alpha") = 1.0)
      .def("hardtanh", &Tensor::hardtanh, py::arg("min_val") = -1.0, py::arg("max_val") = 1.0)
      .def("clip", [](const Tensor& t, py::object lo, py::object hi) {
             if (py::isinstance<Tensor>(lo) || py::isinstance<Tensor>(hi)) {  // tensor bounds: maximum/minimum
               Tensor r = lo.is_none() ? t : t.maximum(operand_or_throw(t, lo, "clip"));
               return hi.is_none() ? r : r.minimum(operand_or_throw(r, hi, "clip"));
             }
             return t.clip(lo.is_none() ? std::nullopt : std::optional<double>(lo.cast<double>()),
                           hi.is_none() ? std::nullopt : std::optional<double>(hi.cast<double>()));
           }, py::arg("min_") = py::none(), py::arg("max_") = py::none());
  cls.attr("clamp") = cls.attr("clip");

  // ---- binary math (Python scalars accepted) ---------------------------------------------------------
#define TG_BINARY(name)                                                                                       \
  cls.def(#name, [](const Tensor& t, py::object x, bool reverse) {                                          \
    Tensor o = operand_or_throw(t, x, #name);                                                               \
    return reverse ? o.name(t) : t.name(o);                                                                  \
  }, py::arg("x"), py::arg("reverse") = false);
  TG_BINARY(add) TG_BINARY(sub) TG_BINARY(mul) TG_BINARY(idiv) TG_BINARY(floor_divide) TG_BINARY(maximum) TG_BINARY(minimum)
  TG_BINARY(bitwise_and) TG_BINARY(bitwise_or) TG_BINARY(bitwise_xor) TG_BINARY(logical_and) TG_BINARY(logical_or)
  TG_BINARY(logical_xor) TG_BINARY(lt) TG_BINARY(le) TG_BINARY(gt) TG_BINARY(ge) TG_BINARY(eq) TG_BINARY(ne)
  TG_BINARY(dot) TG_BINARY(matmul)
#undef TG_BINARY
  // tinygrad's name for bitwise_xor (`^`); C++ cannot name a method xor
  cls.def("xor", [](const Tensor& t, py::object x, bool reverse) {
    Tensor o = operand_or_throw(t, x, "xor");
    return reverse ? o.bitwise_xor(t) : t.bitwise_xor(o);
  }, py::arg("x"), py::arg("reverse") = false);
  cls.def("div", [](const Tensor& t, py::object x, bool reverse, py::object rounding_mode) {
        Tensor o = operand_or_throw(t, x, "div", rounding_mode.is_none());
        auto [n, d] = reverse ? std::pair{o, t} : std::pair{t, o};
        if (rounding_mode.is_none()) return n.div(d);
        std::string mode = py::str(rounding_mode);
        if (n.dtype().is_int() && d.dtype().is_int() && (mode == "trunc" || mode == "floor")) {
          // in integers: the float quotient rounds past 2^24 (float32), so its floor would be another number
          return mode == "trunc" ? n.idiv(d) : n.floor_divide(d);
        }
        Tensor q = n.div(d);  // true division, in float
        tg::DType out = n.dtype().is_int() ? n.dtype() : q.dtype();  // tinygrad: an int numerator keeps its dtype
        if (mode == "trunc") return q.trunc().cast(out);
        if (mode == "floor") return q.floor().cast(out);
        throw py::value_error("div: rounding_mode must be None, 'trunc' or 'floor', got '" + mode + "'");
      }, py::arg("x"), py::arg("reverse") = false, py::arg("rounding_mode") = py::none())
      .def("mod", [](const Tensor& t, py::object x, bool reverse) {
        Tensor o = operand_or_throw(t, x, "mod");
        auto [a, b] = reverse ? std::pair{o, t} : std::pair{t, o};
        return a.mod(b);
      }, py::arg("x"), py::arg("reverse") = false)
      .def("pow", [](const Tensor& t, py::object x, bool reverse) {
        if (!reverse && (PyLong_Check(x.ptr()) || PyFloat_Check(x.ptr())) && !PyBool_Check(x.ptr())) return t.pow(x.cast<double>());
        Tensor o = operand_or_throw(t, x, "pow");
        return reverse ? o.pow(t) : t.pow(o);
      }, py::arg("x"), py::arg("reverse") = false)
      .def("lshift", [](const Tensor& t, py::object x) { return t.lshift(to_int(x, "lshift: bits")); }, py::arg("x"))
      .def("rshift", [](const Tensor& t, py::object x) { return t.rshift(to_int(x, "rshift: bits")); }, py::arg("x"))
      .def("lerp", [](const Tensor& t, const Tensor& end, py::object weight) {
        return t.lerp(end, operand_or_throw(t, weight, "lerp"));
      }, py::arg("end"), py::arg("weight"))
      .def("where", &where, py::arg("x"), py::arg("y"))
      .def("cast", [](const Tensor& t, py::object d) { return t.cast(to_dtype(d)); }, py::arg("dtype"))
      .def("bitcast", [](const Tensor& t, py::object d) { return t.bitcast(to_dtype(d)); }, py::arg("dtype"))
      .def("float", [](const Tensor& t) { return t.cast(tg::dtypes::float32); })
      .def("half", [](const Tensor& t) { return t.cast(tg::dtypes::float16); })
      .def("double", [](const Tensor& t) { return t.cast(tg::dtypes::float64); })
      .def("int", [](const Tensor& t) { return t.cast(tg::dtypes::int32); })
      .def("long", [](const Tensor& t) { return t.cast(tg::dtypes::int64); })
      .def("bool", [](const Tensor& t) { return t.cast(tg::dtypes::bool_); });

  // ---- reductions and scans --------------------------------------------------------------------------
#define TG_REDUCE(name)                                                                                       \
  cls.def(#name, [](const Tensor& t, py::object axis, bool keepdim) { return t.name(axes(axis, #name), keepdim); }, \
          py::arg("axis") = py::none(), py::arg("keepdim") = false);
  TG_REDUCE(sum) TG_REDUCE(prod) TG_REDUCE(max) TG_REDUCE(min) TG_REDUCE(any) TG_REDUCE(all) TG_REDUCE(mean)
  TG_REDUCE(logsumexp)
#undef TG_REDUCE
  cls.def("var", [](const Tensor& t, py::object axis, bool keepdim, double correction) {
        return t.var(axes(axis, "var"), keepdim, correction);
      }, py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1)
      .def("std", [](const Tensor& t, py::object axis, bool keepdim, double correction) {
        return t.std(axes(axis, "std"), keepdim, correction);
      }, py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1)
      .def("argmax", [](const Tensor& t, py::object axis, bool keepdim) {
        return t.argmax(axis.is_none() ? std::nullopt : std::optional<int>(to_axis(axis, "argmax: axis")), keepdim);
      }, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("argmin", [](const Tensor& t, py::object axis, bool keepdim) {
        return t.argmin(axis.is_none() ? std::nullopt : std::optional<int>(to_axis(axis, "argmin: axis")), keepdim);
      }, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("cumsum", &Tensor::cumsum, py::arg("axis") = 0)
      .def("cummax", &Tensor::cummax, py::arg("axis") = 0)
      .def("cumprod", &Tensor::cumprod, py::arg("axis") = 0)
      .def("softmax", [](const Tensor& t, int axis, py::object dtype) {
        return (dtype.is_none() ? t : t.cast(to_dtype(dtype))).softmax(axis);
      }, py::arg("axis") = -1, py::arg("dtype") = py::none())
      .def("log_softmax", [](const Tensor& t, int axis, py::object dtype) {
        return (dtype.is_none() ? t : t.cast(to_dtype(dtype))).log_softmax(axis);
      }, py::arg("axis") = -1, py::arg("dtype") = py::none())
      .def("topk", [](const Tensor& t, int64_t k, int dim, bool largest) {
        auto [v, i] = t.topk(k, dim, largest);
        return py::make_tuple(v, i);
      }, py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true)
      .def("sort", [](const Tensor& t, int dim, bool descending) {
        auto [v, i] = t.sort(dim, descending);
        return py::make_tuple(v, i);
      }, py::arg("dim") = -1, py::arg("descending") = false)
      .def("argsort", &Tensor::argsort, py::arg("dim") = -1, py::arg("descending") = false);

  // ---- movement --------------------------------------------------------------------------------------
  cls.def("reshape", [](const Tensor& t, py::args shape) { return t.reshape(reshape_shape(t, shape)); })
      .def("view", [](const Tensor& t, py::args shape) { return t.reshape(reshape_shape(t, shape)); })
      .def("permute", [](const Tensor& t, py::args order) { return t.permute(to_ints(ints_from_args(order, "permute: order"))); })
      .def("expand", [](const Tensor& t, py::args shape) { return t.expand(ints_from_args(shape, "expand: shape")); })
      .def("flip", [](const Tensor& t, py::args axis) { return t.flip(to_ints(ints_from_args(axis, "flip: axis"))); })
      .def("repeat", [](const Tensor& t, py::args repeats) { return t.repeat(ints_from_args(repeats, "repeat: repeats")); })
      .def("pad", &pad, py::arg("padding"), py::arg("value") = 0.0, py::arg("mode") = "constant")
      .def("pad2d", [](const Tensor& t, py::object padding, double value) { return t.pad2d(int_list(padding, "pad2d: padding"), value); },
           py::arg("padding"), py::arg("value") = 0.0)
      .def("shrink", &shrink, py::arg("arg"))
      .def("transpose", &Tensor::transpose, py::arg("dim0") = 1, py::arg("dim1") = 0)
      .def("squeeze", [](const Tensor& t, py::object dim) {
        return t.squeeze(dim.is_none() ? std::nullopt : std::optional<int>(to_axis(dim, "squeeze: dim")));
      }, py::arg("dim") = py::none())
      .def("unsqueeze", &Tensor::unsqueeze, py::arg("dim"))
      .def("flatten", &Tensor::flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def("unfold", &Tensor::unfold, py::arg("dim"), py::arg("size"), py::arg("step"))
      .def("unflatten", [](const Tensor& t, int dim, py::object sizes) { return t.unflatten(dim, int_list(sizes, "unflatten: sizes")); },
           py::arg("dim"), py::arg("sizes"));

  // ---- shaping ---------------------------------------------------------------------------------------
  cls.def("cat", [](const Tensor& t, py::args rest, int dim) { return Tensor::cat(with_rest(t, rest), dim); }, py::kw_only(), py::arg("dim") = 0)
      .def("stack", [](const Tensor& t, py::args rest, int dim) { return Tensor::stack(with_rest(t, rest), dim); }, py::kw_only(), py::arg("dim") = 0)
      .def("meshgrid", [](const Tensor& t, py::args rest, const std::string& indexing) {
        return to_tuple(Tensor::meshgrid(with_rest(t, rest), indexing));
      }, py::kw_only(), py::arg("indexing") = "ij")
      .def("split", [](const Tensor& t, py::object sizes, int dim) {
        if (PyList_Check(sizes.ptr()) || PyTuple_Check(sizes.ptr())) return to_tuple(t.split(int_list(sizes, "split: sizes"), dim));
        return to_tuple(t.split(to_int(sizes, "split: sizes"), dim));
      }, py::arg("sizes"), py::arg("dim") = 0)
      .def("repeat_interleave", [](const Tensor& t, int64_t repeats, py::object dim) {
        return t.repeat_interleave(repeats, dim.is_none() ? std::nullopt : std::optional<int>(to_axis(dim, "repeat_interleave: dim")));
      }, py::arg("repeats"), py::arg("dim") = py::none())
      .def("chunk", [](const Tensor& t, int64_t chunks, int dim) { return t.chunk(chunks, dim); }, py::arg("chunks"), py::arg("dim") = 0)
      .def("tril", &Tensor::tril, py::arg("diagonal") = 0)
      .def("triu", &Tensor::triu, py::arg("diagonal") = 0)
      .def("roll", [](const Tensor& t, py::object shifts, py::object dims) {
        return t.roll(int_list(shifts, "roll: shifts"), dims.is_none() ? std::vector<int>{} : to_ints(int_list(dims, "roll: dims")));
      }, py::arg("shifts"), py::arg("dims") = py::none());

  // ---- indexing ops ----------------------------------------------------------------------------------
  cls.def("gather", &Tensor::gather, py::arg("dim"), py::arg("index"))
      .def("scatter", [](const Tensor& t, int dim, const Tensor& index, py::object src) {
        if (py::isinstance<Tensor>(src)) return t.scatter(dim, index, src.cast<Tensor>());
        return t.scatter(dim, index, src.cast<double>());
      }, py::arg("dim"), py::arg("index"), py::arg("src"))
      .def("scatter_reduce", &Tensor::scatter_reduce, py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce"),
           py::arg("include_self") = true)
      .def("masked_fill", &Tensor::masked_fill, py::arg("mask"), py::arg("value"))
      .def("one_hot", &Tensor::one_hot, py::arg("num_classes") = -1);

  // ---- networks --------------------------------------------------------------------------------------
  // tinygrad's linear: x @ weight with weight (in, out) (the C++ API takes torch's (out, in)), or x * weight for a 1-D weight
  cls.def("linear", [](const Tensor& t, const Tensor& weight, py::object bias) {
        return t.linear(weight.ndim() == 2 ? weight.transpose() : weight, opt_tensor(bias));
      }, py::arg("weight"), py::arg("bias") = py::none())
      .def("conv2d", [](const Tensor& t, const Tensor& weight, py::object bias, int64_t groups, py::object stride, py::object dilation,
                        py::object padding) {
        return t.conv2d(weight, opt_tensor(bias), groups, int_list(stride, "conv2d: stride"), int_list(dilation, "conv2d: dilation"),
                        int_list(padding, "conv2d: padding"));
      }, py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1, py::arg("dilation") = 1,
         py::arg("padding") = 0)
      .def("conv_transpose2d", [](const Tensor& t, const Tensor& weight, py::object bias, int64_t groups, py::object stride,
                                  py::object dilation, py::object padding, py::object output_padding) {
        return t.conv_transpose2d(weight, opt_tensor(bias), groups, int_list(stride, "conv_transpose2d: stride"),
                                  int_list(dilation, "conv_transpose2d: dilation"), int_list(padding, "conv_transpose2d: padding"),
                                  int_list(output_padding, "conv_transpose2d: output_padding"));
      }, py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1, py::arg("dilation") = 1,
         py::arg("padding") = 0, py::arg("output_padding") = 0)
      .def("max_pool2d", [](const Tensor& t, py::object kernel_size, py::object stride, py::object dilation, py::object padding,
                            bool ceil_mode) {
        return t.max_pool2d(int_list(kernel_size, "max_pool2d: kernel_size"),
                            stride.is_none() ? std::vector<int64_t>{} : int_list(stride, "max_pool2d: stride"),
                            int_list(dilation, "max_pool2d: dilation"), int_list(padding, "max_pool2d: padding"), ceil_mode);
      }, py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(), py::arg("dilation") = 1, py::arg("padding") = 0,
         py::arg("ceil_mode") = false)
      .def("interpolate", [](const Tensor& t, py::object size, const std::string& mode, bool align_corners) {
        return t.interpolate(int_list(size, "interpolate: size"), mode, align_corners);
      }, py::arg("size"), py::arg("mode") = "linear", py::arg("align_corners") = false)
      .def("multinomial", &Tensor::multinomial, py::arg("num_samples") = 1, py::arg("replacement") = false)
      .def_static("einsum", [](const std::string& formula, py::args operands, py::object acc_dtype, py::object dtype) {
        // Tensor.einsum("ij,jk", a, b) or Tensor.einsum("ij,jk", [a, b]), as tinygrad's argfix
        py::sequence seq = operands.size() == 1 && (PyList_Check(operands[0].ptr()) || PyTuple_Check(operands[0].ptr()))
                               ? py::reinterpret_borrow<py::sequence>(operands[0]) : py::reinterpret_borrow<py::sequence>(operands);
        std::vector<Tensor> xs;
        for (py::handle h : seq) xs.push_back(as_tensor(h, "einsum"));
        // acc_dtype (tinygrad v0.9) / dtype (later tinygrad): the operands are cast to it, so the sum runs in it
        std::optional<tg::DType> d = to_opt_dtype(dtype.is_none() ? acc_dtype : dtype);
        if (d) for (Tensor& x : xs) x = x.cast(*d);
        return Tensor::einsum(formula, xs);
      }, py::arg("formula"), py::kw_only(), py::arg("acc_dtype") = py::none(), py::arg("dtype") = py::none())
      // later tinygrad's order: ceil_mode before count_include_pad
      .def("avg_pool2d", [](const Tensor& t, py::object kernel_size, py::object stride, py::object dilation, py::object padding,
                            bool ceil_mode, bool count_include_pad) {
        return t.avg_pool2d(int_list(kernel_size, "avg_pool2d: kernel_size"),
                            stride.is_none() ? std::vector<int64_t>{} : int_list(stride, "avg_pool2d: stride"),
                            int_list(dilation, "avg_pool2d: dilation"), int_list(padding, "avg_pool2d: padding"), count_include_pad, ceil_mode);
      }, py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(), py::arg("dilation") = 1, py::arg("padding") = 0,
         py::arg("ceil_mode") = false, py::arg("count_include_pad") = true)
      .def("batchnorm", [](const Tensor& t, py::object weight, py::object bias, const Tensor& mean, const Tensor& invstd, int axis) {
        return t.batchnorm(opt_tensor(weight), opt_tensor(bias), mean, invstd, axis);
      }, py::arg("weight"), py::arg("bias"), py::arg("mean"), py::arg("invstd"), py::arg("axis") = 1)
      .def("layernorm", [](const Tensor& t, py::object axis, double eps) { return t.layernorm(axes(axis, "layernorm"), eps); },
           py::arg("axis") = -1, py::arg("eps") = 1e-5)
      .def("dropout", &Tensor::dropout, py::arg("p") = 0.5)
      .def("scaled_dot_product_attention", [](const Tensor& q, const Tensor& k, const Tensor& v, py::object mask, double dropout_p,
                                              bool is_causal) {
        return q.scaled_dot_product_attention(k, v, opt_tensor(mask), dropout_p, is_causal);
      }, py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(), py::arg("dropout_p") = 0.0, py::arg("is_causal") = false)
      .def("sparse_categorical_crossentropy", [](const Tensor& t, const Tensor& Y, py::object ignore_index, double label_smoothing,
                                                 const std::string& reduction) {
        return t.sparse_categorical_crossentropy(Y, ignore_index.is_none() ? -1 : to_int(ignore_index, "ignore_index"), label_smoothing,
                                                 reduction);
      }, py::arg("Y"), py::arg("ignore_index") = -1, py::arg("label_smoothing") = 0.0, py::arg("reduction") = "mean")
      .def("cross_entropy", &Tensor::cross_entropy, py::arg("Y"), py::arg("reduction") = "mean", py::arg("label_smoothing") = 0.0)
      .def("nll_loss", [](const Tensor& t, const Tensor& Y, py::object weight, py::object ignore_index, const std::string& reduction) {
        return t.nll_loss(Y, opt_tensor(weight), ignore_index.is_none() ? -1 : to_int(ignore_index, "ignore_index"), reduction);
      }, py::arg("Y"), py::arg("weight") = py::none(), py::arg("ignore_index") = py::none(), py::arg("reduction") = "mean")
      .def("binary_crossentropy", &Tensor::binary_crossentropy, py::arg("Y"), py::arg("reduction") = "mean")
      .def("binary_crossentropy_logits", &Tensor::binary_crossentropy_logits, py::arg("Y"), py::arg("reduction") = "mean");
}

}  // namespace tgpy
