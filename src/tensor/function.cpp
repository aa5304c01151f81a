#include "tensor/function.h"

#include <cmath>
#include <numeric>

#include "helpers/teardown.h"
#include "uop/exec_alu.h"

namespace tg {

TensorImpl::~TensorImpl() {
  defer_release(std::move(ctx));
  defer_release(std::move(grad));
  defer_release(std::move(lazydata));
}

Function::~Function() {
  for (auto& p : parents) defer_release(std::move(p));
}

bool Function::records(std::span<const TensorRef> xs) {
  if (Tensor::no_grad) return false;
  for (const TensorRef& x : xs)
    if (x->requires_grad().value_or(false)) return true;
  return false;
}

Tensor Function::run(std::shared_ptr<Function> self, std::span<const TensorRef> xs) {
  bool any = false, all_known = true;
  for (const TensorRef& x : xs) {
    std::optional<bool> r = x->requires_grad();
    any |= r.value_or(false);
    all_known &= r.has_value();
  }
  if (!differentiable()) any = false, all_known = true;
  recorded_ = any && !Tensor::no_grad;
  if (recorded_) {
    TG_ASSERT(self, "Function::run: a recorded op without its owner");
    for (const TensorRef& x : xs) needs_input_grad.push_back(x->requires_grad().value_or(false));
  }
  // under no_grad nothing is recorded, and (as in torch) the result does not require grad
  std::optional<bool> requires_grad = Tensor::no_grad ? std::optional<bool>(false)
                                      : any           ? std::optional<bool>(true)
                                      : all_known     ? std::optional<bool>(false)
                                                      : std::nullopt;
  Tensor out(forward(Inputs(xs)), requires_grad);
  if (recorded_) {
    for (const TensorRef& x : xs) parents.push_back(x->impl_);
    out.impl_->ctx = std::move(self);
  }
  return out;
}

namespace F {
namespace {
constexpr double kLn2 = 0.69314718055994530942;
LBPtr c(const LBPtr& like, double v) { return like->const_like(v); }
LBPtr mul(const LBPtr& a, const LBPtr& b) { return a->e(Ops::MUL, {b}); }
LBPtr add(const LBPtr& a, const LBPtr& b) { return a->e(Ops::ADD, {b}); }
LBPtr neg(const LBPtr& a) { return a->e(Ops::NEG); }
LBPtr recip(const LBPtr& a) { return a->e(Ops::RECIP); }
LBPtr fdiv(const LBPtr& a, const LBPtr& b) { return a->e(Ops::FDIV, {b}); }
}  // namespace

LBPtr Contiguous::forward(Inputs x) { return x[0]->contiguous(); }
std::vector<LBPtr> Contiguous::backward(const LBPtr& g) { return {g}; }

LBPtr ContiguousBackward::forward(Inputs x) { return x[0]; }
std::vector<LBPtr> ContiguousBackward::backward(const LBPtr& g) { return {g->contiguous()}; }

LBPtr Cast::forward(Inputs x) {
  input_dtype = x[0]->dtype;
  return x[0]->cast(dtype, bitcast);
}
std::vector<LBPtr> Cast::backward(const LBPtr& g) { return {g->cast(input_dtype, bitcast)}; }

LBPtr Neg::forward(Inputs x) { return neg(x[0]); }
std::vector<LBPtr> Neg::backward(const LBPtr& g) { return {neg(g)}; }

LBPtr Reciprocal::forward(Inputs x) { return save(ret, recip(x[0])); }
std::vector<LBPtr> Reciprocal::backward(const LBPtr& g) { return {mul(neg(g), mul(ret, ret))}; }

LBPtr Sin::forward(Inputs xs) { return save(x, xs[0])->e(Ops::SIN); }
std::vector<LBPtr> Sin::backward(const LBPtr& g) { return {mul(x->e(Ops::COS), g)}; }
LBPtr Cos::forward(Inputs xs) { return save(x, xs[0])->e(Ops::COS); }
std::vector<LBPtr> Cos::backward(const LBPtr& g) { return {mul(neg(x->e(Ops::SIN)), g)}; }
LBPtr Tan::forward(Inputs xs) { return save(ret, xs[0]->e(Ops::TAN)); }
std::vector<LBPtr> Tan::backward(const LBPtr& g) { return {mul(add(c(ret, 1), mul(ret, ret)), g)}; }  // 1 + tan^2

LBPtr Relu::forward(Inputs x) { return save(ret, x[0]->e(Ops::MAX, {c(x[0], 0)})); }
// g where the output is positive, else 0: as torch, a NaN or inf gradient does not leak through as 0 x inf
// (and a select is one op, where a mask cast to floats and multiplied was two)
std::vector<LBPtr> Relu::backward(const LBPtr& g) { return {c(ret, 0)->e(Ops::CMPLT, {ret})->e(Ops::WHERE, {g, c(g, 0)})}; }

LBPtr Log::forward(Inputs xs) { return mul(save(x, xs[0])->e(Ops::LOG2), c(xs[0], kLn2)); }
std::vector<LBPtr> Log::backward(const LBPtr& g) { return {mul(g, recip(x))}; }

LBPtr Exp::forward(Inputs x) { return save(ret, mul(x[0], c(x[0], 1 / kLn2))->e(Ops::EXP2)); }
std::vector<LBPtr> Exp::backward(const LBPtr& g) { return {mul(ret, g)}; }

LBPtr Sqrt::forward(Inputs x) { return save(ret, x[0]->e(Ops::SQRT)); }
std::vector<LBPtr> Sqrt::backward(const LBPtr& g) { return {mul(g, recip(mul(ret, c(ret, 2))))}; }

LBPtr Sigmoid::forward(Inputs x) {
  return save(ret, recip(add(c(x[0], 1), mul(x[0], c(x[0], -1 / kLn2))->e(Ops::EXP2))));
}
std::vector<LBPtr> Sigmoid::backward(const LBPtr& g) { return {mul(mul(ret, add(c(ret, 1), neg(ret))), g)}; }

LBPtr Sign::forward(Inputs xs) {
  const LBPtr& x = xs[0];
  LBPtr nonzero = x->e(Ops::CMPNE, {c(x, 0)}), negative = x->e(Ops::CMPLT, {c(x, 0)});
  LBPtr pm1 = negative->e(Ops::WHERE, {c(x, -1), c(x, 1)});
  LBPtr s = nonzero->e(Ops::WHERE, {pm1, c(x, 0)});
  if (!x->dtype.is_float()) return s;
  return x->e(Ops::CMPNE, {x})->e(Ops::WHERE, {x, s});  // NaN stays NaN (NumPy, tinygrad)
}
std::vector<LBPtr> Sign::backward(const LBPtr& g) { return {c(g, 0)}; }

LBPtr Eq::forward(Inputs x) {
  LBPtr ne = x[0]->e(Ops::CMPNE, {x[1]});
  return ne->e(Ops::CMPNE, {c(ne, 1)});
}
std::vector<LBPtr> Eq::backward(const LBPtr&) { return {nullptr, nullptr}; }

LBPtr Add::forward(Inputs x) { return add(x[0], x[1]); }
std::vector<LBPtr> Add::backward(const LBPtr& g) {
  return {needs_input_grad[0] ? g : nullptr, needs_input_grad[1] ? g : nullptr};
}

LBPtr Sub::forward(Inputs x) { return add(x[0], neg(x[1])); }
std::vector<LBPtr> Sub::backward(const LBPtr& g) {
  return {needs_input_grad[0] ? g : nullptr, needs_input_grad[1] ? neg(g) : nullptr};
}

LBPtr Mul::forward(Inputs xs) { return mul(save(x, xs[0]), save(y, xs[1])); }
std::vector<LBPtr> Mul::backward(const LBPtr& g) {
  return {needs_input_grad[0] ? mul(y, g) : nullptr, needs_input_grad[1] ? mul(x, g) : nullptr};
}

// A division, correctly rounded as torch's and NumPy's (x / x is 1), not x times 1/x. The divisor's
// gradient divides twice, as torch does, where -g x / (y y) would overflow y y for |y| past 2^64.
LBPtr Div::forward(Inputs xs) { return save(ret, fdiv(xs[0], save(y, xs[1]))); }
std::vector<LBPtr> Div::backward(const LBPtr& g) {
  return {needs_input_grad[0] ? fdiv(g, y) : nullptr, needs_input_grad[1] ? mul(neg(g), fdiv(ret, y)) : nullptr};
}

LBPtr Where::forward(Inputs x) { return save(cond, x[0])->e(Ops::WHERE, {x[1], x[2]}); }
std::vector<LBPtr> Where::backward(const LBPtr& g) {
  LBPtr zero = c(g, 0);
  return {nullptr, needs_input_grad[1] ? cond->e(Ops::WHERE, {g, zero}) : nullptr,
          needs_input_grad[2] ? cond->e(Ops::WHERE, {zero, g}) : nullptr};
}

LBPtr Sum::forward(Inputs x) { input_shape = x[0]->shape(); return x[0]->r(Ops::ADD, axes); }
std::vector<LBPtr> Sum::backward(const LBPtr& g) { return {g->expand(input_shape)}; }

LBPtr Max::forward(Inputs xs) { return save(ret, save(x, xs[0])->r(Ops::MAX, axes)); }
std::vector<LBPtr> Max::backward(const LBPtr& g) {
  // the gradient is shared equally between the entries that hold the maximum
  LBPtr ne = x->e(Ops::CMPNE, {ret->expand(x->shape())});
  LBPtr is_max = ne->e(Ops::CMPNE, {c(ne, 1)})->cast(g->dtype);
  LBPtr count = is_max->r(Ops::ADD, axes);
  // A big pool's windows (few entries each, many of them): 1 / count is realized, in the forward's max
  // kernel (the same loops), so that the kernels that read the gradient multiply by it rather than divide
  // by the count again for every entry they read (beautiful_mnist's batchnorm backward after a pool did
  // so in three kernels, an fdiv per 4 entries: Zen 5, A/B in one session, those kernels took 0.7 ms less
  // of 9). A pool's count is realized anyway (its readers see it through the pool's views); a long row's
  // stays read back in its reader, and a small pool's is not worth a kernel of its own.
  constexpr int64_t kMaxWindow = 16, kMinWindows = 16384;
  int64_t windows = prod(ret->shape());
  if (windows >= kMinWindows && prod(x->shape()) <= kMaxWindow * windows) {
    LBPtr rcount = recip(count)->contiguous()->expand(x->shape());
    return {mul(mul(is_max, rcount), g->expand(x->shape()))};
  }
  return {mul(mul(is_max, recip(count->expand(x->shape()))), g->expand(x->shape()))};
}

LBPtr ConstProd::forward(Inputs xs) {
  LBPtr r = save(x, xs[0])->fold_reduce(Ops::MUL, axes);
  TG_ASSERT(r, "ConstProd of a tensor that is not an unpadded constant");
  return r;
}
std::vector<LBPtr> ConstProd::backward(const LBPtr& g) {
  int64_t n = 1;
  for (int a : axes) n *= x->shape()[static_cast<size_t>(a)];
  UOpPtr v = UOp::make(Ops::CONST, x->dtype, {}, x->base()->arg);
  UOpPtr others = value_to_const(x->dtype, reduce_repeated(Ops::MUL, x->dtype, const_to_value(*v), n - 1));
  return {mul(g->expand(x->shape()), LazyBuffer::cnst_arg(others->arg, x->dtype, x->device, x->shape()))};
}

LBPtr Expand::forward(Inputs x) { input_shape = x[0]->shape(); return x[0]->expand(shape); }
std::vector<LBPtr> Expand::backward(const LBPtr& g) {
  std::vector<int> axes;
  for (size_t i = 0; i < shape.size(); i++) if (input_shape[i] != shape[i]) axes.push_back(static_cast<int>(i));
  // fp16 gradients are summed in fp32, as tinygrad's sum does
  if (g->dtype == dtypes::float16) return {g->cast(dtypes::float32)->r(Ops::ADD, axes)->cast(g->dtype)};
  return {g->r(Ops::ADD, axes)};
}

LBPtr Reshape::forward(Inputs x) { input_shape = x[0]->shape(); return x[0]->reshape(shape); }
std::vector<LBPtr> Reshape::backward(const LBPtr& g) { return {g->reshape(input_shape)}; }

LBPtr Permute::forward(Inputs x) { return x[0]->permute(order); }
std::vector<LBPtr> Permute::backward(const LBPtr& g) {
  std::vector<int> inverse(order.size());
  for (size_t i = 0; i < order.size(); i++) inverse[order[i]] = static_cast<int>(i);
  return {g->permute(inverse)};
}

LBPtr Pad::forward(Inputs x) { return x[0]->pad(arg); }
std::vector<LBPtr> Pad::backward(const LBPtr& g) {
  std::vector<std::pair<int64_t, int64_t>> bounds;
  for (size_t i = 0; i < arg.size(); i++) bounds.emplace_back(arg[i].first, g->shape()[i] - arg[i].second);
  return {g->shrink(bounds)};
}

LBPtr Shrink::forward(Inputs x) { input_shape = x[0]->shape(); return x[0]->shrink(arg); }
std::vector<LBPtr> Shrink::backward(const LBPtr& g) {
  std::vector<std::pair<int64_t, int64_t>> padding;
  for (size_t i = 0; i < arg.size(); i++) padding.emplace_back(arg[i].first, input_shape[i] - arg[i].second);
  return {g->pad(padding)};
}

LBPtr Flip::forward(Inputs x) { return x[0]->flip(axes); }
std::vector<LBPtr> Flip::backward(const LBPtr& g) { return {g->flip(axes)}; }

}  // namespace F
}  // namespace tg
