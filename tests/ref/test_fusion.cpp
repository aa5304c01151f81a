// Reduce-then-broadcast fusion (engine/schedule.h): a reduce read back over the rows it reduced stays
// in its readers' kernel. Each op's kernel count is asserted, with FUSE=0 for comparison, and its
// values (forward and gradient) are checked against PyTorch with the fusion on.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "engine/schedule.h"
#include "ref.h"

using namespace tgtest;
using tg::Tensor;

namespace {

// Kernels in the schedule of f(x) for a realized x of `shape`.
size_t kernels_of(const std::function<Tensor(const Tensor&)>& f, const tg::Shape& shape, int fuse = 1) {
  tg::Context ctx{{"FUSE", fuse}};
  Tensor x = random_tensor(shape, -2, 2, tg::dtypes::float32, 1).realize();
  size_t n = 0;
  for (auto& si : tg::create_schedule({f(x).lazydata()})) n += si.is_kernel();
  return n;
}

struct RowOp {
  const char* name;
  std::function<Tensor(const Tensor&, int)> tg;
  std::string torch;  // a format with {a} for the axis
  size_t unfused;     // kernels with FUSE=0
};

std::string with_axis(std::string s, int a) {
  for (size_t p; (p = s.find("{a}")) != std::string::npos;) s.replace(p, 3, std::to_string(a));
  return s;
}

const std::vector<RowOp>& row_ops() {
  static const std::vector<RowOp> ops = {
      {"var", [](const Tensor& x, int a) { return x.var({a}); }, "torch.var(x0, {a})", 2},
      {"std", [](const Tensor& x, int a) { return x.std({a}); }, "torch.std(x0, {a})", 2},
      {"softmax", [](const Tensor& x, int a) { return x.softmax(a); }, "torch.softmax(x0, {a})", 3},
      {"log_softmax", [](const Tensor& x, int a) { return x.log_softmax(a); }, "torch.log_softmax(x0, {a})", 3},
      {"logsumexp", [](const Tensor& x, int a) { return x.logsumexp({a}); }, "torch.logsumexp(x0, {a})", 2},
      {"layernorm", [](const Tensor& x, int a) { return x.layernorm({a}); },
       "(x0 - x0.mean({a}, keepdim=True)) / torch.sqrt(x0.var({a}, unbiased=False, keepdim=True) + 1e-5)", 3},
      {"rmsnorm", [](const Tensor& x, int a) { return x * (x.square().mean({a}, true) + 1e-6).rsqrt(); },
       "x0 * torch.rsqrt(x0.square().mean({a}, keepdim=True) + 1e-6)", 2},
  };
  return ops;
}

}  // namespace

TEST(Fusion, RowOpsAreOneKernel) {
  for (const RowOp& op : row_ops())
    for (int a : {1, 0}) {
      auto f = [&](const Tensor& x) { return op.tg(x, a); };
      EXPECT_EQ(kernels_of(f, {64, 512}), 1u) << op.name << " over axis " << a;
      EXPECT_EQ(kernels_of(f, {64, 512}, 0), op.unfused) << op.name << " over axis " << a << " with FUSE=0";
      // the fused kernels' values and gradients (the backward fuses too)
      check_op({{64, 512}}, [&](auto& x) { return op.tg(x[0], a); }, with_axis(op.torch, a), {.grad_atol = 1e-4, .seed = 7});
      check_op({{3, 5, 4}}, [&](auto& x) { return op.tg(x[0], a); }, with_axis(op.torch, a));
    }
}

// The rows of a middle axis, and of two axes at once, are rows too.
TEST(Fusion, MiddleAndSeveralAxes) {
  EXPECT_EQ(kernels_of([](const Tensor& x) { return x.softmax(1); }, {8, 16, 32}), 1u);
  check_op({{8, 16, 32}}, [](auto& x) { return x[0].softmax(1); }, "torch.softmax(x0, 1)");
  auto ln = [](const Tensor& x) { return x.layernorm({0, 2}); };
  EXPECT_EQ(kernels_of(ln, {8, 16, 32}), 1u);
  check_op({{8, 16, 32}}, [&](auto& x) { return ln(x[0]); },
           "(x0 - x0.mean((0, 2), keepdim=True)) / torch.sqrt(x0.var((0, 2), unbiased=False, keepdim=True) + 1e-5)");
}

// Where fusion would cost more than it saves, the reduce is realized as before.
TEST(Fusion, CostRuleAndOtherRows) {
  // a row longer than kMaxFusedRow (32768) would be read from memory by each reduce: the kernels of
  // FUSE=0 (each long reduce in two stages)
  auto softmax = [](const Tensor& x) { return x.softmax(1); };
  EXPECT_EQ(kernels_of(softmax, {2, 40000}), kernels_of(softmax, {2, 40000}, 0));
  check_op({{2, 40000}}, [](auto& x) { return x[0].softmax(1); }, "torch.softmax(x0, 1)");
  // a reduce over other rows than the reduce that reads it back: two kernels
  auto other = [](const Tensor& x) { return (x - x.mean({1}, true)).square().sum({0}); };
  EXPECT_EQ(kernels_of(other, {64, 48}), 2u);
  check_op({{64, 48}}, [&](auto& x) { return other(x[0]); }, "(x0 - x0.mean(1, keepdim=True)).square().sum(0)");
  // a mean over the whole tensor is a split reduce (two stages) whose result is not read back by rows
  auto centre = [](const Tensor& x) { return x - x.mean(); };
  EXPECT_GE(kernels_of(centre, {512, 1024}), 3u);
  check_op({{512, 1024}}, [&](auto& x) { return centre(x[0]); }, "x0 - x0.mean()", {.grad = false});
  // a reduce that is also read elementwise elsewhere is computed once (realized) and read back from memory
  auto both = [](const Tensor& x) { Tensor m = x.max({1}, true); return (x - m).exp().sum({1}) + m.reshape({64}) * (x - m).sum({1}); };
  check_op({{64, 32}}, [&](auto& x) { return both(x[0]); },
           "(x0 - x0.amax(1, keepdim=True)).exp().sum(1) + x0.amax(1) * (x0 - x0.amax(1, keepdim=True)).sum(1)", {.grad = false});
}

// The grouping decides each reduce once, when all of its readers are known: attention's softmax is one
// kernel between the two matmuls, though the matmul that reads it reduces other rows. (The scheduler
// before it fused greedily from each output and restarted after each reduce it could not fuse: the
// softmax's max, met after the first matmul's sum, was realized as well: 4 kernels.)
TEST(Fusion, AttentionSoftmaxIsOneKernelBetweenMatmuls) {
  auto attention = [](const Tensor& q, const Tensor& k, const Tensor& v) {
    return (q.matmul(k.transpose(-1, -2)) / std::sqrt(8.0)).softmax(-1).matmul(v);
  };
  Tensor q = random_tensor({2, 4, 5, 8}, -2, 2, tg::dtypes::float32, 1).realize();
  Tensor k = random_tensor({2, 4, 5, 8}, -2, 2, tg::dtypes::float32, 2).realize();
  Tensor v = random_tensor({2, 4, 5, 3}, -2, 2, tg::dtypes::float32, 3).realize();
  size_t n = 0;
  for (auto& si : tg::create_schedule({attention(q, k, v).lazydata()})) n += si.is_kernel();
  EXPECT_EQ(n, 3u);
  check_op({{2, 4, 5, 8}, {2, 4, 5, 8}, {2, 4, 5, 3}}, [&](auto& x) { return attention(x[0], x[1], x[2]); },
           "torch.softmax(x0 @ x1.transpose(-1, -2) / 8 ** 0.5, -1) @ x2");
}

// ---- multi-output kernels ----------------------------------------------------------------------------

namespace {
size_t kernels_in(const std::vector<Tensor>& outs) {
  std::vector<tg::LBPtr> lbs;
  for (auto& t : outs) lbs.push_back(t.lazydata());
  size_t n = 0;
  for (auto& si : tg::create_schedule(lbs)) n += si.is_kernel();
  return n;
}
}  // namespace

// Elementwise outputs over one loop nest are one kernel with several STOREs: siblings, and a value with
// what is computed from it (read at its own index: its value is used, not loaded). A read at another
// index (a transpose) is a kernel of its own.
TEST(Fusion, MultiOutputKernels) {
  Tensor x = random_tensor({64, 48}, -2, 2, tg::dtypes::float32, 3).realize();
  Tensor a = x * 2, b = x.exp(), c = a + 1;
  EXPECT_EQ(kernels_in({a, b, c}), 1u);
  {
    tg::Context ctx{{"FUSE", 0}};
    EXPECT_EQ(kernels_in({a, b, c}), 3u);
  }
  Tensor d = (x * 2).contiguous().realize();  // what a and c hold, computed alone
  Tensor::corealize({a, b, c});
  EXPECT_EQ(a.tolist<float>(), d.tolist<float>());
  expect_close(to_doubles(c), to_doubles(d + 1), 0, 0, "c = a + 1");
  auto t = torch_eval("torch.exp(x0)", {x});
  expect_close(to_doubles(b), t.outputs[0].data, 1e-6, 1e-6, "b = exp(x)");
  // the transpose reads a at other indices: two kernels, right values
  Tensor p = x * 3;
  Tensor r = p.permute({1, 0}) - 1;
  EXPECT_EQ(kernels_in({p, r}), 2u);
  Tensor::corealize({p, r});
  expect_close(to_doubles(r), to_doubles((x * 3 - 1).permute({1, 0}).contiguous()), 0, 0, "r = p.T - 1");
}

// Reduce kernels over the same rows merge too: mean and var asked for together are one kernel (var's
// read of the mean is the mean's value, read back over the row), and so are softmax and log_softmax.
TEST(Fusion, MultiOutputReduceKernels) {
  Tensor x = random_tensor({64, 512}, -2, 2, tg::dtypes::float32, 6).realize();
  for (int a : {1, 0}) {
    Tensor m = x.mean({a}), v = x.var({a}), s = x.softmax(a), l = x.log_softmax(a);
    EXPECT_EQ(kernels_in({m, v}), 1u) << "mean and var over axis " << a;
    EXPECT_EQ(kernels_in({s, l}), 1u) << "softmax and log_softmax over axis " << a;
    {
      tg::Context ctx{{"FUSE", 0}};
      EXPECT_EQ(kernels_in({m, v}), 3u);
    }
    Tensor::corealize({m, v, s, l});
    std::string ax = std::to_string(a);
    auto t = torch_eval("(x0.mean(" + ax + "), x0.var(" + ax + "), torch.softmax(x0, " + ax + "), torch.log_softmax(x0, " + ax + "))", {x});
    expect_close(to_doubles(m), t.outputs[0].data, 1e-6, 1e-4, "mean");
    expect_close(to_doubles(v), t.outputs[1].data, 1e-6, 1e-4, "var");
    expect_close(to_doubles(s), t.outputs[2].data, 1e-6, 1e-4, "softmax");
    expect_close(to_doubles(l), t.outputs[3].data, 1e-5, 1e-4, "log_softmax");
  }
}

// An Adam step on a Linear(784, 256): the weight's new value and both moments in one kernel, the bias's
// in another, the step counts in a third (tinygrad: 10; ours before multi-output kernels: 14). The
// parameters after three steps are the same bits as with FUSE=0.
TEST(Fusion, AdamStepIsThreeKernels) {
  auto run = [](int fuse, size_t* step_kernels) {
    tg::Context ctx{{"FUSE", fuse}};
    tg::TrainingGuard training;
    Tensor::manual_seed(5);
    tg::nn::Linear l(784, 256);
    tg::nn::optim::Adam opt({l.weight, *l.bias}, 1e-2);
    Tensor x = random_tensor({16, 784}, -1, 1, tg::dtypes::float32, 4);
    for (int i = 0; i < 3; i++) {
      opt.zero_grad();
      l(x).square().mean().backward();
      l.weight.grad().realize();
      l.bias->grad().realize();
      std::vector<Tensor> state = opt.schedule_step();  // what step() realizes
      if (i == 2) *step_kernels = kernels_in(state);
      Tensor::corealize(state);
    }
    std::vector<float> w = l.weight.tolist<float>(), b = l.bias->tolist<float>();
    w.insert(w.end(), b.begin(), b.end());
    return w;
  };
  size_t fused = 0, unfused = 0;
  std::vector<float> pf = run(1, &fused), pu = run(0, &unfused);
  EXPECT_LE(fused, 3u);
  EXPECT_EQ(unfused, 14u);
  EXPECT_EQ(pf, pu);
}

// argmax/argmin in one kernel: the max, then the first index that reaches it (the ramp of indices is
// computed from the kernel's index, an ARANGE leaf, not a kernel of its own). Ties and NaN as torch.
TEST(Fusion, ArgmaxIsOneKernel) {
  for (int a : {1, 0}) {
    EXPECT_EQ(kernels_of([&](const Tensor& x) { return x.argmax(a); }, {64, 512}), 1u) << "argmax over axis " << a;
    EXPECT_EQ(kernels_of([&](const Tensor& x) { return x.argmin(a); }, {64, 512}), 1u) << "argmin over axis " << a;
    check_op({{64, 512}}, [&](auto& x) { return x[0].argmax(a); }, "x0.argmax(" + std::to_string(a) + ")", {.grad = false});
    // integer inputs in a small range: many ties, the first index wins
    check_op({{64, 33}}, [&](auto& x) { return x[0].argmin(a); }, "x0.argmin(" + std::to_string(a) + ")",
             {.low = -3, .high = 3, .dtype = tg::dtypes::int32, .grad = false});
  }
  Tensor x = Tensor(std::vector<float>{1, NAN, 3, 3, 2, NAN, 5, 5}, {2, 4});
  EXPECT_EQ(x.argmax(1).tolist<int32_t>(), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(Tensor(std::vector<float>{1, 7, 7, 2}, {4}).argmax().item<int32_t>(), 1);
  // arange itself is one kernel, whatever its length (it was a window sum of ones before)
  EXPECT_EQ(kernels_in({Tensor::arange(0, 1000, 3)}), 1u);
  EXPECT_EQ(Tensor::arange(5, 105, 5).tolist<int32_t>()[19], 100);
}
