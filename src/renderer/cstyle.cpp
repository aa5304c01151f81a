// The C-style renderer: one SSA statement per UOp, so no expression nests deeper than a few ops.
// The CPU dialect (below) is C for the system compiler with the ABI described in renderer.h.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "renderer/renderer.h"
#include "tg/error.h"
#include "uop/uop.h"

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

bool is_half(DType d) { return d.scalar == Scalar::Float16; }
// A STORE the lowerer marked streaming (arg 1: a large output written once), not gated.
bool is_streaming(const UOp& u) {
  return u.op == Ops::STORE && u.src.size() == 2 && std::holds_alternative<int64_t>(u.arg) && std::get<int64_t>(u.arg) == 1;
}
bool is_float_to_int(const UOp& u) { return u.op == Ops::CAST && u.src[0]->dtype.is_float() && u.dtype.is_int(); }

// The C type of an element in memory.
std::string storage_type(DType d) { return is_half(d) ? "unsigned short" : d.base().c_name(); }

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

// UOp -> its C name; constants are their literal wherever they appear.
struct Names : std::unordered_map<const UOp*, std::string> {
  std::string at(const UOpPtr& u) const {
    if (u->op == Ops::CONST) return const_literal(*u);
    auto it = find(u.get());
    TG_ASSERT(it != end(), "renderer: ", op_name(u->op), " used before it was rendered");
    return it->second;
  }
};

bool uses_half(const std::vector<UOpPtr>& uops) {
  for (auto& u : uops) {
    if (is_half(u->dtype)) return true;
    for (auto& s : u->src)
      if (is_half(s->dtype)) return true;
  }
  return false;
}

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
  if (d.op == Ops::CONST && d.vmin == 0) return "0";  // no "division by zero" warning from the compiler
  if (d.op == Ops::CONST && d.vmin == -1) return is_mod ? "0" : "(-(" + a + "))";
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

// The C-style base: one statement per UOp, in the order linearize() gives. A dialect supplies the
// kernel signature and buffer prologue, the launched indices (SPECIAL), barriers and local memory, and
// the text before the function (helpers, vector typedefs).
class CStyleRenderer : public Renderer {
 public:
  RenderedKernel render(const std::string& name, const std::vector<UOpPtr>& uops) const override {
    Ctx c;
    for (auto& u : uops)
      if (u->op == Ops::STORE) c.stored.insert(u->src[0]->src[0].get());
    for (auto& u : uops) statement(c, u);
    close_specials(c);
    std::ostringstream src;
    src << "// " << name << "\n" << prelude(uops) << signature(name) << " {\n" << body_prefix() << c.body.str()
        << (c.streamed ? "  tg_stream_fence();\n" : "") << "}\n";
    return {name, src.str(), c.global_size, c.local_size};
  }

 protected:
  struct Ctx {
    Names r;  // the C name or literal of each UOp's value
    std::ostringstream body;
    std::string ind = "  ";
    int counter = 0, open_specials = 0;
    std::vector<int64_t> global_size{1}, local_size;
    std::unordered_set<const UOp*> stored;  // buffers written to; the others are const
    bool streamed = false;                  // some store went around the caches: fence before returning
    std::string fresh(const char* prefix) { return prefix + std::to_string(counter++); }
    void decl(const UOpPtr& u, const char* prefix, const std::string& expr) {
      std::string n = fresh(prefix);
      body << ind << ctype(u->dtype) << " " << n << " = " << expr << ";\n";
      r[u.get()] = n;
    }
    void open(const std::string& head) { body << ind << head << " {\n"; ind += "  "; }
    void close() { ind.resize(ind.size() - 2); body << ind << "}\n"; }
  };

  virtual std::string signature(const std::string& name) const = 0;
  virtual std::string buffer_arg(Ctx& c, const UOp& u) const = 0;  // the prologue line of a DEFINE_GLOBAL
  virtual void special(Ctx& c, const UOpPtr& u) const = 0;         // a launched index
  virtual void close_specials(Ctx& c) const { (void)c; }
  virtual std::string barrier() const = 0;
  virtual std::string body_prefix() const { return ""; }
  virtual std::string prelude(const std::vector<UOpPtr>& uops) const = 0;
  // Whether a streaming STORE (arg 1: a large output written once) of this vector type is written
  // around the caches, by tg_stream_<type>(pointer, value), with tg_stream_fence() at the kernel's end.
  virtual bool streams(DType d) const { (void)d; return false; }

  // The C type of a value of `d`: float16 values are floats (see above); a vector is its typedef.
  static std::string ctype(DType d) { return d.count > 1 ? d.name() : is_half(d) ? "float" : d.c_name(); }
  static std::string vector_literal(DType d, const std::vector<std::string>& lanes) {
    std::string s = "((" + ctype(d) + "){";
    for (size_t i = 0; i < lanes.size(); i++) s += (i ? "," : "") + lanes[i];
    return s + "})";
  }

  void statement(Ctx& c, const UOpPtr& u) const {
    auto s = [&](size_t i) { return c.r.at(u->src[i]); };
    switch (u->op) {
      case Ops::DEFINE_GLOBAL: c.body << c.ind << buffer_arg(c, *u) << "\n"; break;
      case Ops::CONST: break;  // constants are printed where they are used
      case Ops::SPECIAL: special(c, u); break;
      case Ops::RANGE: {
        std::string n = "ridx" + std::to_string(std::get<int64_t>(u->arg));
        c.open("for (" + ctype(u->dtype) + " " + n + " = " + s(0) + "; " + n + " < " + s(1) + "; " + n + "++)");
        c.r[u.get()] = n;
        break;
      }
      case Ops::ENDRANGE: case Ops::ENDIF: c.close(); break;
      case Ops::IF: c.open("if (" + s(0) + ")"); break;
      case Ops::BARRIER: c.body << c.ind << barrier() << ";\n"; break;
      case Ops::DEFINE_ACC: c.decl(u, "acc", s(0)); break;
      case Ops::ASSIGN:
        c.body << c.ind << s(0) << " = " << s(1) << ";\n";
        c.r[u.get()] = s(0);
        break;
      case Ops::INDEX: c.r[u.get()] = "(" + s(0) + "+" + s(1) + ")"; break;
      case Ops::LOAD: {
        DType d = u->dtype;
        if (u->src.size() > 1 && u->src[1]->dtype.count > 1) {  // a vector under a lane mask (vectorize)
          const UOpPtr& index = u->src[0];
          c.decl(u, "val", "tg_load_masked_" + d.name() + "(" + c.r.at(index->src[0]) + ", " + c.r.at(index->src[1]) + ", " +
                               std::to_string(std::get<int64_t>(u->arg)) + "ll, " + s(1) + ")");
          break;
        }
        std::string v = d.count > 1 ? "*(const " + ctype(d) + "*)" + s(0) : is_half(d) ? "tg_h2f(*" + s(0) + ")" : "*" + s(0);
        if (u->src.size() == 1) c.decl(u, "val", v);
        else c.decl(u, "val", "(" + s(1) + " ? " + v + " : " + zero(d) + ")");
        break;
      }
      case Ops::STORE: {
        DType d = u->src[1]->dtype;
        if (is_streaming(*u) && streams(d)) {
          c.body << c.ind << "tg_stream_" << d.name() << "(" << s(0) << ", " << s(1) << ");\n";
          c.streamed = true;
          break;
        }
        std::string dst = d.count > 1 ? "*(" + ctype(d) + "*)" + s(0) : "*" + s(0);
        std::string st = dst + " = " + (is_half(d) ? "tg_f2h(" + s(1) + ")" : s(1)) + ";";
        c.body << c.ind << (u->src.size() > 2 ? "if (" + s(2) + ") " : "") << st << "\n";
        break;
      }
      case Ops::VECTORIZE: {
        std::vector<std::string> lanes;
        for (size_t i = 0; i < u->src.size(); i++) lanes.push_back(s(i));
        c.decl(u, "vec", vector_literal(u->dtype, lanes));
        break;
      }
      case Ops::GEP: c.decl(u, "gep", s(0) + "[" + std::to_string(std::get<int64_t>(u->arg)) + "]"); break;
      case Ops::BITCAST: {  // through the bits in memory; a half's bits are its tg_f2h
        std::string n = c.fresh("cast"), from = s(0);
        if (u->src[0]->op == Ops::CONST && !is_half(u->src[0]->dtype)) {  // a literal has no address
          from = c.fresh("bits");
          c.body << c.ind << ctype(u->src[0]->dtype) << " " << from << " = " << s(0) << ";\n";
        } else if (is_half(u->src[0]->dtype)) {
          from = c.fresh("bits");
          c.body << c.ind << "unsigned short " << from << " = tg_f2h(" << s(0) << ");\n";
        }
        if (is_half(u->dtype)) {
          std::string bits = c.fresh("bits");
          c.body << c.ind << "unsigned short " << bits << "; __builtin_memcpy(&" << bits << ", &" << from << ", 2);\n";
          c.body << c.ind << "float " << n << " = tg_h2f(" << bits << ");\n";
        } else {
          c.body << c.ind << ctype(u->dtype) << " " << n << "; __builtin_memcpy(&" << n << ", &" << from << ", sizeof(" << n << "));\n";
        }
        c.r[u.get()] = n;
        break;
      }
      default:
        TG_ASSERT(is_alu(u->op) || u->op == Ops::CAST, device(), " renderer: cannot render ", op_name(u->op));
        c.decl(u, "alu", alu_expr(*u, c.r));
    }
  }

  static std::string zero(DType d) {
    std::string z = const_literal(*UOp::cnst(d.base(), 0));
    return d.count > 1 ? vector_literal(d, std::vector<std::string>(d.count, z)) : z;
  }

  // A float math function for the dtype; half computes in float.
  static std::string math(const char* fn, const std::string& a, DType dt) {
    if (dt.scalar == Scalar::Float64) return std::string("__builtin_") + fn + "(" + a + ")";
    return std::string("__builtin_") + fn + "f(" + a + ")";
  }

  static std::string alu_expr(const UOp& u, const Names& r) {
    std::string e = exact_alu_expr(u, r);
    // a half result that may be off the half grid is rounded back to it
    bool rounds = is_half(u.dtype) && u.op != Ops::MAX && u.op != Ops::NEG && u.op != Ops::WHERE &&
                  !(u.op == Ops::CAST && is_half(u.src[0]->dtype));
    return rounds ? "tg_rh(" + e + ")" : e;
  }

  static std::string exact_alu_expr(const UOp& u, const Names& r) {
    auto s = [&](size_t i) { return r.at(u.src[i]); };
    DType dt = u.dtype;
    if (dt.count > 1) return vector_alu_expr(u, r);
    switch (u.op) {
      case Ops::ADD: return "(" + s(0) + "+" + s(1) + ")";
      case Ops::MUL: return "(" + s(0) + "*" + s(1) + ")";
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
      case Ops::CAST:  // to half through float (as exec_alu), then rounded by alu_expr
        if (is_float_to_int(u)) return "((" + ctype(dt) + ")" + (dt.scalar == Scalar::UInt64 ? "tg_f2u(" : "tg_f2i(") + s(0) + "))";
        return "((" + ctype(dt) + ")" + s(0) + ")";
      default: TG_ASSERT(false, "C renderer: not an ALU op: ", op_name(u.op));
    }
  }

  // The vector ops of GCC/Clang's vector extensions (vector_alu() says which): lanes of the same type.
  static std::string vector_alu_expr(const UOp& u, const Names& r) {
    auto s = [&](size_t i) { return r.at(u.src[i]); };
    DType dt = u.dtype;
    std::string mask = mask_type(dt);
    switch (u.op) {
      case Ops::ADD: return "(" + s(0) + "+" + s(1) + ")";
      case Ops::MUL: return "(" + s(0) + "*" + s(1) + ")";
      case Ops::NEG: return "(-(" + s(0) + "))";
      case Ops::RECIP: return "(" + float_literal(1.0, dt.base()) + "/" + s(0) + ")";
      case Ops::EXP2: return "tg_exp2_" + dt.name() + "(" + s(0) + ")";
      case Ops::MULACC: return dt.is_float() ? "tg_fma_" + dt.name() + "(" + s(0) + "," + s(1) + "," + s(2) + ")" : "(" + s(0) + "*" + s(1) + "+" + s(2) + ")";
      case Ops::MAX: {  // a comparison gives a lane mask of all ones or zeros; NaN wins
        std::string m = dt.is_float() ? "((" + s(0) + ">" + s(1) + ")|(" + s(0) + "!=" + s(0) + "))" : "(" + s(0) + ">" + s(1) + ")";
        return "((" + ctype(dt) + ")((" + m + "&(" + mask + ")" + s(0) + ")|(~" + m + "&(" + mask + ")" + s(1) + ")))";
      }
      default: TG_ASSERT(false, "C renderer: no vector form of ", op_name(u.op), " on ", dt.name());
    }
  }

  // exp2 on a float32 vector, branch-free so it stays vector code (libm's exp2f is one call per lane):
  // x = n + f with n = round(x), f in [-1/2, 1/2]; 2^f by Cephes' exp2f polynomial (about 1 ulp);
  // 2^n applied as two exact power-of-two factors, so the result is rounded once, also when it
  // overflows to inf or underflows into the subnormals. x is clamped to [-151, 129] (beyond, the
  // result is 0 or inf anyway); NaN passes through (its comparisons are false).
  static std::string exp2_vector(DType d) {
    std::string t = d.name(), m = mask_type(d), w = std::to_string(static_cast<int>(d.count));
    // n = round(x) by adding 1.5 * 2^23: its low mantissa bits are n itself (x is clamped far inside
    // 2^22). A NaN lane gives some n, but p is NaN there and so is the product. Under clang the
    // polynomial is contracted to fmas where the target has them (exp2's only rounding changes).
    return "static inline " + t + " tg_exp2_" + t + "(" + t + " x) {\n"
           "#ifdef __clang__\n#pragma clang fp contract(fast)\n#endif\n"
           "  " + m + " lo = x < -151.0f, hi = x > 129.0f;\n"
           "  x = (" + t + ")((lo & (" + m + ")((" + t + "){} + -151.0f)) | (hi & (" + m + ")((" + t + "){} + 129.0f)) | (~(lo | hi) & (" + m + ")x));\n"
           "  " + t + " r = x + 12582912.0f, n = r - 12582912.0f, f = x - n;\n"
           "  " + t + " p = ((((1.535336188319500e-4f * f + 1.339887440266574e-3f) * f + 9.618437357674640e-3f) * f + 5.550332471162809e-2f) * f\n"
           "        + 2.402264791363012e-1f) * f + 6.931472028550421e-1f;\n"
           "  p = p * f + 1.0f;\n"
           "  " + m + " ni = (" + m + ")r - 0x4B400000;\n"
           "  " + m + " n1 = ni >> 1, n2 = ni - n1;\n"
           "  return p * (" + t + ")((n1 + 127) << 23) * (" + t + ")((n2 + 127) << 23);\n"
           "}\n";
  }

  static std::string mask_type(DType d) { return mask_dtype(d).name(); }

  // typedefs of the vector types used (and their lane masks), and fma helpers for them
  static std::string vector_prelude(const std::vector<UOpPtr>& uops) {
    std::set<std::string> done;
    std::ostringstream os;
    auto def = [&](DType d) {
      if (!done.insert(d.name()).second) return;
      os << "typedef " << d.base().c_name() << " " << d.name() << " __attribute__((vector_size(" << d.count * d.itemsize()
         << "), aligned(" << d.itemsize() << "), may_alias));\n";
    };
    bool fma = false;
    for (auto& u : uops) {
      if (u->op == Ops::MULACC) fma = true;
      if (u->dtype.count > 1) {
        def(u->dtype);
        if (u->op == Ops::MAX || u->op == Ops::EXP2) def(mask_dtype(u->dtype));
      }
    }
    // a masked vector read: one vector load when it stays within the readable part [0, n) of the buffer,
    // else lane by lane (the masked-off lanes may lie outside the buffer)
    std::set<std::string> ldone;
    for (auto& u : uops) {
      if (u->op != Ops::LOAD || u->src.size() < 2 || u->src[1]->dtype.count == 1 || !ldone.insert(u->dtype.name()).second) continue;
      std::string t = u->dtype.name(), m = u->src[1]->dtype.name(), e = u->dtype.base().c_name(), w = std::to_string(u->dtype.count);
      os << "static inline " << t << " tg_load_masked_" << t << "(const " << e << "* b, long long i, long long n, " << m << " m) {\n"
         << "  if (i >= 0 && i + " << w << " <= n) return (" << t << ")((" << m << ")*(const " << t << "*)(b + i) & m);\n"
         << "  " << t << " r; for (int l = 0; l < " << w << "; l++) r[l] = m[l] ? b[i + l] : 0; return r;\n}\n";
    }
    std::set<std::string> edone;
    for (auto& u : uops)
      if (u->op == Ops::EXP2 && u->dtype.count > 1 && edone.insert(u->dtype.name()).second) os << exp2_vector(u->dtype);
    if (fma) {  // fused where the target has fma instructions (never a slow software fma), else multiply-add
      os << "#ifdef __FMA__\n#define tg_fmaf(a, b, c) __builtin_fmaf(a, b, c)\n#define tg_fma(a, b, c) __builtin_fma(a, b, c)\n#else\n"
         << "#define tg_fmaf(a, b, c) ((a) * (b) + (c))\n#define tg_fma(a, b, c) ((a) * (b) + (c))\n#endif\n";
      std::set<std::string> fdone;
      for (auto& u : uops) {
        if (u->op != Ops::MULACC || u->dtype.count == 1 || !u->dtype.is_float() || !fdone.insert(u->dtype.name()).second) continue;
        std::string t = u->dtype.name(), f = u->dtype.scalar == Scalar::Float64 ? "__builtin_fma" : "__builtin_fmaf";
        // clang contracts the vector expression when told to; gcc ignores that pragma but turns the
        // lane loop into one vector fma (clang does not always)
        os << "static inline " << t << " tg_fma_" << t << "(" << t << " a, " << t << " b, " << t << " c) {\n"
           << "#if defined(__FMA__) && defined(__clang__)\n#pragma clang fp contract(fast)\n  return a * b + c;\n"
           << "#elif defined(__FMA__)\n  " << t << " r; for (int i = 0; i < " << static_cast<int>(u->dtype.count) << "; i++) r[i] = " << f
           << "(a[i], b[i], c[i]); return r;\n#else\n  return a * b + c;\n#endif\n}\n";
      }
    }
    return os.str();
  }
};

class CPURenderer final : public CStyleRenderer {
 public:
  explicit CPURenderer(std::function<bool()> native_half) : native_half_(std::move(native_half)) {}
  std::string device() const override { return "CPU"; }
  int global_max_dims() const override { return 1; }
  int max_vector_bytes() const override { return 64; }
  bool vector_alu(Ops op, DType d) const override {
    if (d.is_bool() || d.scalar == Scalar::Float16) return false;
    if (op == Ops::RECIP) return d.is_float();
    if (op == Ops::EXP2) return d.scalar == Scalar::Float32;
    return op == Ops::ADD || op == Ops::MUL || op == Ops::NEG || op == Ops::MAX || op == Ops::MULACC;
  }
  // two vectors: the width of the heuristics' register tile (B's rows 4 KB apart in the cache sets
  // otherwise evict each other: a 1024-wide float32 matmul runs at 2/3 of the speed unpacked)
  int64_t matmul_panel(DType d) const override {
    return d.is_float() && d.scalar != Scalar::Float16 ? 2 * max_vector_bytes() / d.itemsize() : 0;
  }

 private:
  std::function<bool()> native_half_;

  std::string signature(const std::string& name) const override {
    return "void " + name + "(void** restrict bufs, const long long* restrict vals, long long gstart, long long gend)";
  }
  std::string buffer_arg(Ctx& c, const UOp& u) const override {
    int64_t i = std::get<int64_t>(u.arg);
    std::string n = "data" + std::to_string(i), t = (c.stored.count(&u) ? "" : "const ") + storage_type(u.dtype);
    c.r[&u] = n;
    return t + "* restrict " + n + " = (" + t + "*)bufs[" + std::to_string(i) + "];";
  }
  // the thread pool's slice of the first global dim
  void special(Ctx& c, const UOpPtr& u) const override {
    auto& v = std::get<VarArg>(u->arg);
    TG_ASSERT(c.open_specials == 0, "CPU renderer: one launched dim only");
    c.open("for (" + ctype(u->dtype) + " " + v.name + " = gstart; " + v.name + " < gend; " + v.name + "++)");
    c.r[u.get()] = v.name;
    c.open_specials++;
    c.global_size = {v.max + 1};
  }
  void close_specials(Ctx& c) const override {
    for (; c.open_specials > 0; c.open_specials--) c.close();
  }
  std::string barrier() const override { TG_ASSERT(false, "CPU renderer: no barriers (the CPU has no local dims)"); }
  bool streams(DType d) const override { return d.count > 1 && !is_half(d); }
  std::string prelude(const std::vector<UOpPtr>& uops) const override {
    std::string p;
    if (uses_half(uops)) p += c_half_conversions(native_half_ && native_half_());
    if (std::any_of(uops.begin(), uops.end(), [](const UOpPtr& u) { return is_float_to_int(*u); })) p += kFloatToInt;
    p += vector_prelude(uops);
    p += streaming_prelude(uops);
    return p;
  }
  std::string body_prefix() const override { return "  (void)bufs; (void)vals; (void)gstart; (void)gend;\n"; }

  // Non-temporal stores where the compiler has them (clang's builtin; gcc gets plain stores) and the
  // address is aligned to the vector (else a plain store: no instruction streams unaligned data). They
  // are weakly ordered, so the kernel fences before it returns and the thread pool reports it done.
  std::string streaming_prelude(const std::vector<UOpPtr>& uops) const {
    std::set<std::string> done;
    std::ostringstream os;
    for (auto& u : uops) {
      if (!is_streaming(*u) || !streams(u->src[1]->dtype) || !done.insert(u->src[1]->dtype.name()).second) continue;
      DType d = u->src[1]->dtype;
      if (done.size() == 1)
        os << "#if defined(__x86_64__) || defined(__i386__)\n#define tg_stream_fence() __builtin_ia32_sfence()\n#else\n"
           << "#define tg_stream_fence() __atomic_thread_fence(__ATOMIC_SEQ_CST)\n#endif\n";
      int64_t n = d.count * d.itemsize();
      std::string t = d.name(), e = d.base().c_name(), bytes = std::to_string(n);
      os << "static inline void tg_stream_" << t << "(" << e << "* p, " << t << " v) {\n#ifdef __clang__\n"
         << "  typedef " << e << " aligned_t __attribute__((vector_size(" << bytes << ")));\n"
         << "  if (((unsigned long long)p & " << n - 1 << "u) == 0) { aligned_t a = v; __builtin_nontemporal_store(a, (aligned_t*)__builtin_assume_aligned(p, " << bytes << ")); return; }\n"
         << "#endif\n  *(" << t << "*)p = v;\n}\n";
    }
    return os.str();
  }
};

}  // namespace

DType mask_dtype(DType d) {
  Scalar m = d.itemsize() == 8 ? Scalar::Int64 : d.itemsize() == 4 ? Scalar::Int32 : d.itemsize() == 2 ? Scalar::Int16 : Scalar::Int8;
  return DType{m, d.count, false};
}

std::shared_ptr<Renderer> make_cpu_renderer(std::function<bool()> native_half) {
  return std::make_shared<CPURenderer>(std::move(native_half));
}

}  // namespace tg
