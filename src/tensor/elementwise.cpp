// The elementwise core: arithmetic, comparisons, casts and bitwise ops, each one autograd Function
// (or a short composition of them) after tinygrad's broadcasting and dtype promotion.
#include <cmath>

#include "lazy/lazybuffer.h"
#include "runtime/device.h"
#include "tensor/internal.h"

namespace tg {

namespace detail {
std::string dev_or_default(const std::string& d) { return Device::canonicalize(d.empty() ? Device::DEFAULT() : d); }

std::optional<Shape> broadcast_shape(const std::vector<Shape>& shapes) {
  Shape out;
  for (Shape s : shapes) {
    if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), 1);
    s.insert(s.begin(), out.size() - s.size(), 1);
    for (size_t i = 0; i < s.size(); i++) {
      if (s[i] != out[i] && s[i] != 1 && out[i] != 1) return std::nullopt;
      if (out[i] == 1) out[i] = s[i];
    }
  }
  return out;
}

namespace {
// t (whose shape broadcasts to `shape`) reshaped and expanded to `shape`. A constant that cannot carry a
// gradient (the scalar of `x * 2`) becomes the constant of that shape at once: the same LazyBuffer the
// Reshape and Expand Functions would make, without making them.
Tensor broadcast_to(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  const LBPtr& lb = t.lazydata();
  if (lb->is_unpadded_const() && !t.requires_grad().value_or(false))
    return Tensor(lb->base()->broadcast_scalar(shape), Tensor::no_grad ? std::optional<bool>(false) : t.requires_grad());
  Shape s = t.shape();
  s.insert(s.begin(), shape.size() - s.size(), 1);
  return t.reshape(s).expand(shape);
}
}  // namespace

Broadcasted broadcasted(const char* op, const Tensor& a, const Tensor& b, bool match_dtype) {
  const LazyBuffer &la = *a.lazydata(), &lb = *b.lazydata();
  // the usual case of an eager op (equal shapes and dtypes) returns its inputs, with nothing to build
  if (la.shape() == lb.shape() && (!match_dtype || la.dtype == lb.dtype) && la.device == lb.device) return {a, b};
  TG_CHECK(a.device() == b.device(), op, ": tensors on different devices ", a.device(), " and ", b.device());
  // (the usual cases, equal shapes and a scalar, without the general search)
  std::optional<Shape> out = a.shape() == b.shape() || b.shape().empty() ? a.shape()
                             : a.shape().empty()                         ? b.shape()
                                                                         : broadcast_shape({a.shape(), b.shape()});
  TG_CHECK(out, op, ": cannot broadcast shapes ", a.shape(), " and ", b.shape(), " (", a.dtype().name(), ", ", b.dtype().name(), ")");
  Tensor x = broadcast_to(a, *out), y = broadcast_to(b, *out);
  if (match_dtype) {
    DType d = a.dtype() == b.dtype() ? a.dtype() : least_upper_dtype({a.dtype(), b.dtype()});
    x = x.cast(d);
    y = y.cast(d);
  }
  return {a, b, std::move(x), std::move(y)};
}

Tensor to_float(const Tensor& t) { return t.cast(least_upper_float(t.dtype())); }

Tensor const_like(const Tensor& t, double v) { return const_tensor(t.shape(), v, t.dtype(), t.device()); }
}  // namespace detail

using detail::broadcasted;
using detail::to_float;

Tensor scalar_like(const Tensor& t, double v, DType pytype) {
  DType dt = t.dtype();
  DType sdt = (dt.is_float() || (dt.is_int() && pytype.is_int())) ? dt : pytype;
  // made at t's shape (the constant a 0-d one broadcasts to against t), so that t op v builds no
  // broadcast; t's device is already canonical. An integer wraps into sdt, as torch.
  return Tensor(LazyBuffer::cnst(v, sdt, t.device(), t.shape()));
}

Tensor Tensor::add(const Tensor& o) const { auto [x, y] = broadcasted("add", *this, o); return Function::apply<F::Add>({x, y}); }
Tensor Tensor::sub(const Tensor& o) const {
  auto [x, y] = broadcasted("sub", *this, o);
  TG_CHECK_AS(TypeError, !x.dtype().is_bool(), "sub: not supported for bool tensors (shapes ", shape(), " and ", o.shape(), ")");
  return Function::apply<F::Sub>({x, y});
}
Tensor Tensor::mul(const Tensor& o) const { auto [x, y] = broadcasted("mul", *this, o); return Function::apply<F::Mul>({x, y}); }
Tensor Tensor::div(const Tensor& o) const {
  auto [x, y] = broadcasted("div", *this, o);
  return Function::apply<F::Div>({to_float(x), to_float(y)});
}
Tensor Tensor::idiv(const Tensor& o) const {
  auto [x, y] = broadcasted("idiv", *this, o);
  TG_CHECK_AS(TypeError, x.dtype().is_int(), "idiv: needs integer tensors, got ", dtype().name(), " and ", o.dtype().name());
  return Function::apply<F::IDiv>({x, y});
}
Tensor Tensor::mod(const Tensor& o) const {
  auto [x, y] = broadcasted("mod", *this, o);
  TG_CHECK_AS(TypeError, !x.dtype().is_bool(), "mod: needs numbers, got ", dtype().name(), " ", shape(), " and ", o.dtype().name(), " ", o.shape(),
              " on ", device());
  if (x.dtype().is_float()) return x - x.div(y).floor() * y;
  // C's remainder (idiv truncates), moved by one divisor where it is not 0 and its sign differs from the divisor's
  Tensor r = x - x.idiv(y) * y;
  return ((r != 0) & ((r < 0) != (y < 0))).where(r + y, r);
}
Tensor Tensor::floor_divide(const Tensor& o) const {
  auto [x, y] = broadcasted("floor_divide", *this, o);
  TG_CHECK_AS(TypeError, !x.dtype().is_bool(), "floor_divide: needs numbers, got ", dtype().name(), " ", shape(), " and ", o.dtype().name(), " ",
              o.shape(), " on ", device());
  if (x.dtype().is_float()) return x.div(y).floor();
  // C's quotient (truncated), one less where mod's remainder is not C's: then the signs differed and the
  // division was not exact. Never past 0 by a 0 divisor (a % 0 == a is C's remainder there).
  Tensor t = x.idiv(y);
  return (x.mod(y) != x - t * y).where(t - 1, t);
}
Tensor Tensor::neg() const { return dtype().is_bool() ? logical_not() : Function::apply<F::Neg>({*this}); }
Tensor Tensor::reciprocal() const { return Function::apply<F::Reciprocal>({to_float(*this)}); }
Tensor Tensor::exp() const { return Function::apply<F::Exp>({to_float(*this)}); }
Tensor Tensor::log() const { return Function::apply<F::Log>({to_float(*this)}); }
Tensor Tensor::exp2() const { return (to_float(*this) * M_LN2).exp(); }
Tensor Tensor::log2() const { return log() * (1 / M_LN2); }
Tensor Tensor::sqrt() const { return Function::apply<F::Sqrt>({to_float(*this)}); }
Tensor Tensor::sin() const { return Function::apply<F::Sin>({to_float(*this)}); }
Tensor Tensor::cos() const { return Function::apply<F::Cos>({to_float(*this)}); }
Tensor Tensor::relu() const { return Function::apply<F::Relu>({*this}); }
Tensor Tensor::sigmoid() const { return Function::apply<F::Sigmoid>({to_float(*this)}); }
Tensor Tensor::tanh() const { return 2.0 * (2.0 * to_float(*this)).sigmoid() - 1.0; }
Tensor Tensor::sign() const { return Function::apply<F::Sign>({*this}); }
// x * sign(x) is -0.0 at -0.0; adding +0.0 makes it +0.0 (as torch) and changes no other value
Tensor Tensor::abs() const {
  if (dtype().is_bool()) return *this;
  Tensor a = *this * sign();
  return dtype().is_float() ? a + 0.0 : a;
}

Tensor Tensor::maximum(const Tensor& o) const {
  auto [x, y] = broadcasted("maximum", *this, o);
  if (!x.dtype().is_float()) return x.lt(y).where(y, x);
  // NaN wins, as torch; ties share the gradient, as tinygrad: (x<y or y is NaN) ? y : (x==y) ? (x+y)/2 : x
  // (a NaN x falls through to x)
  Tensor take_y = x.lt(y).logical_or(y.ne(y)).detach();
  return take_y.where(y, x.eq(y).detach().where(x * 0.5 + y * 0.5, x));
}
Tensor Tensor::minimum(const Tensor& o) const {
  auto [x, y] = broadcasted("minimum", *this, o);
  if (!x.dtype().is_float()) return x.lt(y).where(x, y);
  return -((-x).maximum(-y));
}
Tensor Tensor::where(const Tensor& a, const Tensor& b) const {
  TG_CHECK(detail::broadcast_shape({shape(), a.shape(), b.shape()}), "where: cannot broadcast condition ", shape(), " (", dtype().name(),
           "), x ", a.shape(), " (", a.dtype().name(), ") and y ", b.shape(), " (", b.dtype().name(), ")");
  auto [x, y] = broadcasted("where", a, b);
  Tensor cond = cast(dtypes::bool_);
  auto [c, x2] = broadcasted("where", cond, x, false);
  auto [c2, y2] = broadcasted("where", c, y, false);
  return Function::apply<F::Where>({c2, x2, y2});
}
Tensor Tensor::where(double a, double b) const {
  return where(detail::const_tensor({}, a, dtypes::default_float, device()), detail::const_tensor({}, b, dtypes::default_float, device()));
}
Tensor Tensor::lt(const Tensor& o) const { auto [x, y] = broadcasted("lt", *this, o); return Function::apply<F::Less>({x, y}); }
Tensor Tensor::gt(const Tensor& o) const { auto [x, y] = broadcasted("gt", *this, o); return Function::apply<F::Less>({y, x}); }
// not(x > y) would call NaN <= NaN true; (x < y) | (x == y) is false for NaN, as torch
Tensor Tensor::le(const Tensor& o) const { auto [x, y] = broadcasted("le", *this, o); return x.lt(y).bitwise_or(x.eq(y)); }
Tensor Tensor::ge(const Tensor& o) const { auto [x, y] = broadcasted("ge", *this, o); return y.lt(x).bitwise_or(x.eq(y)); }
Tensor Tensor::eq(const Tensor& o) const { auto [x, y] = broadcasted("eq", *this, o); return Function::apply<F::Eq>({x, y}); }
Tensor Tensor::ne(const Tensor& o) const { auto [x, y] = broadcasted("ne", *this, o); return x.eq(y).logical_not(); }
Tensor Tensor::logical_not() const {
  Tensor b = cast(dtypes::bool_);
  return Function::apply<F::Eq>({b, detail::const_tensor(shape(), 0, dtypes::bool_, device())});
}
Tensor Tensor::cast(DType d) const {
  TG_CHECK(d.count == 1 && !d.ptr && d.scalar != Scalar::Void, "cast: cannot cast to ", d.name());
  if (d == dtype()) return *this;
  // to an integer or bool type the result has no gradient (as torch: it does not require grad)
  return Function::apply<F::Cast>({d.is_float() ? *this : detach()}, d, false);
}
Tensor Tensor::bitcast(DType d) const {
  TG_CHECK(d.count == 1 && !d.ptr && d.scalar != Scalar::Void, "bitcast: cannot bitcast to ", d.name());
  TG_CHECK(d.itemsize() == dtype().itemsize(), "bitcast: ", dtype().name(), " and ", d.name(), " differ in size");
  if (d == dtype()) return *this;
  // a bool holds 0 or 1 after every op: any other byte reads as true (as torch), so it is normalized
  if (d.is_bool()) return (dtype() == dtypes::uint8 ? *this : bitcast(dtypes::uint8)).cast(d);
  return Function::apply<F::Cast>({d.is_float() && dtype().is_float() ? *this : detach()}, d, true);
}

// ---- bitwise --------------------------------------------------------------------------------------

namespace {
std::pair<Tensor, Tensor> bitwise_args(const char* op, const Tensor& a, const Tensor& b) {
  auto [x, y] = broadcasted(op, a, b);
  TG_CHECK_AS(TypeError, x.dtype().is_int() || x.dtype().is_bool(), op, ": needs integer or bool tensors, got ", a.dtype().name(), " and ",
           b.dtype().name());
  return {x, y};
}
}  // namespace
Tensor Tensor::bitwise_xor(const Tensor& o) const { auto [x, y] = bitwise_args("bitwise_xor", *this, o); return Function::apply<F::Xor>({x, y}); }
Tensor Tensor::bitwise_and(const Tensor& o) const { auto [x, y] = bitwise_args("bitwise_and", *this, o); return Function::apply<F::BitwiseAnd>({x, y}); }
Tensor Tensor::bitwise_or(const Tensor& o) const { auto [x, y] = bitwise_args("bitwise_or", *this, o); return Function::apply<F::BitwiseOr>({x, y}); }
Tensor Tensor::bitwise_not() const {
  TG_CHECK_AS(TypeError, dtype().is_int() || dtype().is_bool(), "bitwise_not: needs an integer or bool tensor, got ", dtype().name());
  return dtype().is_bool() ? logical_not() : bitwise_xor(detail::const_tensor({}, -1, dtype(), device()));
}
Tensor Tensor::lshift(int64_t bits) const {
  TG_CHECK_AS(TypeError, dtype().is_int(), "lshift: needs an integer tensor, got ", dtype().name());
  TG_CHECK(bits >= 0 && bits < dtype().itemsize() * 8, "lshift: shift ", bits, " out of range for ", dtype().name());
  return Function::apply<F::Shl>({*this, detail::const_tensor(shape(), static_cast<double>(bits), dtype(), device())});
}
Tensor Tensor::rshift(int64_t bits) const {
  TG_CHECK_AS(TypeError, dtype().is_int(), "rshift: needs an integer tensor, got ", dtype().name());
  TG_CHECK(bits >= 0 && bits < dtype().itemsize() * 8, "rshift: shift ", bits, " out of range for ", dtype().name());
  return Function::apply<F::Shr>({*this, detail::const_tensor(shape(), static_cast<double>(bits), dtype(), device())});
}

}  // namespace tg
