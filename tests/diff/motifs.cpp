// The generator's motifs (gen.h): what the scheduler's reduce-then-broadcast fusion meets, a reduce whose
// result is broadcast back over its own input, chained (as softmax, var, layernorm are built), and
// several outputs over one loop nest (mean and variance, an optimizer step).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gen.h"

namespace tgdiff::gen {

Shape Gen::motif_shape() {
  int rank = 1 + r_.weighted({20, 35, 30, 15});
  Shape s;
  for (int i = 0; i < rank; i++) s.push_back(r_.chance(0.25) ? 1 : r_.range(2, 6));
  if (numel(s) == 1) s[static_cast<size_t>(r_.range(0, rank - 1))] = r_.range(2, 6);
  while (numel(s) > kCap) *std::max_element(s.begin(), s.end()) -= 1;
  return s;
}

int Gen::motif_source() {
  std::vector<int> c;
  for (int j = 0; j <= last(); j++)
    if (numel(node(j).shape) >= 4) c.push_back(j);
  if (!c.empty() && r_.chance(0.4)) {
    int a = r_.pick(c);
    if (is_float(node(a).dtype)) return a;
    cast(a, DT::F32);
    return last();
  }
  Shape s = motif_shape();
  DT d = r_.pick(std::vector<DT>{DT::F32, DT::F32, DT::F32, DT::F32, DT::F16, DT::F64});
  return add_input(s, d, r_.chance(0.85));
}

std::vector<bool> Gen::random_mask(const Shape& s) {
  int nd = static_cast<int>(s.size());
  for (int attempt = 0;; attempt++) {
    std::vector<bool> m(static_cast<size_t>(nd), false);
    int c = r_.weighted({30, 15, 15, 25, 15});
    if (c == 0) m.back() = true;
    else if (c == 1) m.front() = true;
    else if (c == 2) m[static_cast<size_t>(nd > 2 ? r_.range(1, nd - 2) : r_.range(0, nd - 1))] = true;
    else if (c == 3) {
      for (size_t i = 0; i < m.size(); i++) m[i] = r_.chance(0.5);
      if (std::find(m.begin(), m.end(), true) == m.end()) m[static_cast<size_t>(r_.range(0, nd - 1))] = true;
    } else {
      m.assign(m.size(), true);
    }
    bool wide = false;
    for (size_t i = 0; i < m.size(); i++) wide = wide || (m[i] && s[i] > 1);
    if (wide || attempt == 4 || r_.chance(0.1)) return m;
  }
}

int Gen::reduce_mask(const std::string& op, int a, const std::vector<bool>& red, bool keepdim) {
  bool all = std::find(red.begin(), red.end(), false) == red.end();
  return reduce_over(op, a, all && r_.chance(0.5) ? std::vector<int64_t>{} : axes_arg(red), red, keepdim);
}

int Gen::back(int r, const std::vector<bool>& red, const Shape& s) {
  Shape kd = s;
  int64_t nred = 0, ax = 0;
  for (size_t i = 0; i < s.size(); i++)
    if (red[i]) { kd[i] = 1; nred++; ax = static_cast<int64_t>(i); }
  DT d = node(r).dtype;
  if (node(r).shape != kd) {
    bool unsq = nred == 1 && r_.chance(0.5);
    Node n = mk(unsq ? "unsqueeze" : "reshape", {r}, d, d, kd);
    n.ints = unsq ? std::vector<int64_t>{r_.chance(0.5) ? ax : ax - static_cast<int64_t>(s.size())} : kd;
    r = push(std::move(n));
  }
  if (kd != s && r_.chance(0.3)) {
    Node n = mk("expand", {r}, d, d, s);
    n.ints = s;
    for (size_t i = 0; i < s.size(); i++)
      if (!red[i] && r_.chance(0.3)) n.ints[i] = -1;
    r = push(std::move(n));
  }
  return r;
}

int Gen::ew(const std::string& op, int a, int b) {
  DT p = lub(node(a).dtype, node(b).dtype);
  return push(mk(op, {a, b}, p, p, *broadcast(node(a).shape, node(b).shape)));
}

int Gen::sc(const std::string& op, int a, double v) {
  Node n = mk("scalar", {a}, node(a).dtype, node(a).dtype, node(a).shape);
  n.sub = op;
  n.value = v;
  return push(std::move(n));
}

int Gen::permuted(int a, const std::vector<int64_t>& order, const Shape& s) {
  Node n = mk("permute", {a}, node(a).dtype, node(a).dtype, s);
  n.ints = order;
  return push(std::move(n));
}

void Gen::reduce_chain() {
  int x = motif_source();
  Shape s = node(x).shape;
  bool xpos = r_.chance(0.2);
  if (xpos) x = un(r_.chance(0.5) ? "exp" : "sigmoid", x);
  std::vector<bool> ra = random_mask(s);
  std::string op1 = r_.pick(std::vector<std::string>{"max", "max", "sum", "mean", "min"});
  int r1 = reduce_mask(op1, x, ra, r_.chance(0.6));
  int y;
  bool ypos = false, ysq = false;
  int c = r_.weighted({60, xpos ? 25.0 : 0.0, 15});
  if (c == 0) {  // centred (x - max, x - mean), then exp, square or abs
    int rx = back(r1, ra, s);
    y = r_.chance(0.8) ? ew("sub", x, rx) : ew("sub", rx, x);
    int u = r_.weighted({op1 == "max" || op1 == "min" ? 40.0 : 10.0, 30, 10, 20});
    if (u == 0) { y = un("exp", y); ypos = true; }
    if (u == 1 || u == 2) { y = un(u == 1 ? "square" : "abs", y); ysq = true; }
  } else if (c == 1) {  // normalized: x / x.sum()
    y = ew("div", x, back(r1, ra, s));
    ypos = true;
  } else {
    std::string f = r_.chance(0.5) ? "mul" : "add";
    y = ew(f, x, back(r1, ra, s));
    ypos = xpos;
  }
  if (r_.chance(0.15)) output(r1);
  if (s.size() >= 2 && r_.chance(0.15)) {  // the rest over a permuted view of x and y
    std::vector<int64_t> order(s.size());
    for (size_t i = 0; i < s.size(); i++) order[i] = static_cast<int64_t>(i);
    for (size_t i = s.size() - 1; i > 0; i--) std::swap(order[i], order[static_cast<size_t>(r_.range(0, static_cast<int64_t>(i)))]);
    Shape ps;
    std::vector<bool> pa;
    for (int64_t o : order) {
      ps.push_back(s[static_cast<size_t>(o)]);
      pa.push_back(ra[static_cast<size_t>(o)]);
    }
    x = permuted(x, order, ps);
    y = permuted(y, order, ps);
    s = ps;
    ra = pa;
  }
  if (!r_.chance(0.85)) return output(y);
  if (r_.chance(0.15)) output(y);
  std::vector<bool> rb = r_.chance(0.65) ? ra : random_mask(s);
  std::string op2 = r_.pick(ypos ? std::vector<std::string>{"sum", "sum", "mean", "max", "min"}
                                 : std::vector<std::string>{"sum", "mean", "mean", "max", "min"});
  int t = reduce_mask(op2, y, rb, r_.chance(0.6));
  bool tpos = ypos;
  if (ysq && r_.chance(0.7)) {  // std, 1 / std
    t = un("sqrt", sc("add", t, eps()));
    if (r_.chance(0.3)) t = un("reciprocal", t);
    tpos = true;
  } else if (ypos && r_.chance(0.6)) {  // log (logsumexp), sqrt, 1 / x
    std::string f = r_.pick(std::vector<std::string>{"log", "log", "sqrt", "reciprocal"});
    t = un(f, t);
    tpos = f != "log";
  }
  if (node(t).shape == node(r1).shape && r_.chance(0.4)) {  // both reduces in one value: x.max() + log(sum)
    t = ew(r_.pick(std::vector<std::string>{"add", "add", "mul", "sub"}), t, r1);
    tpos = false;
  }
  if (!r_.chance(0.65)) return output(t);
  if (r_.chance(0.2)) output(t);
  int w = r_.chance(0.7) ? y : x, tb = back(t, rb, s);
  std::string g = r_.pick(tpos ? std::vector<std::string>{"div", "div", "mul", "sub"}
                               : std::vector<std::string>{"sub", "sub", "mul", "add"});
  int z = g != "div" && r_.chance(0.2) ? ew(g, tb, w) : ew(g, w, tb);
  if (!r_.chance(0.25)) return output(z);
  if (r_.chance(0.3)) output(z);
  std::string op3 = r_.pick(std::vector<std::string>{"sum", "max", "mean", "min"});
  std::vector<bool> rc = random_mask(s);
  output(reduce_mask(op3, z, rc, r_.chance(0.5)));
}

void Gen::multi_output() {
  int c = r_.weighted({35, 30, 35});
  if (c == 2) return optimizer_step();
  int x = motif_source();
  const Shape s = node(x).shape;
  std::vector<bool> ra = random_mask(s);
  bool kd = r_.chance(0.5);
  if (c == 0) {  // mean and variance (or std), maybe the normalized x too
    int m = reduce_mask("mean", x, ra, true);
    int d = ew("sub", x, back(m, ra, s));
    int sq = r_.chance(0.5) ? un("square", d) : ew("mul", d, d);
    int64_t cnt = 1;
    for (size_t i = 0; i < s.size(); i++)
      if (ra[i]) cnt *= s[i];
    int v = cnt < 2 || r_.chance(0.6) ? reduce_mask("mean", sq, ra, kd)
                                      : sc("div", reduce_mask("sum", sq, ra, kd), static_cast<double>(cnt - 1));  // unbiased
    output(kd ? m : reduce_mask("mean", x, ra, false));
    output(r_.chance(0.3) ? un("sqrt", v) : v);
    if (r_.chance(0.4)) output(ew("div", d, back(un("sqrt", sc("add", v, eps())), ra, s)));  // layernorm
  } else {  // 2-3 reduces of x or of one function of it
    int fx = un(r_.pick(std::vector<std::string>{"square", "abs", "exp"}), x);
    for (int i = static_cast<int>(r_.range(2, 3)); i > 0; i--) {
      std::string op = r_.pick(std::vector<std::string>{"sum", "max", "min", "mean"});
      output(reduce_mask(op, r_.chance(0.6) ? x : fx, ra, kd));
    }
  }
}

void Gen::optimizer_step() {
  int g = motif_source();
  const Shape s = node(g).shape;
  DT d = node(g).dtype;
  int p = add_input(s, d, true), m = add_input(s, d, true);
  double lr = r_.pick(std::vector<double>{1e-3, 0.01, 0.1});
  int wd = static_cast<int>(r_.weighted({60, 20, 20}));  // none, L2 in the gradient, decoupled
  if (wd == 1) g = ew("add", g, sc("mul", p, 0.01));
  if (r_.chance(0.6)) {  // m' = b1 m + (1 - b1) g, v' = b2 v + (1 - b2) g^2, p' = p - lr m' / (sqrt(v') + eps)
    int v = add_input(s, d, true);
    for (double& e : p_.nodes[static_cast<size_t>(v)].fdata) e = std::fabs(e);  // a second moment is >= 0
    bool k = r_.chance(0.5);
    int bm = sc("mul", m, k ? 0.9 : 0.8), bg = sc("mul", g, k ? 0.1 : 0.2);
    int m1 = ew("add", bm, bg);
    int g2 = r_.chance(0.5) ? un("square", g) : ew("mul", g, g);
    int bv = sc("mul", v, k ? 0.999 : 0.99), bg2 = sc("mul", g2, k ? 1e-3 : 1e-2);
    int v1 = ew("add", bv, bg2);
    int den = un("sqrt", v1);
    int upd = ew("div", m1, sc("add", den, r_.pick(std::vector<double>{1e-8, 1e-6, 1e-3})));
    int pd = wd == 2 ? sc("mul", p, 0.999) : p;
    output(ew("sub", pd, sc("mul", upd, lr)));
    output(m1);
    output(v1);
  } else {  // b' = mu b + g, p' = p - lr b' (Nesterov: p - lr (g + mu b'))
    double mu = r_.pick(std::vector<double>{0.9, 0.5});
    int b1 = ew("add", sc("mul", m, mu), g);
    int step = r_.chance(0.3) ? ew("add", g, sc("mul", b1, mu)) : b1;
    int pd = wd == 2 ? sc("mul", p, 0.999) : p;
    output(ew("sub", pd, sc("mul", step, lr)));
    output(b1);
  }
}

}  // namespace tgdiff::gen
