// Network ops (convolutions, pooling, softmax, normalizations, attention, losses) against PyTorch,
// forward values and gradients, plus dropout's statistics and the bad-input errors.
#include <gtest/gtest.h>

#include <cmath>

#include "ref.h"

using namespace tgtest;
using tg::Tensor;
namespace dtypes = tg::dtypes;

namespace {
// Integer class labels in [0, classes).
Tensor labels(const tg::Shape& shape, int classes, uint32_t seed) { return random_tensor(shape, 0, classes, dtypes::int32, seed); }
}  // namespace

// ---- softmax family --------------------------------------------------------------------------------

TEST(NNOps, Softmax) {
  check_op({{4, 7}}, [](auto& x) { return x[0].softmax(); }, "torch.softmax(x0, -1)");
  check_op({{3, 5, 4}}, [](auto& x) { return x[0].softmax(1); }, "torch.softmax(x0, 1)");
  // large logits: the max subtraction keeps exp() finite. atol 1e-5: tiny probabilities come from
  // exp of differences of ~100-sized floats, whose float32 rounding is ~1e-5 relative to the logits
  check_op({{3, 5}}, [](auto& x) { return (x[0] * 100).softmax(0); }, "torch.softmax(x0 * 100, 0)", {.atol = 1e-5});
}

TEST(NNOps, LogSoftmax) {
  check_op({{4, 7}}, [](auto& x) { return x[0].log_softmax(); }, "torch.log_softmax(x0, -1)");
  check_op({{3, 5, 4}}, [](auto& x) { return x[0].log_softmax(1); }, "torch.log_softmax(x0, 1)");
  // atol 1e-4: the results are ~100 in size, where one float32 ulp is ~8e-6 and torch rounds differently
  check_op({{2, 6}}, [](auto& x) { return (x[0] * 100).log_softmax(); }, "torch.log_softmax(x0 * 100, -1)", {.atol = 1e-4});
}

TEST(NNOps, Logsumexp) {
  check_op({{4, 7}}, [](auto& x) { return x[0].logsumexp({1}); }, "torch.logsumexp(x0, 1)");
  check_op({{3, 5, 4}}, [](auto& x) { return x[0].logsumexp({0, 2}, true); }, "torch.logsumexp(x0, (0, 2), keepdim=True)");
  // atol 1e-4: a ~200-sized result, float32 ulp ~1.5e-5
  check_op({{3, 5}}, [](auto& x) { return (x[0] * 100).logsumexp(); }, "torch.logsumexp(x0.flatten() * 100, 0)", {.atol = 1e-4});
}

// ---- convolutions ------------------------------------------------------------------------------------

TEST(NNOps, Conv2d) {
  check_op({{2, 3, 7, 6}, {4, 3, 3, 3}, {4}}, [](auto& x) { return x[0].conv2d(x[1], x[2]); }, "F.conv2d(x0, x1, x2)");
  // groups, stride, dilation, one padding per dim
  check_op({{2, 4, 9, 8}, {6, 2, 3, 2}}, [](auto& x) { return x[0].conv2d(x[1], std::nullopt, 2, {2, 1}, {2, 1}, {1, 2}); },
           "F.conv2d(x0, x1, None, stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2)");
  // (begin, end) padding pairs in pad2d order (left, right, top, bottom); stride smaller than kernel
  check_op({{1, 2, 6, 5}, {3, 2, 2, 3}}, [](auto& x) { return x[0].conv2d(x[1], std::nullopt, 1, {2}, {1}, {1, 0, 2, 1}); },
           "F.conv2d(F.pad(x0, (1, 0, 2, 1)), x1, None, stride=2)");
  // stride larger than the kernel; depthwise
  check_op({{1, 3, 9, 9}, {3, 1, 2, 2}}, [](auto& x) { return x[0].conv2d(x[1], std::nullopt, 3, {4}); },
           "F.conv2d(x0, x1, None, stride=4, groups=3)");
  // dilated windows with a stride much larger than the kernel
  check_op({{1, 2, 11, 11}, {3, 2, 2, 2}}, [](auto& x) { return x[0].conv2d(x[1], std::nullopt, 1, {8}, {2}); },
           "F.conv2d(x0, x1, None, stride=8, dilation=2)");
}

TEST(NNOps, Conv1dAnd3d) {
  check_op({{2, 4, 11}, {6, 2, 3}, {6}}, [](auto& x) { return x[0].conv2d(x[1], x[2], 2, {2}, {2}, {1}); },
           "F.conv1d(x0, x1, x2, stride=2, padding=1, dilation=2, groups=2)");
  // a negative padding crops, as pad2d
  check_op({{2, 3, 8}, {2, 3, 3}}, [](auto& x) { return x[0].conv2d(x[1], std::nullopt, 1, {1}, {1}, {-1, 2}); },
           "F.conv1d(F.pad(x0, (-1, 2)), x1)");
  check_op({{1, 2, 5, 4, 6}, {3, 2, 2, 3, 2}, {3}}, [](auto& x) { return x[0].conv2d(x[1], x[2], 1, {1, 1, 2}, {1}, {1, 0, 1}); },
           "F.conv3d(x0, x1, x2, stride=(1, 1, 2), padding=(1, 0, 1))");
}

TEST(NNOps, ConvTranspose2d) {
  check_op({{2, 4, 5, 4}, {4, 3, 3, 3}, {3}}, [](auto& x) { return x[0].conv_transpose2d(x[1], x[2]); },
           "F.conv_transpose2d(x0, x1, x2)");
  check_op({{1, 4, 4, 5}, {4, 2, 3, 2}}, [](auto& x) { return x[0].conv_transpose2d(x[1], std::nullopt, 2, {2, 3}, {1}, {1, 0}, {1, 2}); },
           "F.conv_transpose2d(x0, x1, None, stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2)");
  check_op({{1, 2, 4, 4}, {2, 3, 2, 3}, {3}}, [](auto& x) { return x[0].conv_transpose2d(x[1], x[2], 1, {2}, {2}, {1}, {1}); },
           "F.conv_transpose2d(x0, x1, x2, stride=2, padding=1, output_padding=1, dilation=2)");
  // 32 output channels: the channel tile's path (a conv of dy whose padded kernel rows the reduce skips),
  // and the input gradient of a conv with 32 input channels takes it too
  check_op({{2, 16, 6, 6}, {16, 32, 3, 3}, {32}}, [](auto& x) { return x[0].conv_transpose2d(x[1], x[2]); },
           "F.conv_transpose2d(x0, x1, x2)");
  check_op({{1, 16, 7, 5}, {16, 32, 5, 5}}, [](auto& x) { return x[0].conv_transpose2d(x[1], std::nullopt, 1, {1}, {1}, {1, 2}); },
           "F.conv_transpose2d(x0, x1, None, padding=(1, 2))");
  check_op({{2, 32, 8, 8}, {16, 32, 3, 3}}, [](auto& x) { return x[0].conv2d(x[1]); }, "F.conv2d(x0, x1)");
  // strided: one stride-1 transposed conv per phase of the output, interleaved. A kernel narrower than the
  // stride leaves phases without taps (zeros); 32 channels take the channel tile in each phase; 1 and 3
  // spatial dims; and a strided conv, whose input gradient is one
  check_op({{2, 3, 4, 5}, {3, 2, 2, 2}}, [](auto& x) { return x[0].conv_transpose2d(x[1], std::nullopt, 1, {3}, {1}, {0}, {2}); },
           "F.conv_transpose2d(x0, x1, stride=3, output_padding=2)");
  check_op({{1, 16, 5, 6}, {16, 32, 5, 5}, {32}}, [](auto& x) { return x[0].conv_transpose2d(x[1], x[2], 1, {2}, {1}, {2}, {1}); },
           "F.conv_transpose2d(x0, x1, x2, stride=2, padding=2, output_padding=1)", {.atol = 1e-4});  // sums of ~100 terms
  check_op({{2, 4, 7}, {4, 3, 4}}, [](auto& x) { return x[0].conv_transpose2d(x[1], std::nullopt, 1, {2}, {1}, {1}); },
           "F.conv_transpose1d(x0, x1, stride=2, padding=1)");
  check_op({{1, 2, 3, 4, 3}, {2, 2, 3, 2, 3}}, [](auto& x) { return x[0].conv_transpose2d(x[1], std::nullopt, 1, {2, 3, 2}); },
           "F.conv_transpose3d(x0, x1, stride=(2, 3, 2))");
  check_op({{2, 32, 9, 9}, {32, 32, 3, 3}}, [](auto& x) { return x[0].conv2d(x[1], std::nullopt, 1, {2}, {1}, {1}); },
           "F.conv2d(x0, x1, stride=2, padding=1)", {.atol = 1e-4});
  check_op({{2, 16, 8, 8}, {32, 16, 1, 1}}, [](auto& x) { return x[0].conv2d(x[1], std::nullopt, 1, {2}); }, "F.conv2d(x0, x1, stride=2)");
}

// ---- pooling -----------------------------------------------------------------------------------------

TEST(NNOps, MaxPool2d) {
  check_op({{2, 3, 6, 8}}, [](auto& x) { return x[0].max_pool2d(); }, "F.max_pool2d(x0, 2)");
  check_op({{1, 2, 7, 9}}, [](auto& x) { return x[0].max_pool2d({3, 2}, {2, 1}, {1}, {1, 1}); },
           "F.max_pool2d(x0, (3, 2), stride=(2, 1), padding=1)");
  check_op({{1, 2, 9, 8}}, [](auto& x) { return x[0].max_pool2d({3}, {1}, {2, 1}); }, "F.max_pool2d(x0, 3, stride=1, dilation=(2, 1))");
  // a window that is only partly filled by the input still ignores the -inf padding
  check_op({{1, 1, 5, 5}}, [](auto& x) { return x[0].max_pool2d({2}, {3}, {1}, {1}); }, "F.max_pool2d(x0, 2, stride=3, padding=1)");
  check_op({{1, 1, 11, 11}}, [](auto& x) { return x[0].max_pool2d({2}, {8}, {2}); }, "F.max_pool2d(x0, 2, stride=8, dilation=2)");
}

TEST(NNOps, AvgPool2d) {
  check_op({{2, 3, 6, 8}}, [](auto& x) { return x[0].avg_pool2d(); }, "F.avg_pool2d(x0, 2)");
  // the last window would start past the input: the input is padded to a whole number of strides
  check_op({{1, 2, 5, 5}}, [](auto& x) { return x[0].avg_pool2d({2}, {3}); }, "F.avg_pool2d(x0, 2, stride=3)");
  check_op({{1, 2, 7, 9}}, [](auto& x) { return x[0].avg_pool2d({3, 2}, {2, 1}, {1}, {1, 1}); },
           "F.avg_pool2d(x0, (3, 2), stride=(2, 1), padding=1)");
  check_op({{1, 2, 7, 9}}, [](auto& x) { return x[0].avg_pool2d({3}, {2}, {1}, {1}, false); },
           "F.avg_pool2d(x0, 3, stride=2, padding=1, count_include_pad=False)");
}

// ---- normalization, attention, dropout -----------------------------------------------------------

TEST(NNOps, Batchnorm) {
  // torch's batch_norm takes the variance: var = 1/invstd^2 with eps = 0. Its running stats get no
  // gradient, so they are detached on both sides here and checked by a composed expression below.
  check_op({{2, 3, 4, 5}, {3}, {3}, {3}, {3}},
           [](auto& x) { return x[0].batchnorm(x[3], x[4], x[1].detach(), x[2].detach()); },
           "F.batch_norm(x0, x1.detach(), 1 / x2.detach() ** 2, x3, x4, training=False, eps=0.0)", {.low = 0.5, .high = 2});
  check_op({{4, 3, 5}, {5}, {5}}, [](auto& x) { return x[0].batchnorm(std::nullopt, std::nullopt, x[1].detach(), x[2].detach(), 2); },
           "F.batch_norm(x0.transpose(1, 2), x1.detach(), 1 / x2.detach() ** 2, training=False, eps=0.0).transpose(1, 2)",
           {.low = 0.5, .high = 2});
  check_op({{2, 3, 4}, {3}, {3}, {3}, {3}}, [](auto& x) { return x[0].batchnorm(x[3], x[4], x[1], x[2]); },
           "(x0 - x1.reshape(1, 3, 1)) * x3.reshape(1, 3, 1) * x2.reshape(1, 3, 1) + x4.reshape(1, 3, 1)");
}

TEST(NNOps, Layernorm) {
  check_op({{4, 6}}, [](auto& x) { return x[0].layernorm(); }, "F.layer_norm(x0, (6,))");
  check_op({{2, 3, 5}}, [](auto& x) { return x[0].layernorm({-2, -1}, 1e-3); }, "F.layer_norm(x0, (3, 5), eps=1e-3)");
}

TEST(NNOps, ScaledDotProductAttention) {
  // torch 1.13 has no F.scaled_dot_product_attention: composed from plain ops
  check_op({{2, 4, 8}, {2, 5, 8}, {2, 5, 3}}, [](auto& x) { return x[0].scaled_dot_product_attention(x[1], x[2]); },
           "torch.softmax(x0 @ x1.transpose(-2, -1) / math.sqrt(8), -1) @ x2");
  check_op({{1, 2, 5, 4}, {1, 2, 5, 4}, {1, 2, 5, 4}},
           [](auto& x) { return x[0].scaled_dot_product_attention(x[1], x[2], std::nullopt, 0, true); },
           "torch.softmax(x0 @ x1.transpose(-2, -1) / 2 + torch.zeros(5, 5).masked_fill(~torch.ones(5, 5).tril().bool(), -math.inf), -1) @ x2");
  // float mask added; bool mask keeps true entries (the diagonal is always kept so no row is empty)
  check_op({{3, 4}, {5, 4}, {5, 2}, {3, 5}}, [](auto& x) { return x[0].scaled_dot_product_attention(x[1], x[2], x[3]); },
           "torch.softmax(x0 @ x1.T / 2 + x3, -1) @ x2");
  Tensor keep = (random_tensor({3, 5}, 0, 1, dtypes::float32, 5) > 0.5) | (Tensor::eye(5).shrink({{0, 3}, {0, 5}}) > 0);
  std::vector<Tensor> in{random_tensor({3, 4}, -2, 2, dtypes::float32, 1), random_tensor({5, 4}, -2, 2, dtypes::float32, 2),
                         random_tensor({5, 2}, -2, 2, dtypes::float32, 3), keep.realize()};
  check_op_inputs(in, [](auto& x) { return std::vector<Tensor>{x[0].scaled_dot_product_attention(x[1], x[2], x[3])}; },
                  "torch.softmax(x0 @ x1.T / 2 + torch.zeros(3, 5).masked_fill(~x3, -math.inf), -1) @ x2");
}

TEST(NNOps, DropoutIsIdentityWhenNotTraining) {
  Tensor x = random_tensor({50}, -1, 1, dtypes::float32, 3);
  EXPECT_EQ(x.dropout(0.5).tolist<float>(), x.tolist<float>());
  tg::TrainingGuard t;
  EXPECT_EQ(x.dropout(0).tolist<float>(), x.tolist<float>());
  for (float v : x.dropout(1).tolist<float>()) EXPECT_EQ(v, 0.f);
}

TEST(NNOps, DropoutStatisticsAndGradientMask) {
  tg::TrainingGuard t;
  const int64_t n = 20000;
  const double p = 0.3;
  Tensor x = Tensor::ones({n}).requires_grad_();
  Tensor y = x.dropout(p);
  y.sum().backward();
  std::vector<float> out = y.tolist<float>(), grad = x.grad().tolist<float>();
  int64_t zeros = 0;
  for (int64_t i = 0; i < n; i++) {
    // kept values are scaled by 1/(1-p); the gradient flows exactly where the forward kept the value
    if (out[i] == 0) zeros++;
    else ASSERT_NEAR(out[i], 1 / (1 - p), 1e-6) << "element " << i;
    ASSERT_EQ(grad[i], out[i]) << "element " << i;
  }
  // Binomial(n, p): the standard deviation of the dropped fraction is sqrt(p(1-p)/n) ~ 0.0032
  EXPECT_NEAR(static_cast<double>(zeros) / n, p, 0.02);
  // two calls draw different masks
  EXPECT_NE(Tensor::ones({64}).dropout(0.5).tolist<float>(), Tensor::ones({64}).dropout(0.5).tolist<float>());
}

// ---- losses ------------------------------------------------------------------------------------------

TEST(NNOps, SparseCategoricalCrossentropy) {
  auto run = [](const tg::Shape& s, int64_t ignore, double ls, const std::string& red, const std::string& expr) {
    std::vector<Tensor> in{random_tensor(s, -2, 2, dtypes::float32, 11), labels({s[0]}, static_cast<int>(s[1]), 12)};
    check_op_inputs(in, [&](auto& x) { return std::vector<Tensor>{x[0].sparse_categorical_crossentropy(x[1], ignore, ls, red)}; }, expr);
  };
  run({8, 5}, -1, 0, "mean", "F.cross_entropy(x0, x1.long())");
  run({8, 5}, 2, 0, "mean", "F.cross_entropy(x0, x1.long(), ignore_index=2)");
  run({8, 5}, 1, 0.2, "mean", "F.cross_entropy(x0, x1.long(), ignore_index=1, label_smoothing=0.2)");
  run({6, 4}, -1, 0.1, "sum", "F.cross_entropy(x0, x1.long(), label_smoothing=0.1, reduction='sum')");
  run({6, 4}, 3, 0, "none", "F.cross_entropy(x0, x1.long(), ignore_index=3, reduction='none')");
}

TEST(NNOps, CrossEntropy) {
  std::vector<Tensor> idx{random_tensor({2, 4, 3}, -2, 2, dtypes::float32, 21), labels({2, 3}, 4, 22)};
  check_op_inputs(idx, [](auto& x) { return std::vector<Tensor>{x[0].cross_entropy(x[1])}; }, "F.cross_entropy(x0, x1.long())");
  check_op_inputs(idx, [](auto& x) { return std::vector<Tensor>{x[0].cross_entropy(x[1], "none", 0.3)}; },
                  "F.cross_entropy(x0, x1.long(), reduction='none', label_smoothing=0.3)");
  // probability targets
  check_op({{5, 4}, {5, 4}}, [](auto& x) { return x[0].cross_entropy(x[1].softmax()); }, "F.cross_entropy(x0, x1.softmax(-1))");
  check_op({{5, 4}, {5, 4}}, [](auto& x) { return x[0].cross_entropy(x[1].softmax(), "sum", 0.1); },
           "F.cross_entropy(x0, x1.softmax(-1), reduction='sum', label_smoothing=0.1)");
}

TEST(NNOps, NllLoss) {
  std::vector<Tensor> in{random_tensor({7, 5}, -2, 2, dtypes::float32, 31), labels({7}, 5, 32), random_tensor({5}, 0.5, 2, dtypes::float32, 33)};
  check_op_inputs(in, [](auto& x) { return std::vector<Tensor>{x[0].nll_loss(x[1])}; }, "F.nll_loss(x0, x1.long())");
  // torch's nll_loss has no gradient for the class weights: detached on both sides
  check_op_inputs(in, [](auto& x) { return std::vector<Tensor>{x[0].nll_loss(x[1], x[2].detach(), 2)}; },
                  "F.nll_loss(x0, x1.long(), weight=x2.detach(), ignore_index=2)");
  check_op_inputs(in, [](auto& x) { return std::vector<Tensor>{x[0].nll_loss(x[1], x[2].detach(), -1, "none")}; },
                  "F.nll_loss(x0, x1.long(), weight=x2.detach(), reduction='none')");
  std::vector<Tensor> spatial{random_tensor({2, 3, 4}, -2, 2, dtypes::float32, 34), labels({2, 4}, 3, 35)};
  check_op_inputs(spatial, [](auto& x) { return std::vector<Tensor>{x[0].nll_loss(x[1], std::nullopt, -1, "sum")}; },
                  "F.nll_loss(x0, x1.long(), reduction='sum')");
}

TEST(NNOps, BinaryCrossentropy) {
  check_op({{4, 5}, {4, 5}}, [](auto& x) { return x[0].binary_crossentropy(x[1]); }, "F.binary_cross_entropy(x0, x1)",
           {.low = 0.05, .high = 0.95});
  check_op({{6}, {6}}, [](auto& x) { return x[0].binary_crossentropy(x[1], "none"); }, "F.binary_cross_entropy(x0, x1, reduction='none')",
           {.low = 0.05, .high = 0.95});
  check_op({{4, 5}, {4, 5}}, [](auto& x) { return (x[0] * 10).binary_crossentropy_logits(x[1].sigmoid()); },
           "F.binary_cross_entropy_with_logits(x0 * 10, torch.sigmoid(x1))");
  check_op({{6}, {6}}, [](auto& x) { return x[0].binary_crossentropy_logits(x[1], "sum"); },
           "F.binary_cross_entropy_with_logits(x0, x1, reduction='sum')", {.low = 0, .high = 1});
}

TEST(NNOps, Linear) {
  check_op({{3, 4}, {5, 4}, {5}}, [](auto& x) { return x[0].linear(x[1], x[2]); }, "F.linear(x0, x1, x2)");
  check_op({{2, 3, 4}, {6, 4}}, [](auto& x) { return x[0].linear(x[1]); }, "F.linear(x0, x1)");
}

// ---- bad inputs ----------------------------------------------------------------------------------------

TEST(NNOps, BadInputs) {
  Tensor x = Tensor::zeros({1, 4, 6, 6});
  EXPECT_THROW(x.conv2d(Tensor::zeros({2, 3, 3, 3})), tg::Error);              // 4 channels vs 3
  EXPECT_THROW(x.conv2d(Tensor::zeros({3, 2, 3, 3}), std::nullopt, 2), tg::Error);  // 2 groups do not divide 3 outputs
  EXPECT_THROW(x.conv2d(Tensor::zeros({2, 4, 3}), std::nullopt), tg::Error);   // weight rank
  EXPECT_THROW(x.conv2d(Tensor::zeros({2, 4, 7, 3})), tg::Error);              // kernel bigger than the input
  EXPECT_THROW(x.conv2d(Tensor::zeros({2, 4, 3, 3}), std::nullopt, 1, {1}, {1}, {1, 1, 1}), tg::Error);  // padding length
  EXPECT_THROW(x.conv2d(Tensor::zeros({2, 4, 3, 3}), Tensor::zeros({3})), tg::Error);  // bias size
  EXPECT_THROW(x.conv2d(Tensor::zeros({2, 4, 3, 3}), std::nullopt, 1, {0}), tg::Error);  // stride 0
  EXPECT_THROW(x.conv2d(Tensor::zeros({2, 4, 3, 3}), std::nullopt, 0), tg::Error);
  EXPECT_THROW(x.conv_transpose2d(Tensor::zeros({3, 2, 3, 3})), tg::Error);    // channels
  EXPECT_THROW(x.conv_transpose2d(Tensor::zeros({4, 2, 3, 3}), std::nullopt, 3), tg::Error);
  EXPECT_THROW(x.conv_transpose2d(Tensor::zeros({4, 2, 3, 3}), std::nullopt, 1, {2}, {1}, {0}, {2}), tg::Error);  // output_padding
  EXPECT_THROW(x.max_pool2d({7, 7}), tg::Error);
  EXPECT_THROW(x.max_pool2d({2, 2}, {}, {1}, {1, 1, 1}), tg::Error);
  EXPECT_THROW(Tensor::zeros({5}).max_pool2d(), tg::Error);
  EXPECT_THROW(x.avg_pool2d({2, 2}, {1, 1, 1}), tg::Error);
  Tensor logits = Tensor::zeros({4, 3});
  EXPECT_THROW(logits.sparse_categorical_crossentropy(Tensor({1, 2, 0})), tg::Error);            // 3 targets for 4 rows
  EXPECT_THROW(logits.sparse_categorical_crossentropy(Tensor({1.f, 2.f, 0.f, 1.f})), tg::Error);  // float targets
  EXPECT_THROW(logits.sparse_categorical_crossentropy(Tensor({1, 2, 0, 1}), -1, 0, "avg"), tg::Error);
  EXPECT_THROW(logits.cross_entropy(Tensor::zeros({4, 2})), tg::Error);
  EXPECT_THROW(logits.cross_entropy(Tensor({1, 2, 0, 1}), "mean", 1.5), tg::Error);
  EXPECT_THROW(logits.nll_loss(Tensor({1, 2, 0, 1}), Tensor::ones({4})), tg::Error);  // weight per class
  EXPECT_THROW(logits.binary_crossentropy(logits, "all"), tg::Error);
  EXPECT_THROW(logits.batchnorm(std::nullopt, std::nullopt, Tensor::zeros({4}), Tensor::ones({3})), tg::Error);
  EXPECT_THROW(logits.dropout(1.5), tg::Error);
  EXPECT_THROW(logits.scaled_dot_product_attention(logits, logits, Tensor::zeros({4, 4}), 0, true), tg::Error);
  EXPECT_THROW(logits.scaled_dot_product_attention(Tensor::zeros({4, 2}), logits), tg::Error);  // E 3 vs 2
  try {
    x.conv2d(Tensor::zeros({2, 3, 3, 3}));
  } catch (const tg::Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("conv2d"), std::string::npos) << m;
    EXPECT_NE(m.find("(1,4,6,6)"), std::string::npos) << m;
  }
}
