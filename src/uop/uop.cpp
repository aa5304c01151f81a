#include "uop/uop.h"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <limits>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "helpers/teardown.h"
#include "tg/error.h"
#include "tg/helpers.h"
#include "uop/exec_alu.h"

namespace tg {

bool arg_equal(const Arg& a, const Arg& b) {
  if (a.index() != b.index()) return false;
  if (auto* x = std::get_if<std::shared_ptr<const ArgObject>>(&a)) {
    auto& y = std::get<std::shared_ptr<const ArgObject>>(b);
    return *x == y || (*x && y && (*x)->equals(*y));
  }
  if (auto* x = std::get_if<double>(&a)) {  // bitwise, so that NaN == NaN and -0.0 != 0.0
    double y = std::get<double>(b);
    return std::memcmp(x, &y, sizeof y) == 0;
  }
  return a == b;
}

template <class T> concept TypedArg = requires(const T& t) { t.hash(); t.str(); };

uint64_t arg_hash(const Arg& a) {
  uint64_t h = a.index();
  std::visit([&](const auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, int64_t>) h = hash_combine(h, static_cast<uint64_t>(v));
    else if constexpr (std::is_same_v<T, double>) { uint64_t bits; std::memcpy(&bits, &v, 8); h = hash_combine(h, bits); }
    else if constexpr (std::is_same_v<T, std::string>) h = fnv1a(v, h);
    else if constexpr (TypedArg<T>) h = hash_combine(h, v.hash());
    else if constexpr (std::is_same_v<T, std::shared_ptr<const ArgObject>>) { if (v) h = hash_combine(h, v->hash()); }
  }, a);
  return h;
}

std::string arg_str(const Arg& a) {
  return std::visit([](const auto& v) -> std::string {
    using T = std::decay_t<decltype(v)>;
    std::ostringstream os;
    if constexpr (std::is_same_v<T, std::monostate>) return "";
    else if constexpr (std::is_same_v<T, int64_t>) os << v;
    else if constexpr (std::is_same_v<T, double>) os << v;
    else if constexpr (std::is_same_v<T, std::string>) os << '"' << v << '"';
    else if constexpr (TypedArg<T>) return v.str();
    else if constexpr (std::is_same_v<T, std::shared_ptr<const ArgObject>>) os << (v ? v->str() : "null");
    return os.str();
  }, a);
}

// ---- typed args -----------------------------------------------------------------------------------

static uint64_t hash_opt(uint64_t h, const std::optional<int>& o) { return hash_combine(h, o ? static_cast<uint64_t>(*o) + 1 : 0); }

uint64_t ReduceArg::hash() const {
  uint64_t h = static_cast<uint64_t>(op);
  for (int ax : axes) h = hash_combine(h, static_cast<uint64_t>(ax));
  return h;
}
std::string ReduceArg::str() const {
  std::string s = std::string(op_name(op)) + " axes=(";
  for (size_t i = 0; i < axes.size(); i++) s += (i ? "," : "") + std::to_string(axes[i]);
  return s + ")";
}
uint64_t VarArg::hash() const { return hash_combine(fnv1a(name, 0), hash_combine(static_cast<uint64_t>(min), static_cast<uint64_t>(max))); }
std::string VarArg::str() const { return name + "[" + std::to_string(min) + "," + std::to_string(max) + "]"; }
uint64_t SpecialArg::hash() const { return hash_combine(hash_combine(static_cast<uint64_t>(kind), static_cast<uint64_t>(axis)), static_cast<uint64_t>(size)); }
std::string SpecialArg::name() const { return (kind == SpecialKind::GlobalIdx ? "gidx" : "lidx") + std::to_string(axis); }
std::string SpecialArg::str() const { return name() + "<" + std::to_string(size); }
uint64_t RangeArg::hash() const {
  return hash_opt(hash_combine(hash_combine(static_cast<uint64_t>(kind), static_cast<uint64_t>(dim)), static_cast<uint64_t>(order)), reduce);
}
std::string RangeArg::name() const { return "ridx" + std::to_string(dim) + (reduce ? "_" + std::to_string(*reduce) : ""); }
std::string RangeArg::str() const {
  return std::string(kind == RangeKind::Loop ? "loop" : kind == RangeKind::Block ? "block" : kind == RangeKind::Row ? "row" : "reduce") + " dim=" + std::to_string(dim) + " order=" + std::to_string(order) +
         (reduce ? " of reduce level " + std::to_string(*reduce) : kind == RangeKind::Reduce ? " unbound" : "");
}
uint64_t UnrollArg::hash() const { return hash_opt(hash_combine(hash_combine(static_cast<uint64_t>(dim), static_cast<uint64_t>(size)), vector), reduce); }
std::string UnrollArg::str() const {
  return "dim=" + std::to_string(dim) + " size=" + std::to_string(size) + (vector ? " vector" : "") + (reduce ? " of reduce level " + std::to_string(*reduce) : "");
}
uint64_t ReduceOpArg::hash() const { return hash_combine(static_cast<uint64_t>(op), static_cast<uint64_t>(nvals)); }
std::string ReduceOpArg::str() const { return std::string(op_name(op)) + " of " + std::to_string(nvals); }
uint64_t LoadArg::hash() const { return static_cast<uint64_t>(readable); }
std::string LoadArg::str() const { return "readable=" + std::to_string(readable); }
uint64_t StoreArg::hash() const { return streaming; }
std::string StoreArg::str() const { return streaming ? "streaming" : ""; }

// ---- bounds ---------------------------------------------------------------------------------------

static int64_t sat(__int128 v) {
  constexpr int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  return v < lo ? lo : v > hi ? hi : static_cast<int64_t>(v);
}

// Bounds of an integer or bool node from its sources, as tinygrad's _min_max. Conservative: full range.
static std::pair<int64_t, int64_t> min_max(Ops op, DType dt, const std::vector<UOpPtr>& s, const Arg& arg) {
  constexpr int64_t lo64 = std::numeric_limits<int64_t>::min(), hi64 = std::numeric_limits<int64_t>::max();
  if (dt.is_float() || dt.ptr || dt.count > 1 || dt.scalar == Scalar::Void) return {lo64, hi64};  // no bounds
  int64_t dlo = dt.is_bool() ? 0 : sat(static_cast<__int128>(dt.min())), dhi = dt.is_bool() ? 1 : sat(static_cast<__int128>(dt.max()));
  // comparisons of floats have no integer bounds to reason with
  if ((op == Ops::CMPLT || op == Ops::CMPNE) && s[0]->dtype.is_float()) return {0, 1};
  // a result that can leave the dtype's range wraps around (C semantics): then anything is possible
  auto clamp = [&](__int128 lo, __int128 hi) {
    return lo < dlo || hi > dhi ? std::pair{dlo, dhi} : std::pair{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
  };
  // A uint64 whose bound reaches INT64_MAX may be anything up to 2^64 - 1 (bounds saturate there): its
  // quotient, its cast, and a comparison with it are not bounded by INT64_MAX.
  auto unbounded = [](const UOp& x) { return x.dtype.scalar == Scalar::UInt64 && x.vmax == hi64; };
  switch (op) {
    case Ops::CONST: {
      int64_t v = std::get<int64_t>(arg);
      // a uint64 value from 2^63 - 1 up (from 2^63 held as a negative int64) is past the bounds' range
      if (dt.scalar == Scalar::UInt64 && (v < 0 || v == hi64)) return {dlo, dhi};
      return {v, v};
    }
    case Ops::RANGE: return {s[0]->vmin, s[1]->vmax - 1};
    case Ops::DEFINE_VAR: { auto& v = std::get<VarArg>(arg); return {v.min, v.max}; }
    case Ops::SPECIAL: return {0, std::get<SpecialArg>(arg).size - 1};
    case Ops::UNROLL: return {0, std::get<UnrollArg>(arg).size - 1};
    case Ops::ADD: return clamp(static_cast<__int128>(s[0]->vmin) + s[1]->vmin, static_cast<__int128>(s[0]->vmax) + s[1]->vmax);
    case Ops::MUL: {
      __int128 c[4] = {static_cast<__int128>(s[0]->vmin) * s[1]->vmin, static_cast<__int128>(s[0]->vmin) * s[1]->vmax,
                       static_cast<__int128>(s[0]->vmax) * s[1]->vmin, static_cast<__int128>(s[0]->vmax) * s[1]->vmax};
      return clamp(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
    }
    case Ops::NEG: return clamp(-static_cast<__int128>(s[0]->vmax), -static_cast<__int128>(s[0]->vmin));
    case Ops::MAX: return {std::max(s[0]->vmin, s[1]->vmin), std::max(s[0]->vmax, s[1]->vmax)};
    case Ops::IDIV:  // truncation by a positive constant is monotonic
      if (s[1]->vmin == s[1]->vmax && s[1]->vmin > 0 && !unbounded(*s[0])) return {s[0]->vmin / s[1]->vmin, s[0]->vmax / s[1]->vmin};
      break;
    case Ops::MOD:  // C's %: the sign of the dividend, less than the divisor in magnitude
      if (s[1]->vmin == s[1]->vmax && s[1]->vmin > 0) {
        int64_t d = s[1]->vmin;
        return {s[0]->vmin >= 0 ? 0 : std::max(s[0]->vmin, -(d - 1)), s[0]->vmax <= 0 ? 0 : std::min(s[0]->vmax, d - 1)};
      }
      break;
    case Ops::CMPLT:
      if (s[0]->vmax < s[1]->vmin) return {1, 1};
      if (s[0]->vmin >= s[1]->vmax && !unbounded(*s[1])) return {0, 0};
      return {0, 1};
    case Ops::CMPNE:
      if ((s[0]->vmax < s[1]->vmin && !unbounded(*s[0])) || (s[0]->vmin > s[1]->vmax && !unbounded(*s[1]))) return {1, 1};
      if (s[0]->vmin == s[0]->vmax && s[1]->vmin == s[1]->vmax && s[0]->vmin == s[1]->vmin) return {0, 0};
      return {0, 1};
    case Ops::AND:
      if (dt.is_bool()) return {s[0]->vmin & s[1]->vmin, s[0]->vmax & s[1]->vmax};
      if (s[0]->vmin >= 0 && s[1]->vmin >= 0) return {0, std::min(s[0]->vmax, s[1]->vmax)};
      break;
    case Ops::OR:
      if (dt.is_bool()) return {s[0]->vmin | s[1]->vmin, s[0]->vmax | s[1]->vmax};
      break;
    case Ops::WHERE: return {std::min(s[1]->vmin, s[2]->vmin), std::max(s[1]->vmax, s[2]->vmax)};
    case Ops::CAST:
      if (!s[0]->dtype.is_float() && !unbounded(*s[0])) return clamp(s[0]->vmin, s[0]->vmax);
      break;
    default: break;
  }
  return {dlo, dhi};
}

// ---- hash-consing ---------------------------------------------------------------------------------

namespace {
struct Interner {
  std::mutex mu;
  std::unordered_multimap<uint64_t, std::weak_ptr<const UOp>> table;
};
Interner& interner() {
  static Interner* in = new Interner();  // never destroyed: UOps may outlive static destruction order
  return *in;
}
}  // namespace

UOp::UOp(Ops op_, DType dtype_, std::vector<UOpPtr> src_, Arg arg_, uint64_t hash_)
    : op(op_), dtype(dtype_), src(std::move(src_)), arg(std::move(arg_)), hash(hash_) {
  auto [lo, hi] = min_max(op, dtype, src, arg);
  vmin = lo;
  vmax = hi;
}

UOp::~UOp() {
  for (UOpPtr& s : src) defer_release(std::move(s));
}

UOpPtr UOp::make(Ops op, DType dtype, std::vector<UOpPtr> src, Arg arg) {
  uint64_t h = hash_combine(static_cast<uint64_t>(op), static_cast<uint64_t>(dtype.scalar) << 16 | dtype.count << 8 | dtype.ptr);
  for (auto& s : src) {
    TG_ASSERT(s != nullptr, "null source of ", op_name(op));
    h = hash_combine(h, s->hash);
  }
  h = hash_combine(h, arg_hash(arg));
  Interner& in = interner();
  std::lock_guard<std::mutex> lock(in.mu);
  auto [b, e] = in.table.equal_range(h);
  for (auto it = b; it != e; ++it) {
    UOpPtr u = it->second.lock();
    if (u && u->op == op && u->dtype == dtype && u->src == src && arg_equal(u->arg, arg)) return u;
  }
  // The deleter removes the table entry before the node (and, through it, its sources) is destroyed.
  UOp* raw = new UOp(op, dtype, std::move(src), std::move(arg), h);
  UOpPtr u(raw, [](const UOp* p) {
    {
      Interner& in = interner();
      std::lock_guard<std::mutex> lock(in.mu);
      auto [b, e] = in.table.equal_range(p->hash);
      for (auto it = b; it != e; ++it)
        if (it->second.expired()) { in.table.erase(it); break; }
    }
    delete p;
  });
  in.table.emplace(h, u);
  return u;
}

// Constants hold a value of their dtype: floats rounded to its precision, integers (truncated toward
// zero) wrapped to its width as C converts an integer (-1 as uint8 is 255, as uint64 2^64-1).
UOpPtr UOp::cnst(DType dt, double v) {
  if (dt.is_float() || dt.is_bool()) return value_to_const(dt, cast_value(Value{0, v}, dtypes::float64, dt));
  double t = std::isnan(v) ? 0 : std::trunc(v);
  if (t >= 9223372036854775808.0) return cnst_int(dt, static_cast<int64_t>(static_cast<uint64_t>(std::min(t, 18446744073709549568.0))));
  return cnst_int(dt, static_cast<int64_t>(std::max(t, -9223372036854775808.0)));
}
UOpPtr UOp::cnst_int(DType dt, int64_t v) { return value_to_const(dt, cast_value(Value{v, 0}, dtypes::int64, dt)); }

bool UOp::is_const(int64_t v) const {
  if (op != Ops::CONST) return false;
  if (auto* i = std::get_if<int64_t>(&arg)) return *i == v;
  return std::get<double>(arg) == static_cast<double>(v);
}
double UOp::const_value() const {
  TG_ASSERT(op == Ops::CONST);
  if (auto* i = std::get_if<int64_t>(&arg)) return dtype.is_unsigned() ? static_cast<double>(static_cast<uint64_t>(*i)) : static_cast<double>(*i);
  return std::get<double>(arg);
}
int64_t UOp::const_int() const {
  TG_ASSERT(op == Ops::CONST);
  if (auto* i = std::get_if<int64_t>(&arg)) return *i;
  return static_cast<int64_t>(std::get<double>(arg));
}

UOpPtr UOp::self() const { return shared_from_this(); }
UOpPtr UOp::replace(std::vector<UOpPtr> s) const { return s == src ? self() : make(op, dtype, std::move(s), arg); }

static DType alu_dtype(Ops op, DType a) { return (op == Ops::CMPLT || op == Ops::CMPNE) ? dtypes::bool_.vec(a.count) : a; }

UOpPtr UOp::alu(Ops o, const UOpPtr& b) const {
  TG_ASSERT(b->dtype.base() == dtype.base() || o == Ops::SHL || o == Ops::SHR, op_name(o), " of ", dtype.name(), " and ", b->dtype.name());
  return make(o, alu_dtype(o, dtype), {self(), b});
}
UOpPtr UOp::alu(Ops o, const UOpPtr& b, const UOpPtr& c) const { return make(o, b->dtype, {self(), b, c}); }
UOpPtr UOp::unary(Ops o) const { return make(o, dtype, {self()}); }
UOpPtr UOp::add(int64_t b) const { return add(cnst_int(dtype, b)); }
UOpPtr UOp::mul(int64_t b) const { return mul(cnst_int(dtype, b)); }
UOpPtr UOp::idiv(int64_t b) const { return alu(Ops::IDIV, cnst_int(dtype, b)); }
UOpPtr UOp::mod(int64_t b) const { return alu(Ops::MOD, cnst_int(dtype, b)); }
UOpPtr UOp::lt(int64_t b) const { return alu(Ops::CMPLT, cnst_int(dtype, b)); }
UOpPtr UOp::ge(int64_t b) const { return lt(b)->alu(Ops::CMPNE, cnst_int(dtypes::bool_, 1)); }
UOpPtr UOp::where(const UOpPtr& t, const UOpPtr& f) const { return alu(Ops::WHERE, t, f); }
UOpPtr UOp::cast(DType d) const { return d == dtype ? self() : make(Ops::CAST, d, {self()}); }

std::vector<UOpPtr> UOp::toposort() const {
  std::vector<UOpPtr> out;
  std::unordered_set<const UOp*> seen;
  std::vector<std::pair<UOpPtr, size_t>> stack{{self(), 0}};
  seen.insert(this);
  while (!stack.empty()) {
    auto& [u, i] = stack.back();
    if (i < u->src.size()) {
      const UOpPtr& s = u->src[i++];
      if (seen.insert(s.get()).second) stack.emplace_back(s, 0);
    } else {
      out.push_back(u);
      stack.pop_back();
    }
  }
  return out;
}

// Linear in the graph's size, and iterative: a node with one user is nested in it; a node with several
// is printed once, on a line of its own before its users ("x3 = LOAD(...)"), and named where it is used.
std::string UOp::str() const {
  std::vector<UOpPtr> topo = toposort();
  std::unordered_map<const UOp*, int> users;
  for (auto& u : topo)
    for (auto& s : u->src) users[s.get()]++;
  std::unordered_map<const UOp*, std::string> names;
  std::ostringstream os;
  auto head = [&](const UOp* u) {
    os << op_name(u->op) << "(" << u->dtype.name();
    if (std::string a = arg_str(u->arg); !a.empty()) os << ", " << a;
  };
  auto write = [&](const UOp* root) {  // root nested with its unshared sources, depth first
    head(root);
    std::vector<std::pair<const UOp*, size_t>> stack{{root, 0}};
    while (!stack.empty()) {
      auto [u, i] = stack.back();
      if (i == u->src.size()) {
        os << ")";
        stack.pop_back();
        continue;
      }
      stack.back().second++;
      const UOp* s = u->src[i].get();
      os << ", ";
      if (auto it = names.find(s); it != names.end()) {
        os << it->second;
      } else {
        head(s);
        stack.emplace_back(s, 0);
      }
    }
  };
  for (auto& u : topo)
    if (u.get() != this && users[u.get()] > 1) {
      std::string name = "x" + std::to_string(names.size());
      os << name << " = ";
      write(u.get());
      os << "\n";
      names.emplace(u.get(), std::move(name));
    }
  write(this);
  return os.str();
}

std::string render_expr(const UOpPtr& u) {
  static const std::unordered_map<int, const char*> infix = {
      {static_cast<int>(Ops::ADD), "+"}, {static_cast<int>(Ops::MUL), "*"}, {static_cast<int>(Ops::IDIV), "/"}, {static_cast<int>(Ops::FDIV), "/"},
      {static_cast<int>(Ops::MOD), "%"}, {static_cast<int>(Ops::CMPLT), "<"}, {static_cast<int>(Ops::CMPNE), "!="},
      {static_cast<int>(Ops::AND), "&"}, {static_cast<int>(Ops::OR), "|"}, {static_cast<int>(Ops::XOR), "^"}};
  switch (u->op) {
    case Ops::CONST: {
      if (u->dtype.is_bool()) return u->const_int() ? "true" : "false";
      std::ostringstream os;
      os << u->const_value();
      return os.str();
    }
    case Ops::RANGE: return std::get<RangeArg>(u->arg).name();
    case Ops::SPECIAL: return std::get<SpecialArg>(u->arg).name();
    case Ops::DEFINE_VAR: return std::get<VarArg>(u->arg).name;
    case Ops::UNROLL: return "unroll" + std::to_string(std::get<UnrollArg>(u->arg).dim);
    case Ops::WHERE: return "(" + render_expr(u->src[0]) + "?" + render_expr(u->src[1]) + ":" + render_expr(u->src[2]) + ")";
    case Ops::NEG: return "(-" + render_expr(u->src[0]) + ")";
    case Ops::MAX: return "max(" + render_expr(u->src[0]) + "," + render_expr(u->src[1]) + ")";
    case Ops::CAST: return "(" + u->dtype.name() + ")" + render_expr(u->src[0]);
    default: break;
  }
  if (auto it = infix.find(static_cast<int>(u->op)); it != infix.end())
    return "(" + render_expr(u->src[0]) + it->second + render_expr(u->src[1]) + ")";
  return u->str();
}

}  // namespace tg
