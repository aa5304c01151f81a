// generate(seed): a random Program over the public Tensor API (see program.h), deterministic per seed:
// random steps, and in most programs a motif or two among them (motifs.cpp). The generator's state and
// what each member does: gen.h.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "gen.h"

namespace tgdiff {

namespace gen {

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape r(n);
  for (size_t i = 0; i < n; i++) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())], y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    r[i] = x == 1 ? y : x;
  }
  return r;
}

namespace {

// Python's slice.indices(n): first element, step, length.
struct SliceRange { int64_t start, step, len; };
SliceRange slice_indices(const SliceArg& s, int64_t n) {
  int64_t step = s.step.value_or(1);
  int64_t lower = step > 0 ? 0 : -1, upper = step > 0 ? n : n - 1;
  auto clamp = [&](std::optional<int64_t> v, int64_t def) {
    if (!v) return def;
    int64_t x = *v < 0 ? *v + n : *v;
    return std::clamp(x, lower, upper);
  };
  int64_t start = clamp(s.start, step > 0 ? lower : upper), stop = clamp(s.stop, step > 0 ? upper : lower);
  int64_t len = step > 0 ? (start < stop ? (stop - start - 1) / step + 1 : 0) : (stop < start ? (start - stop - 1) / -step + 1 : 0);
  return {start, step, len};
}

// A reduction's result shape: the dims marked in `red` dropped, or kept as 1.
Shape reduced_shape(const Shape& s, const std::vector<bool>& red, bool keepdim) {
  Shape r;
  for (size_t i = 0; i < s.size(); i++)
    if (!red[i]) r.push_back(s[i]);
    else if (keepdim) r.push_back(1);
  return r;
}

}  // namespace

Program Gen::run() {
  int n_in = static_cast<int>(r_.range(1, 2));
  for (int i = 0; i < n_in; i++) {
    Shape s = random_shape();  // each draw its own statement: the order of a call's arguments is unspecified
    add_input(s, random_dtype());
  }
  int n_ops = static_cast<int>(r_.range(2, 7));
  // the motifs (a reduce chain, a multi-output group) go in among the random steps, so that later
  // steps may read their values and they may read earlier ones
  int chain_at = r_.chance(0.7) ? static_cast<int>(r_.range(0, n_ops)) : -1;
  int group_at = r_.chance(0.35) ? static_cast<int>(r_.range(0, n_ops)) : -1;
  steps_last_ = last();
  for (int i = 0; i <= n_ops; i++) {
    in_motif_ = true;
    if (i == chain_at) reduce_chain();
    if (i == group_at) multi_output();
    in_motif_ = false;
    if (i < n_ops) step();
  }
  output(steps_last_);  // the motifs output their own values
  for (double pr : {0.3, 0.1}) {
    if (!r_.chance(pr)) continue;
    int o = static_cast<int>(r_.range(0, last()));
    if (node(o).kind != "input") output(o);
  }
  // outputs of one motif share a loop nest: realized together they make one schedule
  p_.corealize = r_.chance(group_at >= 0 || p_.outputs.size() > 2 ? 0.8 : 0.5);
  return p_;
}

void Gen::output(int id) {
  if (std::find(p_.outputs.begin(), p_.outputs.end(), id) == p_.outputs.end()) p_.outputs.push_back(id);
}

Shape Gen::random_shape() {
  int rank = r_.weighted({10, 25, 30, 25, 10});
  Shape s;
  for (int i = 0; i < rank; i++) s.push_back(r_.chance(0.04) ? 0 : r_.chance(0.22) ? 1 : r_.range(2, 5));
  while (numel(s) > kCap) *std::max_element(s.begin(), s.end()) -= 1;
  return s;
}

int Gen::push(Node n) {
  // a motif's nodes are rarely forced out of the lazy graph: the fusion across them is what it tests
  if (n.kind != "input" && n.kind != "full") n.sched = in_motif_ ? r_.weighted({94, 3, 3}) : r_.weighted({86, 7, 7});
  p_.nodes.push_back(std::move(n));
  from_motif_.push_back(in_motif_);
  return last();
}

Node Gen::mk(const std::string& kind, std::vector<int> args, DT dtype, DT cdtype, Shape shape) {
  Node n;
  n.kind = kind;
  n.args = std::move(args);
  n.dtype = dtype;
  n.cdtype = cdtype;
  n.shape = std::move(shape);
  return n;
}

int Gen::add_input(Shape shape, DT d, bool tame) {
  Node n = mk("input", {}, d, d, std::move(shape));
  int64_t cnt = numel(n.shape);
  if (is_float(d)) {
    bool grid = r_.chance(0.5), specials = !tame && r_.chance(0.3);
    double huge = d == DT::F16 ? 30000.0 : d == DT::F32 ? static_cast<double>(1e30f) : 1e300;
    double tiny = d == DT::F16 ? std::ldexp(1.0, -20) : d == DT::F32 ? std::ldexp(1.0, -140) : std::ldexp(1.0, -1060);
    const std::vector<double> special = {NAN, INFINITY, -INFINITY, 0.0, huge, -huge, tiny};
    for (int64_t i = 0; i < cnt; i++) {
      double x;
      if (specials && r_.chance(0.15)) x = r_.pick(special);
      else if (grid) x = static_cast<double>(r_.range(-48, 48)) / 16;
      else if (d == DT::F16) x = static_cast<double>(r_.range(-2048, 2048)) / 1024;
      else if (d == DT::F32) x = static_cast<double>(static_cast<float>(r_.unif() * 6 - 3));
      else x = r_.unif() * 6 - 3;
      n.fdata.push_back(x);
    }
  } else if (d == DT::Bool) {
    for (int64_t i = 0; i < cnt; i++) n.idata.push_back(r_.range(0, 1));
  } else {
    bool extremes = r_.chance(0.15);
    std::vector<int64_t> ext;
    switch (d) {
      case DT::I8: ext = {-128, 127, -1, 0, 1}; break;
      case DT::U8: ext = {0, 255, 254, 1}; break;
      case DT::I32: ext = {INT32_MIN, INT32_MAX, -1, 0, 1}; break;
      default: ext = {INT64_MIN, INT64_MAX, -1, 0, 1}; break;
    }
    for (int64_t i = 0; i < cnt; i++) {
      if (extremes && r_.chance(0.2)) n.idata.push_back(r_.pick(ext));
      else n.idata.push_back(is_unsigned(d) ? r_.range(0, 18) : r_.range(-9, 9));
    }
  }
  return push(std::move(n));
}

std::vector<int> Gen::earlier() {
  bool motifs = r_.chance(0.2);
  std::vector<int> c;
  for (int j = 0; j <= last(); j++)
    if (motifs || !from_motif_[static_cast<size_t>(j)]) c.push_back(j);
  return c;
}

Shape Gen::variant(const Shape& a) {
  Shape s = a;
  if (r_.chance(0.05)) return {};
  if (!s.empty() && r_.chance(0.15)) s.erase(s.begin(), s.begin() + r_.range(1, static_cast<int64_t>(s.size())));
  for (int64_t& d : s) {
    if (r_.chance(0.25)) d = 1;
    else if (d == 1 && r_.chance(0.3)) d = r_.range(2, 3);
  }
  if (r_.chance(0.08)) s.insert(s.begin(), r_.range(2, 3));
  auto b = broadcast(a, s);
  return b && numel(*b) <= kCap ? s : a;
}

int Gen::partner(int a) {
  const Node& A = node(a);
  if (r_.chance(0.4)) {
    std::vector<int> c;
    for (int j : earlier()) {
      auto b = broadcast(A.shape, node(j).shape);
      if (b && numel(*b) <= kCap) c.push_back(j);
    }
    if (!c.empty()) return r_.pick(c);
  }
  bool input_dt = std::find(kInputDTs.begin(), kInputDTs.end(), A.dtype) != kInputDTs.end();
  Shape s = variant(A.shape);
  return add_input(s, r_.chance(0.6) && input_dt ? A.dtype : random_dtype());
}

double Gen::random_value(DT d) {
  if (d == DT::Bool) return static_cast<double>(r_.range(0, 1));
  if (is_unsigned(d)) return r_.pick(std::vector<double>{0, 3, 7, 1});
  if (is_int(d)) return r_.pick(std::vector<double>{0, 3, -2, 1});
  return r_.pick(std::vector<double>{0, 1.5, -2.0, 0.25, INFINITY});
}

void Gen::step() {
  for (int attempt = 0; attempt < 20; attempt++) {
    int k = r_.weighted({22, 22, 8, 14, 20, 6, 5, 3});
    bool ok = k == 0   ? unary(pick())
              : k == 1 ? binary(pick())
              : k == 2 ? scalar(pick())
              : k == 3 ? reduce(pick())
              : k == 4 ? movement(pick())
              : k == 5 ? cat_stack(pick())
              : k == 6 ? dot(pick())
                       : full_where(pick());
    if (ok) break;
    if (attempt == 19) unary(steps_last_);
  }
  steps_last_ = last();
}

// ---- elementwise ----------------------------------------------------------------------------------
bool Gen::unary(int a) {
  DT d = node(a).dtype;
  if (r_.chance(0.25)) return cast(a, kInputDTs[static_cast<size_t>(r_.range(0, static_cast<int64_t>(kInputDTs.size()) - 1))]);
  std::vector<std::string> ops = {"neg", "exp", "log", "sqrt", "sin", "reciprocal", "sigmoid", "tanh", "abs", "square", "logical_not"};
  if (d != DT::Bool) ops.push_back("relu");
  if (is_float(d)) for (const char* o : {"trunc", "floor", "ceil", "round", "isnan", "clip"}) ops.push_back(o);
  if (!is_float(d)) ops.push_back("bitwise_not");
  std::string op = r_.pick(ops);
  if (op == "clip") {
    Node n = mk("clip", {a}, d, d, node(a).shape);
    n.value = r_.pick(std::vector<double>{-1.5, -0.5, 0});
    n.value2 = r_.pick(std::vector<double>{0.5, 1, 2.25});
    return push(std::move(n)), true;
  }
  DT out = d;
  if (op == "exp" || op == "log" || op == "sqrt" || op == "sin" || op == "reciprocal" || op == "sigmoid" || op == "tanh")
    out = lub_float(d);
  if (op == "isnan" || op == "logical_not") out = DT::Bool;
  push(mk(op, {a}, out, out == DT::Bool ? d : out, node(a).shape));
  return true;
}

bool Gen::cast(int a, DT to) {
  DT d = node(a).dtype;
  Shape s = node(a).shape;
  if (is_float(d) && is_int(to)) {
    int isn = push(mk("isnan", {a}, DT::Bool, d, s));
    Node z = mk("full", {}, d, d, {});
    int zero = push(std::move(z));
    int w = push(mk("where", {isn, zero, a}, d, d, s));
    Node c = mk("clip", {w}, d, d, s);
    c.value = to == DT::U8 ? 0 : to == DT::I8 ? -128 : d == DT::F16 ? -65504 : -2e9;
    c.value2 = to == DT::U8 ? 255 : to == DT::I8 ? 127 : d == DT::F16 ? 65504 : 2e9;
    a = push(std::move(c));
  }
  push(mk("cast", {a}, to, to, s));
  return true;
}

bool Gen::binary(int a) {
  static const std::vector<std::string> ops = {"add", "sub", "mul", "div", "idiv", "maximum", "minimum", "lt", "le", "gt", "ge",
                                               "eq", "ne", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "where"};
  std::string op = r_.pick(ops);
  if (op == "where") {
    int y = partner(a);
    auto xy = broadcast(node(a).shape, node(y).shape);
    int c = r_.chance(0.5) ? add_input(variant(*xy), DT::Bool) : partner(a);
    auto out = broadcast(node(c).shape, *xy);
    if (!out || numel(*out) > kCap) return false;
    DT p = lub(node(a).dtype, node(y).dtype);
    push(mk("where", {c, a, y}, p, p, *out));
    return true;
  }
  int b = partner(a);
  if (r_.chance(0.5)) std::swap(a, b);
  auto out = broadcast(node(a).shape, node(b).shape);
  if (!out || numel(*out) > kCap) return false;
  DT p = lub(node(a).dtype, node(b).dtype);
  // the ops defined for these dtypes; idiv, maximum and minimum twice (division by zero, INT_MIN / -1
  // and NaN are their corner cases)
  std::vector<std::string> valid;
  for (const std::string& o : ops) {
    if (o == "where" || (o == "sub" && p == DT::Bool) || (o.rfind("bitwise_", 0) == 0 && is_float(p))) continue;
    if (o == "idiv" && !is_int(p)) continue;
    valid.push_back(o);
    if (o == "idiv" || o == "maximum" || o == "minimum") valid.push_back(o);
  }
  op = r_.pick(valid);
  DT res = p, comp = p;
  if (op == "div") res = comp = lub_float(p);
  if (op == "lt" || op == "le" || op == "gt" || op == "ge" || op == "eq" || op == "ne") res = DT::Bool;
  if (op == "logical_and" || op == "logical_or") res = comp = DT::Bool;
  push(mk(op, {a, b}, res, comp, *out));
  return true;
}

bool Gen::scalar(int a) {
  static const std::vector<std::string> ops = {"add", "sub", "mul", "div", "lt", "gt", "eq"};
  DT d = node(a).dtype;
  Node n = mk("scalar", {a}, d, d, node(a).shape);
  n.sub = r_.pick(ops);
  n.scalar_int = r_.chance(0.5);
  n.reverse = r_.chance(0.3);
  if (n.scalar_int) n.value = static_cast<double>(is_unsigned(d) ? r_.range(0, 4) : r_.range(-3, 4));
  else n.value = r_.pick(std::vector<double>{0.5, -1.5, 2.0, 0.1, 3.0, -0.25, 1e-3});
  // an integer tensor's scalar at the ends of its dtype's range (int64's: int32's, the C++ int the API
  // takes): the arithmetic wraps there, and constant folding and bounds must wrap the same way
  if (n.scalar_int && is_int(d) && r_.chance(0.4)) {
    if (d == DT::I8) n.value = r_.pick(std::vector<double>{127, -128, -127});
    else if (d == DT::U8) n.value = r_.pick(std::vector<double>{255, 254, 128});
    else n.value = r_.pick(std::vector<double>{2147483647.0, -2147483648.0, -2147483647.0});
  }
  DT sdt = (is_float(d) || (is_int(d) && n.scalar_int)) ? d : n.scalar_int ? DT::I32 : DT::F32;
  DT p = lub(d, sdt);
  if (n.sub == "sub" && p == DT::Bool) return false;
  n.cdtype = n.dtype = p;
  if (n.sub == "div") n.cdtype = n.dtype = lub_float(p);
  if (n.sub == "lt" || n.sub == "gt" || n.sub == "eq") n.dtype = DT::Bool;
  push(std::move(n));
  return true;
}

// ---- reductions -----------------------------------------------------------------------------------
bool Gen::reduce(int a) {
  if (r_.chance(0.5)) return r_.chance(0.5) ? arg_or_scan(a) : normalize(a);
  if (r_.chance(0.25)) return pool(a);
  const Node& A = node(a);
  std::string op = r_.pick(std::vector<std::string>{"sum", "sum", "max", "min", "mean", "prod", "any", "all"});
  int nd = static_cast<int>(A.shape.size());
  bool keepdim = r_.chance(0.4);
  std::vector<bool> red(static_cast<size_t>(nd), false);
  std::vector<int64_t> ints;
  if (nd == 0) {
    int c = r_.weighted({2, 1, 1});  // a 0-d tensor accepts axis 0 and -1 (torch's rule)
    if (c == 1) ints = {0};
    if (c == 2) ints = {-1};
  } else if (r_.chance(0.25)) {
    red.assign(red.size(), true);
  } else {
    for (int i = 0; i < nd; i++)
      if (r_.chance(0.5)) red[static_cast<size_t>(i)] = true;
    if (std::find(red.begin(), red.end(), true) == red.end()) red[static_cast<size_t>(r_.range(0, nd - 1))] = true;
    ints = axes_arg(red);
  }
  for (int i = 0; i < nd; i++)  // max/min over a zero-length axis is an error (as torch): not generated
    if (red[static_cast<size_t>(i)] && (op == "max" || op == "min") && A.shape[static_cast<size_t>(i)] == 0) return false;
  reduce_over(op, a, ints, red, keepdim);
  return true;
}

// A window over the last two dims, torch's output size: (i + 2p - d(k-1) - 1) / s + 1.
// max_pool2d of any dtype but bool (its padding is the dtype's lowest value); avg_pool2d of floats, its
// padding counted (count_include_pad).
bool Gen::pool(int a) {
  const Node& A = node(a);
  int nd = static_cast<int>(A.shape.size());
  std::string op = r_.chance(0.5) ? "max_pool2d" : "avg_pool2d";
  if (nd < 2 || A.dtype == DT::Bool || (op == "avg_pool2d" && !is_float(A.dtype))) return false;
  int64_t k = r_.range(1, 3), s = r_.pick(std::vector<int64_t>{1, 2, k}), d = r_.chance(0.2) ? 2 : 1, p = r_.range(0, k / 2);
  Shape out = A.shape;
  for (int j = nd - 2; j < nd; j++) {
    int64_t span = A.shape[static_cast<size_t>(j)] + 2 * p - d * (k - 1) - 1;
    if (span < 0) return false;
    out[static_cast<size_t>(j)] = span / s + 1;
  }
  if (numel(out) == 0 || numel(out) * k * k > 4 * kCap) return false;
  Node n = mk(op, {a}, A.dtype, A.dtype, out);
  n.ints = {k, s, d, p};
  if (op == "avg_pool2d") n.cdtype = sum_acc(A.dtype);
  return push(std::move(n)), true;
}

bool Gen::arg_or_scan(int a) {
  const Node& A = node(a);
  std::string op = r_.pick(std::vector<std::string>{"argmax", "argmin", "cumsum", "cummax"});
  int nd = static_cast<int>(A.shape.size());
  Node n = mk(op, {a}, A.dtype, A.dtype, {});
  bool scan = op == "cumsum" || op == "cummax", all = !scan && r_.chance(0.3);  // argmax of the flattened tensor
  int64_t axis = nd == 0 ? r_.pick(std::vector<int64_t>{0, -1}) : r_.range(0, nd - 1);
  int64_t len = nd == 0 ? 1 : A.shape[static_cast<size_t>(axis)];
  if (!all) n.ints = {nd > 0 && r_.chance(0.3) ? axis - nd : axis};
  n.keepdim = !scan && r_.chance(0.4);
  if (op == "cummax") return n.shape = A.shape, push(std::move(n)), true;
  if (op == "cumsum") {
    n.shape = A.shape;
    n.cdtype = sum_acc(A.dtype);
    n.dtype = A.dtype == DT::F16 ? DT::F16 : n.cdtype;
    return push(std::move(n)), true;
  }
  if ((all ? numel(A.shape) : len) == 0) return false;  // argmax of nothing is an error (as torch)
  n.dtype = DT::I32;
  std::vector<bool> red(static_cast<size_t>(nd), all);
  if (nd > 0) red[static_cast<size_t>(axis)] = true;
  n.shape = reduced_shape(A.shape, red, n.keepdim);
  push(std::move(n));
  return true;
}

bool Gen::normalize(int a) {
  const Node& A = node(a);
  std::string op = r_.pick(std::vector<std::string>{"softmax", "log_softmax", "logsumexp", "var", "std"});
  int nd = static_cast<int>(A.shape.size());
  DT f = lub_float(A.dtype);
  Node n = mk(op, {a}, f, f, {});
  if (op == "softmax" || op == "log_softmax") {
    int64_t axis = nd == 0 ? r_.pick(std::vector<int64_t>{0, -1}) : r_.range(0, nd - 1);
    n.ints = {nd > 0 && r_.chance(0.3) ? axis - nd : axis};
    n.shape = A.shape;
    return push(std::move(n)), true;
  }
  std::vector<bool> red(static_cast<size_t>(nd), r_.chance(0.3));  // all axes (an empty list), or some
  if (nd > 0 && !red[0]) {
    for (int i = 0; i < nd; i++) red[static_cast<size_t>(i)] = r_.chance(0.5);
    if (std::find(red.begin(), red.end(), true) == red.end()) red[static_cast<size_t>(r_.range(0, nd - 1))] = true;
    n.ints = axes_arg(red);
  }
  n.keepdim = r_.chance(0.4);
  n.shape = reduced_shape(A.shape, red, n.keepdim);
  if (op == "var" || op == "std") {
    n.cdtype = sum_acc(A.dtype);  // the mean's sum
    n.value = r_.pick(std::vector<double>{1, 1, 0});  // the correction
  }
  return push(std::move(n)), true;
}

std::vector<int64_t> Gen::axes_arg(const std::vector<bool>& red) {
  int nd = static_cast<int>(red.size());
  std::vector<int64_t> ax;
  for (int i = 0; i < nd; i++)
    if (red[static_cast<size_t>(i)]) ax.push_back(r_.chance(0.3) ? i - nd : i);
  if (r_.chance(0.3)) std::reverse(ax.begin(), ax.end());
  return ax;
}

int Gen::reduce_over(const std::string& op, int a, std::vector<int64_t> ints, const std::vector<bool>& red, bool keepdim) {
  const Node& A = node(a);
  Node n = mk(op, {a}, A.dtype, A.dtype, {});
  n.ints = std::move(ints);
  n.keepdim = keepdim;
  n.shape = reduced_shape(A.shape, red, keepdim);
  if (op == "sum") { n.cdtype = sum_acc(A.dtype); n.dtype = A.dtype == DT::F16 ? DT::F16 : n.cdtype; }
  if (op == "mean") { n.cdtype = sum_acc(A.dtype); n.dtype = is_float(A.dtype) ? A.dtype : DT::F32; }
  if (op == "prod") { n.cdtype = sum_acc(A.dtype); n.dtype = A.dtype == DT::F16 ? DT::F16 : n.cdtype; }
  if (op == "any" || op == "all") n.dtype = DT::Bool;
  return push(std::move(n));
}

// ---- movement -------------------------------------------------------------------------------------
Shape Gen::reshape_target(int64_t n) {
  if (n == 0) {
    Shape s(static_cast<size_t>(r_.range(1, 3)));
    for (int64_t& d : s) d = r_.range(1, 3);
    s[static_cast<size_t>(r_.range(0, static_cast<int64_t>(s.size()) - 1))] = 0;
    return s;
  }
  Shape s(static_cast<size_t>(r_.range(n == 1 ? 0 : 1, 4)), 1);
  int64_t m = n;
  for (int64_t f = 2; m > 1; f++)
    while (m % f == 0) { s[static_cast<size_t>(r_.range(0, static_cast<int64_t>(s.size()) - 1))] *= f; m /= f; }
  return s;
}

bool Gen::movement(int a) {
  const Node& A = node(a);
  Shape s = A.shape;
  int nd = static_cast<int>(s.size());
  int k = r_.weighted({20, 15, 12, 18, 15, 12, 18, 6});
  Node n = mk("", {a}, A.dtype, A.dtype, {});
  if (k == 0) {
    n.kind = "reshape";
    n.shape = n.ints = reshape_target(numel(s));
  } else if (k == 1) {
    if (nd < 2) return false;
    std::vector<int64_t> order(static_cast<size_t>(nd));
    for (int i = 0; i < nd; i++) order[static_cast<size_t>(i)] = i;
    for (int i = nd - 1; i > 0; i--) std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(r_.range(0, i))]);
    n.kind = "permute";
    n.ints = order;
    for (int64_t o : order) n.shape.push_back(s[static_cast<size_t>(o)]);
  } else if (k == 2) {
    bool changed = false;
    n.ints = s;
    for (size_t i = 0; i < s.size(); i++) {
      if (s[i] == 1 && r_.chance(0.6)) { s[i] = n.ints[i] = r_.range(2, 4); changed = true; }
      else if (r_.chance(0.3)) n.ints[i] = -1;  // -1 keeps the dim
    }
    if (r_.chance(0.3)) { int64_t e = r_.range(2, 3); s.insert(s.begin(), e); n.ints.insert(n.ints.begin(), e); changed = true; }
    if (!changed || numel(s) > kCap) return false;
    n.kind = "expand";
    n.shape = s;
  } else if (k == 3 && nd > 0 && numel(s) > 0 && r_.chance(0.35)) {  // torch's F.pad with a mode
    n.kind = "pad2d";
    n.sub = r_.pick(std::vector<std::string>{"reflect", "replicate", "circular"});
    bool any = false;
    for (int64_t j = 0, np = r_.range(1, nd); j < np; j++) {  // (left, right) of the last dim first
      int64_t& d = s[static_cast<size_t>(nd - 1 - j)];
      int64_t most = n.sub == "reflect" ? d - 1 : n.sub == "circular" ? d : 2;  // a mirror needs d > pad
      int64_t b = std::min(most, r_.pick(std::vector<int64_t>{0, 0, 1, 2})), e = std::min(most, r_.pick(std::vector<int64_t>{0, 1, 2}));
      n.ints.push_back(b);
      n.ints.push_back(e);
      d += b + e;
      any |= b + e > 0;
    }
    if (!any || numel(s) > kCap) return false;
    n.shape = s;
  } else if (k == 3) {
    if (nd == 0) return false;
    bool any = false;
    for (int64_t& d : s) {
      int64_t b = r_.pick(std::vector<int64_t>{0, 0, 1, 2}), e = r_.pick(std::vector<int64_t>{0, 0, 1, 2});
      n.pairs.push_back({b, e});
      d += b + e;
      any |= b + e > 0;
    }
    if (!any || numel(s) > kCap) return false;
    n.kind = "pad";
    n.value = r_.chance(0.5) ? 0 : random_value(A.dtype);
    n.shape = s;
  } else if (k == 4) {
    if (nd == 0) return false;
    for (int64_t& d : s) {
      int64_t b = 0, e = d;
      if (r_.chance(0.5)) { b = r_.range(0, d); e = r_.range(b, d); }
      n.pairs.push_back({b, e});
      d = e - b;
    }
    n.kind = "shrink";
    n.shape = s;
  } else if (k == 5) {
    if (nd == 0) return false;
    for (int i = 0; i < nd; i++)
      if (r_.chance(0.5)) n.ints.push_back(r_.chance(0.3) ? i - nd : i);
    if (n.ints.empty()) n.ints.push_back(r_.range(0, nd - 1));
    n.kind = "flip";
    n.shape = s;
  } else if (k == 6) {
    if (nd == 0) return false;
    int cnt = static_cast<int>(r_.range(1, nd));
    for (int i = 0; i < cnt; i++) {
      int64_t dim = s[static_cast<size_t>(i)];
      SliceArg sl;
      if (dim > 0 && r_.chance(0.2)) {
        sl.is_int = true;
        sl.idx = r_.range(-dim, dim - 1);
      } else {
        if (r_.chance(0.6)) sl.start = r_.range(-dim - 2, dim + 2);
        if (r_.chance(0.6)) sl.stop = r_.range(-dim - 2, dim + 2);
        if (r_.chance(0.7)) sl.step = r_.pick(std::vector<int64_t>{1, 2, 3, -1, -2});
        n.shape.push_back(slice_indices(sl, dim).len);
      }
      n.slices.push_back(sl);
    }
    for (int i = cnt; i < nd; i++) n.shape.push_back(s[static_cast<size_t>(i)]);
    n.kind = "index";
  } else {
    int64_t d = r_.range(-nd - 1, nd);
    n.kind = "unsqueeze";
    n.ints = {d};
    s.insert(s.begin() + (d < 0 ? d + nd + 1 : d), 1);
    n.shape = s;
  }
  push(std::move(n));
  return true;
}

bool Gen::cat_stack(int a) {
  const Node A = node(a);
  Shape s = A.shape;
  int nd = static_cast<int>(s.size());
  bool stack = r_.chance(0.35);
  if (!stack && nd == 0) return false;
  int64_t dim = stack ? r_.range(-nd - 1, nd) : r_.range(-nd, nd - 1);
  int64_t nd_dim = dim < 0 ? dim + (stack ? nd + 1 : nd) : dim;
  int pieces = static_cast<int>(r_.range(2, 3));
  std::vector<int> args = {a};
  int64_t total = stack ? 1 : s[static_cast<size_t>(nd_dim)];
  for (int i = 1; i < pieces; i++) {
    int c = r_.weighted({3, 3, 4});
    int id = -1;
    if (c == 0) id = a;
    if (c == 1) {
      std::vector<int> cand;
      for (int j = 0; j <= last(); j++) {
        const Node& J = node(j);
        if (J.dtype != A.dtype || J.shape.size() != s.size()) continue;
        bool ok = true;
        for (int q = 0; q < nd; q++) ok &= J.shape[static_cast<size_t>(q)] == s[static_cast<size_t>(q)] || (!stack && q == nd_dim);
        if (ok) cand.push_back(j);
      }
      if (!cand.empty()) id = r_.pick(cand);
    }
    if (id < 0) {
      Shape t = s;
      if (!stack) t[static_cast<size_t>(nd_dim)] = r_.range(0, 3);
      id = add_input(t, A.dtype);
    }
    args.push_back(id);
    total += stack ? 1 : node(id).shape[static_cast<size_t>(nd_dim)];
  }
  if (stack) s.insert(s.begin() + nd_dim, static_cast<int64_t>(pieces));
  else s[static_cast<size_t>(nd_dim)] = total;
  if (numel(s) > kCap) return false;
  Node n = mk(stack ? "stack" : "cat", args, A.dtype, A.dtype, s);
  n.ints = {dim};
  push(std::move(n));
  return true;
}

// ---- matmul ---------------------------------------------------------------------------------------
bool Gen::dot(int a) {
  const Node A = node(a);
  int nd = static_cast<int>(A.shape.size());
  if (nd < 1 || nd > 3) return false;
  int64_t k = A.shape.back();
  int w;
  if (nd == 2 && r_.chance(0.2)) {  // x @ x.T: one value read twice
    Node t = mk("permute", {a}, A.dtype, A.dtype, {A.shape[1], A.shape[0]});
    t.ints = {1, 0};
    w = push(std::move(t));
  } else {
    Shape ws;
    int c = static_cast<int>(r_.range(0, 2));
    if (c == 0) ws = {k};
    else if (c == 1) ws = {k, r_.range(0, 4)};
    else ws = {nd == 3 ? (r_.chance(0.5) ? A.shape[0] : 1) : r_.range(1, 3), k, r_.range(1, 4)};
    w = add_input(ws, r_.chance(0.6) ? A.dtype : random_dtype());
  }
  const Shape& W = node(w).shape;
  Shape out;
  if (nd == 1 && W.size() == 1) out = {};
  else if (W.size() == 1) out = Shape(A.shape.begin(), A.shape.end() - 1);
  else {
    Shape ab(A.shape.begin(), A.shape.end() - std::min(nd, 2)), wb(W.begin(), W.end() - 2);
    auto b = broadcast(ab, wb);
    if (!b) return false;
    out = *b;
    if (nd >= 2) out.push_back(A.shape[static_cast<size_t>(nd - 2)]);
    out.push_back(W.back());
  }
  if (numel(out) > kCap || numel(out) * std::max<int64_t>(k, 1) > 4 * kCap) return false;
  DT p = lub(A.dtype, node(w).dtype);
  push(mk("dot", {a, w}, p, sum_acc(p), out));
  return true;
}

// ---- constants and where --------------------------------------------------------------------------
bool Gen::full_where(int a) {
  const Node A = node(a);
  DT d = random_dtype();
  Node f = mk("full", {}, d, d, variant(A.shape));
  f.value = random_value(d);
  int fid = push(std::move(f));
  int c = r_.chance(0.5) ? partner(a) : a;
  auto xy = broadcast(node(a).shape, node(fid).shape);
  auto out = broadcast(node(c).shape, *xy);
  if (!out || numel(*out) > kCap) return false;
  bool swap = r_.chance(0.5);
  DT p = lub(node(a).dtype, d);
  push(mk("where", {c, swap ? fid : a, swap ? a : fid}, p, p, *out));
  return true;
}

}  // namespace gen

Program generate(uint64_t seed) { return gen::Gen(seed).run(); }

}  // namespace tgdiff
