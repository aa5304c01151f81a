#include "program.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

namespace tgdiff {

// ------------------------------------------------------------------------------------------------------
// dtypes: tinygrad's rules, written out here independently of src/helpers/dtype.cpp
// ------------------------------------------------------------------------------------------------------

namespace {
struct DTInfo { DT d; const char* name; };
const DTInfo kDTs[] = {{DT::Bool, "bool"},   {DT::I8, "int8"},     {DT::U8, "uint8"},     {DT::I16, "int16"},
                       {DT::U16, "uint16"},  {DT::I32, "int32"},   {DT::U32, "uint32"},   {DT::I64, "int64"},
                       {DT::U64, "uint64"},  {DT::F16, "float16"}, {DT::F32, "float32"}, {DT::F64, "float64"}};

// tinygrad's promo_lattice (dtype.py), restricted to the dtypes above: each dtype's direct parents.
std::vector<DT> parents(DT d) {
  switch (d) {
    case DT::Bool: return {DT::I8, DT::U8};
    case DT::I8: return {DT::I16};
    case DT::I16: return {DT::I32};
    case DT::I32: return {DT::I64};
    case DT::I64: return {DT::F16};
    case DT::U8: return {DT::I16, DT::U16};
    case DT::U16: return {DT::I32, DT::U32};
    case DT::U32: return {DT::I64, DT::U64};
    case DT::U64: return {DT::F16};
    case DT::F16: return {DT::F32};
    case DT::F32: return {DT::F64};
    case DT::F64: return {};
  }
  return {};
}
std::set<DT> ancestors(DT d) {
  std::set<DT> r{d};
  for (DT p : parents(d))
    for (DT a : ancestors(p)) r.insert(a);
  return r;
}
}  // namespace

const char* name(DT d) { return kDTs[static_cast<int>(d)].name; }
DT dt_from_name(const std::string& n) {
  for (const DTInfo& i : kDTs)
    if (n == i.name) return i.d;
  throw std::runtime_error("unknown dtype " + n);
}
bool is_float(DT d) { return d == DT::F16 || d == DT::F32 || d == DT::F64; }
bool is_int(DT d) { return d != DT::Bool && !is_float(d); }
bool is_unsigned(DT d) { return d == DT::U8 || d == DT::U16 || d == DT::U32 || d == DT::U64; }
// The enum order is tinygrad's priority order: the least common ancestor is the first in it.
DT lub(DT a, DT b) {
  std::set<DT> aa = ancestors(a), bb = ancestors(b);
  for (const DTInfo& i : kDTs)
    if (aa.count(i.d) && bb.count(i.d)) return i.d;
  throw std::runtime_error("no common dtype");
}
DT lub_float(DT d) { return is_float(d) ? d : DT::F32; }
DT sum_acc(DT d) {
  if (is_float(d)) return d == DT::F16 ? DT::F32 : d;
  if (is_unsigned(d)) return lub(d, DT::U32);
  return lub(d, DT::I32);
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

// ------------------------------------------------------------------------------------------------------
// The generator
// ------------------------------------------------------------------------------------------------------

namespace {

// splitmix64: portable and fully specified, so a seed means the same program everywhere.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int64_t range(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1)); }
  double unif() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return unif() < p; }
  template <class T> const T& pick(const std::vector<T>& v) { return v[static_cast<size_t>(range(0, static_cast<int64_t>(v.size()) - 1))]; }
  int weighted(const std::vector<double>& w) {
    double total = 0;
    for (double x : w) total += x;
    double u = unif() * total;
    for (size_t i = 0; i < w.size(); i++) {
      if (u < w[i]) return static_cast<int>(i);
      u -= w[i];
    }
    return static_cast<int>(w.size()) - 1;
  }
};

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

constexpr int64_t kCap = 64;  // elements per value: keeps kernels and the reference cheap
const std::vector<DT> kInputDTs = {DT::F32, DT::F64, DT::F16, DT::I32, DT::I64, DT::I8, DT::U8, DT::Bool};
const std::vector<double> kInputDTWeights = {33, 10, 12, 15, 8, 8, 7, 7};

class Gen {
 public:
  explicit Gen(uint64_t seed) : r_{seed * 0x2545f4914f6cdd1dull + 0x1234567ull} { p_.seed = seed; }

  Program run() {
    int n_in = static_cast<int>(r_.range(1, 2));
    for (int i = 0; i < n_in; i++) add_input(random_shape(), random_dtype());
    int n_ops = static_cast<int>(r_.range(2, 7));
    for (int i = 0; i < n_ops; i++) step();
    int last = static_cast<int>(p_.nodes.size()) - 1;
    p_.outputs.push_back(last);
    for (double pr : {0.3, 0.1}) {
      if (!r_.chance(pr)) continue;
      int o = static_cast<int>(r_.range(0, last));
      if (p_.nodes[static_cast<size_t>(o)].kind != "input" && std::find(p_.outputs.begin(), p_.outputs.end(), o) == p_.outputs.end())
        p_.outputs.push_back(o);
    }
    p_.corealize = r_.chance(0.5);
    return p_;
  }

 private:
  Rng r_;
  Program p_;

  const Node& node(int id) const { return p_.nodes[static_cast<size_t>(id)]; }
  int last() const { return static_cast<int>(p_.nodes.size()) - 1; }

  DT random_dtype() { return kInputDTs[static_cast<size_t>(r_.weighted(kInputDTWeights))]; }

  Shape random_shape() {
    int rank = r_.weighted({10, 25, 30, 25, 10});
    Shape s;
    for (int i = 0; i < rank; i++) s.push_back(r_.chance(0.04) ? 0 : r_.chance(0.22) ? 1 : r_.range(2, 5));
    while (numel(s) > kCap) *std::max_element(s.begin(), s.end()) -= 1;
    return s;
  }

  int push(Node n) {
    if (n.kind != "input" && n.kind != "full") n.sched = r_.weighted({86, 7, 7});
    p_.nodes.push_back(std::move(n));
    return last();
  }

  static Node mk(const std::string& kind, std::vector<int> args, DT dtype, DT cdtype, Shape shape) {
    Node n;
    n.kind = kind;
    n.args = std::move(args);
    n.dtype = dtype;
    n.cdtype = cdtype;
    n.shape = std::move(shape);
    return n;
  }

  // Input values are exactly representable in their dtype (float16: multiples of 1/1024 in [-2, 2] or of
  // 1/16), so every consumer reads the same numbers; a few tensors get NaN, infinities, huge and
  // subnormal values, and integer tensors their extremes (to exercise wrap-around).
  int add_input(Shape shape, DT d) {
    Node n = mk("input", {}, d, d, std::move(shape));
    int64_t cnt = numel(n.shape);
    if (is_float(d)) {
      bool grid = r_.chance(0.5), specials = r_.chance(0.3);
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

  // Half of the time the newest value (chains), else any earlier one (shared subgraphs).
  int pick() { return r_.chance(0.5) ? last() : static_cast<int>(r_.range(0, last())); }

  // A shape that broadcasts with `a`: some dims 1, fewer or more leading dims, 0-d.
  Shape variant(const Shape& a) {
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

  // A second operand for `a`: an earlier value that broadcasts with it, or a fresh input.
  int partner(int a) {
    const Node& A = node(a);
    if (r_.chance(0.4)) {
      std::vector<int> c;
      for (int j = 0; j <= last(); j++) {
        auto b = broadcast(A.shape, node(j).shape);
        if (b && numel(*b) <= kCap) c.push_back(j);
      }
      if (!c.empty()) return r_.pick(c);
    }
    bool input_dt = std::find(kInputDTs.begin(), kInputDTs.end(), A.dtype) != kInputDTs.end();
    return add_input(variant(A.shape), r_.chance(0.6) && input_dt ? A.dtype : random_dtype());
  }

  double random_value(DT d) {
    if (d == DT::Bool) return static_cast<double>(r_.range(0, 1));
    if (is_unsigned(d)) return r_.pick(std::vector<double>{0, 3, 7, 1});
    if (is_int(d)) return r_.pick(std::vector<double>{0, 3, -2, 1});
    return r_.pick(std::vector<double>{0, 1.5, -2.0, 0.25, INFINITY});
  }

  void step() {
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
      if (ok) return;
    }
    unary(last());
  }

  // ---- elementwise ----------------------------------------------------------------------------------
  bool unary(int a) {
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

  // C leaves float -> int conversion undefined for NaN and values out of the target's range, so such a
  // cast is preceded by NaN -> 0 and a clip into the range (in bounds exact in the source dtype).
  bool cast(int a, DT to) {
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

  bool binary(int a) {
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
    std::vector<std::string> valid;  // the ops defined for these dtypes (idiv twice: its corner cases matter)
    for (const std::string& o : ops) {
      if (o == "where" || (o == "sub" && p == DT::Bool) || (o.rfind("bitwise_", 0) == 0 && is_float(p))) continue;
      if (o == "idiv" && !is_int(p)) continue;
      valid.push_back(o);
      if (o == "idiv") valid.push_back(o);
    }
    op = r_.pick(valid);
    DT res = p, comp = p;
    if (op == "div") res = comp = lub_float(p);
    if (op == "lt" || op == "le" || op == "gt" || op == "ge" || op == "eq" || op == "ne") res = DT::Bool;
    if (op == "logical_and" || op == "logical_or") res = comp = DT::Bool;
    push(mk(op, {a, b}, res, comp, *out));
    return true;
  }

  // tensor op C++ scalar (tinygrad's rule: an int keeps an int or float tensor's dtype; a float keeps a
  // float tensor's; otherwise the scalar is int32 / float32 and the usual promotion applies).
  bool scalar(int a) {
    static const std::vector<std::string> ops = {"add", "sub", "mul", "div", "lt", "gt", "eq"};
    DT d = node(a).dtype;
    Node n = mk("scalar", {a}, d, d, node(a).shape);
    n.sub = r_.pick(ops);
    n.scalar_int = r_.chance(0.5);
    n.reverse = r_.chance(0.3);
    if (n.scalar_int) n.value = static_cast<double>(is_unsigned(d) ? r_.range(0, 4) : r_.range(-3, 4));
    else n.value = r_.pick(std::vector<double>{0.5, -1.5, 2.0, 0.1, 3.0, -0.25, 1e-3});
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
  bool reduce(int a) {
    const Node& A = node(a);
    std::string op = r_.pick(std::vector<std::string>{"sum", "sum", "max", "min", "mean"});
    int nd = static_cast<int>(A.shape.size());
    Node n = mk(op, {a}, A.dtype, A.dtype, {});
    n.keepdim = r_.chance(0.4);
    std::vector<bool> red(static_cast<size_t>(nd), false);
    if (nd == 0) {
      int c = r_.weighted({2, 1, 1});  // a 0-d tensor accepts axis 0 and -1 (torch's rule)
      if (c == 1) n.ints = {0};
      if (c == 2) n.ints = {-1};
    } else if (r_.chance(0.25)) {
      red.assign(red.size(), true);
    } else {
      for (int i = 0; i < nd; i++)
        if (r_.chance(0.5)) red[static_cast<size_t>(i)] = true;
      if (std::find(red.begin(), red.end(), true) == red.end()) red[static_cast<size_t>(r_.range(0, nd - 1))] = true;
      std::vector<int64_t> ax;
      for (int i = 0; i < nd; i++)
        if (red[static_cast<size_t>(i)]) ax.push_back(r_.chance(0.3) ? i - nd : i);
      if (r_.chance(0.3)) std::reverse(ax.begin(), ax.end());
      n.ints = ax;
    }
    for (int i = 0; i < nd; i++)  // max/min over a zero-length axis is an error (as torch): not generated
      if (red[static_cast<size_t>(i)] && (op == "max" || op == "min") && A.shape[static_cast<size_t>(i)] == 0) return false;
    for (int i = 0; i < nd; i++) {
      if (!red[static_cast<size_t>(i)]) n.shape.push_back(A.shape[static_cast<size_t>(i)]);
      else if (n.keepdim) n.shape.push_back(1);
    }
    if (op == "sum") { n.cdtype = sum_acc(A.dtype); n.dtype = A.dtype == DT::F16 ? DT::F16 : n.cdtype; }
    if (op == "mean") { n.cdtype = sum_acc(A.dtype); n.dtype = is_float(A.dtype) ? A.dtype : DT::F32; }
    push(std::move(n));
    return true;
  }

  // ---- movement -------------------------------------------------------------------------------------
  Shape reshape_target(int64_t n) {
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

  bool movement(int a) {
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

  bool cat_stack(int a) {
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
  bool dot(int a) {
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
  bool full_where(int a) {
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
};

// ------------------------------------------------------------------------------------------------------
// JSON
// ------------------------------------------------------------------------------------------------------

nlohmann::json num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
double unnum(const nlohmann::json& j) {
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    return s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY;
  }
  return j.get<double>();
}
nlohmann::json opt(const std::optional<int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
std::optional<int64_t> unopt(const nlohmann::json& j) { return j.is_null() ? std::nullopt : std::optional<int64_t>(j.get<int64_t>()); }

}  // namespace

Program generate(uint64_t seed) { return Gen(seed).run(); }

nlohmann::json to_json(const Program& p) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const Node& n : p.nodes) {
    nlohmann::json j = {{"kind", n.kind}, {"args", n.args}, {"dtype", name(n.dtype)}, {"cdtype", name(n.cdtype)}, {"shape", n.shape}};
    if (n.kind == "input") {
      nlohmann::json data = nlohmann::json::array();
      if (is_float(n.dtype)) for (double v : n.fdata) data.push_back(num(v));
      else for (int64_t v : n.idata) data.push_back(v);
      j["data"] = data;
    }
    j["ints"] = n.ints;
    if (!n.pairs.empty()) j["pairs"] = n.pairs;
    if (!n.slices.empty()) {
      j["slices"] = nlohmann::json::array();
      for (const SliceArg& s : n.slices) j["slices"].push_back({s.is_int, s.idx, opt(s.start), opt(s.stop), opt(s.step)});
    }
    j["value"] = num(n.value);
    j["value2"] = num(n.value2);
    if (!n.sub.empty()) j["sub"] = n.sub;
    j["scalar_int"] = n.scalar_int;
    j["reverse"] = n.reverse;
    j["keepdim"] = n.keepdim;
    j["sched"] = n.sched;
    nodes.push_back(j);
  }
  return {{"seed", p.seed}, {"nodes", nodes}, {"outputs", p.outputs}, {"corealize", p.corealize}};
}

Program from_json(const nlohmann::json& j) {
  Program p;
  p.seed = j.at("seed").get<uint64_t>();
  p.outputs = j.at("outputs").get<std::vector<int>>();
  p.corealize = j.at("corealize").get<bool>();
  for (const nlohmann::json& x : j.at("nodes")) {
    Node n;
    n.kind = x.at("kind").get<std::string>();
    n.args = x.at("args").get<std::vector<int>>();
    n.dtype = dt_from_name(x.at("dtype").get<std::string>());
    n.cdtype = dt_from_name(x.at("cdtype").get<std::string>());
    n.shape = x.at("shape").get<Shape>();
    if (x.contains("data"))
      for (const nlohmann::json& v : x["data"]) {
        if (is_float(n.dtype)) n.fdata.push_back(unnum(v));
        else n.idata.push_back(v.get<int64_t>());
      }
    if (x.contains("ints")) n.ints = x["ints"].get<std::vector<int64_t>>();
    if (x.contains("pairs")) n.pairs = x["pairs"].get<std::vector<std::pair<int64_t, int64_t>>>();
    if (x.contains("slices"))
      for (const nlohmann::json& s : x["slices"])
        n.slices.push_back({s[0].get<bool>(), s[1].get<int64_t>(), unopt(s[2]), unopt(s[3]), unopt(s[4])});
    n.value = unnum(x.at("value"));
    n.value2 = unnum(x.at("value2"));
    if (x.contains("sub")) n.sub = x["sub"].get<std::string>();
    n.scalar_int = x.at("scalar_int").get<bool>();
    n.reverse = x.at("reverse").get<bool>();
    n.keepdim = x.at("keepdim").get<bool>();
    n.sched = x.at("sched").get<int>();
    p.nodes.push_back(std::move(n));
  }
  return p;
}

// ------------------------------------------------------------------------------------------------------
// Printing
// ------------------------------------------------------------------------------------------------------

namespace {

std::string fmt_double(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  std::string s = b;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}
std::string fmt_float(double v) {
  if (std::isnan(v) || std::isinf(v)) return fmt_double(v);
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  std::string s = b;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + "f";
}
std::string fmt_int(int64_t v, DT d) {
  if (d == DT::Bool) return v ? "true" : "false";
  if (v == INT64_MIN) return "INT64_MIN";
  if (v == INT32_MIN && d == DT::I32) return "INT32_MIN";
  return std::to_string(v);
}
template <class T> std::string list(const std::vector<T>& v, const std::function<std::string(const T&)>& f) {
  std::string r;
  for (size_t i = 0; i < v.size(); i++) r += (i ? ", " : "") + f(v[i]);
  return r;
}
std::string ints_str(const std::vector<int64_t>& v) {
  return "{" + list<int64_t>(v, [](const int64_t& x) { return std::to_string(x); }) + "}";
}
std::string pairs_str(const std::vector<std::pair<int64_t, int64_t>>& v) {
  return "{" + list<std::pair<int64_t, int64_t>>(v, [](const auto& x) { return "{" + std::to_string(x.first) + ", " + std::to_string(x.second) + "}"; }) + "}";
}
std::string opt_str(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "std::nullopt"; }
std::string slices_str(const std::vector<SliceArg>& v) {
  return "{" + list<SliceArg>(v, [](const SliceArg& s) {
           return s.is_int ? std::to_string(s.idx) : "Slice(" + opt_str(s.start) + ", " + opt_str(s.stop) + ", " + opt_str(s.step) + ")";
         }) + "}";
}
std::string dt_cpp(DT d) { return d == DT::Bool ? "dtypes::bool_" : std::string("dtypes::") + name(d); }
const char* cpp_op(const std::string& sub) {
  if (sub == "add") return "+";
  if (sub == "sub") return "-";
  if (sub == "mul") return "*";
  if (sub == "div") return "/";
  if (sub == "lt") return "<";
  if (sub == "gt") return ">";
  return "==";
}
std::string v(int id) { return "v" + std::to_string(id); }

// The C++ expression that computes node n (inputs aside).
std::string expr(const Node& n) {
  const std::vector<int>& a = n.args;
  const std::string& k = n.kind;
  if (k == "cast") return v(a[0]) + ".cast(" + dt_cpp(n.dtype) + ")";
  if (k == "clip") return v(a[0]) + ".clip(" + fmt_double(n.value) + ", " + fmt_double(n.value2) + ")";
  if (k == "where") return v(a[0]) + ".where(" + v(a[1]) + ", " + v(a[2]) + ")";
  if (k == "scalar") {
    std::string s = n.scalar_int ? std::to_string(static_cast<int64_t>(n.value)) : fmt_double(n.value);
    return n.reverse ? s + " " + cpp_op(n.sub) + " " + v(a[0]) : v(a[0]) + " " + cpp_op(n.sub) + " " + s;
  }
  if (k == "sum" || k == "max" || k == "min" || k == "mean")
    return v(a[0]) + "." + k + "(" + ints_str(n.ints) + ", " + (n.keepdim ? "true" : "false") + ")";
  if (k == "reshape" || k == "permute" || k == "expand" || k == "flip") return v(a[0]) + "." + k + "(" + ints_str(n.ints) + ")";
  if (k == "pad") return v(a[0]) + ".pad(" + pairs_str(n.pairs) + ", " + fmt_double(n.value) + ")";
  if (k == "shrink") return v(a[0]) + ".shrink(" + pairs_str(n.pairs) + ")";
  if (k == "index") return v(a[0]) + ".index(" + slices_str(n.slices) + ")";
  if (k == "unsqueeze") return v(a[0]) + ".unsqueeze(" + std::to_string(n.ints[0]) + ")";
  if (k == "cat" || k == "stack")
    return "Tensor::" + k + "({" + list<int>(a, [](const int& x) { return v(x); }) + "}, " + std::to_string(n.ints[0]) + ")";
  if (k == "full") return "Tensor::full(" + ints_str(n.shape) + ", " + fmt_double(n.value) + ", " + dt_cpp(n.dtype) + ")";
  if (a.size() == 2) return v(a[0]) + "." + k + "(" + v(a[1]) + ")";
  return v(a[0]) + "." + k + "()";
}

}  // namespace

std::string describe(const Program& p) {
  std::ostringstream os;
  for (size_t i = 0; i < p.nodes.size(); i++) {
    const Node& n = p.nodes[i];
    os << "  v" << i << " = ";
    if (n.kind == "input") {
      os << "input " << name(n.dtype) << shape_str(n.shape) << " [";
      size_t cnt = is_float(n.dtype) ? n.fdata.size() : n.idata.size();
      for (size_t j = 0; j < cnt; j++)
        os << (j ? ", " : "") << (is_float(n.dtype) ? fmt_double(n.fdata[j]) : fmt_int(n.idata[j], n.dtype));
      os << "]";
    } else {
      os << expr(n) << "   -> " << name(n.dtype) << shape_str(n.shape);
      if (n.sched == 1) os << " [contiguous]";
      if (n.sched == 2) os << " [realize]";
    }
    os << "\n";
  }
  os << "  outputs:";
  for (int o : p.outputs) os << " v" << o;
  os << (p.corealize ? " (corealized)" : " (realized one by one)") << "\n";
  return os.str();
}

std::string to_cpp(const Program& p) {
  std::ostringstream os;
  os << "#include <tg/tg.h>\n#include <cmath>\n#include <cstdint>\n#include <iostream>\nusing namespace tg;\nusing namespace tg::indexing;\n\n"
     << "// tests/diff program, seed " << p.seed << "\nint main() {\n";
  for (size_t i = 0; i < p.nodes.size(); i++) {
    const Node& n = p.nodes[i];
    std::string id = v(static_cast<int>(i)), sh = "Shape" + ints_str(n.shape);
    if (n.kind == "input") {
      std::string vals;
      if (n.dtype == DT::F16) {
        char b[12];
        for (size_t j = 0; j < n.fdata.size(); j++) {
          std::snprintf(b, sizeof b, "0x%04x", half_bits(n.fdata[j]));
          vals += (j ? ", " : "") + std::string(b);
        }
        os << "  std::vector<uint16_t> " << id << "_bits{" << vals << "};  // float16: "
           << list<double>(n.fdata, [](const double& x) { return fmt_double(x); }) << "\n";
        os << "  Tensor " << id << " = Tensor::from_host(" << id << "_bits.data(), " << n.fdata.size() << ", " << sh << ", dtypes::float16);\n";
        continue;
      }
      static const char* ctype[] = {"bool", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "", "float", "double"};
      std::string ct = ctype[static_cast<int>(n.dtype)];
      if (n.dtype == DT::F32) vals = list<double>(n.fdata, [](const double& x) { return fmt_float(x); });
      else if (n.dtype == DT::F64) vals = list<double>(n.fdata, [](const double& x) { return fmt_double(x); });
      else vals = list<int64_t>(n.idata, [&](const int64_t& x) { return fmt_int(x, n.dtype); });
      os << "  Tensor " << id << " = Tensor(std::vector<" << ct << ">{" << vals << "}, " << sh << ");\n";
      continue;
    }
    os << "  Tensor " << id << " = " << expr(n) << ";  // " << name(n.dtype) << shape_str(n.shape) << "\n";
    if (n.sched == 1) os << "  " << id << " = " << id << ".contiguous();\n";
    if (n.sched == 2) os << "  " << id << ".realize();\n";
  }
  if (p.corealize) os << "  Tensor::corealize({" << list<int>(p.outputs, [](const int& x) { return v(x); }) << "});\n";
  for (int o : p.outputs) os << "  std::cout << \"" << v(o) << " = \" << " << v(o) << " << \"\\n\";\n";
  os << "}\n";
  return os.str();
}

uint16_t half_bits(double x) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return 0x7e00;
  if (std::isinf(x)) return sign | 0x7c00;
  double a = std::fabs(x);
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int E = e - 1;
  if (E >= -14) return static_cast<uint16_t>(sign | ((E + 15) << 10) | static_cast<int>(std::ldexp(a, -E) * 1024 - 1024));
  return static_cast<uint16_t>(sign | static_cast<int>(std::ldexp(a, 24)));  // subnormal: a multiple of 2^-24
}

double half_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

Program prune(const Program& p) {
  std::vector<bool> live(p.nodes.size(), false);
  for (int o : p.outputs) live[static_cast<size_t>(o)] = true;
  for (size_t i = p.nodes.size(); i-- > 0;)
    if (live[i])
      for (int a : p.nodes[i].args) live[static_cast<size_t>(a)] = true;
  std::vector<int> remap(p.nodes.size(), -1);
  Program q;
  q.seed = p.seed;
  q.corealize = p.corealize;
  for (size_t i = 0; i < p.nodes.size(); i++) {
    if (!live[i]) continue;
    Node n = p.nodes[i];
    for (int& a : n.args) a = remap[static_cast<size_t>(a)];
    remap[i] = static_cast<int>(q.nodes.size());
    q.nodes.push_back(std::move(n));
  }
  for (int o : p.outputs) q.outputs.push_back(remap[static_cast<size_t>(o)]);
  return q;
}

}  // namespace tgdiff
