// The reference harness for op tests: every op is compared with PyTorch (Debian's python3-torch,
// driven through tests/ref/torch_ref.py in one long-lived /usr/bin/python3 process), forward values
// and gradients, on random inputs. Tolerances default to tinygrad's test_ops: forward atol 1e-6
// rtol 1e-3, gradients atol 1e-4 rtol 1e-3.
//
//   check_op({{3, 4}, {4}}, [](auto& x) { return x[0] + x[1]; }, "x0 + x1");
//   check_op({{3, 4}}, [](auto& x) { return x[0].log(); }, "torch.log(x0)", {.low = 0.1, .high = 3});
//
// fd_check() is the independent check of a backward: central finite differences in float64.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <tg/tg.h>

namespace tgtest {

using tg::Shape;
using tg::Tensor;

struct RefTensor {
  Shape shape;
  std::string dtype;
  std::vector<double> data;  // NaN and +-inf survive the trip
};
struct RefReply {
  std::vector<RefTensor> outputs;
  std::vector<std::optional<std::vector<double>>> grads;  // one per input; nullopt when it had none
};

// Evaluates the PyTorch expression `expr` (inputs named x0, x1, ...; torch, F, np and math in scope).
// Inputs with requires_grad set in `requires_grad` get gradients of outputs[0] against `grad_out`
// (ones when absent). Throws std::runtime_error carrying Python's message when the expression fails.
RefReply torch_eval(const std::string& expr, const std::vector<Tensor>& inputs, const std::vector<bool>& requires_grad = {},
                    const std::optional<Tensor>& grad_out = std::nullopt);

struct CheckOpts {
  double atol = 1e-6, rtol = 1e-3;            // forward
  double grad_atol = 1e-4, grad_rtol = 1e-3;  // gradients
  double low = -2, high = 2;                  // inputs are uniform in [low, high)
  tg::DType dtype = tg::dtypes::float32;      // of every input (ints are rounded to whole numbers)
  std::vector<tg::DType> dtypes;              // per input, overrides `dtype` when given
  bool grad = true;                           // compare gradients (float inputs only)
  uint32_t seed = 0;
};
using TgFn = std::function<Tensor(std::vector<Tensor>&)>;
using TgMultiFn = std::function<std::vector<Tensor>(std::vector<Tensor>&)>;

// Runs fn in tg and expr in torch on the same random inputs of the given shapes and expects equal
// outputs and (for the first output) equal gradients. Records gtest failures naming the op.
void check_op(const std::vector<Shape>& shapes, const TgFn& fn, const std::string& expr, const CheckOpts& opts = {});
void check_op_multi(const std::vector<Shape>& shapes, const TgMultiFn& fn, const std::string& expr, const CheckOpts& opts = {});
// The same, on inputs given by the caller (e.g. integer labels).
void check_op_inputs(std::vector<Tensor> inputs, const TgMultiFn& fn, const std::string& expr, const CheckOpts& opts = {});

// Compares fn's autograd gradient (of sum(fn(x) * random weights)) with central finite differences, in
// float64 on inputs uniform in [low, high). `eps` is the step.
void fd_check(const std::vector<Shape>& shapes, const TgFn& fn, double low = -2, double high = 2, double eps = 1e-6,
              double tol = 1e-6);

// Element-wise |a - b| <= atol + rtol * |b|, NaN matching NaN. Records a gtest failure naming `what`.
void expect_close(const std::vector<double>& got, const std::vector<double>& want, double atol, double rtol,
                  const std::string& what);
std::vector<double> to_doubles(const Tensor& t);
Tensor random_tensor(const Shape& shape, double low, double high, tg::DType dtype, uint32_t seed);

}  // namespace tgtest
