#include "lazy/lazybuffer.h"

#include <algorithm>
#include <cstdint>

#include "helpers/recycle.h"
#include "helpers/teardown.h"
#include "tg/error.h"
#include "uop/exec_alu.h"

namespace tg {

LazyBuffer::LazyBuffer(std::string device_, ShapeTracker st_, DType dtype_, LBPtr base)
    : device(std::move(device_)), dtype(dtype_), st(std::move(st_)), base_(std::move(base)) {}

LazyBuffer::~LazyBuffer() {
  for (LBPtr& s : srcs) defer_release(std::move(s));
  defer_release(std::move(base_));
}

LBPtr LazyBuffer::metaop(Ops op, const Shape& shape, DType dtype, const std::string& device, Arg arg, std::vector<LBPtr> srcs) {
  auto lb = make_recycled<LazyBuffer>(device, ShapeTracker::from_shape(shape), dtype, nullptr);
  lb->op = op;
  lb->arg = std::move(arg);
  lb->srcs = std::move(srcs);
  if (op != Ops::CONST) {
    int64_t bytes = 0;
    TG_CHECK(!__builtin_mul_overflow(prod(shape), int64_t{dtype.itemsize()}, &bytes), "shape ", shape_str(shape), " of ",
             dtype.name(), " has too many bytes (more than 2^63)");
    lb->buffer = make_recycled<Buffer>(device, static_cast<size_t>(prod(shape)), dtype);
  }
  return lb;
}

LBPtr LazyBuffer::from_host(const void* data, const Shape& shape, DType dtype) {
  LBPtr lb = metaop(Ops::EMPTY, shape, dtype, "EXT");
  lb->buffer->allocate();
  if (lb->buffer->size) lb->buffer->copyin(data);
  return lb;
}

LBPtr LazyBuffer::from_buffer(std::shared_ptr<Buffer> buffer, const Shape& shape) {
  TG_ASSERT(buffer && buffer->is_allocated() && static_cast<int64_t>(buffer->size) == prod(shape), "from_buffer: ", shape_str(shape));
  auto lb = make_recycled<LazyBuffer>(buffer->device, ShapeTracker::from_shape(shape), buffer->dtype, nullptr);
  lb->op = Ops::EMPTY;
  lb->buffer = std::move(buffer);
  return lb;
}

LBPtr LazyBuffer::cnst(double value, DType dtype, const std::string& device, const Shape& shape) {
  return cnst_arg(dtype.is_float() ? Arg{value} : Arg{UOp::cnst(dtype, value)->const_int()}, dtype, device, shape);
}

LBPtr LazyBuffer::cnst_arg(Arg value, DType dtype, const std::string& device, const Shape& shape) {
  return metaop(Ops::CONST, {}, dtype, device, std::move(value))->broadcast_scalar(shape);
}

LBPtr LazyBuffer::broadcast_scalar(const Shape& shape) const {
  TG_ASSERT(this->shape().empty() && !is_view(), "broadcast_scalar of a buffer of shape ", shape_str(this->shape()));
  if (shape.empty()) return base_ptr();
  return view(ShapeTracker::from_view(View::create(shape, Shape(shape.size(), 0))));
}

LBPtr LazyBuffer::view(ShapeTracker new_st) const {
  const LazyBuffer* b = base();
  // a view that is exactly its base is the base
  if (new_st.contiguous() && new_st.shape() == b->shape()) return base_ptr();
  return make_recycled<LazyBuffer>(device, std::move(new_st), dtype, base_ptr());
}

bool LazyBuffer::is_unpadded_const() const {
  return is_unrealized_const() && std::none_of(st.views.begin(), st.views.end(), [](const View& v) { return v.mask.has_value(); });
}

namespace {
// The value of an unpadded constant.
Value const_of(const LazyBuffer& c) { return const_to_value(*UOp::make(Ops::CONST, c.dtype, {}, c.base()->arg)); }
}  // namespace

LBPtr LazyBuffer::e(Ops op, std::initializer_list<LBRef> others) const {
  std::vector<LBPtr> srcs;
  srcs.reserve(1 + others.size());
  srcs.push_back(std::const_pointer_cast<LazyBuffer>(shared_from_this()));
  for (const LBRef& o : others) srcs.push_back(*o);
  for (auto& s : srcs) TG_ASSERT(s->shape() == shape(), op_name(op), " of mismatched shapes");
  DType out = dtype;
  if (op == Ops::CMPLT || op == Ops::CMPNE) out = dtypes::bool_;
  if (op == Ops::WHERE) out = srcs[1]->dtype;
  if (std::all_of(srcs.begin(), srcs.end(), [](const LBPtr& s) { return s->is_unpadded_const(); })) {
    std::vector<Value> vals;
    for (auto& s : srcs) vals.push_back(const_of(*s));
    Value v = exec_alu(op, out, vals, (op == Ops::WHERE ? srcs[1] : srcs[0])->dtype);
    return cnst_arg(value_to_const(out, v)->arg, out, device, shape());
  }
  return metaop(op, shape(), out, device, {}, std::move(srcs));
}

LBPtr LazyBuffer::fold_reduce(Ops op, const std::vector<int>& axes) const {
  if (!is_unpadded_const()) return nullptr;
  Shape out = shape();
  int64_t n = 1;
  for (int a : axes) {
    n *= shape()[static_cast<size_t>(a)];
    out[static_cast<size_t>(a)] = 1;
  }
  return cnst_arg(value_to_const(dtype, reduce_repeated(op, dtype, const_of(*this), n))->arg, dtype, device, out);
}

LBPtr LazyBuffer::r(Ops op, const std::vector<int>& axes) const {
  Shape out = shape();
  std::vector<int> real_axes;
  for (int a : axes)
    if (out[a] != 1) { real_axes.push_back(a); out[a] = 1; }
  if (real_axes.empty()) return std::const_pointer_cast<LazyBuffer>(shared_from_this());
  std::sort(real_axes.begin(), real_axes.end());
  if (LBPtr folded = fold_reduce(op, real_axes)) return folded;
  auto self = std::const_pointer_cast<LazyBuffer>(shared_from_this());
  // A big reduction to a small output (tinygrad's split_reduceop): one reduce axis is split as
  // (divisor, rest) and reduced in two kernels, the first with `divisor` times more outputs to spread
  // over threads, the second over the divisor. The split part goes last, next to the second reduce.
  // An output with thousands of elements has enough to spread already (a conv's weight gradient:
  // splitting its batch would make the kernel's loads stride through the batch).
  int64_t n_in = prod(shape()), n_out = prod(out);
  if (n_out > 0 && n_out < 4096 && n_in / n_out >= 32768) {
    auto strides = st.real_strides();
    for (int a : real_axes) {
      if (strides[a] == std::optional<int64_t>{0}) continue;  // a broadcast axis: nothing to split
      for (int64_t d = std::min<int64_t>(256, (int64_t{1} << 22) / n_out); d >= 8; d--) {
        if (shape()[a] % d != 0) continue;
        Shape split = shape();
        split[a] = shape()[a] / d;
        split.insert(split.begin() + a, d);
        std::vector<int> order;
        for (int i = 0; i <= static_cast<int>(shape().size()); i++)
          if (i != a) order.push_back(i);
        order.push_back(a);
        // after the permute the original axes keep their numbers (the rest of axis a sits at a)
        LBPtr first = self->reshape(split)->permute(order)->reduce_op(op, real_axes);
        return first->reduce_op(op, {static_cast<int>(shape().size())})->reshape(out);
      }
    }
  }
  return reduce_op(op, real_axes);
}

LBPtr LazyBuffer::reduce_op(Ops op, const std::vector<int>& axes) const {
  Shape out = shape();
  for (int a : axes) out[a] = 1;
  return metaop(Ops::REDUCE_AXIS, out, dtype, device, ReduceArg{op, axes}, {std::const_pointer_cast<LazyBuffer>(shared_from_this())});
}

LBPtr LazyBuffer::cast(DType d, bool bitcast) const {
  if (d == dtype && !bitcast) return std::const_pointer_cast<LazyBuffer>(shared_from_this());
  // casting a constant is a constant, unless it is padded (the padding is 0 in any dtype, but it's not
  // the constant)
  bool padded = std::any_of(st.views.begin(), st.views.end(), [](const View& v) { return v.mask.has_value(); });
  if (!bitcast && is_unrealized_const() && !padded) {
    const LazyBuffer* b = base();
    UOpPtr v = value_to_const(d, cast_value(const_to_value(*UOp::make(Ops::CONST, b->dtype, {}, b->arg)), b->dtype, d));
    return cnst_arg(v->arg, d, device, shape());
  }
  return metaop(bitcast ? Ops::BITCAST : Ops::CAST, shape(), d, device, {}, {std::const_pointer_cast<LazyBuffer>(shared_from_this())});
}

// A realized buffer, or one an earlier ASSIGN writes (assigns chain on one buffer), seen whole.
bool LazyBuffer::can_assign() const {
  const LazyBuffer* b = base();
  return (b->realized() || b->op == Ops::ASSIGN) && b->buffer && st.contiguous() && prod(shape()) == prod(b->shape());
}

LBPtr LazyBuffer::assign(const LBPtr& x) const {
  TG_ASSERT(can_assign() && x->shape() == shape() && x->dtype == dtype && x->device == device, "assign: bad target or value");
  return metaop(Ops::ASSIGN, shape(), dtype, device, {}, {x, base_ptr()});  // the value, then the target
}

LBPtr LazyBuffer::copy_to_device(const std::string& dev) const {
  if (dev == device) return std::const_pointer_cast<LazyBuffer>(shared_from_this());
  // the COPY source must be a contiguous buffer of its own; make it one if it is a view
  LBPtr src = std::const_pointer_cast<LazyBuffer>(shared_from_this());
  if (is_view() || is_unrealized_const()) src = contiguous();
  return metaop(Ops::COPY, shape(), dtype, dev, {}, {src});
}

LBPtr LazyBuffer::contiguous() const {
  // already a whole contiguous buffer (perhaps reshaped): realize the base, no copy
  if (!is_unrealized_const() && st.contiguous() && prod(shape()) == prod(base()->shape())) {
    base()->forced_realize = true;
    return std::const_pointer_cast<LazyBuffer>(shared_from_this());
  }
  LBPtr r = metaop(Ops::CONTIGUOUS, shape(), dtype, device, {}, {std::const_pointer_cast<LazyBuffer>(shared_from_this())});
  return r;
}

LBPtr LazyBuffer::reshape(const Shape& s) const { return view(st.reshape(s)); }
LBPtr LazyBuffer::permute(const std::vector<int>& o) const { return view(st.permute(o)); }
LBPtr LazyBuffer::expand(const Shape& s) const { return view(st.expand(s)); }
LBPtr LazyBuffer::pad(const std::vector<std::pair<int64_t, int64_t>>& a) const { return view(st.pad(a)); }
LBPtr LazyBuffer::shrink(const std::vector<std::pair<int64_t, int64_t>>& a) const { return view(st.shrink(a)); }
LBPtr LazyBuffer::flip(const std::vector<bool>& a) const { return view(st.flip(a)); }

// INDEX(data, offset, valid), arg = axis. The kernel reads data through its view with `axis` pinned to
// 0, plus `offset` (the wrapped index times data's stride along axis) where `valid`, else 0. The
// arithmetic on the index is plain lazy elementwise ops in the index's dtype, so it fuses into the
// gather's kernel; the offset is int64 only when the data has 2^31 elements or more.
LBPtr LazyBuffer::gather(const LBPtr& idx, int axis) const {
  TG_ASSERT((idx->dtype == dtypes::int32 || idx->dtype == dtypes::int64) && idx->shape().size() == shape().size(), "gather: bad index");
  LBPtr data = std::const_pointer_cast<LazyBuffer>(shared_from_this());
  int64_t n = shape()[axis];
  if (n == 0) return cnst(0, dtype, device, idx->shape());  // every index is out of range
  // one view with a plain stride along axis, or the data is copied to a contiguous buffer first
  const View& v = st.views.back();
  bool simple = !is_unrealized_const() && st.views.size() == 1 &&
                (!v.mask || (*v.mask)[axis] == std::pair<int64_t, int64_t>{0, n});
  if (!simple) data = contiguous();
  int64_t stride = data->st.views.back().strides[axis];
  // the index arithmetic holds n: an int32 index of a longer axis is widened first
  LBPtr i = n > INT32_MAX ? idx->cast(dtypes::int64) : idx;
  DType it = i->dtype;
  DType ot = data->st.index_bound() > INT32_MAX ? dtypes::int64 : dtypes::int32;
  auto c = [&](double x, DType d) { return cnst(x, d, device, idx->shape()); };
  LBPtr wrapped = i->e(Ops::CMPLT, {c(0, it)})->e(Ops::WHERE, {i->e(Ops::ADD, {c(static_cast<double>(n), it)}), i});
  LBPtr nonneg = wrapped->e(Ops::CMPLT, {c(0, it)})->e(Ops::CMPNE, {c(1, dtypes::bool_)});
  LBPtr valid = nonneg->e(Ops::AND, {wrapped->e(Ops::CMPLT, {c(static_cast<double>(n), it)})});
  LBPtr offset = valid->e(Ops::WHERE, {wrapped, c(0, it)})->cast(ot)->e(Ops::MUL, {c(static_cast<double>(stride), ot)});
  return metaop(Ops::INDEX, idx->shape(), dtype, device, int64_t{axis}, {data, offset, valid});
}

}  // namespace tg
