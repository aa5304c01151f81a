#include "ref.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>

#include "python_process.h"

namespace tgtest {

using nlohmann::json;

namespace {

// The PyTorch process, started on first use and kept for the life of the test binary.
PythonProcess& torch_process() {
  static PythonProcess p(TG_REF_SCRIPT, "torch_ref", "python3-torch");
  return p;
}

json encode(const Tensor& t, bool requires_grad = false) {
  json data = json::array();
  for (double v : to_doubles(t)) {
    if (std::isnan(v)) data.push_back(nullptr);
    else if (std::isinf(v)) data.push_back(v > 0 ? "inf" : "-inf");
    else data.push_back(v);
  }
  std::string dt = t.dtype().name();
  return {{"shape", t.shape()}, {"dtype", dt == "bool" ? "bool" : dt}, {"data", data}, {"requires_grad", requires_grad}};
}

std::vector<double> decode_data(const json& arr) {
  std::vector<double> v;
  for (const json& x : arr) {
    if (x.is_null()) v.push_back(NAN);
    else if (x.is_string()) v.push_back(x.get<std::string>() == "inf" ? INFINITY : -INFINITY);
    else v.push_back(x.get<double>());
  }
  return v;
}

uint32_t seed_of(const std::string& expr, const std::vector<Shape>& shapes, uint32_t extra) {
  uint32_t h = 2166136261u ^ extra;
  for (char c : expr) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  for (auto& s : shapes)
    for (int64_t d : s) h = (h ^ static_cast<uint32_t>(d)) * 16777619u;
  return h;
}

}  // namespace

std::vector<double> to_doubles(const Tensor& t) { return t.cast(tg::dtypes::float64).tolist<double>(); }

Tensor random_tensor(const Shape& shape, double low, double high, tg::DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(low, high);
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  std::vector<double> v(n);
  for (double& x : v) x = dtype.is_float() ? u(rng) : dtype.is_bool() ? (u(rng) > (low + high) / 2) : std::floor(u(rng));
  return Tensor(v, shape).cast(dtype).realize();
}

RefReply torch_eval(const std::string& expr, const std::vector<Tensor>& inputs, const std::vector<bool>& requires_grad,
                    const std::optional<Tensor>& grad_out) {
  json req = {{"expr", expr}, {"inputs", json::array()}, {"grad_out", nullptr}};
  for (size_t i = 0; i < inputs.size(); i++) req["inputs"].push_back(encode(inputs[i], i < requires_grad.size() && requires_grad[i]));
  if (grad_out) req["grad_out"] = encode(*grad_out);
  json rep = torch_process().call(req);
  if (!rep["ok"].get<bool>()) throw std::runtime_error("torch: " + expr + ": " + rep["error"].get<std::string>());
  RefReply r;
  for (const json& o : rep["outputs"]) r.outputs.push_back({o["shape"].get<Shape>(), o["dtype"].get<std::string>(), decode_data(o["data"])});
  for (const json& g : rep["grads"]) r.grads.push_back(g.is_null() ? std::nullopt : std::optional(decode_data(g)));
  return r;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double atol, double rtol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what << ": element count";
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); i++) {
    double a = got[i], b = want[i];
    // an infinity matches only itself (the tolerance of an infinite want would take any value)
    bool ok = (std::isnan(a) && std::isnan(b)) || a == b || (!std::isinf(b) && std::fabs(a - b) <= atol + rtol * std::fabs(b));
    if (!ok && bad++ == 0) first = i;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " elements differ; first at " << first << ": got "
                     << got[first] << ", want " << want[first] << " (atol " << atol << ", rtol " << rtol << ")";
}

void check_op_inputs(std::vector<Tensor> inputs, const TgMultiFn& fn, const std::string& expr, const CheckOpts& o) {
  std::vector<bool> rg;
  for (auto& t : inputs) {
    bool g = o.grad && t.dtype().is_float();
    t = Tensor(t.lazydata());  // a fresh leaf per check
    if (g) t.requires_grad_();
    rg.push_back(g);
  }
  std::vector<Tensor> outs = fn(inputs);
  ASSERT_FALSE(outs.empty());
  bool grads = o.grad && outs[0].dtype().is_float() && outs[0].requires_grad().value_or(false);
  std::optional<Tensor> gout;
  if (grads) gout = random_tensor(outs[0].shape(), -1, 1, outs[0].dtype(), seed_of(expr, {outs[0].shape()}, 7));
  RefReply ref;
  try {
    ref = torch_eval(expr, inputs, grads ? rg : std::vector<bool>{}, gout);
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  ASSERT_EQ(ref.outputs.size(), outs.size()) << expr << ": number of outputs";
  for (size_t i = 0; i < outs.size(); i++) {
    EXPECT_EQ(outs[i].shape(), ref.outputs[i].shape) << expr << ": shape of output " << i;
    if (outs[i].shape() != ref.outputs[i].shape) return;
    expect_close(to_doubles(outs[i]), ref.outputs[i].data, o.atol, o.rtol, expr + " (forward, output " + std::to_string(i) + ")");
  }
  if (!grads) return;
  outs[0].backward(*gout);
  for (size_t i = 0; i < inputs.size(); i++) {
    if (!rg[i]) continue;
    std::string what = expr + " (gradient of x" + std::to_string(i) + ")";
    if (!ref.grads[i]) { EXPECT_FALSE(inputs[i].has_grad()) << what << ": torch has none"; continue; }
    if (!inputs[i].has_grad()) {  // no path to this input: torch's gradient must be all zeros
      expect_close(std::vector<double>(ref.grads[i]->size(), 0.0), *ref.grads[i], o.grad_atol, o.grad_rtol, what);
      continue;
    }
    expect_close(to_doubles(inputs[i].grad()), *ref.grads[i], o.grad_atol, o.grad_rtol, what);
  }
}

void check_op_multi(const std::vector<Shape>& shapes, const TgMultiFn& fn, const std::string& expr, const CheckOpts& o) {
  std::vector<Tensor> inputs;
  uint32_t seed = seed_of(expr, shapes, o.seed);
  for (size_t i = 0; i < shapes.size(); i++) {
    tg::DType dt = i < o.dtypes.size() ? o.dtypes[i] : o.dtype;
    inputs.push_back(random_tensor(shapes[i], o.low, o.high, dt, seed + static_cast<uint32_t>(i)));
  }
  check_op_inputs(std::move(inputs), fn, expr, o);
}

void check_op(const std::vector<Shape>& shapes, const TgFn& fn, const std::string& expr, const CheckOpts& o) {
  check_op_multi(shapes, [&](std::vector<Tensor>& x) { return std::vector<Tensor>{fn(x)}; }, expr, o);
}

void fd_check(const std::vector<Shape>& shapes, const TgFn& fn, double low, double high, double eps, double tol) {
  using tg::dtypes::float64;
  std::vector<std::vector<double>> vals;
  for (size_t i = 0; i < shapes.size(); i++) vals.push_back(to_doubles(random_tensor(shapes[i], low, high, float64, 1234 + static_cast<uint32_t>(i))));
  auto make = [&](const std::vector<std::vector<double>>& v) {
    std::vector<Tensor> xs;
    for (size_t i = 0; i < shapes.size(); i++) xs.push_back(Tensor(v[i], shapes[i]).requires_grad_());
    return xs;
  };
  std::vector<Tensor> xs = make(vals);
  Tensor out = fn(xs);
  ASSERT_EQ(out.dtype(), float64) << "fd_check: the function must keep float64";
  Tensor w = random_tensor(out.shape(), 0.5, 1.5, float64, 99);
  auto objective = [&](const std::vector<std::vector<double>>& v) {
    tg::NoGradGuard ng;
    std::vector<Tensor> x2 = make(v);
    return (fn(x2) * w).sum().item<double>();
  };
  (out * w).sum().backward();
  for (size_t i = 0; i < shapes.size(); i++) {
    std::vector<double> analytic = xs[i].has_grad() ? to_doubles(xs[i].grad()) : std::vector<double>(vals[i].size(), 0.0);
    std::vector<double> numeric(vals[i].size());
    for (size_t j = 0; j < vals[i].size(); j++) {
      auto plus = vals, minus = vals;
      plus[i][j] += eps;
      minus[i][j] -= eps;
      numeric[j] = (objective(plus) - objective(minus)) / (2 * eps);
    }
    expect_close(analytic, numeric, tol, tol, "finite differences, input " + std::to_string(i));
  }
}

}  // namespace tgtest
