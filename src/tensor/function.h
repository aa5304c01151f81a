// Autograd Functions (tinygrad's function.py): the primitives every Tensor op is composed of.
//
// A Function runs forward on LazyBuffers and, when an input requires grad, is kept as the result's
// context so backward() can later map the output's gradient to one gradient per input. Each primitive
// saves only what its backward needs. Ops that have no gradient (comparisons, bitwise) are not
// differentiable(): their results do not require grad, as in torch.
#pragma once
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "lazy/lazybuffer.h"
#include "tg/tensor.h"

namespace tg {

class Function;

// An op's input, by reference: a Function reads its inputs only while it runs (a temporary argument
// lives until the end of the caller's full expression), so no Tensor or LazyBuffer handle is copied.
// Copying a shared_ptr costs an atomic increment and decrement once the process has a second thread
// (the CPU device's pool): in an eager op that was a quarter of the time spent building the graph.
class TensorRef {
 public:
  TensorRef(const Tensor& t) : t_(&t) {}  // implicit: apply<F>({x, y}) as with values
  const Tensor* operator->() const { return t_; }

 private:
  const Tensor* t_;
};

// What forward reads: its inputs' LazyBuffers, x[i], by reference.
class Inputs {
 public:
  explicit Inputs(std::span<const TensorRef> xs) : xs_(xs) {}
  const LBPtr& operator[](size_t i) const { return xs_[i]->lazydata(); }
  size_t size() const { return xs_.size(); }

 private:
  std::span<const TensorRef> xs_;
};

// What a Tensor handle points at.
struct TensorImpl {
  LBPtr lazydata;
  std::optional<bool> requires_grad;
  std::shared_ptr<TensorImpl> grad;
  std::shared_ptr<Function> ctx;  // the Function that made this tensor, while a backward may need it
  ~TensorImpl();  // iterative, like the LazyBuffer graph: ctx -> parents -> ctx ... may be very deep
};

class Function {
 public:
  virtual ~Function();
  // One gradient per input; nullptr for inputs that need none (or that have no gradient at all).
  virtual std::vector<LBPtr> backward(const LBPtr& grad_output) = 0;

  // Runs F(args...) forward on xs and links the result into the graph when a gradient is needed. A
  // Function that nothing will keep (no input requires grad, or no_grad) lives on the stack: eager
  // inference builds its graph without one heap Function per op.
  template <class F, class... A>
  static Tensor apply(std::initializer_list<TensorRef> inputs, A&&... args) {
    std::span<const TensorRef> xs(inputs.begin(), inputs.size());
    if (!records(xs)) {
      F fn(std::forward<A>(args)...);
      return fn.run(nullptr, xs);
    }
    auto fn = std::make_shared<F>(std::forward<A>(args)...);
    return fn->run(fn, xs);
  }

  std::vector<bool> needs_input_grad;
  std::vector<std::shared_ptr<TensorImpl>> parents;

 protected:
  // A Function without a gradient (comparisons, bitwise and integer ops) gives a result that does not
  // require grad, as torch's: a gradient cannot flow through it, and backward() from it is an error.
  virtual bool differentiable() const { return true; }
  virtual LBPtr forward(Inputs x) = 0;
  // What forward keeps for backward: v, saved in `slot` only when this Function becomes the result's
  // ctx (one on the stack would copy a handle for nothing). `return save(ret, ...)`, `save(x, xs[0])->...`
  const LBPtr& save(LBPtr& slot, const LBPtr& v) {
    if (recorded_) slot = v;
    return v;
  }
  LBPtr save(LBPtr& slot, LBPtr&& v) {
    if (recorded_) slot = v;
    return std::move(v);
  }

 private:
  // Whether the result of an op on xs may keep its Function as ctx (an input requires grad, not no_grad).
  static bool records(std::span<const TensorRef> xs);
  // self: this Function's owner, kept as the result's ctx; nullptr when !records(xs).
  Tensor run(std::shared_ptr<Function> self, std::span<const TensorRef> xs);
  bool recorded_ = false;  // set by run before forward
};

namespace F {

// ---- unary ----
struct Contiguous : Function { LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct ContiguousBackward : Function { LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Cast : Function {
  Cast(DType d, bool bitcast) : dtype(d), bitcast(bitcast) {}
  DType dtype, input_dtype;
  bool bitcast;
  LBPtr forward(Inputs x) override;
  std::vector<LBPtr> backward(const LBPtr& g) override;
};
struct Neg : Function { LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Reciprocal : Function { LBPtr ret; LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
// sin, cos and tan are primitives each (cos is not sin(pi/2 - x): that subtraction rounds away the
// argument's low bits, an absolute error of ulp(x)/2 that grows with x)
struct Sin : Function { LBPtr x; LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Cos : Function { LBPtr x; LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Tan : Function { LBPtr ret; LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Relu : Function { LBPtr ret; LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Log : Function { LBPtr x; LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Exp : Function { LBPtr ret; LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Sqrt : Function { LBPtr ret; LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Sigmoid : Function { LBPtr ret; LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Sign : Function { LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };

// ---- binary and ternary ----
// Comparisons and integer/bitwise ops: forward only, no gradient.
template <Ops op>
struct NoGradBinary : Function {
  bool differentiable() const override { return false; }
  LBPtr forward(Inputs x) override { return x[0]->e(op, {x[1]}); }
  std::vector<LBPtr> backward(const LBPtr&) override { return {nullptr, nullptr}; }
};
using Less = NoGradBinary<Ops::CMPLT>;
using Xor = NoGradBinary<Ops::XOR>;
using BitwiseAnd = NoGradBinary<Ops::AND>;
using BitwiseOr = NoGradBinary<Ops::OR>;
using IDiv = NoGradBinary<Ops::IDIV>;
using Shl = NoGradBinary<Ops::SHL>;
using Shr = NoGradBinary<Ops::SHR>;
struct Eq : Function { bool differentiable() const override { return false; } LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Add : Function { LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Sub : Function { LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Mul : Function { LBPtr x, y; LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Div : Function { LBPtr y, ret; LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };
struct Where : Function { LBPtr cond; LBPtr forward(Inputs x) override; std::vector<LBPtr> backward(const LBPtr& g) override; };

// ---- reduce ----
struct Sum : Function {
  explicit Sum(std::vector<int> axes) : axes(std::move(axes)) {}
  std::vector<int> axes;
  Shape input_shape;
  LBPtr forward(Inputs x) override;
  std::vector<LBPtr> backward(const LBPtr& g) override;
};
struct Max : Function {
  explicit Max(std::vector<int> axes) : axes(std::move(axes)) {}
  std::vector<int> axes;
  LBPtr x, ret;
  LBPtr forward(Inputs x) override;
  std::vector<LBPtr> backward(const LBPtr& g) override;
};
// The product along axes of an unpadded constant v (the engine has no product reduce; prod() multiplies
// pairwise otherwise): v^n folded, and each element's gradient is the product of the other n-1.
struct ConstProd : Function {
  explicit ConstProd(std::vector<int> axes) : axes(std::move(axes)) {}
  std::vector<int> axes;
  LBPtr x;
  LBPtr forward(Inputs x) override;
  std::vector<LBPtr> backward(const LBPtr& g) override;
};

// ---- movement ----
struct Expand : Function {
  explicit Expand(Shape shape) : shape(std::move(shape)) {}
  Shape shape, input_shape;
  LBPtr forward(Inputs x) override;
  std::vector<LBPtr> backward(const LBPtr& g) override;
};
struct Reshape : Function {
  explicit Reshape(Shape shape) : shape(std::move(shape)) {}
  Shape shape, input_shape;
  LBPtr forward(Inputs x) override;
  std::vector<LBPtr> backward(const LBPtr& g) override;
};
struct Permute : Function {
  explicit Permute(std::vector<int> order) : order(std::move(order)) {}
  std::vector<int> order;
  LBPtr forward(Inputs x) override;
  std::vector<LBPtr> backward(const LBPtr& g) override;
};
struct Pad : Function {
  explicit Pad(std::vector<std::pair<int64_t, int64_t>> arg) : arg(std::move(arg)) {}
  std::vector<std::pair<int64_t, int64_t>> arg;
  LBPtr forward(Inputs x) override;
  std::vector<LBPtr> backward(const LBPtr& g) override;
};
struct Shrink : Function {
  explicit Shrink(std::vector<std::pair<int64_t, int64_t>> arg) : arg(std::move(arg)) {}
  std::vector<std::pair<int64_t, int64_t>> arg;
  Shape input_shape;
  LBPtr forward(Inputs x) override;
  std::vector<LBPtr> backward(const LBPtr& g) override;
};
struct Flip : Function {
  explicit Flip(std::vector<bool> axes) : axes(std::move(axes)) {}
  std::vector<bool> axes;
  LBPtr forward(Inputs x) override;
  std::vector<LBPtr> backward(const LBPtr& g) override;
};

}  // namespace F
}  // namespace tg
