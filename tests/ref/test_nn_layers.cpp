// nn layers against the torch.nn modules with the same weights (torch.nn.utils.stateless.functional_call):
// forward, input gradient and weight gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "lazy/lazybuffer.h"

#include "ref.h"

using namespace tgtest;
using tg::Tensor;
namespace nn = tg::nn;

namespace {

// Makes the layer's tensor the test input: the same data and the same handle, so the harness reads
// the layer's gradient as the input's.
void bind_param(const Tensor& param, Tensor& input) {
  Tensor p = param;
  p.assign(input.detach());
  p.requires_grad_();
  input = p;
}
void bind_param(const std::optional<Tensor>& param, Tensor& input) { bind_param(*param, input); }

// torch: `module` called on `arg` with the given parameters (x1, x2, ...).
std::string torch_module(const std::string& module, const std::vector<std::string>& names, const std::string& arg = "x0") {
  std::string params = "{";
  for (size_t i = 0; i < names.size(); i++) params += "'" + names[i] + "': x" + std::to_string(i + 1) + ", ";
  return "torch.nn.utils.stateless.functional_call(" + module + ", " + params + "}, (" + arg + ",))";
}
const std::vector<std::string> kWB = {"weight", "bias"};

}  // namespace

TEST(NNLayers, Linear) {
  for (Shape xs : {Shape{2, 4}, Shape{2, 5, 4}}) {
    check_op({xs, {3, 4}, {3}}, [](auto& x) {
      nn::Linear l(4, 3);
      bind_param(l.weight, x[1]);
      bind_param(l.bias, x[2]);
      return l(x[0]);
    }, torch_module("torch.nn.Linear(4, 3)", kWB));
  }
  check_op({{2, 4}, {3, 4}}, [](auto& x) {
    nn::Linear l(4, 3, false);
    EXPECT_FALSE(l.bias);
    bind_param(l.weight, x[1]);
    return l(x[0]);
  }, torch_module("torch.nn.Linear(4, 3, bias=False)", {"weight"}));
  EXPECT_THROW(nn::Linear(4, 3)(Tensor::ones({2, 5})), tg::Error);
}

TEST(NNLayers, Init) {
  nn::Linear l(16, 8);
  for (double v : to_doubles(l.weight)) EXPECT_LE(std::abs(v), 0.25);  // 1/sqrt(16)
  nn::Conv2d c(2, 4, 3);
  EXPECT_EQ(c.weight.shape(), (Shape{4, 2, 3, 3}));
  for (double v : to_doubles(c.weight)) EXPECT_LE(std::abs(v), 1 / std::sqrt(18.0));
  nn::ConvTranspose2d ct(2, 6, 3, 1, 0, 0, 1, 2);
  EXPECT_EQ(ct.weight.shape(), (Shape{2, 3, 3, 3}));
  nn::Embedding e(10, 6);
  for (double v : to_doubles(e.weight)) EXPECT_LE(std::abs(v), std::sqrt(6.0 / 16));
  EXPECT_THROW(nn::Conv2d(3, 4, 3, 1, 0, 1, 2), tg::Error);  // 3 channels in 2 groups
  EXPECT_THROW(nn::GroupNorm(4, 6), tg::Error);
}

TEST(NNLayers, Conv) {
  check_op({{2, 2, 7}, {4, 2, 3}, {4}}, [](auto& x) {
    nn::Conv1d c(2, 4, 3, 1, 1);
    bind_param(c.weight, x[1]);
    bind_param(c.bias, x[2]);
    return c(x[0]);
  }, torch_module("torch.nn.Conv1d(2, 4, 3, padding=1)", kWB));
  check_op({{2, 3, 7, 7}, {4, 3, 3, 3}, {4}}, [](auto& x) {
    nn::Conv2d c(3, 4, 3, 2, 1);
    bind_param(c.weight, x[1]);
    bind_param(c.bias, x[2]);
    return c(x[0]);
  }, torch_module("torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)", kWB));
  check_op({{1, 4, 6, 6}, {6, 2, 2, 3}}, [](auto& x) {
    nn::Conv2d c(4, 6, {2, 3}, {1}, {0}, {2}, 2, false);
    bind_param(c.weight, x[1]);
    return c(x[0]);
  }, torch_module("torch.nn.Conv2d(4, 6, (2, 3), dilation=2, groups=2, bias=False)", {"weight"}));
  check_op({{2, 3, 4, 4}, {3, 2, 3, 3}, {2}}, [](auto& x) {
    nn::ConvTranspose2d c(3, 2, 3, 2, 1, 1);
    bind_param(c.weight, x[1]);
    bind_param(c.bias, x[2]);
    return c(x[0]);
  }, torch_module("torch.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1)", kWB));
}

// Training: batch statistics, and running_mean / running_var / num_batches_tracked after two batches.
TEST(NNLayers, BatchNormTrain) {
  check_op_multi({{4, 3, 5, 5}, {3}, {3}}, [](auto& x) {
    nn::BatchNorm2d bn(3);
    bind_param(bn.weight, x[1]);
    bind_param(bn.bias, x[2]);
    tg::TrainingGuard tr;
    Tensor out = bn(x[0]);
    bn(x[0] * 0.5 + 1);
    return std::vector<Tensor>{out, *bn.running_mean, *bn.running_var, bn.num_batches_tracked->cast(tg::dtypes::float32)};
  }, "(lambda m: (" + torch_module("m", kWB) + ", " + torch_module("m", kWB, "x0 * 0.5 + 1") +
         ")[0:1] + (m.running_mean, m.running_var, m.num_batches_tracked.float()))(torch.nn.BatchNorm2d(3).train())");
  // 1-D features (N, C) and no running statistics: always the batch's
  check_op({{6, 4}, {4}, {4}}, [](auto& x) {
    nn::BatchNorm bn(4, 1e-3, true, false);
    EXPECT_FALSE(bn.running_mean);
    bind_param(bn.weight, x[1]);
    bind_param(bn.bias, x[2]);
    return bn(x[0]);
  }, torch_module("torch.nn.BatchNorm1d(4, eps=1e-3, track_running_stats=False).eval()", kWB));
}

// Without an optimizer realizing them, the running statistics' lazy graph is cut every call: after four
// training calls it is as small as after two.
TEST(NNLayers, BatchNormRunningStatsDoNotChain) {
  auto graph_size = [](int calls) {
    nn::BatchNorm2d bn(3);
    tg::TrainingGuard tr;
    for (int i = 0; i < calls; i++) bn(Tensor::full({2, 3, 4, 4}, static_cast<double>(i))).realize();
    std::set<const tg::LazyBuffer*> seen;
    std::vector<const tg::LazyBuffer*> stack{bn.running_mean->lazydata().get()};
    while (!stack.empty()) {
      const tg::LazyBuffer* lb = stack.back();
      stack.pop_back();
      if (!seen.insert(lb).second) continue;
      if (lb->is_view()) stack.push_back(lb->base());
      for (const auto& s : lb->srcs) stack.push_back(s.get());
    }
    return seen.size();
  };
  EXPECT_EQ(graph_size(4), graph_size(2));
}

TEST(NNLayers, BatchNormEval) {
  std::vector<Tensor> in = {random_tensor({2, 3, 4, 4}, -2, 2, tg::dtypes::float32, 1), random_tensor({3}, -2, 2, tg::dtypes::float32, 2),
                            random_tensor({3}, -2, 2, tg::dtypes::float32, 3), random_tensor({3}, -1, 1, tg::dtypes::float32, 4),
                            random_tensor({3}, 0.5, 2, tg::dtypes::float32, 5)};
  check_op_inputs(in, [](auto& x) {
    nn::BatchNorm2d bn(3);
    bind_param(bn.weight, x[1]);
    bind_param(bn.bias, x[2]);
    Tensor(*bn.running_mean).assign(x[3].detach());
    Tensor(*bn.running_var).assign(x[4].detach());
    tg::TrainingGuard eval(false);
    return std::vector<Tensor>{bn(x[0])};
  }, "torch.nn.utils.stateless.functional_call(torch.nn.BatchNorm2d(3).eval(), {'weight': x1, 'bias': x2, "
     "'running_mean': x3.detach(), 'running_var': x4.detach()}, (x0,))");
  EXPECT_THROW(nn::BatchNorm(3)(Tensor::ones({2, 4, 2})), tg::Error);
}

TEST(NNLayers, LayerNorms) {
  check_op({{2, 3, 5}, {5}, {5}}, [](auto& x) {
    nn::LayerNorm ln(5);
    bind_param(ln.weight, x[1]);
    bind_param(ln.bias, x[2]);
    return ln(x[0]);
  }, torch_module("torch.nn.LayerNorm(5)", kWB));
  check_op({{2, 4, 5}, {4, 5}, {4, 5}}, [](auto& x) {
    nn::LayerNorm ln({4, 5}, 1e-3);
    bind_param(ln.weight, x[1]);
    bind_param(ln.bias, x[2]);
    return ln(x[0]);
  }, torch_module("torch.nn.LayerNorm((4, 5), eps=1e-3)", kWB));
  check_op({{3, 6}}, [](auto& x) { return nn::LayerNorm(6, 1e-5, false)(x[0]); }, "F.layer_norm(x0, (6,))");
  check_op({{2, 3, 4, 4}, {3}, {3}}, [](auto& x) {
    nn::LayerNorm2d ln(3);
    bind_param(ln.weight, x[1]);
    bind_param(ln.bias, x[2]);
    return ln(x[0]);
  }, "F.layer_norm(x0.permute(0, 2, 3, 1), (3,), x1, x2).permute(0, 3, 1, 2)");
  EXPECT_THROW(nn::LayerNorm(5)(Tensor::ones({2, 4})), tg::Error);
}

TEST(NNLayers, GroupInstanceRMSNorm) {
  check_op({{2, 6, 3, 3}, {6}, {6}}, [](auto& x) {
    nn::GroupNorm gn(2, 6);
    bind_param(gn.weight, x[1]);
    bind_param(gn.bias, x[2]);
    return gn(x[0]);
  }, torch_module("torch.nn.GroupNorm(2, 6)", kWB));
  check_op({{2, 3, 4, 4}, {3}, {3}}, [](auto& x) {
    nn::InstanceNorm in(3);
    bind_param(in.weight, x[1]);
    bind_param(in.bias, x[2]);
    return in(x[0]);
  }, torch_module("torch.nn.InstanceNorm2d(3, affine=True)", kWB));
  check_op({{2, 3, 5}, {5}}, [](auto& x) {
    nn::RMSNorm n(5);
    bind_param(n.weight, x[1]);
    return n(x[0]);
  }, "x0 * torch.rsqrt(x0.pow(2).mean(-1, keepdim=True) + 1e-6) * x1");
  EXPECT_THROW(nn::GroupNorm(2, 6)(Tensor::ones({2, 4, 3})), tg::Error);
}

TEST(NNLayers, Embedding) {
  std::vector<Tensor> in = {random_tensor({2, 3}, 0, 10, tg::dtypes::int32, 1), random_tensor({10, 4}, -1, 1, tg::dtypes::float32, 2)};
  check_op_inputs(in, [](auto& x) {
    nn::Embedding e(10, 4);
    bind_param(e.weight, x[1]);
    return std::vector<Tensor>{e(x[0])};
  }, "F.embedding(x0.long(), x1)");
  nn::Embedding e(10, 4);
  EXPECT_EQ(e(Tensor::zeros({0, 3}, tg::dtypes::int32)).shape(), (Shape{0, 3, 4}));
  EXPECT_THROW(e(Tensor::zeros({2})), tg::Error);  // float indices
}
