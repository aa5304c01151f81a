#include "uop/exec_alu.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tg/error.h"

namespace tg {

// Truncates an integer to the width and signedness of `dt`, as storing it in that C type would.
static int64_t wrap(int64_t v, DType dt) {
  switch (dt.scalar) {
    case Scalar::Bool: return v != 0;
    case Scalar::Int8: return static_cast<int8_t>(v);
    case Scalar::UInt8: return static_cast<uint8_t>(v);
    case Scalar::Int16: return static_cast<int16_t>(v);
    case Scalar::UInt16: return static_cast<uint16_t>(v);
    case Scalar::Int32: return static_cast<int32_t>(v);
    case Scalar::UInt32: return static_cast<uint32_t>(v);
    default: return v;
  }
}

static double round_float(double v, DType dt) {
  if (dt.scalar == Scalar::Float32) return static_cast<float>(v);
  if (dt.scalar == Scalar::Float16) return half_to_float(float_to_half(static_cast<float>(v)));
  return v;
}

Value const_to_value(const UOp& c) {
  Value v;
  if (c.dtype.is_float()) v.f = c.const_value();
  else v.i = c.const_int();
  return v;
}

UOpPtr value_to_const(DType dt, Value v) {
  return dt.is_float() ? UOp::make(Ops::CONST, dt, {}, round_float(v.f, dt)) : UOp::make(Ops::CONST, dt, {}, wrap(v.i, dt));
}

Value cast_value(Value v, DType from, DType to) {
  Value r;
  if (to.is_float()) {
    if (from.is_float()) r.f = v.f;
    // an integer rounds once, straight to float as C's (float)x does (through double could round twice)
    else if (to.scalar != Scalar::Float64) r.f = from.is_unsigned() ? static_cast<float>(static_cast<uint64_t>(v.i)) : static_cast<float>(v.i);
    else r.f = from.is_unsigned() ? static_cast<double>(static_cast<uint64_t>(v.i)) : static_cast<double>(v.i);
    r.f = round_float(r.f, to);
  } else if (to.is_bool()) {
    r.i = from.is_float() ? (v.f != 0) : (v.i != 0);
  } else if (from.is_float()) {
    // C leaves out-of-range float->int undefined; we saturate, then wrap to the width (as x86 mostly does).
    double t = std::trunc(v.f);
    if (std::isnan(t)) t = 0;
    if (to.is_unsigned() && to.scalar == Scalar::UInt64) r.i = static_cast<int64_t>(static_cast<uint64_t>(std::clamp(t, 0.0, 1.8446744073709550e19)));
    else r.i = wrap(static_cast<int64_t>(std::clamp(t, -9.2233720368547758e18, 9.2233720368547748e18)), to);
  } else {
    r.i = wrap(v.i, to);
  }
  return r;
}

namespace {
// The float of dt nearest to sign * m * 2^e (ties to even), m exact: IEEE's rounding of a value that no
// double holds, done once (a double product rounded again to float could round twice).
double round_exact(bool negative, unsigned __int128 m, int e, DType dt) {
  int p = dt.scalar == Scalar::Float16 ? 11 : dt.scalar == Scalar::Float32 ? 24 : 53;              // significand bits
  int emin = dt.scalar == Scalar::Float16 ? -14 : dt.scalar == Scalar::Float32 ? -126 : -1022;     // smallest normal exponent
  int emax = dt.scalar == Scalar::Float16 ? 15 : dt.scalar == Scalar::Float32 ? 127 : 1023;
  double sign = negative ? -1.0 : 1.0;
  if (m == 0) return sign * 0.0;
  int len = 128;
  while (!(m >> (len - 1))) len--;
  int lead = e + len - 1;                            // m * 2^e lies in [2^lead, 2^(lead+1))
  int q = std::max(lead, emin) - (p - 1);            // the exponent of the last bit kept
  unsigned __int128 keep = m;
  if (q > e) {                                       // drop q - e bits, to nearest, ties to even
    int shift = q - e;
    if (shift > len) return sign * 0.0;              // below half the smallest subnormal
    unsigned __int128 rest = shift == 128 ? m : m & ((static_cast<unsigned __int128>(1) << shift) - 1);
    keep = shift == 128 ? 0 : m >> shift;
    unsigned __int128 half = static_cast<unsigned __int128>(1) << (shift - 1);
    if (rest > half || (rest == half && (keep & 1))) keep++;
  } else {
    q = e;
  }
  double r = std::ldexp(static_cast<double>(keep), q);  // keep has at most p+1 bits: exact
  if (r >= std::ldexp(1.0, emax + 1)) return sign * INFINITY;
  return sign * r;
}
}  // namespace

Value reduce_repeated(Ops op, DType dt, Value v, int64_t n) {
  TG_ASSERT(n >= 0 && (op == Ops::ADD || op == Ops::MAX || op == Ops::MUL), "reduce_repeated: ", op_name(op), " of ", n, " copies");
  Value r;
  if (op == Ops::MAX) {
    if (n > 0) return v;
    if (dt.is_float()) r.f = -INFINITY;
    else r.i = wrap(dt.is_unsigned() || dt.is_bool() ? 0 : static_cast<int64_t>(dt.min()), dt);
    return r;
  }
  if (dt.is_float()) {
    if (op == Ops::ADD) {
      if (n == 0) r.f = 0;
      else if (!std::isfinite(v.f)) r.f = v.f;
      else {
        int e = 0;
        double f = std::frexp(std::fabs(v.f), &e);  // |v| = f * 2^e, f in [0.5, 1): f * 2^53 is an integer
        auto m = static_cast<unsigned __int128>(std::ldexp(f, 53)) * static_cast<unsigned __int128>(n);
        r.f = round_exact(std::signbit(v.f), m, e - 53, dt);
      }
    } else {
      // the sign from n's parity (a double n may lose it), the magnitude from pow
      double mag = n == 0 ? 1.0 : std::pow(std::fabs(v.f), static_cast<double>(n));
      r.f = round_float(std::signbit(v.f) && (n & 1) && !std::isnan(v.f) ? -mag : mag, dt);
      if (std::isnan(v.f)) r.f = n == 0 ? 1.0 : v.f;
    }
    return r;
  }
  uint64_t x = static_cast<uint64_t>(v.i), acc = op == Ops::ADD ? 0 : 1;
  if (op == Ops::ADD) acc = x * static_cast<uint64_t>(n);  // wraps modulo 2^64, then to the dtype's width
  else
    for (uint64_t k = static_cast<uint64_t>(n), b = x; k; k >>= 1, b *= b)
      if (k & 1) acc *= b;
  r.i = wrap(static_cast<int64_t>(acc), dt);
  return r;
}

Value exec_alu(Ops op, DType dt, const std::vector<Value>& s, DType sdt) {
  Value r;
  if (sdt.is_float()) {
    double a = s[0].f, b = s.size() > 1 ? s[1].f : 0;
    switch (op) {
      case Ops::NEG: r.f = -a; break;
      case Ops::EXP2: r.f = std::exp2(a); break;
      case Ops::LOG2: r.f = std::log2(a); break;
      case Ops::SIN: r.f = std::sin(a); break;
      case Ops::COS: r.f = std::cos(a); break;
      case Ops::TAN: r.f = std::tan(a); break;
      case Ops::SQRT: r.f = std::sqrt(a); break;
      case Ops::RECIP: r.f = 1.0 / a; break;
      case Ops::ADD: r.f = a + b; break;
      case Ops::MUL: r.f = a * b; break;
      case Ops::FDIV: r.f = a / b; break;  // correctly rounded: double carries over 2*24+2 bits
      case Ops::MAX: r.f = (a > b || std::isnan(a)) ? a : b; break;
      case Ops::CMPLT: r.i = a < b; return r;
      case Ops::CMPNE: r.i = a != b; return r;
      case Ops::WHERE: r.f = s[0].i ? s[1].f : s[2].f; break;
      case Ops::MULACC: r.f = a * b + s[2].f; break;
      default: TG_ASSERT(false, "exec_alu: ", op_name(op), " on ", sdt.name());
    }
    r.f = round_float(r.f, dt);
    return r;
  }
  if (op == Ops::WHERE) {  // condition is bool; the value dtype is dt
    if (dt.is_float()) r.f = s[0].i ? s[1].f : s[2].f;
    else r.i = s[0].i ? s[1].i : s[2].i;
    return r;
  }
  bool u = sdt.is_unsigned();
  uint64_t ua = static_cast<uint64_t>(s[0].i), ub = s.size() > 1 ? static_cast<uint64_t>(s[1].i) : 0;
  int64_t a = s[0].i, b = s.size() > 1 ? s[1].i : 0;
  switch (op) {
    case Ops::NEG: r.i = static_cast<int64_t>(0 - ua); break;
    case Ops::ADD: r.i = static_cast<int64_t>(ua + ub); break;
    case Ops::MUL: r.i = static_cast<int64_t>(ua * ub); break;
    case Ops::MULACC: r.i = static_cast<int64_t>(ua * ub + static_cast<uint64_t>(s[2].i)); break;
    // the README's semantics: x/0 == x%0 == 0, MIN/-1 == MIN (wraps), MIN%-1 == 0, truncation
    case Ops::IDIV:
      if (b == 0) r.i = 0;
      else if (u) r.i = static_cast<int64_t>(ua / ub);
      else r.i = (a == INT64_MIN && b == -1) ? a : a / b;
      break;
    case Ops::MOD:
      if (b == 0) r.i = 0;
      else if (u) r.i = static_cast<int64_t>(ua % ub);
      else r.i = (b == -1) ? 0 : a % b;
      break;
    case Ops::MAX: r.i = u ? static_cast<int64_t>(std::max(ua, ub)) : std::max(a, b); break;
    case Ops::CMPLT: r.i = u ? ua < ub : a < b; return r;
    case Ops::CMPNE: r.i = a != b; return r;
    case Ops::XOR: r.i = a ^ b; break;
    case Ops::OR: r.i = a | b; break;
    case Ops::AND: r.i = a & b; break;
    // a count outside [0, bits) shifts every bit out: 0, or -1 for SHR of a negative signed value
    case Ops::SHL: r.i = ub < static_cast<uint64_t>(sdt.itemsize() * 8) ? static_cast<int64_t>(ua << ub) : 0; break;
    case Ops::SHR:
      if (ub < static_cast<uint64_t>(sdt.itemsize() * 8)) r.i = u ? static_cast<int64_t>(ua >> ub) : a >> ub;
      else r.i = (!u && a < 0) ? -1 : 0;
      break;
    default: TG_ASSERT(false, "exec_alu: ", op_name(op), " on ", sdt.name());
  }
  r.i = wrap(r.i, dt);
  return r;
}

}  // namespace tg
