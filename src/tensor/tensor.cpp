// The Tensor handle, its data, and the autograd engine (backward over the Function graph).
#include "tg/tensor.h"

#include <cstring>
#include <ostream>
#include <sstream>
#include <unordered_set>

#include "engine/realize.h"
#include "engine/schedule.h"
#include "helpers/recycle.h"
#include "lazy/lazybuffer.h"
#include "runtime/device.h"
#include "tensor/capture.h"
#include "tensor/function.h"
#include "tensor/internal.h"
#include "uop/exec_alu.h"

namespace tg {

thread_local bool Tensor::training = false;
thread_local bool Tensor::no_grad = false;

Tensor Tensor::wrap(std::shared_ptr<TensorImpl> impl) {
  Tensor t(nullptr);
  t.impl_ = std::move(impl);
  return t;
}

Tensor::Tensor(std::shared_ptr<LazyBuffer> lb, std::optional<bool> requires_grad) : impl_(make_recycled<TensorImpl>()) {
  impl_->lazydata = std::move(lb);
  impl_->requires_grad = requires_grad;
}

Tensor Tensor::from_host(const void* data, size_t n, const Shape& shape, DType dtype, const std::string& device) {
  return from_host(data, n, shape, dtype, device, "from_host");
}

Tensor Tensor::from_host(const void* data, size_t n, const Shape& shape, DType dtype, const std::string& device, const char* op) {
  int64_t numel = detail::checked_numel(shape, dtype, op);
  TG_CHECK(n == static_cast<uint64_t>(numel), op, ": ", n, " values do not fill shape ", shape, " (", dtype.name(), ")");
  TG_CHECK(data || n == 0, op, ": no data (a null pointer) for ", n, " values of shape ", shape, " (", dtype.name(), ")");
  if (dtype.is_bool()) {  // any nonzero byte is true; a bool tensor holds exactly 0 or 1
    std::vector<uint8_t> b(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + n);
    for (uint8_t& v : b) v = v != 0;
    return Tensor(LazyBuffer::from_host(b.data(), shape, dtype)->copy_to_device(detail::dev_or_default(device)));
  }
  return Tensor(LazyBuffer::from_host(data, shape, dtype)->copy_to_device(detail::dev_or_default(device)));
}

Tensor::Tensor(std::initializer_list<float> d, const std::string& dev)
    : Tensor(from_host(d.begin(), d.size(), {static_cast<int64_t>(d.size())}, dtypes::float32, dev, "Tensor")) {}
Tensor::Tensor(std::initializer_list<double> d, const std::string& dev)
    : Tensor(from_host(d.begin(), d.size(), {static_cast<int64_t>(d.size())}, dtypes::float64, dev, "Tensor")) {}
Tensor::Tensor(std::initializer_list<int> d, const std::string& dev)
    : Tensor(from_host(d.begin(), d.size(), {static_cast<int64_t>(d.size())}, dtypes::int32, dev, "Tensor")) {}
Tensor::Tensor(std::initializer_list<bool> d, const std::string& dev)
    : Tensor(from_host(d.begin(), d.size(), {static_cast<int64_t>(d.size())}, dtypes::bool_, dev, "Tensor")) {}

const std::shared_ptr<LazyBuffer>& Tensor::lazydata() const { return impl_->lazydata; }
const Shape& Tensor::shape() const { return impl_->lazydata->shape(); }
int64_t Tensor::size(int dim) const {
  TG_CHECK_AS(IndexError, ndim() > 0, "size: dim ", dim, " out of range for shape () (a 0-d tensor has no dims)");  // as torch
  return shape()[norm_axis(dim, "size")];
}
DType Tensor::dtype() const { return impl_->lazydata->dtype; }
const std::string& Tensor::device() const { return impl_->lazydata->device; }
int64_t Tensor::numel() const { return tg::prod(shape()); }

int Tensor::norm_axis(int axis, const char* op) const {
  int n = std::max(ndim(), 1);  // PyTorch's rule: a 0-d tensor takes dims 0 and -1, as one of size 1
  TG_CHECK_AS(IndexError, axis >= -n && axis < n, op, ": axis ", axis, " out of range for shape ", shape());
  return axis < 0 ? axis + n : axis;
}

// ---- autograd -------------------------------------------------------------------------------------

std::optional<bool> Tensor::requires_grad() const { return impl_->requires_grad; }
Tensor& Tensor::requires_grad_(bool r) {
  TG_CHECK_AS(TypeError, !r || dtype().is_float(), "requires_grad_: only float tensors can require gradients, got ", dtype().name(),
           " of shape ", shape());
  impl_->requires_grad = r;
  return *this;
}
bool Tensor::has_grad() const { return impl_->grad != nullptr; }
Tensor Tensor::grad() const {
  TG_CHECK(impl_->grad, "grad: tensor of shape ", shape(), " (", dtype().name(), ") has no gradient; call backward() first");
  return wrap(impl_->grad);
}
void Tensor::set_grad(const std::optional<Tensor>& g) {
  if (g) TG_CHECK(g->shape() == shape(), "set_grad: gradient shape ", g->shape(), " does not match tensor shape ", shape());
  impl_->grad = g ? g->impl_ : nullptr;
}

Tensor Tensor::detach() const { return Tensor(lazydata(), false); }

Tensor& Tensor::assign(const Tensor& x) {
  TG_CHECK(x.shape() == shape(), "assign: shape ", x.shape(), " does not match ", shape());
  TG_CHECK_AS(TypeError, x.dtype() == dtype(), "assign: dtype ", x.dtype().name(), " does not match ", dtype().name());
  TG_CHECK(x.device() == device(), "assign: device ", x.device(), " does not match ", device());
  const LBPtr& t = lazydata();
  LBPtr v = x.lazydata();
  if (v == t) return *this;
  if (!t->can_assign()) {  // nothing realized to write into (yet): this tensor now is x
    impl_->lazydata = v;
    return *this;
  }
  // in place: the kernel that computes x writes this tensor's buffer (a view of that buffer is copied first)
  if (v->base()->buffer == t->base()->buffer && !(v->st == ShapeTracker::from_shape(v->shape()))) v = v->contiguous();
  impl_->lazydata = t->assign(v);
  return *this;
}

Tensor& Tensor::replace(const Tensor& x) {
  TG_CHECK(x.shape() == shape(), "replace: shape ", x.shape(), " does not match ", shape());
  TG_CHECK(!x.requires_grad().value_or(false), "replace: the new data of shape ", x.shape(), " (", x.dtype().name(),
           ") requires grad; replace takes data (detach() it)");
  TG_CHECK(!impl_->ctx, "replace: the tensor of shape ", shape(), " is the result of an op recorded for backward; replace a leaf");
  impl_->lazydata = x.lazydata();
  return *this;
}

Tensor Tensor::sequential(const std::vector<std::function<Tensor(const Tensor&)>>& layers) const {
  Tensor x = *this;
  for (const auto& f : layers) {
    TG_CHECK(f, "sequential: layer is an empty function (input of shape ", shape(), ")");
    x = f(x);
  }
  return x;
}

Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Tensor& values) {
  Tensor r = index_put(indices, values);
  if (no_grad || !r.impl_->ctx) return assign(r);  // nothing to differentiate: a plain write
  TG_CHECK(impl_->ctx || !requires_grad().value_or(false), "index_put_: a leaf tensor of shape ", shape(),
           " that requires grad cannot be written in place (write under no_grad, or into a copy)");
  impl_ = r.impl_;
  return *this;
}

namespace {

using Mask = std::vector<std::pair<int64_t, int64_t>>;

// The region a gradient covers when it is one slice of its tensor's (shrink's backward pads it with
// zeros), else nothing.
std::optional<Mask> slice_of(const LBPtr& g) {
  if (!g->is_view() || g->st.views.size() != 1 || !g->st.views[0].mask) return std::nullopt;
  return *g->st.views[0].mask;
}

bool disjoint(const Mask& a, const Mask& b) {
  for (size_t d = 0; d < a.size(); d++)
    if (a[d].second <= b[d].first || b[d].second <= a[d].first) return true;
  return false;
}

// The gradient a tensor collects from several of its slices (a stack's pieces, the Winograd points'
// products): while the slices are disjoint, each is selected where it lies rather than added to zeros,
// so that the scheduler sees a concatenation (grouping.cpp, is_concat) whose kernels load one piece per
// element; a sum of zero-padded pieces adds 0.0 per element per piece. The values are the sum's, but
// for the sign of a zero.
struct GradSum {
  std::vector<Mask> slices;  // of the terms so far, while every term is a slice
  bool all_slices = true;

  Tensor add(const Tensor& acc, const Tensor& g) {
    std::optional<Mask> m = slice_of(g.lazydata());
    all_slices = all_slices && m && std::all_of(slices.begin(), slices.end(), [&](const Mask& s) { return disjoint(s, *m); });
    if (!all_slices) return acc + g;
    slices.push_back(*m);
    std::vector<std::pair<int64_t, int64_t>> padding;
    for (size_t d = 0; d < m->size(); d++) padding.emplace_back((*m)[d].first, g.shape()[d] - (*m)[d].second);
    return detail::where_placed(g, padding, acc);
  }
  void first(const Tensor& g) {
    if (std::optional<Mask> m = slice_of(g.lazydata())) slices.push_back(*m);
    else all_slices = false;
  }
};

}  // namespace

Tensor& Tensor::backward() {
  TG_CHECK(numel() == 1 && ndim() == 0, "backward: called on a tensor of shape ", shape(),
           "; it can only be called on a scalar unless a gradient is given");
  return backward(Tensor::full({}, 1, dtype(), device()));
}

Tensor& Tensor::backward(const Tensor& gradient) {
  TG_CHECK(gradient.shape() == shape(), "backward: gradient shape ", gradient.shape(), " does not match tensor shape ", shape());
  TG_CHECK(impl_->ctx || requires_grad().value_or(false), "backward: tensor of shape ", shape(),
           " does not require grad (no graph to differentiate)");
  // Topological order of the graph behind this tensor (tinygrad's deepwalk), iteratively.
  // shared_ptrs: resetting a ctx below may drop the last other reference to an intermediate tensor
  std::vector<std::shared_ptr<TensorImpl>> order;
  std::unordered_set<TensorImpl*> visited;
  std::vector<std::pair<std::shared_ptr<TensorImpl>, size_t>> stack{{impl_, 0}};
  visited.insert(impl_.get());
  while (!stack.empty()) {
    auto& [node, i] = stack.back();
    if (node->ctx && i < node->ctx->parents.size()) {
      std::shared_ptr<TensorImpl> p = node->ctx->parents[i++];
      if (p->ctx && visited.insert(p.get()).second) stack.emplace_back(std::move(p), 0);
      continue;
    }
    order.push_back(node);
    stack.pop_back();
  }
  TG_CHECK_AS(TypeError, gradient.dtype() == dtype(), "backward: gradient dtype ", gradient.dtype().name(), " does not match ", dtype().name());
  if (!impl_->ctx) {  // a leaf: its gradient is the given one, accumulated like any other
    impl_->grad = (has_grad() ? grad() + gradient.detach() : gradient.detach()).impl_;
    return *this;
  }
  impl_->grad = gradient.detach().impl_;
  std::unordered_map<TensorImpl*, GradSum> sums;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    TensorImpl* t = it->get();
    if (!t->grad) continue;  // nothing flows here (e.g. only through non-differentiable ops)
    std::shared_ptr<Function> ctx = t->ctx;
    std::vector<LBPtr> grads = ctx->backward(t->grad->lazydata);
    for (size_t i = 0; i < ctx->parents.size(); i++) {
      TensorImpl* p = ctx->parents[i].get();
      if (!grads[i] || !p->requires_grad.value_or(false)) continue;
      TG_ASSERT(grads[i]->shape() == p->lazydata->shape(), "backward: gradient shape ", grads[i]->shape(), " != ", p->lazydata->shape());
      Tensor g(grads[i], false);
      if (p->grad && sums.count(p)) g = sums[p].add(wrap(p->grad), g);
      else if (p->grad) g = wrap(p->grad) + g;  // a gradient from an earlier backward
      else sums[p].first(g);
      p->grad = g.impl_;
    }
    t->ctx.reset();  // the graph is used once, as tinygrad
  }
  return *this;
}

// ---- realization and data --------------------------------------------------------------------------

Tensor& Tensor::realize() {
  corealize({*this});
  return *this;
}

void Tensor::corealize(const std::vector<Tensor>& tensors) {
  std::vector<LBPtr> outs;
  for (const Tensor& t : tensors) outs.push_back(t.lazydata());
  realize_lazy(outs);
}

Tensor Tensor::contiguous() const { return Function::apply<F::Contiguous>({*this}); }
Tensor Tensor::contiguous_backward() const { return Function::apply<F::ContiguousBackward>({*this}); }

Tensor Tensor::to(const std::string& device) const {
  std::string dev = Device::canonicalize(device);
  if (dev == this->device()) return *this;
  return Tensor(lazydata()->copy_to_device(dev), requires_grad());
}

std::vector<uint8_t> Tensor::bytes() const {
  std::vector<uint8_t> out(static_cast<size_t>(nbytes()));
  read(out.data(), dtype());
  return out;
}

void Tensor::read(void* out, DType as) const {
  detail::refuse_host_read_in_capture("item()/tolist()/numpy()/bytes()");
  Tensor t = contiguous();
  t.realize();
  const LazyBuffer* base = t.lazydata()->base();
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

// ---- printing -------------------------------------------------------------------------------------

namespace {
constexpr int64_t kEdge = 3;  // a dim longer than 2 * kEdge shows its first and last kEdge entries

void print_values(std::ostream& os, const std::vector<double>& v, const Shape& shape, size_t dim, int64_t offset, DType dt) {
  if (dim == shape.size()) {
    if (dt.is_bool()) os << (v[offset] != 0 ? "True" : "False");
    else if (dt.is_float()) {
      std::ostringstream f;
      f.precision(6);
      f << v[offset];
      std::string s = f.str();
      bool plain = s.find_first_of(".enia") == std::string::npos;  // 1 -> "1.", as torch
      os << s << (plain ? "." : "");
    } else os << static_cast<int64_t>(v[offset]);
    return;
  }
  int64_t stride = 1;
  for (size_t i = dim + 1; i < shape.size(); i++) stride *= shape[i];
  os << '[';
  for (int64_t i = 0; i < shape[dim]; i++) {
    if (shape[dim] > 2 * kEdge && i == kEdge) {
      os << "..., ";
      i = shape[dim] - kEdge;
    }
    print_values(os, v, shape, dim + 1, offset + i * stride, dt);
    if (i + 1 < shape[dim]) os << ", ";
  }
  os << ']';
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  std::vector<double> v = t.cast(dtypes::float64).tolist<double>();
  os << "tensor(";
  print_values(os, v, t.shape(), 0, 0, t.dtype());
  return os << ", dtype=" << t.dtype().name() << ", device=" << t.device() << ")";
}

}  // namespace tg
