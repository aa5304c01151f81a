#include "run_tg.h"

#include <tg/tg.h>

#include <cmath>
#include <cstring>
#include <map>
#include <optional>

namespace tgdiff {

namespace {

using tg::Tensor;
using namespace tg::indexing;

tg::DType tdt(DT d) { return tg::dtypes::from_name(name(d)); }

template <class T> Tensor from_ints(const Node& n) { return Tensor(std::vector<T>(n.idata.begin(), n.idata.end()), n.shape); }

Tensor make_input(const Node& n) {
  switch (n.dtype) {
    case DT::F16: {
      std::vector<uint16_t> bits;
      for (double x : n.fdata) bits.push_back(half_bits(x));
      return Tensor::from_host(bits.data(), bits.size(), n.shape, tg::dtypes::float16);
    }
    case DT::F32: return Tensor(std::vector<float>(n.fdata.begin(), n.fdata.end()), n.shape);
    case DT::F64: return Tensor(n.fdata, n.shape);
    case DT::Bool: return from_ints<bool>(n);
    case DT::I8: return from_ints<int8_t>(n);
    case DT::U8: return from_ints<uint8_t>(n);
    case DT::I16: return from_ints<int16_t>(n);
    case DT::U16: return from_ints<uint16_t>(n);
    case DT::I32: return from_ints<int32_t>(n);
    case DT::U32: return from_ints<uint32_t>(n);
    case DT::I64: return from_ints<int64_t>(n);
    case DT::U64: return from_ints<uint64_t>(n);
  }
  return Tensor(0);
}

template <class C> Tensor scalar_op(const std::string& op, const Tensor& x, C c, bool reverse) {
  if (op == "add") return reverse ? c + x : x + c;
  if (op == "sub") return reverse ? c - x : x - c;
  if (op == "mul") return reverse ? c * x : x * c;
  if (op == "div") return reverse ? c / x : x / c;
  if (op == "lt") return reverse ? c < x : x < c;
  if (op == "gt") return reverse ? c > x : x > c;
  return reverse ? c == x : x == c;
}

using Unary = Tensor (Tensor::*)() const;
using Binary = Tensor (Tensor::*)(const Tensor&) const;
const std::map<std::string, Unary> kUnary = {
    {"neg", &Tensor::neg},       {"exp", &Tensor::exp},         {"log", &Tensor::log},
    {"sqrt", &Tensor::sqrt},     {"sin", &Tensor::sin},         {"reciprocal", &Tensor::reciprocal},
    {"relu", &Tensor::relu},     {"sigmoid", &Tensor::sigmoid}, {"tanh", &Tensor::tanh},
    {"abs", &Tensor::abs},       {"square", &Tensor::square},   {"trunc", &Tensor::trunc},
    {"floor", &Tensor::floor},   {"ceil", &Tensor::ceil},       {"round", &Tensor::round},
    {"isnan", &Tensor::isnan},   {"logical_not", &Tensor::logical_not}, {"bitwise_not", &Tensor::bitwise_not}};
const std::map<std::string, Binary> kBinary = {
    {"add", &Tensor::add},       {"sub", &Tensor::sub},         {"mul", &Tensor::mul},
    {"div", &Tensor::div},       {"idiv", &Tensor::idiv},       {"maximum", &Tensor::maximum},
    {"minimum", &Tensor::minimum}, {"lt", &Tensor::lt},         {"le", &Tensor::le},
    {"gt", &Tensor::gt},         {"ge", &Tensor::ge},           {"eq", &Tensor::eq},
    {"ne", &Tensor::ne},         {"bitwise_and", &Tensor::bitwise_and}, {"bitwise_or", &Tensor::bitwise_or},
    {"bitwise_xor", &Tensor::bitwise_xor}, {"logical_and", &Tensor::logical_and}, {"logical_or", &Tensor::logical_or},
    {"dot", &Tensor::dot}};

Tensor eval(const Node& n, const std::vector<Tensor>& v) {
  auto A = [&](size_t i) -> const Tensor& { return v[static_cast<size_t>(n.args[i])]; };
  const std::string& k = n.kind;
  std::vector<int> axes(n.ints.begin(), n.ints.end());
  if (k == "input") return make_input(n);
  if (k == "full") return Tensor::full(n.shape, n.value, tdt(n.dtype));
  if (k == "cast") return A(0).cast(tdt(n.dtype));
  if (k == "clip") return A(0).clip(n.value, n.value2);
  if (k == "where") return A(0).where(A(1), A(2));
  if (k == "scalar")
    return n.scalar_int ? scalar_op(n.sub, A(0), static_cast<int>(n.value), n.reverse) : scalar_op(n.sub, A(0), n.value, n.reverse);
  if (k == "sum") return A(0).sum(axes, n.keepdim);
  if (k == "max") return A(0).max(axes, n.keepdim);
  if (k == "min") return A(0).min(axes, n.keepdim);
  if (k == "mean") return A(0).mean(axes, n.keepdim);
  if (k == "prod") return A(0).prod(axes, n.keepdim);
  if (k == "any") return A(0).any(axes, n.keepdim);
  if (k == "all") return A(0).all(axes, n.keepdim);
  if (k == "cummax") return A(0).cummax(static_cast<int>(n.ints[0]));
  if (k == "max_pool2d") return A(0).max_pool2d({n.ints[0]}, {n.ints[1]}, {n.ints[2]}, {n.ints[3]});
  if (k == "avg_pool2d") return A(0).avg_pool2d({n.ints[0]}, {n.ints[1]}, {n.ints[2]}, {n.ints[3]});
  if (k == "pad2d") {
    tg::PadMode m = n.sub == "reflect" ? tg::PadMode::reflect : n.sub == "replicate" ? tg::PadMode::replicate : tg::PadMode::circular;
    return A(0).pad2d(n.ints, m);
  }
  if (k == "argmax" || k == "argmin") {
    std::optional<int> axis;
    if (!n.ints.empty()) axis = static_cast<int>(n.ints[0]);
    return k == "argmax" ? A(0).argmax(axis, n.keepdim) : A(0).argmin(axis, n.keepdim);
  }
  if (k == "cumsum") return A(0).cumsum(static_cast<int>(n.ints[0]));
  if (k == "softmax") return A(0).softmax(static_cast<int>(n.ints[0]));
  if (k == "log_softmax") return A(0).log_softmax(static_cast<int>(n.ints[0]));
  if (k == "logsumexp") return A(0).logsumexp(axes, n.keepdim);
  if (k == "var") return A(0).var(axes, n.keepdim, n.value);
  if (k == "std") return A(0).std(axes, n.keepdim, n.value);
  if (k == "reshape") return A(0).reshape(n.ints);
  if (k == "permute") return A(0).permute(axes);
  if (k == "expand") return A(0).expand(n.ints);
  if (k == "pad") return A(0).pad(n.pairs, n.value);
  if (k == "shrink") return A(0).shrink(n.pairs);
  if (k == "flip") return A(0).flip(axes);
  if (k == "unsqueeze") return A(0).unsqueeze(axes[0]);
  if (k == "index") {
    std::vector<tg::TensorIndex> idx;
    for (const SliceArg& s : n.slices) {
      if (s.is_int) idx.emplace_back(s.idx);
      else idx.emplace_back(Slice(s.start, s.stop, s.step));
    }
    return A(0).index(idx);
  }
  if (k == "cat" || k == "stack") {
    std::vector<Tensor> ts;
    for (size_t i = 0; i < n.args.size(); i++) ts.push_back(A(i));
    return k == "cat" ? Tensor::cat(ts, axes[0]) : Tensor::stack(ts, axes[0]);
  }
  if (auto it = kBinary.find(k); it != kBinary.end()) return (A(0).*(it->second))(A(1));
  if (auto it = kUnary.find(k); it != kUnary.end()) return (A(0).*(it->second))();
  throw std::runtime_error("run_tg: unknown op " + k);
}

nlohmann::json num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

template <class T> void read_as(const std::vector<uint8_t>& b, nlohmann::json& out) {
  for (size_t i = 0; i + sizeof(T) <= b.size(); i += sizeof(T)) {
    T x;
    std::memcpy(&x, b.data() + i, sizeof(T));
    if constexpr (std::is_floating_point_v<T>) out.push_back(num(static_cast<double>(x)));
    else out.push_back(static_cast<int64_t>(x));
  }
}

nlohmann::json read(const Tensor& t) {
  std::vector<uint8_t> b = t.bytes();
  nlohmann::json data = nlohmann::json::array();
  std::string d = t.dtype().name();
  if (d == "float16") {
    for (size_t i = 0; i + 2 <= b.size(); i += 2) data.push_back(num(half_value(static_cast<uint16_t>(b[i] | (b[i + 1] << 8)))));
  } else if (d == "float32") read_as<float>(b, data);
  else if (d == "float64") read_as<double>(b, data);
  else if (d == "bool") read_as<uint8_t>(b, data);
  else if (d == "int8") read_as<int8_t>(b, data);
  else if (d == "uint8") read_as<uint8_t>(b, data);
  else if (d == "int16") read_as<int16_t>(b, data);
  else if (d == "uint16") read_as<uint16_t>(b, data);
  else if (d == "int32") read_as<int32_t>(b, data);
  else if (d == "uint32") read_as<uint32_t>(b, data);
  else if (d == "int64") read_as<int64_t>(b, data);
  else if (d == "uint64") read_as<uint64_t>(b, data);
  return {{"dtype", d}, {"shape", t.shape()}, {"data", data}};
}

}  // namespace

nlohmann::json run_on_tg(const Program& p) {
  try {
    std::vector<Tensor> v;
    for (const Node& n : p.nodes) {
      Tensor t = eval(n, v);
      if (n.sched == 1) t = t.contiguous();
      if (n.sched == 2) t.realize();
      v.push_back(t);
    }
    std::vector<Tensor> outs;
    for (int o : p.outputs) outs.push_back(v[static_cast<size_t>(o)]);
    if (p.corealize) Tensor::corealize(outs);
    nlohmann::json r = {{"ok", true}, {"outputs", nlohmann::json::array()}};
    for (const Tensor& t : outs) r["outputs"].push_back(read(t));
    return r;
  } catch (const std::exception& e) {
    return {{"ok", false}, {"error", e.what()}};
  }
}

}  // namespace tgdiff
