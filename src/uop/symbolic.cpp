// The symbolic rules: constant folding, algebraic identities, and the index algebra that turns the
// expressions ShapeTracker builds ((i*4+j)//4 ...) into the simple ones a kernel should compute.
#include <algorithm>
#include <numeric>

#include "uop/exec_alu.h"
#include "uop/rewrite.h"

namespace tg {

namespace {

using B = const Bindings&;
const std::vector<Scalar> kInts = {Scalar::Int8, Scalar::UInt8, Scalar::Int16, Scalar::UInt16, Scalar::Int32,
                                   Scalar::UInt32, Scalar::Int64, Scalar::UInt64};
const std::vector<Scalar> kIntsBool = {Scalar::Bool, Scalar::Int8, Scalar::UInt8, Scalar::Int16, Scalar::UInt16,
                                       Scalar::Int32, Scalar::UInt32, Scalar::Int64, Scalar::UInt64};

UPat ints(std::string name) { return UPat::var(std::move(name), kInts); }
UPat alu(Ops op, std::vector<UPat> s) { return UPat(op, std::move(s), ""); }

// x as sum(coef_i * term_i) + constant. Terms that are not a product with a constant have coef 1.
struct Linear {
  std::vector<std::pair<UOpPtr, int64_t>> terms;
  int64_t c = 0;
};
// Coefficients multiply and add as the dtype's wrapping arithmetic does (mod 2^64 here, the dtype's
// width when rebuilt), never as signed overflow.
int64_t wrap_mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
int64_t wrap_add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
void linearize_sum(const UOpPtr& x, int64_t scale, Linear& out) {
  if (x->op == Ops::ADD) { linearize_sum(x->src[0], scale, out); linearize_sum(x->src[1], scale, out); return; }
  if (x->op == Ops::CONST) { out.c = wrap_add(out.c, wrap_mul(x->const_int(), scale)); return; }
  if (x->op == Ops::MUL && x->src[1]->op == Ops::CONST) { linearize_sum(x->src[0], wrap_mul(scale, x->src[1]->const_int()), out); return; }
  out.terms.emplace_back(x, scale);
}
UOpPtr build_sum(DType dt, const std::vector<std::pair<UOpPtr, int64_t>>& terms, int64_t c) {
  UOpPtr r;
  for (auto& [t, k] : terms) {
    if (k == 0) continue;
    UOpPtr term = k == 1 ? t : t->mul(k);
    r = r ? r->add(term) : term;
  }
  if (!r) return UOp::cnst_int(dt, c);
  return c ? r->add(c) : r;
}

// Whether the integer sum x (its ADDs and products with constants, as linearize_sum reads it) is the
// exact value of its terms: no node of it can leave its dtype's range and wrap around. Moving terms
// across a comparison or out of a division holds only then (for uint8 x, x + 4 < 3 is true at x >= 252).
bool exact_sum(const UOpPtr& x) {
  bool add = x->op == Ops::ADD, mul = x->op == Ops::MUL && x->src[1]->op == Ops::CONST;
  if (!add && !mul) return true;
  const UOp &a = *x->src[0], &b = *x->src[1];
  __int128 lo, hi;
  if (add) {
    lo = static_cast<__int128>(a.vmin) + b.vmin;
    hi = static_cast<__int128>(a.vmax) + b.vmax;
  } else {  // by the constant's value (a uint64 constant from 2^63 up has no bounds to read it from)
    __int128 k = b.dtype.is_unsigned() ? static_cast<__int128>(static_cast<uint64_t>(b.const_int())) : b.const_int();
    __int128 p = a.vmin * k, q = a.vmax * k;
    lo = std::min(p, q);
    hi = std::max(p, q);
  }
  // the range bounds carry (saturated to int64, as UOp bounds are: uint64 counts as [0, 2^63 - 1])
  auto bound = [](double v) { return v < -9.2e18 ? static_cast<__int128>(INT64_MIN) : v > 9.2e18 ? static_cast<__int128>(INT64_MAX) : static_cast<__int128>(v); };
  if (lo < bound(x->dtype.min()) || hi > bound(x->dtype.max())) return false;
  return exact_sum(x->src[0]) && (mul || exact_sum(x->src[1]));
}

// (sum) // d and (sum) % d where no coefficient reaches d, by a factor k of d that the sum divides
// into: a factor of every coefficient (g*s + r with 0 <= r < g: (y*20 + x*4 + 3) // 40 = (y*5 + x) // 10)
// or one term's coefficient with the rest of the sum in [0, k) (k*t + rest: (y*5 + x) // 10 = y // 2
// for x < 5). Index math of a view over split dims (a max pool's window read back over its input
// rows) then has no division left.
UOpPtr fold_divmod_by_factor(DType dt, const Linear& lin, int64_t d, bool is_mod) {
  int64_t g = d;
  for (auto& [t, k] : lin.terms) g = std::gcd(g, k);
  if (g > 1) {
    std::vector<std::pair<UOpPtr, int64_t>> scaled;
    for (auto& [t, k] : lin.terms) scaled.emplace_back(t, k / g);
    UOpPtr s = build_sum(dt, scaled, lin.c / g);
    return is_mod ? s->mod(d / g)->mul(g)->add(lin.c % g) : s->idiv(d / g);
  }
  for (size_t i = 0; i < lin.terms.size(); i++) {
    auto [t, k] = lin.terms[i];
    if (k <= 1 || d % k != 0) continue;
    std::vector<std::pair<UOpPtr, int64_t>> others(lin.terms.begin(), lin.terms.end());
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
    UOpPtr rest = build_sum(dt, others, lin.c);
    if (rest->vmin < 0 || rest->vmax >= k) continue;
    return is_mod ? t->mod(d / k)->mul(k)->add(rest) : t->idiv(d / k);
  }
  return nullptr;
}

// (sum) // d and (sum) % d for a positive constant d and a non-negative sum of non-negative terms:
// k*t = (k//d)*d*t + (k%d)*t, so each coefficient's multiple of d goes to the quotient and only k%d
// stays in the remainder (conv's window views give (ky*31 + x) % 30 = ky + x); when what is left fits
// in [0, d) it is the remainder itself.
UOpPtr fold_divmod(const UOpPtr& x, int64_t d, bool is_mod) {
  if (d <= 0 || x->vmin < 0 || !exact_sum(x)) return nullptr;
  if (x->vmax < d) return is_mod ? x : UOp::cnst_int(x->dtype, 0);
  if (!is_mod && x->vmin / d == x->vmax / d) return UOp::cnst_int(x->dtype, x->vmin / d);
  Linear lin;
  linearize_sum(x, 1, lin);
  if (lin.c < 0) return nullptr;
  std::vector<std::pair<UOpPtr, int64_t>> quot, rem;
  for (auto& [t, k] : lin.terms) {
    if (t->vmin < 0) return nullptr;
    if (k % d == 0) quot.emplace_back(t, k / d);
    else if (k < 0) return nullptr;
    else {
      if (k >= d) quot.emplace_back(t, k / d);
      rem.emplace_back(t, k % d);
    }
  }
  int64_t qc = lin.c / d, rc = lin.c % d;
  UOpPtr r = build_sum(x->dtype, rem, rc);
  if (quot.empty() && qc == 0) return fold_divmod_by_factor(x->dtype, lin, d, is_mod);
  if (r->vmin < 0) return nullptr;
  if (is_mod) return r->vmax < d ? r : r->mod(d);
  UOpPtr q = build_sum(x->dtype, quot, qc);
  return r->vmax < d ? q : q->add(r->idiv(d));
}

// Rebuilds an integer sum with like terms merged; nullptr when that changes nothing.
UOpPtr canonical_sum(const UOpPtr& root) {
  Linear lin;
  linearize_sum(root, 1, lin);
  std::vector<std::pair<UOpPtr, int64_t>> terms;
  auto add_term = [&](const UOpPtr& t, int64_t k) {
    for (auto& [u, c] : terms)
      if (u == t) { c = wrap_add(c, k); return; }
    terms.emplace_back(t, k);
  };
  for (auto& [t, k] : lin.terms) add_term(t, k);
  // (x//d)*d*k + (x%d)*k -> x*k
  for (size_t i = 0; i < terms.size(); i++) {
    auto [t, k] = terms[i];
    if (t->op != Ops::MOD || t->src[1]->op != Ops::CONST || k == 0) continue;
    int64_t d = t->src[1]->const_int();
    for (auto& [u, c] : terms)
      if (u->op == Ops::IDIV && u->src[0] == t->src[0] && u->src[1] == t->src[1] && c == wrap_mul(k, d)) {
        c = 0;
        terms[i].second = 0;
        add_term(t->src[0], k);
        break;
      }
  }
  std::erase_if(terms, [](auto& p) { return p.second == 0; });
  UOpPtr out = build_sum(root->dtype, terms, lin.c);
  return out == root ? nullptr : out;
}

UOpPtr fold_consts(B b) {
  const UOpPtr& u = b["root"];
  if (!is_alu(u->op) && u->op != Ops::CAST) return nullptr;
  std::vector<Value> vals;
  for (auto& s : u->src) {
    if (s->op != Ops::CONST || s->dtype.count != 1) return nullptr;
    vals.push_back(const_to_value(*s));
  }
  if (u->dtype.count != 1) return nullptr;
  if (u->op == Ops::CAST) return value_to_const(u->dtype, cast_value(vals[0], u->src[0]->dtype, u->dtype));
  DType sdt = u->op == Ops::WHERE ? u->src[1]->dtype : u->src[0]->dtype;
  return value_to_const(u->dtype, exec_alu(u->op, u->dtype, vals, sdt));
}

std::vector<Rule> symbolic_rules() {
  std::vector<Rule> r;
  // constant folding of every ALU op and CAST whose sources are all constants
  r.push_back({UPat::any(), fold_consts});
  // an integer expression whose bounds pin it to one value is that value
  r.push_back({UPat::var("x", kIntsBool), [](B b) -> UOpPtr {
    const UOpPtr& x = b["x"];
    if (x->vmin != x->vmax || (!is_alu(x->op) && x->op != Ops::CAST) || x->dtype.count != 1) return nullptr;
    return UOp::cnst_int(x->dtype, x->vmin);
  }});
  // constants go on the right of commutative ops
  r.push_back({UPat::any("root"), [](B b) -> UOpPtr {
    const UOpPtr& u = b["root"];
    if (!is_commutative(u->op) || u->src.size() != 2 || u->src[0]->op != Ops::CONST || u->src[1]->op == Ops::CONST) return nullptr;
    return UOp::make(u->op, u->dtype, {u->src[1], u->src[0]}, u->arg);
  }});
  // identities
  r.push_back({alu(Ops::ADD, {UPat::var("x"), UPat::cnst(0)}), [](B b) { return b["x"]; }});
  r.push_back({alu(Ops::MUL, {UPat::var("x"), UPat::cnst(1)}), [](B b) { return b["x"]; }});
  r.push_back({alu(Ops::MUL, {ints("x"), UPat::cnst(0)}), [](B b) { return UOp::cnst_int(b["x"]->dtype, 0); }});
  r.push_back({alu(Ops::IDIV, {ints("x"), UPat::cnst(1)}), [](B b) { return b["x"]; }});
  r.push_back({alu(Ops::MOD, {ints("x"), UPat::cnst(1)}), [](B b) { return UOp::cnst_int(b["x"]->dtype, 0); }});
  r.push_back({UPat(Ops::NEG, {UPat(Ops::NEG, {UPat::var("x")})}), [](B b) { return b["x"]; }});
  r.push_back({alu(Ops::WHERE, {UPat::var("c"), UPat::var("x"), UPat::var("x")}), [](B b) { return b["x"]; }});
  r.push_back({alu(Ops::WHERE, {UPat::cvar("c"), UPat::var("t"), UPat::var("f")}),
               [](B b) { return b["c"]->const_int() ? b["t"] : b["f"]; }});
  r.push_back({alu(Ops::WHERE, {UPat::var("c"), UPat::cnst(1), UPat::cnst(0)}),
               [](B b) -> UOpPtr { return b["root"]->dtype.is_bool() ? b["c"] : nullptr; }});
  // a select nested under the same condition (padding made explicit at several levels) takes one branch
  r.push_back({alu(Ops::WHERE, {UPat::var("c"), alu(Ops::WHERE, {UPat::var("c"), UPat::var("t"), UPat::any()}), UPat::var("f")}),
               [](B b) { return b["c"]->where(b["t"], b["f"]); }});
  r.push_back({alu(Ops::WHERE, {UPat::var("c"), UPat::var("t"), alu(Ops::WHERE, {UPat::var("c"), UPat::any(), UPat::var("f")})}),
               [](B b) { return b["c"]->where(b["t"], b["f"]); }});
  r.push_back({alu(Ops::AND, {UPat::var("x", {Scalar::Bool}), UPat::var("x")}), [](B b) { return b["x"]; }});
  r.push_back({alu(Ops::AND, {UPat::var("x", {Scalar::Bool}), UPat::cvar("c")}),
               [](B b) { return b["c"]->const_int() ? b["x"] : b["c"]; }});
  r.push_back({alu(Ops::OR, {UPat::var("x", {Scalar::Bool}), UPat::cvar("c")}),
               [](B b) { return b["c"]->const_int() ? b["c"] : b["x"]; }});
  r.push_back({alu(Ops::MAX, {UPat::var("x"), UPat::var("x")}), [](B b) { return b["x"]; }});
  // integer MAX decided by bounds
  r.push_back({alu(Ops::MAX, {ints("x"), ints("y")}), [](B b) -> UOpPtr {
    if (b["x"]->vmin >= b["y"]->vmax) return b["x"];
    if (b["y"]->vmin >= b["x"]->vmax) return b["y"];
    return nullptr;
  }});
  // reassociate constants: (x+c1)+c2 -> x+(c1+c2), (x*c1)*c2 -> x*(c1*c2)
  for (Ops op : {Ops::ADD, Ops::MUL})
    r.push_back({alu(op, {alu(op, {ints("x"), UPat::cvar("c1")}), UPat::cvar("c2")}), [op](B b) {
      Value v = exec_alu(op, b["x"]->dtype, {const_to_value(*b["c1"]), const_to_value(*b["c2"])}, b["x"]->dtype);
      return b["x"]->alu(op, value_to_const(b["x"]->dtype, v));
    }});
  // distribute a constant over a sum, so index terms meet their like terms: (x+y)*c -> x*c + y*c
  r.push_back({alu(Ops::MUL, {alu(Ops::ADD, {ints("x"), ints("y")}), UPat::cvar("c")}),
               [](B b) { return b["x"]->mul(b["c"])->add(b["y"]->mul(b["c"])); }});
  // integer sums in canonical form: like terms combined, (x//d)*d + x%d -> x, one constant at the end
  r.push_back({alu(Ops::ADD, {ints("x"), ints("y")}), [](B b) { return canonical_sum(b["root"]); }});
  // division and modulo by a positive constant
  r.push_back({alu(Ops::IDIV, {ints("x"), UPat::cvar("d")}), [](B b) { return fold_divmod(b["x"], b["d"]->const_int(), false); }});
  r.push_back({alu(Ops::MOD, {ints("x"), UPat::cvar("d")}), [](B b) { return fold_divmod(b["x"], b["d"]->const_int(), true); }});
  // (x//a)//b -> x//(a*b) for non-negative x and positive a, b (when a*b is a value of x's dtype: in
  // uint8, 16*32 would wrap to 0)
  r.push_back({alu(Ops::IDIV, {alu(Ops::IDIV, {ints("x"), UPat::cvar("a")}), UPat::cvar("c")}), [](B b) -> UOpPtr {
    if (b["x"]->vmin < 0 || b["a"]->const_int() <= 0 || b["c"]->const_int() <= 0) return nullptr;
    __int128 p = static_cast<__int128>(b["a"]->const_int()) * b["c"]->const_int();
    if (p > static_cast<__int128>(b["x"]->dtype.max())) return UOp::cnst_int(b["x"]->dtype, 0);  // past every x
    if (p > INT64_MAX) return nullptr;
    return b["x"]->idiv(static_cast<int64_t>(p));
  }});
  // (x%(a*b))%a -> x%a ; (x%(a*b))//a -> (x//a)%b  (non-negative x)
  r.push_back({alu(Ops::MOD, {alu(Ops::MOD, {ints("x"), UPat::cvar("m")}), UPat::cvar("a")}), [](B b) -> UOpPtr {
    int64_t m = b["m"]->const_int(), a = b["a"]->const_int();
    if (b["x"]->vmin < 0 || a <= 0 || m <= 0 || m % a) return nullptr;  // x % 0 is 0, not x % a
    return b["x"]->mod(a);
  }});
  r.push_back({alu(Ops::IDIV, {alu(Ops::MOD, {ints("x"), UPat::cvar("m")}), UPat::cvar("a")}), [](B b) -> UOpPtr {
    int64_t m = b["m"]->const_int(), a = b["a"]->const_int();
    if (b["x"]->vmin < 0 || a <= 0 || m <= 0 || m % a) return nullptr;
    return b["x"]->idiv(a)->mod(m / a);
  }});
  // comparisons against a constant: move constant terms across, divide out a common factor
  // (not where the sum wraps around, nor to a constant the dtype cannot hold)
  r.push_back({alu(Ops::CMPLT, {alu(Ops::ADD, {ints("x"), UPat::cvar("c1")}), UPat::cvar("c2")}), [](B b) -> UOpPtr {
    __int128 c = static_cast<__int128>(b["c2"]->const_int()) - b["c1"]->const_int();
    if (!exact_sum(b["root"]->src[0]) || c < b["x"]->dtype.min() || c > b["x"]->dtype.max() || c < INT64_MIN || c > INT64_MAX) return nullptr;
    return b["x"]->lt(static_cast<int64_t>(c));
  }});
  r.push_back({alu(Ops::CMPLT, {alu(Ops::MUL, {ints("x"), UPat::cvar("c1")}), UPat::cvar("c2")}), [](B b) -> UOpPtr {
    int64_t a = b["c1"]->const_int(), c = b["c2"]->const_int();
    if (a <= 0 || !exact_sum(b["root"]->src[0])) return nullptr;
    return b["x"]->lt(c > 0 ? (c + a - 1) / a : -((-c) / a));  // x*a < c  <=>  x < ceil(c/a)
  }});
  // !(!x) for bools expressed as x != true
  r.push_back({alu(Ops::CMPNE, {alu(Ops::CMPNE, {UPat::var("x", {Scalar::Bool}), UPat::cnst(1)}), UPat::cnst(1)}),
               [](B b) { return b["x"]; }});
  // casting a value to its own dtype
  r.push_back({UPat(Ops::CAST, {UPat::var("x")}, "c"), [](B b) -> UOpPtr { return b["x"]->dtype == b["c"]->dtype ? b["x"] : nullptr; }});
  return r;
}

}  // namespace

const PatternMatcher& symbolic() {
  static const PatternMatcher pm(symbolic_rules());
  return pm;
}

}  // namespace tg
