// The C-style base rules and the render loop (cstyle.h). The CPU dialect is cpu.cpp.
#include "renderer/cstyle.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "tg/error.h"

namespace tg {

namespace {

// float16 values live in `float` variables that always hold a value exactly representable in half:
// loads widen, every op that can leave the half grid rounds back (tg_rh), stores narrow. Because float
// carries more than 2*11+2 significand bits, rounding a float result of + - * / sqrt to half gives the
// correctly rounded half result, i.e. exactly IEEE binary16 arithmetic, on any CPU. Only the
// conversions depend on the target: _Float16 when the compiler supports it there, else the portable C
// below (round to nearest even; NaN quieted with its payload's top bits kept, as x86's F16C and
// libgcc do), which gives the same bits.
constexpr const char* kHalfNative = R"(static inline float tg_h2f(unsigned short h) { _Float16 f; __builtin_memcpy(&f, &h, 2); return (float)f; }
static inline unsigned short tg_f2h(float x) { _Float16 f = (_Float16)x; unsigned short h; __builtin_memcpy(&h, &f, 2); return h; }
static inline float tg_rh(float x) { return (float)(_Float16)x; }
)";

constexpr const char* kHalfPortable = R"(static inline float tg_h2f(unsigned short h) {
  unsigned int s = (unsigned int)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, b;
  if (e == 0x1fu) b = s | 0x7f800000u | (m ? 0x400000u | (m << 13) : 0u);
  else if (e) b = s | ((e + 112u) << 23) | (m << 13);
  else if (!m) b = s;
  else { e = 113u; while (!(m & 0x400u)) { m <<= 1; e--; } b = s | (e << 23) | ((m & 0x3ffu) << 13); }
  float f; __builtin_memcpy(&f, &b, 4); return f;
}
static inline unsigned short tg_f2h(float x) {
  unsigned int b; __builtin_memcpy(&b, &x, 4);
  unsigned int s = (b >> 16) & 0x8000u, a = b & 0x7fffffffu;
  if (a > 0x7f800000u) return (unsigned short)(s | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) return (unsigned short)(s | 0x7c00u);
  if (a < 0x38800000u) {
    if (a < 0x33000000u) return (unsigned short)s;
    unsigned int sh = 126u - (a >> 23), m = (a & 0x7fffffu) | 0x800000u, h = m >> sh, r = m & ((1u << sh) - 1u), mid = 1u << (sh - 1u);
    return (unsigned short)(s | (h + (r > mid || (r == mid && (h & 1u)))));
  }
  unsigned int h = (a - 0x38000000u) >> 13, r = a & 0x1fffu;
  return (unsigned short)(s | (h + (r > 0x1000u || (r == 0x1000u && (h & 1u)))));
}
static inline float tg_rh(float x) { return tg_h2f(tg_f2h(x)); }
)";

}  // namespace

const char* c_half_conversions(bool native) { return native ? kHalfNative : kHalfPortable; }

namespace {

// Float -> integer casts as exec_alu defines them (C leaves out-of-range values undefined): truncate,
// NaN is 0, saturate to the int64 range (uint64: its own), then wrap to the width of the type.
constexpr const char* kFloatToInt = R"(static inline long long tg_f2i(double x) {
  return x != x ? 0 : x < -9223372036854775808.0 ? (-9223372036854775807ll-1) : x > 9223372036854774784.0 ? 9223372036854774784ll : (long long)x;
}
static inline unsigned long long tg_f2u(double x) {
  return x != x || x < 0.0 ? 0ull : x > 18446744073709549568.0 ? 18446744073709549568ull : (unsigned long long)x;
}
)";

}  // namespace

const char* c_float_to_int() { return kFloatToInt; }
bool is_half(DType d) { return d.scalar == Scalar::Float16; }
bool is_float_to_int(const UOp& u) { return u.op == Ops::CAST && u.src[0]->dtype.is_float() && u.dtype.is_int(); }
std::string ctype(DType d) { return d.count > 1 ? d.name() : is_half(d) ? "float" : d.c_name(); }

std::string float_literal(double v, DType dt) {
  if (is_half(dt)) v = half_to_float(float_to_half(static_cast<float>(v)));  // a value on the half grid
  bool dbl = dt.scalar == Scalar::Float64;
  if (std::isnan(v)) return dbl ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (dbl ? "__builtin_inf()" : "__builtin_inff()");
  char buf[64];
  std::snprintf(buf, sizeof buf, dbl ? "%.17g" : "%.9g", v);
  std::string body = buf;
  if (body.find_first_of(".e") == std::string::npos) body += ".0";
  return dbl ? body : body + "f";
}

namespace {

std::string const_literal(const UOp& u) {
  DType dt = u.dtype;
  if (dt.is_float()) return float_literal(u.const_value(), dt);
  int64_t v = u.const_int();
  if (dt.is_bool()) return v ? "1" : "0";
  if (dt.scalar == Scalar::Int64) return v == INT64_MIN ? "(-9223372036854775807ll-1)" : std::to_string(v) + "ll";
  if (dt.scalar == Scalar::UInt64) return std::to_string(static_cast<uint64_t>(v)) + "ull";
  if (dt.scalar == Scalar::UInt32) return std::to_string(static_cast<uint32_t>(v)) + "u";
  if (dt.scalar == Scalar::Int32) return v == INT32_MIN ? "(-2147483647-1)" : std::to_string(v);
  return "((" + dt.c_name() + ")" + std::to_string(v) + ")";
}

}  // namespace

std::string zero_literal(DType d) {
  std::string z = const_literal(*UOp::cnst(d.base(), 0));
  if (d.count == 1) return z;
  std::string s = "((" + ctype(d) + "){";
  for (int i = 0; i < d.count; i++) s += (i ? "," : "") + z;
  return s + "})";
}

const std::string& RenderCtx::at(const UOpPtr& u) {
  if (u->op == Ops::CONST) {
    auto it = literals_.find(u.get());
    return it != literals_.end() ? it->second : literals_.emplace(u.get(), const_literal(*u)).first->second;
  }
  auto it = names.find(u.get());
  TG_ASSERT(it != names.end(), "renderer: ", op_name(u->op), " used before it was rendered");
  return it->second;
}

namespace {

// Integer division and modulo as the README's "Semantics" section defines them (and exec_alu folds
// them): truncation, x/0 == x%0 == 0, MIN/-1 == MIN, MIN%-1 == 0. The guards are emitted only where
// the divisor's bounds do not rule the case out, so index math by positive constants stays a plain / %.
std::string divmod_expr(const UOp& u, const std::string& a, const std::string& b) {
  const UOp &x = *u.src[0], &d = *u.src[1];
  bool is_mod = u.op == Ops::MOD;
  bool maybe_zero = d.vmin <= 0 && d.vmax >= 0;
  // Only int and long long trap on MIN / -1: narrower types are promoted to int first.
  bool wide = u.dtype.itemsize() >= 4;
  bool maybe_minus1 = !u.dtype.is_unsigned() && wide && d.vmin <= -1 && d.vmax >= -1 && x.vmin <= static_cast<int64_t>(u.dtype.min());
  std::string plain = "(" + a + (is_mod ? "%" : "/") + b + ")";
  if (!maybe_zero && !maybe_minus1) return plain;
  // (the constant's value, not its bounds: a uint64 constant from 2^63 up has no bounds)
  if (d.op == Ops::CONST && d.const_int() == 0) return "0";  // no "division by zero" warning from the compiler
  if (d.op == Ops::CONST && d.const_int() == -1 && !u.dtype.is_unsigned()) return is_mod ? "0" : "(-(" + a + "))";
  if (is_mod) {
    std::string cond = maybe_zero && maybe_minus1 ? "(" + b + "==0)|(" + b + "==-1)" : maybe_zero ? b + "==0" : b + "==-1";
    return "((" + cond + ")?0:" + plain + ")";
  }
  std::string r = plain;
  if (maybe_minus1) r = "(" + b + "==-1?-(" + a + "):" + r + ")";  // -MIN wraps to MIN (-fwrapv)
  if (maybe_zero) r = "(" + b + "==0?0:" + r + ")";
  return r;
}

// Shifts by a count outside [0, bits of the type) are defined (as exec_alu folds them): SHL gives 0,
// SHR gives 0, or -1 for a negative signed value (an arithmetic shift by "infinitely many" bits).
// SHL shifts the unsigned bit pattern, so shifting a negative value is not undefined either.
std::string shift_expr(const UOp& u, const std::string& a, const std::string& b) {
  int bits = u.dtype.itemsize() * 8;
  const UOp& n = *u.src[1];
  bool in_range = n.vmin >= 0 && n.vmax < bits;
  std::string t = u.dtype.c_name(), ut = bits <= 32 ? "unsigned int" : "unsigned long long";
  std::string shifted = u.op == Ops::SHL ? "((" + t + ")((" + ut + ")" + a + "<<" + b + "))" : "(" + a + ">>" + b + ")";
  if (in_range) return shifted;
  std::string beyond = u.op == Ops::SHL || u.dtype.is_unsigned() ? "0" : "-(" + a + "<0)";
  if (n.op == Ops::CONST) return "(" + beyond + ")";  // a constant count out of range
  return "((unsigned long long)" + b + "<" + std::to_string(bits) + "ull?" + shifted + ":" + beyond + ")";
}

using B = const Bindings&;
using Text = std::optional<std::string>;

RenderCtx& ctx(B b) { return b.ctx<RenderCtx>(); }
std::string src(B b, size_t i) { return ctx(b).at(b["root"]->src[i]); }

// A float math function for the dtype; half computes in float.
std::string math(const char* fn, const std::string& a, DType dt) {
  return std::string("__builtin_") + fn + (dt.scalar == Scalar::Float64 ? "" : "f") + "(" + a + ")";
}

// The exact C expression of a scalar ALU op or CAST.
std::string exact_alu(B b) {
  const UOp& u = *b["root"];
  auto s = [&](size_t i) { return src(b, i); };
  DType dt = u.dtype;
  switch (u.op) {
    case Ops::ADD: return "(" + s(0) + "+" + s(1) + ")";
    case Ops::MUL: return "(" + s(0) + "*" + s(1) + ")";
    case Ops::FDIV: return "(" + s(0) + "/" + s(1) + ")";
    case Ops::MULACC: return dt.is_float() ? std::string(dt.scalar == Scalar::Float64 ? "tg_fma(" : "tg_fmaf(") + s(0) + "," + s(1) + "," + s(2) + ")"
                                           : "(" + s(0) + "*" + s(1) + "+" + s(2) + ")";
    case Ops::IDIV: case Ops::MOD: return divmod_expr(u, s(0), s(1));
    case Ops::MAX:  // NaN wins, as in torch (and exec_alu)
      if (dt.is_float()) return "(((" + s(0) + ">" + s(1) + ")|(" + s(0) + "!=" + s(0) + "))?" + s(0) + ":" + s(1) + ")";
      return "((" + s(0) + ">" + s(1) + ")?" + s(0) + ":" + s(1) + ")";
    case Ops::CMPLT: return "(" + s(0) + "<" + s(1) + ")";
    case Ops::CMPNE: return "(" + s(0) + "!=" + s(1) + ")";
    case Ops::XOR: return "(" + s(0) + "^" + s(1) + ")";
    case Ops::OR: return "(" + s(0) + "|" + s(1) + ")";
    case Ops::AND: return "(" + s(0) + "&" + s(1) + ")";
    case Ops::SHL: case Ops::SHR: return shift_expr(u, s(0), s(1));
    case Ops::NEG: return dt.is_bool() ? "(!" + s(0) + ")" : "(-(" + s(0) + "))";
    case Ops::RECIP: return "(" + float_literal(1.0, dt) + "/" + s(0) + ")";
    case Ops::EXP2: return math("exp2", s(0), dt);
    case Ops::LOG2: return math("log2", s(0), dt);
    case Ops::SIN: return math("sin", s(0), dt);
    case Ops::COS: return math("cos", s(0), dt);
    case Ops::TAN: return math("tan", s(0), dt);
    case Ops::SQRT: return math("sqrt", s(0), dt);
    case Ops::WHERE: return "(" + s(0) + "?" + s(1) + ":" + s(2) + ")";
    case Ops::CAST:  // to half through float (as exec_alu), then rounded by alu()
      if (is_float_to_int(u)) return "((" + ctype(dt) + ")" + (dt.scalar == Scalar::UInt64 ? "tg_f2u(" : "tg_f2i(") + s(0) + "))";
      return "((" + ctype(dt) + ")" + s(0) + ")";
    default: TG_ASSERT(false, "C renderer: not an ALU op: ", op_name(u.op));
  }
}

// A half result that may be off the half grid is rounded back to it.
Text alu(B b) {
  const UOp& u = *b["root"];
  if (u.dtype.count > 1) return std::nullopt;
  std::string e = exact_alu(b);
  bool rounds = is_half(u.dtype) && u.op != Ops::MAX && u.op != Ops::NEG && u.op != Ops::WHERE && !(u.op == Ops::CAST && is_half(u.src[0]->dtype));
  return rounds ? "tg_rh(" + e + ")" : e;
}

// Through the bits in memory (a GNU statement expression); a half's bits are its tg_f2h.
Text bitcast(B b) {
  const UOp& u = *b["root"];
  if (u.dtype.count > 1) return std::nullopt;
  DType from = u.src[0]->dtype;
  std::string from_t = is_half(from) ? "unsigned short" : ctype(from), from_v = is_half(from) ? "tg_f2h(" + src(b, 0) + ")" : src(b, 0);
  std::string to_t = is_half(u.dtype) ? "unsigned short" : ctype(u.dtype), result = is_half(u.dtype) ? "tg_h2f(t)" : "t";
  return "({ " + from_t + " f = " + from_v + "; " + to_t + " t; __builtin_memcpy(&t, &f, sizeof(t)); " + result + "; })";
}

Text load(B b) {
  const UOp& u = *b["root"];
  if (u.dtype.count > 1 || (u.src.size() > 1 && u.src[1]->dtype.count > 1)) return std::nullopt;
  std::string v = is_half(u.dtype) ? "tg_h2f(*" + src(b, 0) + ")" : "*" + src(b, 0);
  return u.src.size() == 1 ? v : "(" + src(b, 1) + " ? " + v + " : " + zero_literal(u.dtype) + ")";
}

Text store(B b) {
  const UOp& u = *b["root"];
  DType d = u.src[1]->dtype;
  if (d.count > 1) return std::nullopt;
  std::string st = "*" + src(b, 0) + " = " + (is_half(d) ? "tg_f2h(" + src(b, 1) + ")" : src(b, 1)) + ";";
  return u.src.size() > 2 ? "if (" + src(b, 2) + ") " + st : st;
}

}  // namespace

const RenderRules& cstyle_rules() {
  static const RenderRules rules({
      {UPat::op(Ops::RANGE), [](B b) -> Text {
         const std::string& n = ctx(b).names.at(b["root"].get());
         return "for (" + ctype(b["root"]->dtype) + " " + n + " = " + src(b, 0) + "; " + n + " < " + src(b, 1) + "; " + n + "++)";
       }, "RANGE: a for loop"},
      {UPat::op(Ops::IF), [](B b) -> Text { return "if (" + src(b, 0) + ")"; }, "IF"},
      {UPat::op(Ops::DEFINE_ACC), [](B b) -> Text { return src(b, 0); }, "DEFINE_ACC: its identity"},
      {UPat::op(Ops::ASSIGN), [](B b) -> Text { return src(b, 0) + " = " + src(b, 1) + ";"; }, "ASSIGN"},
      {UPat::op(Ops::INDEX), [](B b) -> Text { return "(" + src(b, 0) + "+" + src(b, 1) + ")"; }, "INDEX: a pointer"},
      {UPat::op(Ops::LOAD), load, "LOAD (gated: 0 where the gate is false)"},
      {UPat::op(Ops::STORE), store, "STORE"},
      {UPat::op(Ops::BITCAST), bitcast, "BITCAST through memory"},
      {UPat::op(Ops::CAST), alu, "CAST"},
      {UPat::any(), [](B b) -> Text { return is_alu(b["root"]->op) ? alu(b) : std::nullopt; }, "ALU"},
  });
  return rules;
}

LineKind CStyleRenderer::line_kind(const UOp& u) const {
  switch (u.op) {
    case Ops::CONST: return LineKind::Skip;
    case Ops::INDEX: return LineKind::Inline;
    case Ops::RANGE: case Ops::IF: return LineKind::Open;
    case Ops::ENDRANGE: case Ops::ENDIF: return LineKind::Close;
    case Ops::STORE: case Ops::ASSIGN: case Ops::BARRIER: case Ops::DEFINE_GLOBAL: return LineKind::Statement;
    default: return LineKind::Value;
  }
}

RenderedKernel CStyleRenderer::render(const std::string& name, const std::vector<UOpPtr>& uops) const {
  RenderCtx c;
  c.names.reserve(uops.size());
  for (auto& u : uops)
    if (u->op == Ops::STORE) c.stored.insert(u->src[0]->src[0].get());
  std::ostringstream body;
  std::string ind = "  ";
  int counter = 0;
  for (auto& u : uops) {
    LineKind kind = line_kind(*u);
    if (kind == LineKind::Skip) continue;
    if (kind == LineKind::Close) {
      ind.resize(ind.size() - 2);
      body << ind << "}\n";
      continue;
    }
    // the names that a UOp's own rule uses: its loop variable or buffer
    if (u->op == Ops::RANGE) c.names[u.get()] = std::get<RangeArg>(u->arg).name();
    else if (u->op == Ops::SPECIAL) c.names[u.get()] = std::get<SpecialArg>(u->arg).name();
    else if (u->op == Ops::DEFINE_GLOBAL) c.names[u.get()] = "data" + std::to_string(std::get<int64_t>(u->arg));
    const RenderRule* rule = nullptr;
    std::optional<std::string> text = rules().rewrite(u, &c, &rule);
    TG_ASSERT(text.has_value(), device(), " renderer: no rule renders ", op_name(u->op), " of ", u->dtype.name());
    switch (kind) {
      case LineKind::Inline: c.names[u.get()] = *text; break;
      case LineKind::Statement:
        body << ind << *text << "\n";
        if (u->op == Ops::ASSIGN) c.names[u.get()] = c.at(u->src[0]);
        break;
      case LineKind::Open:
        body << ind << *text << " {\n";
        ind += "  ";
        break;
      default: {
        const char* prefix = u->op == Ops::DEFINE_ACC ? "acc" : u->op == Ops::LOAD ? "val" : u->op == Ops::VECTORIZE ? "vec"
                           : u->op == Ops::GEP ? "gep" : u->op == Ops::BITCAST ? "cast" : "alu";
        std::string n = prefix + std::to_string(counter++);
        body << ind << ctype(u->dtype) << " " << n << " = " << *text << ";\n";
        c.names[u.get()] = n;
      }
    }
  }
  while (ind.size() > 2) {  // launch loops the dialect opened (the CPU's SPECIAL)
    ind.resize(ind.size() - 2);
    body << ind << "}\n";
  }
  std::ostringstream out;
  out << "// " << name << "\n" << prelude(uops) << signature(name) << " {\n" << body_prefix() << body.str() << body_suffix(c) << "}\n";
  return {name, out.str(), c.global_size, c.local_size};
}

}  // namespace tg
