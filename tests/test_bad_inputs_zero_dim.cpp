// Bad-input catalogue: 0-d tensors. As PyTorch, dims 0 and -1 of a 0-d tensor name its one element for
// the ops that take a dim; any other dim (and size(), cat, split...) is a tg::Error naming the op.
#include "bad_inputs.h"

using namespace tg;
using namespace bad_inputs;

namespace {
Tensor s() { return Tensor(3.f); }
}  // namespace

TEST(BadInputsZeroDim, SumNeg1) { expect_ref(s().sum({-1}), zero_dim_sum_neg1); }
TEST(BadInputsZeroDim, Sum0) { expect_ref(s().sum({0}), zero_dim_sum_0); }
TEST(BadInputsZeroDim, SumKeepdim) { expect_ref(s().sum({-1}, true), zero_dim_sum_keepdim); }
TEST(BadInputsZeroDim, Mean) { expect_ref(s().mean({-1}), zero_dim_mean); }
TEST(BadInputsZeroDim, Max) { expect_ref(s().max({0}), zero_dim_max); }
TEST(BadInputsZeroDim, Min) { expect_ref(s().min({-1}), zero_dim_min); }
TEST(BadInputsZeroDim, Prod) { expect_ref(s().prod({-1}), zero_dim_prod); }
TEST(BadInputsZeroDim, Any) { expect_ref(s().any({-1}), zero_dim_any); }
TEST(BadInputsZeroDim, All) { expect_ref(s().all({0}), zero_dim_all); }
TEST(BadInputsZeroDim, Var) { expect_ref(s().var({-1}), zero_dim_var); }
TEST(BadInputsZeroDim, VarBiased) { expect_ref(s().var({-1}, false, 0), zero_dim_var_biased); }
TEST(BadInputsZeroDim, Std) { expect_ref(s().std({0}), zero_dim_std); }
TEST(BadInputsZeroDim, Logsumexp) { expect_ref(s().logsumexp({-1}), zero_dim_logsumexp); }
TEST(BadInputsZeroDim, Softmax) { expect_ref(s().softmax(), zero_dim_softmax); }
TEST(BadInputsZeroDim, Softmax0) { expect_ref(s().softmax(0), zero_dim_softmax_0); }
TEST(BadInputsZeroDim, LogSoftmax) { expect_ref(s().log_softmax(), zero_dim_log_softmax); }
TEST(BadInputsZeroDim, Cumsum) { expect_ref(s().cumsum(0), zero_dim_cumsum); }
TEST(BadInputsZeroDim, CumsumNeg1) { expect_ref(s().cumsum(-1), zero_dim_cumsum_neg1); }
TEST(BadInputsZeroDim, Cummax) { expect_ref(s().cummax(0), zero_dim_cummax); }
TEST(BadInputsZeroDim, Argmax) { expect_ref(s().argmax(0), zero_dim_argmax); }
TEST(BadInputsZeroDim, ArgmaxKeepdim) { expect_ref(s().argmax(-1, true), zero_dim_argmax_keepdim); }
TEST(BadInputsZeroDim, Argmin) { expect_ref(s().argmin(0), zero_dim_argmin); }
TEST(BadInputsZeroDim, Topk) {
  auto [v, i] = s().topk(1);
  expect_ref(v, zero_dim_topk_values);
  expect_ref(i, zero_dim_topk_indices);
}
TEST(BadInputsZeroDim, Flip) { expect_ref(s().flip({0}), zero_dim_flip); }
TEST(BadInputsZeroDim, FlipNeg1) { expect_ref(s().flip({-1}), zero_dim_flip_neg1); }
TEST(BadInputsZeroDim, Transpose) { expect_ref(s().transpose(0, -1), zero_dim_transpose); }
TEST(BadInputsZeroDim, Squeeze) { expect_ref(s().squeeze(0), zero_dim_squeeze); }
TEST(BadInputsZeroDim, SqueezeNeg1) { expect_ref(s().squeeze(-1), zero_dim_squeeze_neg1); }
TEST(BadInputsZeroDim, UnsqueezeNeg1) { expect_ref(s().unsqueeze(-1), zero_dim_unsqueeze_neg1); }
TEST(BadInputsZeroDim, Unsqueeze0) { expect_ref(s().unsqueeze(0), zero_dim_unsqueeze_0); }
TEST(BadInputsZeroDim, Flatten) { expect_ref(s().flatten(), zero_dim_flatten); }
TEST(BadInputsZeroDim, Flatten0Neg1) { expect_ref(s().flatten(0, -1), zero_dim_flatten_0_neg1); }
TEST(BadInputsZeroDim, Gather) { expect_ref(s().gather(0, Tensor(0)), zero_dim_gather); }
TEST(BadInputsZeroDim, GatherNeg1) { expect_ref(s().gather(-1, Tensor(0)), zero_dim_gather_neg1); }
TEST(BadInputsZeroDim, ScatterValue) { expect_ref(s().scatter(0, Tensor(0), 5.0), zero_dim_scatter_value); }
TEST(BadInputsZeroDim, ScatterSrc) { expect_ref(s().scatter(-1, Tensor(0), Tensor(7.f)), zero_dim_scatter_src); }
TEST(BadInputsZeroDim, StackNeg1) { expect_ref(Tensor::stack({s(), s()}, -1), zero_dim_stack_neg1); }
TEST(BadInputsZeroDim, RollWithoutDims) { expect_ref(s().roll({1}, {}), zero_dim_roll); }
TEST(BadInputsZeroDim, Expand) { expect_ref(s().expand({2, 3}), zero_dim_expand); }
TEST(BadInputsZeroDim, Repeat) { expect_ref(s().repeat({2}), zero_dim_repeat); }
TEST(BadInputsZeroDim, OneHot) { expect_ref(Tensor(2).one_hot(4), zero_dim_one_hot); }
TEST(BadInputsZeroDim, MaskedFill) { expect_ref(s().masked_fill(Tensor(true), 1.0), zero_dim_masked_fill); }
TEST(BadInputsZeroDim, Reshape) { expect_ref(s().reshape({1, 1}), zero_dim_reshape); }

// errors: any other dim, and the ops PyTorch refuses on a 0-d tensor
TEST(BadInputsZeroDim, SizeNeg1) { expect_user_error([] { (void)s().size(-1); }, "size", {"-1", "()"}); }
TEST(BadInputsZeroDim, Size0) { expect_user_error([] { (void)s().size(0); }, "size", {"()"}); }
TEST(BadInputsZeroDim, SumAxis1) { expect_user_error([] { (void)s().sum({1}); }, "sum", {"1", "()"}); }
TEST(BadInputsZeroDim, SumAxisNeg2) { expect_user_error([] { (void)s().sum({-2}); }, "sum", {"-2", "()"}); }
TEST(BadInputsZeroDim, SumRepeatedAxis) { expect_user_error([] { (void)s().sum({0, -1}); }, "sum", {"repeated", "()"}); }
TEST(BadInputsZeroDim, MeanAxis1) { expect_user_error([] { (void)s().mean({1}); }, "mean", {"()"}); }
TEST(BadInputsZeroDim, SoftmaxAxis1) { expect_user_error([] { (void)s().softmax(1); }, "softmax", {"()"}); }
TEST(BadInputsZeroDim, LogSoftmaxAxisNeg2) { expect_user_error([] { (void)s().log_softmax(-2); }, "log_softmax", {"()"}); }
TEST(BadInputsZeroDim, FlipRepeated) { expect_user_error([] { (void)s().flip({0, -1}); }, "flip", {"repeated", "()"}); }
TEST(BadInputsZeroDim, FlipAxis1) { expect_user_error([] { (void)s().flip({1}); }, "flip", {"()"}); }
TEST(BadInputsZeroDim, TransposeAxis1) { expect_user_error([] { (void)s().transpose(0, 1); }, "transpose", {"()"}); }
TEST(BadInputsZeroDim, SqueezeAxis1) { expect_user_error([] { (void)s().squeeze(1); }, "squeeze", {"()"}); }
TEST(BadInputsZeroDim, UnsqueezeAxis1) { expect_user_error([] { (void)s().unsqueeze(1); }, "unsqueeze", {"()"}); }
TEST(BadInputsZeroDim, UnsqueezeAxisNeg2) { expect_user_error([] { (void)s().unsqueeze(-2); }, "unsqueeze", {"()"}); }
TEST(BadInputsZeroDim, FlattenAxis1) { expect_user_error([] { (void)s().flatten(1); }, "flatten", {"()"}); }
TEST(BadInputsZeroDim, CumsumAxis1) { expect_user_error([] { (void)s().cumsum(1); }, "cumsum", {"()"}); }
TEST(BadInputsZeroDim, ArgmaxAxis1) { expect_user_error([] { (void)s().argmax(1); }, "argmax", {"()"}); }
TEST(BadInputsZeroDim, TopkDim1) { expect_user_error([] { (void)s().topk(1, 1); }, "topk", {"()"}); }
TEST(BadInputsZeroDim, GatherDim1) { expect_user_error([] { (void)s().gather(1, Tensor(0)); }, "gather", {"()"}); }
TEST(BadInputsZeroDim, ScatterDim1) { expect_user_error([] { (void)s().scatter(1, Tensor(0), 1.0); }, "scatter", {"()"}); }
TEST(BadInputsZeroDim, LogsumexpAxis1) { expect_user_error([] { (void)s().logsumexp({1}); }, "logsumexp", {"()"}); }
// torch's layer_norm and batch_norm refuse a 0-d input whatever the axis
TEST(BadInputsZeroDim, Layernorm) { expect_user_error([] { (void)s().layernorm(); }, "layernorm", {"()"}); }
TEST(BadInputsZeroDim, Layernorm0) { expect_user_error([] { (void)s().layernorm({0}); }, "layernorm", {"()"}); }
TEST(BadInputsZeroDim, Batchnorm) {
  expect_user_error([] { (void)s().batchnorm(std::nullopt, std::nullopt, Tensor(1.f), Tensor(0.5f), -1); }, "batchnorm", {"()"});
}
TEST(BadInputsZeroDim, BatchnormAxis1) {
  expect_user_error([] { (void)s().batchnorm(std::nullopt, std::nullopt, Tensor(1.f), Tensor(0.5f)); }, "batchnorm", {"()"});
}
TEST(BadInputsZeroDim, LayernormAxis1) { expect_user_error([] { (void)s().layernorm({1}); }, "layernorm", {"()"}); }
TEST(BadInputsZeroDim, Cat) { expect_user_error([] { (void)Tensor::cat({s(), s()}); }, "cat", {"()"}); }
TEST(BadInputsZeroDim, Split) { expect_user_error([] { (void)s().split(1); }, "split"); }
TEST(BadInputsZeroDim, Chunk) { expect_user_error([] { (void)s().chunk(1); }, "chunk"); }
TEST(BadInputsZeroDim, RollWithDim) { expect_user_error([] { (void)s().roll({1}, {0}); }, "roll", {"()"}); }
TEST(BadInputsZeroDim, Unflatten) { expect_user_error([] { (void)s().unflatten(0, {1}); }, "unflatten", {"()"}); }
TEST(BadInputsZeroDim, Dot) { expect_user_error([] { (void)s().dot(s()); }, "dot", {"()"}); }
TEST(BadInputsZeroDim, Tril) { expect_user_error([] { (void)s().tril(); }, "tril", {"()"}); }
TEST(BadInputsZeroDim, IntIndex) { expect_user_error([] { (void)s()[0]; }, "index", {"()"}); }
