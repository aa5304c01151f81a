#include "tensor/function.h"

#include <array>
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

bool Function::records(std::span<const Tensor> xs) {
  if (Tensor::no_grad) return false;
  for (const Tensor& x : xs)
    if (x.requires_grad().value_or(false)) return true;
  return false;
}

Tensor Function::run(std::shared_ptr<Function> self, std::span<const Tensor> xs) {
  // the inputs' LazyBuffers: on the stack for the usual one to three inputs
  constexpr size_t kInline = 4;
  std::array<LBPtr, kInline> inline_lbs;
  std::vector<LBPtr> heap_lbs(xs.size() > kInline ? xs.size() : 0);
  std::span<LBPtr> lbs = xs.size() > kInline ? std::span<LBPtr>(heap_lbs) : std::span<LBPtr>(inline_lbs).first(xs.size());
  bool any = false, all_known = true;
  for (size_t i = 0; i < xs.size(); i++) {
    const Tensor& x = xs[i];
    lbs[i] = x.lazydata();
    std::optional<bool> r = x.requires_grad();
    any |= r.value_or(false);
    all_known &= r.has_value();
  }
  if (!differentiable()) any = false, all_known = true;
  if (any && !Tensor::no_grad) {
    TG_ASSERT(self, "Function::run: a recorded op without its owner");
    for (const Tensor& x : xs) needs_input_grad.push_back(x.requires_grad().value_or(false));
  }
  // under no_grad nothing is recorded, and (as in torch) the result does not require grad
  std::optional<bool> requires_grad = Tensor::no_grad ? std::optional<bool>(false)
                                      : any           ? std::optional<bool>(true)
                                      : all_known     ? std::optional<bool>(false)
                                                      : std::nullopt;
  Tensor out(forward(lbs), requires_grad);
  if (any && !Tensor::no_grad) {
    for (const Tensor& x : xs) parents.push_back(x.impl_);
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
}  // namespace

LBPtr Contiguous::forward(std::span<const LBPtr> x) { return x[0]->contiguous(); }
std::vector<LBPtr> Contiguous::backward(const LBPtr& g) { return {g}; }

LBPtr ContiguousBackward::forward(std::span<const LBPtr> x) { return x[0]; }
std::vector<LBPtr> ContiguousBackward::backward(const LBPtr& g) { return {g->contiguous()}; }

LBPtr Cast::forward(std::span<const LBPtr> x) {
  input_dtype = x[0]->dtype;
  return x[0]->cast(dtype, bitcast);
}
std::vector<LBPtr> Cast::backward(const LBPtr& g) { return {g->cast(input_dtype, bitcast)}; }

LBPtr Neg::forward(std::span<const LBPtr> x) { return neg(x[0]); }
std::vector<LBPtr> Neg::backward(const LBPtr& g) { return {neg(g)}; }

LBPtr Reciprocal::forward(std::span<const LBPtr> x) { return ret = recip(x[0]); }
std::vector<LBPtr> Reciprocal::backward(const LBPtr& g) { return {mul(neg(g), mul(ret, ret))}; }

LBPtr Sin::forward(std::span<const LBPtr> xs) { x = xs[0]; return x->e(Ops::SIN); }
std::vector<LBPtr> Sin::backward(const LBPtr& g) { return {mul(x->e(Ops::COS), g)}; }
LBPtr Cos::forward(std::span<const LBPtr> xs) { x = xs[0]; return x->e(Ops::COS); }
std::vector<LBPtr> Cos::backward(const LBPtr& g) { return {mul(neg(x->e(Ops::SIN)), g)}; }
LBPtr Tan::forward(std::span<const LBPtr> xs) { return ret = xs[0]->e(Ops::TAN); }
std::vector<LBPtr> Tan::backward(const LBPtr& g) { return {mul(add(c(ret, 1), mul(ret, ret)), g)}; }  // 1 + tan^2

LBPtr Relu::forward(std::span<const LBPtr> x) { return ret = x[0]->e(Ops::MAX, {c(x[0], 0)}); }
std::vector<LBPtr> Relu::backward(const LBPtr& g) { return {mul(c(ret, 0)->e(Ops::CMPLT, {ret})->cast(g->dtype), g)}; }

LBPtr Log::forward(std::span<const LBPtr> xs) { x = xs[0]; return mul(x->e(Ops::LOG2), c(x, kLn2)); }
std::vector<LBPtr> Log::backward(const LBPtr& g) { return {mul(g, recip(x))}; }

LBPtr Exp::forward(std::span<const LBPtr> x) { return ret = mul(x[0], c(x[0], 1 / kLn2))->e(Ops::EXP2); }
std::vector<LBPtr> Exp::backward(const LBPtr& g) { return {mul(ret, g)}; }

LBPtr Sqrt::forward(std::span<const LBPtr> x) { return ret = x[0]->e(Ops::SQRT); }
std::vector<LBPtr> Sqrt::backward(const LBPtr& g) { return {mul(g, recip(mul(ret, c(ret, 2))))}; }

LBPtr Sigmoid::forward(std::span<const LBPtr> x) {
  return ret = recip(add(c(x[0], 1), mul(x[0], c(x[0], -1 / kLn2))->e(Ops::EXP2)));
}
std::vector<LBPtr> Sigmoid::backward(const LBPtr& g) { return {mul(mul(ret, add(c(ret, 1), neg(ret))), g)}; }

LBPtr Sign::forward(std::span<const LBPtr> xs) {
  const LBPtr& x = xs[0];
  LBPtr nonzero = x->e(Ops::CMPNE, {c(x, 0)}), negative = x->e(Ops::CMPLT, {c(x, 0)});
  LBPtr pm1 = negative->e(Ops::WHERE, {c(x, -1), c(x, 1)});
  LBPtr s = nonzero->e(Ops::WHERE, {pm1, c(x, 0)});
  if (!x->dtype.is_float()) return s;
  return x->e(Ops::CMPNE, {x})->e(Ops::WHERE, {x, s});  // NaN stays NaN (NumPy, tinygrad)
}
std::vector<LBPtr> Sign::backward(const LBPtr& g) { return {c(g, 0)}; }

LBPtr Eq::forward(std::span<const LBPtr> x) {
  LBPtr ne = x[0]->e(Ops::CMPNE, {x[1]});
  return ne->e(Ops::CMPNE, {c(ne, 1)});
}
std::vector<LBPtr> Eq::backward(const LBPtr&) { return {nullptr, nullptr}; }

LBPtr Add::forward(std::span<const LBPtr> x) { return add(x[0], x[1]); }
std::vector<LBPtr> Add::backward(const LBPtr& g) {
  return {needs_input_grad[0] ? g : nullptr, needs_input_grad[1] ? g : nullptr};
}

LBPtr Sub::forward(std::span<const LBPtr> x) { return add(x[0], neg(x[1])); }
std::vector<LBPtr> Sub::backward(const LBPtr& g) {
  return {needs_input_grad[0] ? g : nullptr, needs_input_grad[1] ? neg(g) : nullptr};
}

LBPtr Mul::forward(std::span<const LBPtr> xs) { x = xs[0]; y = xs[1]; return mul(x, y); }
std::vector<LBPtr> Mul::backward(const LBPtr& g) {
  return {needs_input_grad[0] ? mul(y, g) : nullptr, needs_input_grad[1] ? mul(x, g) : nullptr};
}

LBPtr Div::forward(std::span<const LBPtr> xs) { x = xs[0]; y = xs[1]; return mul(x, recip(y)); }
std::vector<LBPtr> Div::backward(const LBPtr& g) {
  return {needs_input_grad[0] ? mul(g, recip(y)) : nullptr,
          needs_input_grad[1] ? mul(neg(mul(g, x)), recip(mul(y, y))) : nullptr};
}

LBPtr Where::forward(std::span<const LBPtr> x) { cond = x[0]; return cond->e(Ops::WHERE, {x[1], x[2]}); }
std::vector<LBPtr> Where::backward(const LBPtr& g) {
  LBPtr zero = c(g, 0);
  return {nullptr, needs_input_grad[1] ? cond->e(Ops::WHERE, {g, zero}) : nullptr,
          needs_input_grad[2] ? cond->e(Ops::WHERE, {zero, g}) : nullptr};
}

LBPtr Sum::forward(std::span<const LBPtr> x) { input_shape = x[0]->shape(); return x[0]->r(Ops::ADD, axes); }
std::vector<LBPtr> Sum::backward(const LBPtr& g) { return {g->expand(input_shape)}; }

LBPtr Max::forward(std::span<const LBPtr> xs) { x = xs[0]; return ret = x->r(Ops::MAX, axes); }
std::vector<LBPtr> Max::backward(const LBPtr& g) {
  // the gradient is shared equally between the entries that hold the maximum
  LBPtr ne = x->e(Ops::CMPNE, {ret->expand(x->shape())});
  LBPtr is_max = ne->e(Ops::CMPNE, {c(ne, 1)})->cast(g->dtype);
  LBPtr count = is_max->r(Ops::ADD, axes)->expand(x->shape());
  return {mul(mul(is_max, recip(count)), g->expand(x->shape()))};
}

LBPtr ConstProd::forward(std::span<const LBPtr> xs) {
  x = xs[0];
  LBPtr r = x->fold_reduce(Ops::MUL, axes);
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

LBPtr Expand::forward(std::span<const LBPtr> x) { input_shape = x[0]->shape(); return x[0]->expand(shape); }
std::vector<LBPtr> Expand::backward(const LBPtr& g) {
  std::vector<int> axes;
  for (size_t i = 0; i < shape.size(); i++) if (input_shape[i] != shape[i]) axes.push_back(static_cast<int>(i));
  // fp16 gradients are summed in fp32, as tinygrad's sum does
  if (g->dtype == dtypes::float16) return {g->cast(dtypes::float32)->r(Ops::ADD, axes)->cast(g->dtype)};
  return {g->r(Ops::ADD, axes)};
}

LBPtr Reshape::forward(std::span<const LBPtr> x) { input_shape = x[0]->shape(); return x[0]->reshape(shape); }
std::vector<LBPtr> Reshape::backward(const LBPtr& g) { return {g->reshape(input_shape)}; }

LBPtr Permute::forward(std::span<const LBPtr> x) { return x[0]->permute(order); }
std::vector<LBPtr> Permute::backward(const LBPtr& g) {
  std::vector<int> inverse(order.size());
  for (size_t i = 0; i < order.size(); i++) inverse[order[i]] = static_cast<int>(i);
  return {g->permute(inverse)};
}

LBPtr Pad::forward(std::span<const LBPtr> x) { return x[0]->pad(arg); }
std::vector<LBPtr> Pad::backward(const LBPtr& g) {
  std::vector<std::pair<int64_t, int64_t>> bounds;
  for (size_t i = 0; i < arg.size(); i++) bounds.emplace_back(arg[i].first, g->shape()[i] - arg[i].second);
  return {g->shrink(bounds)};
}

LBPtr Shrink::forward(std::span<const LBPtr> x) { input_shape = x[0]->shape(); return x[0]->shrink(arg); }
std::vector<LBPtr> Shrink::backward(const LBPtr& g) {
  std::vector<std::pair<int64_t, int64_t>> padding;
  for (size_t i = 0; i < arg.size(); i++) padding.emplace_back(arg[i].first, input_shape[i] - arg[i].second);
  return {g->pad(padding)};
}

LBPtr Flip::forward(std::span<const LBPtr> x) { return x[0]->flip(axes); }
std::vector<LBPtr> Flip::backward(const LBPtr& g) { return {g->flip(axes)}; }

}  // namespace F
}  // namespace tg
