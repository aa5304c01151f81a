#include "tg/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "engine/realize.h"
#include "engine/schedule.h"
#include "lazy/lazybuffer.h"
#include "runtime/device.h"
#include "uop/exec_alu.h"

namespace tg {

namespace {
std::string dev_or_default(const std::string& d) { return Device::canonicalize(d.empty() ? Device::DEFAULT() : d); }
template <class T> std::vector<T> iota_vec(size_t n) { std::vector<T> v(n); std::iota(v.begin(), v.end(), T{0}); return v; }
}  // namespace

Tensor::Tensor(std::shared_ptr<LazyBuffer> lb) : lazydata_(std::move(lb)) {}

Tensor Tensor::from_host(const void* data, size_t n, const Shape& shape, DType dtype, const std::string& device) {
  for (int64_t d : shape) TG_CHECK(d >= 0, "Tensor: negative dimension in shape ", shape);
  TG_CHECK(static_cast<int64_t>(n) == prod(shape), "Tensor: ", n, " values do not fill shape ", shape);
  std::string dev = dev_or_default(device);
  return Tensor(LazyBuffer::from_host(data, shape, dtype)->copy_to_device(dev));
}

Tensor::Tensor(std::initializer_list<float> d, const std::string& dev)
    : Tensor(from_host(d.begin(), d.size(), {static_cast<int64_t>(d.size())}, dtypes::float32, dev)) {}
Tensor::Tensor(std::initializer_list<double> d, const std::string& dev)
    : Tensor(from_host(d.begin(), d.size(), {static_cast<int64_t>(d.size())}, dtypes::float64, dev)) {}
Tensor::Tensor(std::initializer_list<int> d, const std::string& dev)
    : Tensor(from_host(d.begin(), d.size(), {static_cast<int64_t>(d.size())}, dtypes::int32, dev)) {}
Tensor::Tensor(std::initializer_list<bool> d, const std::string& dev)
    : Tensor(from_host(d.begin(), d.size(), {static_cast<int64_t>(d.size())}, dtypes::bool_, dev)) {}

const Shape& Tensor::shape() const { return lazydata_->shape(); }
DType Tensor::dtype() const { return lazydata_->dtype; }
const std::string& Tensor::device() const { return lazydata_->device; }
int64_t Tensor::numel() const { return prod(shape()); }

// ---- creation -------------------------------------------------------------------------------------

Tensor Tensor::empty(const Shape& shape, DType dtype, const std::string& device) {
  for (int64_t d : shape) TG_CHECK(d >= 0, "empty: negative dimension in shape ", shape);
  return Tensor(LazyBuffer::metaop(Ops::EMPTY, shape, dtype, dev_or_default(device)));
}
Tensor Tensor::full(const Shape& shape, double value, DType dtype, const std::string& device) {
  for (int64_t d : shape) TG_CHECK(d >= 0, "full: negative dimension in shape ", shape);
  return Tensor(LazyBuffer::cnst(value, dtype, dev_or_default(device), shape));
}
Tensor Tensor::zeros(const Shape& shape, DType dtype, const std::string& device) { return full(shape, 0, dtype, device); }
Tensor Tensor::ones(const Shape& shape, DType dtype, const std::string& device) { return full(shape, 1, dtype, device); }

Tensor Tensor::arange(double start, double stop, double step, std::optional<DType> dtype, const std::string& device) {
  TG_CHECK(step != 0, "arange: step must not be 0");
  bool all_int = start == std::floor(start) && stop == std::floor(stop) && step == std::floor(step);
  DType dt = dtype.value_or(all_int ? dtypes::default_int : dtypes::default_float);
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((stop - start) / step)));
  // a cumulative sum of ones, as tinygrad builds it: (1,...,1) padded and summed along a window
  if (n == 0) return empty({0}, dt, device);
  Tensor ones = full({n}, 1, dt, device);
  Tensor idx = ones.reshape({1, n}).pad({{0, 0}, {n - 1, 0}});  // (1, 2n-1)
  Tensor window = idx.expand({n, 2 * n - 1}).reshape({n * (2 * n - 1)}).pad({{0, n}}).reshape({n, 2 * n}).shrink({{0, n}, {0, n}});
  // row i of `window` holds i+1 ones: its sum is the count
  Tensor count = window.sum({1});
  return (count - scalar_like(count, 1, dtypes::default_int)).cast(dt) * scalar_like(count.cast(dt), step, dt.is_float() ? dtypes::default_float : dtypes::default_int) +
         scalar_like(count.cast(dt), start, dt.is_float() ? dtypes::default_float : dtypes::default_int);
}

Tensor Tensor::eye(int64_t n, DType dtype, const std::string& device) {
  TG_CHECK(n >= 0, "eye: negative size ", n);
  if (n == 0) return zeros({0, 0}, dtype, device);
  // ones at stride n+1 of a flat (n*n) buffer: a (n, n+1) grid whose first column is 1
  return full({n, 1}, 1, dtype, device).pad({{0, 0}, {0, n}}).reshape({n * (n + 1)}).shrink({{0, n * n}}).reshape({n, n});
}

namespace {
uint64_t g_seed = 0, g_counter = 0;  // the random state (a Context-like global, as tinygrad's Tensor._seed)
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

void Tensor::manual_seed(uint64_t seed) { g_seed = seed; g_counter = 0; }

Tensor Tensor::rand(const Shape& shape, DType dtype, const std::string& device) {
  TG_CHECK(dtype.is_float(), "rand: dtype must be a float type, got ", dtype.name());
  int64_t n = prod(shape);
  std::vector<float> v(static_cast<size_t>(n));
  uint64_t key = splitmix64(g_seed ^ splitmix64(g_counter++));
  for (int64_t i = 0; i < n; i++) v[i] = static_cast<float>(splitmix64(key + static_cast<uint64_t>(i)) >> 40) * (1.0f / 16777216.0f);
  return Tensor(v, shape, device).cast(dtype);
}

Tensor Tensor::randn(const Shape& shape, DType dtype, const std::string& device) {
  // Box-Muller on two uniform draws
  Shape both{2};
  both.insert(both.end(), shape.begin(), shape.end());
  Tensor u = rand(both, dtypes::float32, device);
  std::vector<std::pair<int64_t, int64_t>> first{{0, 1}}, second{{1, 2}};
  for (int64_t d : shape) { first.emplace_back(0, d); second.emplace_back(0, d); }
  Tensor u1 = u.shrink(first).reshape(shape), u2 = u.shrink(second).reshape(shape);
  Tensor r = ((1.0f - u1).log() * -2.0f).sqrt() * (u2 * static_cast<float>(2 * M_PI)).cos();
  return r.cast(dtype);
}

// ---- elementwise ----------------------------------------------------------------------------------

Tensor scalar_like(const Tensor& t, double v, DType pytype) {
  DType dt = t.dtype();
  DType sdt = (dt.is_float() || (dt.is_int() && pytype.is_int())) ? dt : pytype;
  return Tensor::full({}, v, sdt, t.device());
}

namespace {
// Broadcast two tensors to one shape and one dtype, as tinygrad's _broadcasted.
std::pair<Tensor, Tensor> broadcasted(const char* op, const Tensor& a, const Tensor& b, bool match_dtype = true) {
  TG_CHECK(a.device() == b.device(), op, ": tensors on different devices ", a.device(), " and ", b.device());
  Shape sa = a.shape(), sb = b.shape();
  size_t n = std::max(sa.size(), sb.size());
  sa.insert(sa.begin(), n - sa.size(), 1);
  sb.insert(sb.begin(), n - sb.size(), 1);
  Shape out(n);
  for (size_t i = 0; i < n; i++) {
    TG_CHECK(sa[i] == sb[i] || sa[i] == 1 || sb[i] == 1, op, ": cannot broadcast shapes ", a.shape(), " and ", b.shape(),
             " (", a.dtype().name(), ", ", b.dtype().name(), ")");
    out[i] = sa[i] == 1 ? sb[i] : sa[i];
  }
  Tensor x = a.reshape(sa).expand(out), y = b.reshape(sb).expand(out);
  if (match_dtype) {
    DType d = least_upper_dtype({a.dtype(), b.dtype()});
    x = x.cast(d);
    y = y.cast(d);
  }
  return {x, y};
}
Tensor ew(Ops op, const Tensor& a, const std::vector<Tensor>& others = {}) {
  std::vector<LBPtr> lbs;
  for (auto& o : others) lbs.push_back(o.lazydata());
  return Tensor(a.lazydata()->e(op, lbs));
}
Tensor to_float(const Tensor& t) { return t.cast(least_upper_float(t.dtype())); }
}  // namespace

Tensor Tensor::add(const Tensor& o) const { auto [x, y] = broadcasted("add", *this, o); return ew(Ops::ADD, x, {y}); }
Tensor Tensor::sub(const Tensor& o) const {
  auto [x, y] = broadcasted("sub", *this, o);
  TG_CHECK(!x.dtype().is_bool(), "sub: not supported for bool tensors");
  return ew(Ops::ADD, x, {y.neg()});
}
Tensor Tensor::mul(const Tensor& o) const { auto [x, y] = broadcasted("mul", *this, o); return ew(Ops::MUL, x, {y}); }
Tensor Tensor::div(const Tensor& o) const {
  auto [x, y] = broadcasted("div", *this, o);
  return ew(Ops::MUL, to_float(x), {to_float(y).reciprocal()});
}
Tensor Tensor::neg() const { return dtype().is_bool() ? logical_not() : ew(Ops::NEG, *this); }
Tensor Tensor::reciprocal() const { return ew(Ops::RECIP, to_float(*this)); }
Tensor Tensor::exp2() const { return ew(Ops::EXP2, to_float(*this)); }
Tensor Tensor::log2() const { return ew(Ops::LOG2, to_float(*this)); }
Tensor Tensor::exp() const { return (to_float(*this) * (1.0 / std::log(2.0))).exp2(); }
Tensor Tensor::log() const { return log2() * std::log(2.0); }
Tensor Tensor::sqrt() const { return ew(Ops::SQRT, to_float(*this)); }
Tensor Tensor::sin() const { return ew(Ops::SIN, to_float(*this)); }
Tensor Tensor::cos() const { return (M_PI / 2 - to_float(*this)).sin(); }
Tensor Tensor::relu() const { return maximum(scalar_like(*this, 0, dtypes::default_int)); }
Tensor Tensor::sigmoid() const { return (1.0 + (-to_float(*this)).exp()).reciprocal(); }
Tensor Tensor::tanh() const { return 2.0 * (2.0 * to_float(*this)).sigmoid() - 1.0; }
Tensor Tensor::maximum(const Tensor& o) const { auto [x, y] = broadcasted("maximum", *this, o); return ew(Ops::MAX, x, {y}); }
Tensor Tensor::minimum(const Tensor& o) const { auto [x, y] = broadcasted("minimum", *this, o); return x.lt(y).where(x, y); }
Tensor Tensor::where(const Tensor& a, const Tensor& b) const {
  auto [x, y] = broadcasted("where", a, b);
  auto [c, x2] = broadcasted("where", cast(dtypes::bool_), x, false);
  auto [c2, y2] = broadcasted("where", c, y, false);
  return ew(Ops::WHERE, c2, {x2, y2});
}
Tensor Tensor::lt(const Tensor& o) const { auto [x, y] = broadcasted("lt", *this, o); return ew(Ops::CMPLT, x, {y}); }
Tensor Tensor::gt(const Tensor& o) const { return o.lt(*this); }
Tensor Tensor::le(const Tensor& o) const { return gt(o).logical_not(); }
Tensor Tensor::ge(const Tensor& o) const { return lt(o).logical_not(); }
Tensor Tensor::ne(const Tensor& o) const { auto [x, y] = broadcasted("ne", *this, o); return ew(Ops::CMPNE, x, {y}); }
Tensor Tensor::eq(const Tensor& o) const { return ne(o).logical_not(); }
Tensor Tensor::logical_not() const {
  Tensor b = cast(dtypes::bool_);
  return ew(Ops::CMPNE, b, {Tensor::full(shape(), 1, dtypes::bool_, device())});
}
Tensor Tensor::cast(DType d) const {
  TG_CHECK(d.count == 1 && !d.ptr && d.scalar != Scalar::Void, "cast: cannot cast to ", d.name());
  return Tensor(lazydata_->cast(d));
}
Tensor Tensor::bitcast(DType d) const {
  TG_CHECK(d.itemsize() == dtype().itemsize(), "bitcast: ", dtype().name(), " and ", d.name(), " differ in size");
  return Tensor(lazydata_->cast(d, true));
}

// ---- reductions -----------------------------------------------------------------------------------

int Tensor::norm_axis(int axis, const char* op) const {
  int n = ndim();
  TG_CHECK(axis >= -std::max(n, 1) && axis < std::max(n, 1), op, ": axis ", axis, " out of range for shape ", shape());
  return axis < 0 ? axis + n : axis;
}

namespace {
// The axes a reduce acts on (all when empty), and the shape it returns.
std::pair<std::vector<int>, Shape> reduce_axes(const Tensor& t, const std::vector<int>& axes, bool keepdim, const char* op,
                                               const std::function<int(int)>& norm) {
  std::vector<int> ax;
  if (axes.empty()) ax = iota_vec<int>(static_cast<size_t>(t.ndim()));
  for (int a : axes) {
    int n = norm(a);
    TG_CHECK(std::find(ax.begin(), ax.end(), n) == ax.end(), op, ": axis ", a, " repeated");
    ax.push_back(n);
  }
  ax.erase(std::remove_if(ax.begin(), ax.end(), [&](int a) { return a >= t.ndim(); }), ax.end());  // scalar tensors
  Shape out;
  for (int i = 0; i < t.ndim(); i++) {
    bool reduced = std::find(ax.begin(), ax.end(), i) != ax.end();
    if (!reduced) out.push_back(t.shape()[i]);
    else if (keepdim) out.push_back(1);
  }
  return {ax, out};
}
DType sum_acc_dtype(DType d) {
  if (d.is_float()) return d.scalar == Scalar::Float16 ? dtypes::float32 : d;
  if (d.is_unsigned()) return least_upper_dtype({d, dtypes::uint32});
  return least_upper_dtype({d, dtypes::int32});
}
}  // namespace

Tensor Tensor::sum(const std::vector<int>& axes, bool keepdim) const {
  auto [ax, out] = reduce_axes(*this, axes, keepdim, "sum", [&](int a) { return norm_axis(a, "sum"); });
  DType acc = sum_acc_dtype(dtype());
  Tensor r(cast(acc).lazydata()->r(Ops::ADD, ax));
  r = r.reshape(out);
  return dtype().scalar == Scalar::Float16 ? r.cast(dtype()) : r;
}
Tensor Tensor::max(const std::vector<int>& axes, bool keepdim) const {
  auto [ax, out] = reduce_axes(*this, axes, keepdim, "max", [&](int a) { return norm_axis(a, "max"); });
  for (int a : ax) TG_CHECK(shape()[a] > 0, "max: cannot reduce zero-size axis ", a, " of shape ", shape());
  return Tensor(lazydata_->r(Ops::MAX, ax)).reshape(out);
}
Tensor Tensor::min(const std::vector<int>& axes, bool keepdim) const {
  if (dtype().is_float()) return neg().max(axes, keepdim).neg();
  if (dtype().is_bool()) return logical_not().max(axes, keepdim).logical_not();
  // ~x reverses the order of signed and unsigned integers alike
  Tensor allones = Tensor::full({}, -1, dtype(), device());
  Tensor inv(lazydata_->e(Ops::XOR, {allones.expand(shape()).lazydata()}));
  Tensor m = inv.max(axes, keepdim);
  return Tensor(m.lazydata()->e(Ops::XOR, {allones.expand(m.shape()).lazydata()}));
}
Tensor Tensor::mean(const std::vector<int>& axes, bool keepdim) const {
  Tensor s = sum(axes, keepdim);
  int64_t n = numel() / std::max<int64_t>(1, s.numel());
  Tensor f = to_float(s);
  return n == 0 ? f * NAN : f * (1.0 / static_cast<double>(n));
}
Tensor Tensor::var(const std::vector<int>& axes, bool keepdim, double correction) const {
  Tensor m = mean(axes, true);
  Tensor sq = (to_float(*this) - m).square().sum(axes, keepdim);
  int64_t n = numel() / std::max<int64_t>(1, sq.numel());
  return sq * (1.0 / std::max(0.0, static_cast<double>(n) - correction));
}
Tensor Tensor::std(const std::vector<int>& axes, bool keepdim, double correction) const { return var(axes, keepdim, correction).sqrt(); }

// ---- movement -------------------------------------------------------------------------------------

Tensor Tensor::reshape(const Shape& new_shape) const {
  Shape s = new_shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == -1) {
      TG_CHECK(infer < 0, "reshape: only one dimension can be -1, got ", new_shape);
      infer = static_cast<int>(i);
    } else {
      TG_CHECK(s[i] >= 0, "reshape: invalid dimension ", s[i], " in ", new_shape);
      known *= s[i];
    }
  }
  if (infer >= 0) {
    TG_CHECK(known != 0 && numel() % known == 0, "reshape: cannot reshape ", shape(), " to ", new_shape);
    s[infer] = numel() / known;
  }
  TG_CHECK(prod(s) == numel(), "reshape: cannot reshape ", shape(), " to ", new_shape, " (", numel(), " elements vs ", prod(s), ")");
  if (s == shape()) return *this;
  return Tensor(lazydata_->reshape(s));
}

Tensor Tensor::permute(const std::vector<int>& order) const {
  std::vector<int> o;
  std::vector<bool> used(ndim(), false);
  bool ok = static_cast<int>(order.size()) == ndim();
  for (int a : order) {
    if (!ok || a < -ndim() || a >= ndim()) { ok = false; break; }
    int n = a < 0 ? a + ndim() : a;
    if (used[n]) { ok = false; break; }
    used[n] = true;
    o.push_back(n);
  }
  TG_CHECK(ok, "permute: order ", std::vector<int64_t>(order.begin(), order.end()), " is not a permutation of the dims of shape ", shape());
  return Tensor(lazydata_->permute(o));
}

Tensor Tensor::transpose(int dim0, int dim1) const {
  std::vector<int> order = iota_vec<int>(static_cast<size_t>(ndim()));
  std::swap(order[norm_axis(dim0, "transpose")], order[norm_axis(dim1, "transpose")]);
  return permute(order);
}

Tensor Tensor::expand(const Shape& new_shape) const {
  TG_CHECK(new_shape.size() >= shape().size(), "expand: cannot expand ", shape(), " to ", new_shape);
  Shape s = shape();
  s.insert(s.begin(), new_shape.size() - s.size(), 1);
  Shape out(new_shape.size());
  for (size_t i = 0; i < s.size(); i++) {
    out[i] = new_shape[i] == -1 ? s[i] : new_shape[i];
    TG_CHECK(s[i] == out[i] || (s[i] == 1 && out[i] >= 0), "expand: cannot expand ", shape(), " to ", new_shape);
  }
  Tensor r = reshape(s);
  if (out == s) return r;
  return Tensor(r.lazydata_->expand(out));
}

Tensor Tensor::pad(const std::vector<std::pair<int64_t, int64_t>>& padding, double value) const {
  TG_CHECK(padding.size() == shape().size(), "pad: ", padding.size(), " (before, after) pairs for shape ", shape());
  bool any = false;
  for (auto [b, e] : padding) {
    TG_CHECK(b >= 0 && e >= 0, "pad: negative padding (", b, ", ", e, ") for shape ", shape());
    any |= b || e;
  }
  if (!any) return *this;
  Tensor r(lazydata_->pad(padding));
  if (value == 0) return r;
  // pad with a value: pad a mask of ones with zeros and select
  Tensor mask(Tensor::full(shape(), 1, dtypes::bool_, device()).lazydata_->pad(padding));
  return mask.where(r, Tensor::full({}, value, dtype(), device()));
}

Tensor Tensor::shrink(const std::vector<std::pair<int64_t, int64_t>>& bounds) const {
  TG_CHECK(bounds.size() == shape().size(), "shrink: ", bounds.size(), " (begin, end) pairs for shape ", shape());
  bool any = false;
  for (size_t i = 0; i < bounds.size(); i++) {
    auto [b, e] = bounds[i];
    TG_CHECK(0 <= b && b <= e && e <= shape()[i], "shrink: bounds (", b, ", ", e, ") out of range for dim ", i, " of shape ", shape());
    any |= b != 0 || e != shape()[i];
  }
  return any ? Tensor(lazydata_->shrink(bounds)) : *this;
}

Tensor Tensor::flip(const std::vector<int>& axes) const {
  std::vector<bool> f(ndim(), false);
  for (int a : axes) {
    int n = norm_axis(a, "flip");
    TG_CHECK(!f[n], "flip: axis ", a, " repeated");
    f[n] = true;
  }
  return Tensor(lazydata_->flip(f));
}

Tensor Tensor::squeeze(std::optional<int> dim) const {
  Shape s;
  if (!dim) {
    for (int64_t d : shape()) if (d != 1) s.push_back(d);
  } else {
    if (ndim() == 0) return *this;
    int n = norm_axis(*dim, "squeeze");
    s = shape();
    if (s[n] != 1) return *this;
    s.erase(s.begin() + n);
  }
  return reshape(s);
}

Tensor Tensor::unsqueeze(int dim) const {
  int n = ndim() + 1;
  TG_CHECK(dim >= -n && dim < n, "unsqueeze: dim ", dim, " out of range for shape ", shape());
  int d = dim < 0 ? dim + n : dim;
  Shape s = shape();
  s.insert(s.begin() + d, 1);
  return reshape(s);
}

Tensor Tensor::flatten(int start_dim, int end_dim) const {
  if (ndim() == 0) return reshape({1});
  int a = norm_axis(start_dim, "flatten"), b = norm_axis(end_dim, "flatten");
  TG_CHECK(a <= b, "flatten: start_dim ", start_dim, " is after end_dim ", end_dim, " for shape ", shape());
  Shape s(shape().begin(), shape().begin() + a);
  int64_t m = 1;
  for (int i = a; i <= b; i++) m *= shape()[i];
  s.push_back(m);
  s.insert(s.end(), shape().begin() + b + 1, shape().end());
  return reshape(s);
}

Tensor Tensor::dot(const Tensor& w) const {
  int n1 = ndim(), n2 = w.ndim();
  TG_CHECK(n1 != 0 && n2 != 0, "dot: both tensors need at least 1 dimension, got ", shape(), " and ", w.shape());
  int64_t l = shape()[n1 - 1], r = w.shape()[n2 - std::min(n2, 2)];
  TG_CHECK(l == r, "dot: cannot multiply shapes ", shape(), " and ", w.shape(), " (", l, " != ", r, ")");
  int ones = std::min({n1 - 1, n2 - 1, 1});
  Shape xs(shape().begin(), shape().end() - 1);
  xs.insert(xs.end(), ones, 1);
  xs.push_back(l);
  Shape ws(w.shape().begin(), w.shape().end() - std::min(n2, 2));
  ws.insert(ws.end(), ones, 1);
  ws.insert(ws.end(), w.shape().end() - std::min(n2, 2), w.shape().end());
  Tensor x = reshape(xs), y = w.reshape(ws).transpose(-1, -std::min(n2, 2));
  return (x * y).sum({-1}).cast(least_upper_dtype({dtype(), w.dtype()}));
}

// ---- realization ----------------------------------------------------------------------------------

Tensor& Tensor::realize() {
  run_schedule(create_schedule({lazydata_}));
  return *this;
}

Tensor Tensor::contiguous() const { return Tensor(lazydata_->contiguous()); }

Tensor Tensor::to(const std::string& device) const { return Tensor(lazydata_->copy_to_device(Device::canonicalize(device))); }

void Tensor::read(void* out, DType as) const {
  Tensor t = contiguous();
  t.realize();
  const LazyBuffer* base = t.lazydata_->base();
  Buffer& buf = *base->buffer;
  size_t n = static_cast<size_t>(numel());
  std::vector<uint8_t> raw(buf.nbytes());
  if (!raw.empty()) buf.copyout(raw.data());
  DType from = dtype();
  if (from == as) { if (n) std::memcpy(out, raw.data(), n * from.itemsize()); return; }
  auto* o = static_cast<uint8_t*>(out);
  for (size_t i = 0; i < n; i++) {
    Value v;
    const uint8_t* p = raw.data() + i * from.itemsize();
    switch (from.scalar) {
      case Scalar::Float16: { uint16_t h; std::memcpy(&h, p, 2); v.f = half_to_float(h); break; }
      case Scalar::Float32: { float f; std::memcpy(&f, p, 4); v.f = f; break; }
      case Scalar::Float64: std::memcpy(&v.f, p, 8); break;
      default: {  // raw bytes, zero-extended; wrapping to `from` sign-extends narrow signed ints
        int64_t x = 0; std::memcpy(&x, p, from.itemsize()); v.i = x; v = cast_value(v, dtypes::uint64, from); }
    }
    Value c = cast_value(v, from, as);
    uint8_t* q = o + i * as.itemsize();
    switch (as.scalar) {
      case Scalar::Float16: { uint16_t h = float_to_half(static_cast<float>(c.f)); std::memcpy(q, &h, 2); break; }
      case Scalar::Float32: { float f = static_cast<float>(c.f); std::memcpy(q, &f, 4); break; }
      case Scalar::Float64: std::memcpy(q, &c.f, 8); break;
      default: std::memcpy(q, &c.i, as.itemsize());  // little-endian: the low bytes
    }
  }
}

}  // namespace tg
