// Elementwise math beyond the core: trigonometry and its inverses, pow, rounding, clipping, tests for
// special values and the activation functions. Everything is composed of the differentiable core in
// elementwise.cpp, so gradients follow; only the rounding ops need the ZeroGrad link below.
#include <cmath>

#include "tensor/internal.h"

namespace tg {

using detail::broadcasted;
using detail::to_float;

namespace {

// Forwards `value` while linking the result to x's graph with a zero gradient. Rounding ops are
// piecewise constant, so torch gives them a zero derivative; built from casts they would pass the
// gradient through unchanged instead.
struct ZeroGrad : Function {
  LBPtr forward(Inputs x) override { return x[1]; }
  std::vector<LBPtr> backward(const LBPtr& g) override { return {g->const_like(0), nullptr}; }
};
Tensor zero_grad(const Tensor& x, const Tensor& value) { return Function::apply<ZeroGrad>({x, value.detach()}); }

// A C++ scalar as a tensor next to t: whole numbers are Python ints (keep an int tensor's dtype),
// others Python floats (make an int tensor float).
Tensor scalar(const Tensor& t, double v) {
  return scalar_like(t, v, std::isfinite(v) && v == std::floor(v) ? dtypes::default_int : dtypes::default_float);
}

// c[0] * x^(n-1) + ... + c[n-1], by Horner's rule.
Tensor poly(const Tensor& x, std::initializer_list<double> c) {
  auto it = c.begin();
  Tensor r = x * *it++;
  for (; it != c.end(); ++it) r = (it + 1 == c.end()) ? r + *it : (r + *it) * x;
  return r;
}

// Float types keep every integer below 2^mantissa exactly; values at or above are already integral.
double integral_limit(DType d) {
  switch (d.scalar) {
    case Scalar::Float16: return 1024.0;
    case Scalar::Float32: return 8388608.0;
    default: return 4503599627370496.0;
  }
}

// x^n for a whole n >= 1 by repeated squaring: exact for integer tensors and signed for negative bases.
Tensor int_pow(const Tensor& x, uint64_t n) {
  std::optional<Tensor> result;
  Tensor base = x;
  while (true) {
    if (n & 1) result = result ? *result * base : base;
    n >>= 1;
    if (n == 0) return *result;
    base = base.square();
  }
}

}  // namespace

// ---- trigonometry and friends ------------------------------------------------------------------

Tensor Tensor::rsqrt() const { return sqrt().reciprocal(); }
Tensor Tensor::tan() const { return Function::apply<F::Tan>({to_float(*this)}); }
// The sign of x as a constant, +1 at 0: an odd function written s * f(s * x) then has f's derivative
// at 0 (sign(x) * f(|x|) would have 0 there, both pieces having a zero gradient at 0).
static Tensor odd_sign(const Tensor& x) { return (x < 0.0).where(-1.0, 1.0).cast(x.dtype()).detach(); }

Tensor Tensor::asin() const {
  // Abramowitz & Stegun 4.4.46 (|error| <= 2e-8 on [0, 1]), mirrored for negative inputs
  Tensor x = to_float(*this), s = odd_sign(x), a = x * s;
  Tensor p = poly(a, {-0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810, -0.0501743046, 0.0889789874,
                      -0.2145988016, 1.5707963050});
  return s * (M_PI / 2 - (1.0 - a).sqrt() * p);
}
Tensor Tensor::acos() const { return M_PI / 2 - asin(); }
Tensor Tensor::atan() const {
  // atan(x) = asin(x / sqrt(1 + x^2)) loses precision near |x| -> inf, so above 1 use
  // atan(x) = sign(x) pi/2 - atan(1/x). The reciprocal's input is kept away from 0 in the branch that
  // where() discards, or its infinite derivative would turn the zero gradient into NaN.
  Tensor x = to_float(*this);
  Tensor big = (x.abs() > 1.0).detach();
  Tensor r = big.where(big.where(x, scalar(x, 1)).reciprocal(), x);
  Tensor small = (r / (1.0 + r * r).sqrt()).asin();
  return big.where(x.sign().detach() * (M_PI / 2) - small, small);
}
namespace {
// log(1 + u), accurate where u is tiny: 1 + u rounds, and u / ((1 + u) - 1) undoes the rounding
// (Goldberg). The divisor is made 1 where it is 0, so that the branch not taken has no NaN gradient.
Tensor log1p_of(const Tensor& u) {
  Tensor w = 1.0 + u, d = w - 1.0, exact = d == 0.0;
  return exact.where(u, w.log() * (u / exact.where(d.ones_like(), d)));
}
// Above this, 1 + x^2 rounds to x^2 (so asinh and acosh are log(2x) to working precision), and below it
// x^2 does not overflow, for every float type.
double square_limit(DType d) { return 2 * std::sqrt(integral_limit(d)); }
}  // namespace

// The inverse hyperbolic functions in forms without cancellation: log(x + sqrt(x^2 + 1)) loses every
// digit for negative x (asinh(-1e4) would be log(0)) and most near 0, and x^2 overflows for large x.
// Each large-x branch reads x only where it is taken (a select, not min/max, so a NaN stays NaN).
Tensor Tensor::asinh() const {
  // odd: asinh(a) = log1p(a + a^2 / (1 + sqrt(1 + a^2))) for a = |x|
  Tensor x = to_float(*this), s = odd_sign(x), a = x * s;
  Tensor big = a >= square_limit(x.dtype()), lo = big.where(a.zeros_like(), a), hi = big.where(a, a.ones_like());
  Tensor a2 = lo * lo;
  return s * big.where(hi.log() + M_LN2, log1p_of(lo + a2 / (1.0 + (1.0 + a2).sqrt())));
}
Tensor Tensor::acosh() const {
  // acosh(x) = log1p(t + sqrt(t (t + 2))) for t = x - 1 (exact near 1); NaN below 1, as torch
  Tensor x = to_float(*this);
  Tensor big = x >= square_limit(x.dtype()), lo = big.where(x.ones_like(), x), hi = big.where(x, x.ones_like());
  Tensor t = lo - 1.0;
  return big.where(hi.log() + M_LN2, log1p_of(t + (t * (t + 2.0)).sqrt()));
}
Tensor Tensor::atanh() const {
  // odd: atanh(a) = log1p(2a / (1 - a)) / 2; inf at 1 and NaN past it, as torch
  Tensor x = to_float(*this), s = odd_sign(x), a = x * s;
  Tensor one = a == 1.0, lo = one.where(a.zeros_like(), a);
  return s * one.where(a.full_like(INFINITY), log1p_of(2.0 * lo / (1.0 - lo)) * 0.5);
}
Tensor Tensor::sinh() const { Tensor x = to_float(*this); return (x.exp() - (-x).exp()) * 0.5; }
Tensor Tensor::cosh() const { Tensor x = to_float(*this); return (x.exp() + (-x).exp()) * 0.5; }
Tensor Tensor::erf() const {
  // Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7), odd in x
  Tensor x = to_float(*this), s = odd_sign(x);
  Tensor t = 1.0 / (1.0 + 0.3275911 * (x * s));
  Tensor p = poly(t, {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592}) * t;
  return s * (1.0 - p * (-x.square()).exp());
}

// ---- pow -----------------------------------------------------------------------------------------
// The value is computed without a graph (exact powers by repeated squaring, x^(n+1/2) with a sqrt, else
// exp(e log|x|) with the sign or NaN of a negative base), then linked to the base and exponent by the Pow
// Function, whose derivatives are torch's: d/db = e * b^(e-1) (0 where e == 0), d/de = b^e * log(b) (0
// where b == 0 and e >= 0). So at b == 0 and for negative b the gradient is torch's: 0 or inf where the
// power is, NaN where a non-whole power of a negative number is.

namespace {

Tensor pow_value(const Tensor& x, double e) {
  bool whole = e == std::floor(e) && std::fabs(e) < 9007199254740992.0;
  if (!whole && !x.dtype().is_float()) return pow_value(to_float(x), e);  // int ** 2.5 is float, as torch
  if (e < 0) {
    TG_CHECK(x.dtype().is_float(), "pow: integer tensor of shape ", x.shape(), " (", x.dtype().name(),
             ") to the negative power ", e, " is not allowed");
    if (e == -0.5) return x.sqrt().reciprocal();  // torch's rsqrt: -0 gives -inf
    Tensor r = pow_value(x.reciprocal(), -e);
    // 0 (either sign) to a negative non-whole power is +inf (1/-0 = -inf would make it NaN)
    return whole ? r : x.eq(scalar(x, 0)).where(scalar(r, INFINITY), r);
  }
  if (e == 0) return x.ones_like();  // 0^0 = inf^0 = nan^0 = 1
  if (whole) return int_pow(x, static_cast<uint64_t>(e));
  if (e - 0.5 == std::floor(e - 0.5)) {  // x^(n+1/2): exact powers and a sqrt keep precision
    Tensor s = x.sqrt();
    return e < 1 ? s : int_pow(x, static_cast<uint64_t>(e - 0.5)) * s;
  }
  // |x|^e, NaN for negative bases (a non-whole power of a negative number is not real)
  Tensor ret = (x.abs().log() * e).exp();
  return x.lt(scalar(x, 0)).where(scalar(ret, NAN), ret);
}

Tensor pow_value(const Tensor& b, const Tensor& e) {  // b and e broadcast, of one dtype
  if (!b.dtype().is_float()) {
    // integer powers: float64 is exact up to 2^53, so rounding recovers the integer result
    Tensor f = pow_value(b.cast(dtypes::float64), e.cast(dtypes::float64));
    return f.round().cast(b.dtype());
  }
  Tensor zero = b.eq(scalar(b, 0)), neg = b.lt(scalar(b, 0));
  Tensor e0 = e.eq(scalar(e, 0));
  Tensor mag = zero.where(b.ones_like(), b.abs());  // log(0) kept out of the discarded branch
  Tensor ret = (mag.log() * e).exp();
  // a negative base: the sign is - for an odd whole e; a non-whole e gives NaN
  Tensor whole = e.eq(e.trunc());
  Tensor half = e * 0.5;
  Tensor odd = whole.logical_and(half.ne(half.trunc()));
  ret = neg.logical_and(odd).where(-ret, ret);
  ret = neg.logical_and(whole.logical_not()).where(scalar(ret, NAN), ret);
  // 0^e: 0 for e > 0, inf for e < 0 (-inf for -0 to an odd power, as C's pow); and x^0 = 1 for every x
  Tensor neg_zero = zero.logical_and(b.reciprocal().lt(scalar(b, 0)));
  Tensor inf = neg_zero.logical_and(odd).where(-INFINITY, INFINITY).cast(b.dtype());
  Tensor zero_pow = e.gt(scalar(e, 0)).where(b.zeros_like(), inf);
  ret = zero.where(zero_pow, ret);
  return e0.where(b.ones_like(), ret);
}

// inputs: the base, the exponent (a tensor, or none when `exponent` holds a number) and the value b^e
struct Pow : Function {
  explicit Pow(std::optional<double> exponent) : exponent(exponent) {}
  std::optional<double> exponent;
  LBPtr b, e, ret;
  LBPtr forward(Inputs x) override {
    save(b, x[0]);
    if (!exponent) save(e, x[1]);
    return save(ret, x[x.size() - 1]);
  }
  std::vector<LBPtr> backward(const LBPtr& grad) override {
    Tensor g(grad), base(b);
    std::vector<LBPtr> out(needs_input_grad.size());
    if (exponent) {
      if (needs_input_grad[0])
        out[0] = (*exponent == 0 ? base.zeros_like() : g * (pow_value(base, *exponent - 1) * *exponent)).lazydata();
      return out;
    }
    Tensor ex(e);
    if (needs_input_grad[0]) {
      Tensor d = ex * pow_value(base, ex - 1.0);
      out[0] = (g * ex.eq(scalar(ex, 0)).where(scalar(d, 0), d)).lazydata();
    }
    if (needs_input_grad[1]) {
      Tensor d = Tensor(ret) * base.log();
      Tensor flat = base.eq(scalar(base, 0)).logical_and(ex.ge(scalar(ex, 0)));
      out[1] = (g * flat.where(scalar(d, 0), d)).lazydata();
    }
    return out;
  }
};

}  // namespace

Tensor Tensor::pow(double e) const {
  Tensor v = pow_value(detach(), e);
  if (!v.dtype().is_float() || requires_grad() == std::optional<bool>(false)) return v;
  return Function::apply<Pow>({v.dtype() == dtype() ? *this : to_float(*this), v}, e);
}

Tensor Tensor::pow(const Tensor& exponent) const {
  auto [b, e] = broadcasted("pow", *this, exponent);
  Tensor v = pow_value(b.detach(), e.detach());
  std::optional<bool> no = false;
  if (!v.dtype().is_float() || (b.requires_grad() == no && e.requires_grad() == no)) return v;
  return Function::apply<Pow>({b, e, v}, std::nullopt);
}

// ---- rounding and clipping ----------------------------------------------------------------------

namespace {
// A rounded result of 0 keeps the sign of x, as torch's (-0.5).trunc() is -0.0: x * 0 is that zero.
Tensor signed_zero(const Tensor& t, const Tensor& x) { return t.eq(scalar(t, 0)).where(x * 0.0, t); }
}  // namespace

Tensor Tensor::trunc() const {
  if (!dtype().is_float()) return *this;
  Tensor x = detach();
  DType it = dtype() == dtypes::float64 ? dtypes::int64 : dtypes::int32;
  // the int round trip only where it cannot overflow; larger values (and inf, NaN) are integral already
  Tensor t = (x.abs() < integral_limit(dtype())).where(x.cast(it).cast(dtype()), x);
  return zero_grad(*this, signed_zero(t, x));
}
Tensor Tensor::floor() const {
  if (!dtype().is_float()) return *this;
  Tensor x = detach(), t = x.trunc();
  return zero_grad(*this, x.lt(t).where(t - 1.0, t));
}
Tensor Tensor::ceil() const {
  if (!dtype().is_float()) return *this;
  Tensor x = detach(), t = x.trunc();
  return zero_grad(*this, signed_zero(x.gt(t).where(t + 1.0, t), x));
}
Tensor Tensor::round() const {
  if (!dtype().is_float()) return *this;
  Tensor x = detach(), f = x.floor(), frac = x - f;
  Tensor half_f = f * 0.5;
  Tensor odd = half_f.ne(half_f.floor());
  // ties go to the even neighbour
  Tensor up = frac.gt(scalar(frac, 0.5)).logical_or(frac.eq(scalar(frac, 0.5)).logical_and(odd));
  return zero_grad(*this, signed_zero(up.where(f + 1.0, f), x));
}

Tensor Tensor::clip(std::optional<double> min, std::optional<double> max) const {
  TG_CHECK(min || max, "clip: at least one of min and max must be given (tensor of shape ", shape(), ", ", dtype().name(), ")");
  TG_CHECK_AS(TypeError, !dtype().is_bool(), "clip: not supported for bool tensors (shape ", shape(), ")");
  Tensor r = *this;
  // where() rather than maximum/minimum: at a bound the gradient passes whole, as torch.clamp
  // a NaN bound gives NaN everywhere, as torch (x < NaN alone would keep x)
  if (min) { Tensor lo = scalar(r, *min); r = r.lt(lo).logical_or(lo.ne(lo)).where(lo, r); }
  if (max) { Tensor hi = scalar(r, *max); r = r.gt(hi).logical_or(hi.ne(hi)).where(hi, r); }
  return r;
}

// ---- special values ------------------------------------------------------------------------------

Tensor Tensor::isnan() const {
  if (!dtype().is_float()) return full_like(0, dtypes::bool_);
  Tensor x = detach();
  return x.ne(x);
}
Tensor Tensor::isinf(bool detect_positive, bool detect_negative) const {
  if (!dtype().is_float()) return full_like(0, dtypes::bool_);
  Tensor x = detach(), r = full_like(0, dtypes::bool_);
  if (detect_positive) r = r.logical_or(x.eq(scalar(x, INFINITY)));
  if (detect_negative) r = r.logical_or(x.eq(scalar(x, -INFINITY)));
  return r;
}

Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const {
  TG_CHECK(detail::broadcast_shape({shape(), end.shape(), weight.shape()}), "lerp: cannot broadcast shapes ", shape(), ", ",
           end.shape(), " and ", weight.shape());
  return *this + (end - *this) * weight;
}

// ---- activations ---------------------------------------------------------------------------------

namespace {
// alpha * (exp(x / scale) - 1) for x <= 0 and x itself above: elu, celu and selu. The exp's input is
// clamped to <= 0 in the discarded branch, so a large x cannot overflow it into an inf * 0 gradient.
Tensor exp_linear(const Tensor& t, double alpha, double scale) {
  Tensor x = to_float(t);
  Tensor pos = x.gt(scalar(x, 0)).detach();
  Tensor xn = pos.where(x.zeros_like(), x);
  return pos.where(x, ((xn * (1.0 / scale)).exp() - 1.0) * alpha);
}
}  // namespace

Tensor Tensor::logsigmoid() const { return -(-*this).softplus(); }
Tensor Tensor::softsign() const { Tensor x = to_float(*this); return x / (1.0 + x.abs()); }
Tensor Tensor::relu6() const { return relu() - (*this - 6).relu(); }
Tensor Tensor::softplus(double beta) const {
  TG_CHECK(beta != 0, "softplus: beta must not be 0 (tensor of shape ", shape(), ", ", dtype().name(), ")");
  // log(1 + exp(b x)) / b = (max(b x, 0) + log1p(exp(-|b x|))) / b: no overflow for large b x, and the
  // small term survives past |b x| = 17 (logsigmoid(30) is -9.4e-14, not -0). Both pieces take the side
  // b x >= 0 at 0, so the gradient there is 1/2.
  Tensor bx = to_float(*this) * beta, s = odd_sign(bx);
  return (bx * (s > 0.0).cast(bx.dtype()).detach() + log1p_of((-(bx * s)).exp())) * (1.0 / beta);
}
Tensor Tensor::gelu() const {
  Tensor x = to_float(*this);
  return 0.5 * x * (1.0 + (std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)).tanh());
}
Tensor Tensor::quick_gelu() const { return *this * (*this * 1.702).sigmoid(); }
Tensor Tensor::leakyrelu(double neg_slope) const { return relu() - (*this * -neg_slope).relu(); }
Tensor Tensor::elu(double alpha) const { return exp_linear(*this, alpha, 1.0); }
Tensor Tensor::celu(double alpha) const {
  TG_CHECK(alpha != 0, "celu: alpha must not be 0 (tensor of shape ", shape(), ", ", dtype().name(), ")");
  return exp_linear(*this, alpha, alpha);
}
Tensor Tensor::selu() const {
  constexpr double alpha = 1.6732632423543772848170429916717, scale = 1.0507009873554804934193349852946;
  return exp_linear(*this, alpha, 1.0) * scale;
}
Tensor Tensor::swish() const { return *this * sigmoid(); }
Tensor Tensor::mish() const { return *this * softplus().tanh(); }
Tensor Tensor::hardtanh(double min_val, double max_val) const { return clip(min_val, max_val); }
Tensor Tensor::hardsigmoid() const { return (to_float(*this) + 3.0).relu6() * (1.0 / 6.0); }
Tensor Tensor::hardswish() const { return *this * (to_float(*this) + 3.0).relu6() * (1.0 / 6.0); }

// ---- logic ---------------------------------------------------------------------------------------

Tensor Tensor::logical_and(const Tensor& o) const {
  Tensor a = cast(dtypes::bool_), b = o.cast(dtypes::bool_);
  auto [x, y] = broadcasted("logical_and", a, b);
  return x.bitwise_and(y);
}
Tensor Tensor::logical_or(const Tensor& o) const {
  Tensor a = cast(dtypes::bool_), b = o.cast(dtypes::bool_);
  auto [x, y] = broadcasted("logical_or", a, b);
  return x.bitwise_or(y);
}
Tensor Tensor::logical_xor(const Tensor& o) const {
  Tensor a = cast(dtypes::bool_), b = o.cast(dtypes::bool_);
  auto [x, y] = broadcasted("logical_xor", a, b);
  return x.bitwise_xor(y);
}

}  // namespace tg
