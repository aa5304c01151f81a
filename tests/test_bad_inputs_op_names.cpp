// Bad-input catalogue: a user mistake is a tg::Error that begins with the op the user called (not an op it
// is built from, such as mul, sum or max) and shows the user's own shapes and dtypes.
#include "bad_inputs.h"

using namespace tg;
using namespace bad_inputs;

namespace {
Tensor t23() { return Tensor::ones({2, 3}); }
Tensor t4() { return Tensor::ones({4}); }
Tensor bools23() { return Tensor::ones({2, 3}, dtypes::bool_); }
}  // namespace

// reductions composed of sum/max
TEST(BadInputsOpNames, MinOfEmpty) { expect_user_error([] { (void)Tensor::zeros({0}).min(); }, "min", {"(0,)"}); }
TEST(BadInputsOpNames, MinAxis) { expect_user_error([] { (void)t23().min({5}); }, "min", {"5", "(2,3)"}); }
TEST(BadInputsOpNames, MeanAxis) { expect_user_error([] { (void)t23().mean({5}); }, "mean", {"5", "(2,3)"}); }
TEST(BadInputsOpNames, MeanRepeatedAxis) { expect_user_error([] { (void)t23().mean({1, -1}); }, "mean", {"repeated", "(2,3)"}); }
TEST(BadInputsOpNames, VarAxis) { expect_user_error([] { (void)t23().var({5}); }, "var", {"(2,3)"}); }
TEST(BadInputsOpNames, StdAxis) { expect_user_error([] { (void)t23().std({-3}); }, "std", {"(2,3)"}); }
TEST(BadInputsOpNames, LayernormAxis) { expect_user_error([] { (void)t23().layernorm({5}); }, "layernorm", {"5", "(2,3)"}); }
TEST(BadInputsOpNames, LayernormRepeatedAxis) {
  expect_user_error([] { (void)t23().layernorm({1, -1}); }, "layernorm", {"repeated", "(2,3)"});
}
TEST(BadInputsOpNames, LogsumexpAxis) { expect_user_error([] { (void)t23().logsumexp({2}); }, "logsumexp", {"(2,3)"}); }
TEST(BadInputsOpNames, ArgminAxis) { expect_user_error([] { (void)t23().argmin(5); }, "argmin", {"(2,3)"}); }
TEST(BadInputsOpNames, ProdAxis) { expect_user_error([] { (void)t23().prod({2}); }, "prod", {"(2,3)"}); }
TEST(BadInputsOpNames, AnyAxis) { expect_user_error([] { (void)t23().any({2}); }, "any", {"(2,3)"}); }
TEST(BadInputsOpNames, CummaxAxis) { expect_user_error([] { (void)t23().cummax(2); }, "cummax", {"(2,3)"}); }
TEST(BadInputsOpNames, TopkTooLarge) { expect_user_error([] { (void)t23().topk(5); }, "topk", {"5", "(2,3)"}); }

// products
TEST(BadInputsOpNames, DotBatchDims) {
  expect_user_error([] { (void)Tensor::ones({2, 3, 4}).dot(Tensor::ones({5, 4, 2})); }, "dot", {"(2,3,4)", "(5,4,2)"});
}
TEST(BadInputsOpNames, DotBatchDims4d) {
  expect_user_error([] { (void)Tensor::ones({2, 3, 1, 4}).dot(Tensor::ones({5, 1, 4, 2})); }, "dot", {"(2,3,1,4)", "(5,1,4,2)"});
}
TEST(BadInputsOpNames, DotInner) { expect_user_error([] { (void)t23().dot(Tensor::ones({4, 5})); }, "dot", {"(2,3)", "(4,5)"}); }
TEST(BadInputsOpNames, Matmul) { expect_user_error([] { (void)t23().matmul(Tensor::ones({4, 5})); }, "matmul", {"(2,3)", "(4,5)"}); }
TEST(BadInputsOpNames, MatmulBatchDims) {
  expect_user_error([] { (void)Tensor::ones({2, 3, 4}).matmul(Tensor::ones({5, 4, 2})); }, "matmul", {"(2,3,4)", "(5,4,2)"});
}
TEST(BadInputsOpNames, Linear) { expect_user_error([] { (void)t23().linear(Tensor::ones({4, 5})); }, "linear", {"(2,3)", "(4,5)"}); }
TEST(BadInputsOpNames, LinearBias) {
  expect_user_error([] { (void)t23().linear(Tensor::ones({4, 3}), Tensor::ones({5})); }, "linear", {"(5,)", "(2,3)", "(4,3)"});
}
TEST(BadInputsOpNames, AttentionHeadDim) {
  expect_user_error([] { (void)Tensor::ones({2, 3}).scaled_dot_product_attention(Tensor::ones({4, 5}), Tensor::ones({4, 5})); },
                    "scaled_dot_product_attention", {"(2,3)", "(4,5)"});
}
TEST(BadInputsOpNames, AttentionMask) {
  expect_user_error([] { (void)Tensor::ones({2, 3}).scaled_dot_product_attention(Tensor::ones({4, 3}), Tensor::ones({4, 5}), Tensor::ones({3, 3})); },
                    "scaled_dot_product_attention", {"(3,3)", "(2,4)"});
}

// elementwise ops composed of others
TEST(BadInputsOpNames, Gt) { expect_user_error([] { (void)t23().gt(t4()); }, "gt", {"(2,3)", "(4,)"}); }
TEST(BadInputsOpNames, Le) { expect_user_error([] { (void)t23().le(t4()); }, "le", {"(2,3)", "(4,)"}); }
TEST(BadInputsOpNames, Ge) { expect_user_error([] { (void)t23().ge(t4()); }, "ge", {"(2,3)", "(4,)"}); }
TEST(BadInputsOpNames, Ne) { expect_user_error([] { (void)t23().ne(t4()); }, "ne", {"(2,3)", "(4,)"}); }
TEST(BadInputsOpNames, LogicalAnd) { expect_user_error([] { (void)t23().logical_and(t4()); }, "logical_and", {"(2,3)", "(4,)"}); }
TEST(BadInputsOpNames, LogicalOr) { expect_user_error([] { (void)t23().logical_or(t4()); }, "logical_or", {"(2,3)", "(4,)"}); }
TEST(BadInputsOpNames, LogicalXor) { expect_user_error([] { (void)t23().logical_xor(t4()); }, "logical_xor", {"(2,3)", "(4,)"}); }
TEST(BadInputsOpNames, Lerp) { expect_user_error([] { (void)t23().lerp(t4(), Tensor::ones({1})); }, "lerp", {"(2,3)", "(4,)"}); }
TEST(BadInputsOpNames, Where) {
  expect_user_error([] { (void)bools23().where(t4(), t23()); }, "where", {"(2,3)", "(4,)"});
}
TEST(BadInputsOpNames, MaskedFill) {
  expect_user_error([] { (void)t23().masked_fill(Tensor::ones({4}, dtypes::bool_), 1); }, "masked_fill", {"(4,)", "(2,3)"});
}
TEST(BadInputsOpNames, Maximum) { expect_user_error([] { (void)t23().maximum(t4()); }, "maximum", {"(2,3)", "(4,)"}); }
TEST(BadInputsOpNames, Minimum) { expect_user_error([] { (void)t23().minimum(t4()); }, "minimum", {"(2,3)", "(4,)"}); }
TEST(BadInputsOpNames, Pow) { expect_user_error([] { (void)t23().pow(t4()); }, "pow", {"(2,3)", "(4,)"}); }
TEST(BadInputsOpNames, SubBool) { expect_user_error([] { (void)bools23().sub(bools23()); }, "sub", {"bool", "(2,3)"}); }
TEST(BadInputsOpNames, IdivFloat) { expect_user_error([] { (void)t23().idiv(t23()); }, "idiv", {"float32"}); }
TEST(BadInputsOpNames, BitwiseAndFloat) { expect_user_error([] { (void)t23().bitwise_and(t23()); }, "bitwise_and", {"float32"}); }
TEST(BadInputsOpNames, LshiftFloat) { expect_user_error([] { (void)t23().lshift(1); }, "lshift", {"float32"}); }
TEST(BadInputsOpNames, PowIntNegative) { expect_user_error([] { (void)Tensor({2, 3}).pow(-1); }, "pow", {"(2,)", "int32"}); }
TEST(BadInputsOpNames, ClipBool) { expect_user_error([] { (void)bools23().clip(0, 1); }, "clip", {"(2,3)"}); }

// losses
TEST(BadInputsOpNames, BinaryCrossentropy) {
  expect_user_error([] { (void)t23().binary_crossentropy(t4()); }, "binary_crossentropy", {"(2,3)", "(4,)"});
}
TEST(BadInputsOpNames, BinaryCrossentropyLogits) {
  expect_user_error([] { (void)t23().binary_crossentropy_logits(t4()); }, "binary_crossentropy_logits", {"(2,3)", "(4,)"});
}
TEST(BadInputsOpNames, SparseCrossentropyTargets) {
  expect_user_error([] { (void)t23().sparse_categorical_crossentropy(Tensor({1, 2, 0})); }, "sparse_categorical_crossentropy",
                    {"(3,)", "(2,3)"});
}
TEST(BadInputsOpNames, CrossEntropyTargets) {
  expect_user_error([] { (void)t23().cross_entropy(Tensor::ones({4, 4})); }, "cross_entropy", {"(4,4)", "(2,3)"});
}
TEST(BadInputsOpNames, NllLossWeight) {
  expect_user_error([] { (void)t23().nll_loss(Tensor({0, 1}), Tensor::ones({4})); }, "nll_loss", {"(4,)", "3"});
}
TEST(BadInputsOpNames, LossReduction) {
  expect_user_error([] { (void)t23().binary_crossentropy(t23(), "all"); }, "binary_crossentropy", {"all"});
}

// convolutions and pooling
TEST(BadInputsOpNames, ConvTransposeEmptyOutput) {
  expect_user_error([] { (void)Tensor::ones({1, 1, 1, 1}).conv_transpose2d(Tensor::ones({1, 1, 2, 2}), std::nullopt, 1, {1}, {1}, {2}); },
                    "conv_transpose2d", {"(1,1,1,1)", "(1,1,2,2)"});
}
TEST(BadInputsOpNames, ConvTransposeBias) {
  expect_user_error([] { (void)Tensor::ones({1, 1, 3, 3}).conv_transpose2d(Tensor::ones({1, 2, 2, 2}), Tensor::ones({3})); },
                    "conv_transpose2d", {"(3,)"});
}
TEST(BadInputsOpNames, Conv2dChannels) {
  expect_user_error([] { (void)Tensor::ones({1, 2, 4, 4}).conv2d(Tensor::ones({3, 3, 2, 2})); }, "conv2d", {"(1,2,4,4)", "(3,3,2,2)"});
}
TEST(BadInputsOpNames, MaxPoolKernelTooBig) {
  expect_user_error([] { (void)Tensor::ones({1, 1, 1, 1}).max_pool2d(); }, "max_pool2d", {"(1,1,1,1)"});
}
TEST(BadInputsOpNames, AvgPoolKernelTooBig) {
  expect_user_error([] { (void)Tensor::ones({1, 1, 1, 1}).avg_pool2d(); }, "avg_pool2d", {"(1,1,1,1)"});
}

// creation
TEST(BadInputsOpNames, ZerosNegative) { expect_user_error([] { (void)Tensor::zeros({2, -1}); }, "zeros", {"(2,-1)"}); }
TEST(BadInputsOpNames, OnesNegative) { expect_user_error([] { (void)Tensor::ones({-3}); }, "ones", {"(-3,)"}); }
TEST(BadInputsOpNames, NormalIntDtype) { expect_user_error([] { (void)Tensor::normal({2}, 0, 1, dtypes::int32); }, "normal", {"int32"}); }
TEST(BadInputsOpNames, UniformNegative) { expect_user_error([] { (void)Tensor::uniform({-2}); }, "uniform", {"(-2,)"}); }
TEST(BadInputsOpNames, ScaledUniformIntDtype) {
  expect_user_error([] { (void)Tensor::scaled_uniform({2}, dtypes::int32); }, "scaled_uniform", {"int32"});
}
TEST(BadInputsOpNames, KaimingNormalIntDtype) {
  expect_user_error([] { (void)Tensor::kaiming_normal({2, 2}, 0.01, dtypes::int32); }, "kaiming_normal", {"int32"});
}
TEST(BadInputsOpNames, GlorotNegative) { expect_user_error([] { (void)Tensor::glorot_uniform({2, -2}); }, "glorot_uniform", {"(2,-2)"}); }
TEST(BadInputsOpNames, RandnNegative) { expect_user_error([] { (void)Tensor::randn({-1, 2}); }, "randn", {"(-1,2)"}); }

// shaping
TEST(BadInputsOpNames, CatDtypes) {
  expect_user_error([] { (void)Tensor::cat({t23(), Tensor::ones({2, 3}, dtypes::int32)}); }, "cat", {"float32", "int32"});
}
TEST(BadInputsOpNames, StackShapes) { expect_user_error([] { (void)Tensor::stack({t23(), t4()}); }, "stack", {"(2,3)", "(4,)"}); }
TEST(BadInputsOpNames, SplitSizes) { expect_user_error([] { (void)t23().split(std::vector<int64_t>{1, 1}, 1); }, "split", {"(2,3)"}); }
TEST(BadInputsOpNames, RepeatTooFew) { expect_user_error([] { (void)t23().repeat({2}); }, "repeat", {"(2,3)"}); }
TEST(BadInputsOpNames, Pad2dOdd) { expect_user_error([] { (void)t23().pad2d({1, 1, 1}); }, "pad2d", {"(2,3)"}); }
TEST(BadInputsOpNames, Pad2dCrop) { expect_user_error([] { (void)t23().pad2d({-2, -2}); }, "pad2d", {"(2,3)"}); }
TEST(BadInputsOpNames, Unflatten) { expect_user_error([] { (void)t23().unflatten(1, {2, 2}); }, "unflatten", {"(2,3)"}); }
TEST(BadInputsOpNames, FlattenOrder) { expect_user_error([] { (void)t23().flatten(1, 0); }, "flatten", {"(2,3)"}); }
TEST(BadInputsOpNames, TrilOneDim) { expect_user_error([] { (void)t4().tril(); }, "tril", {"(4,)"}); }
TEST(BadInputsOpNames, RollShifts) { expect_user_error([] { (void)t23().roll({1, 2}, {0}); }, "roll", {"(2,3)"}); }
TEST(BadInputsOpNames, GatherRank) { expect_user_error([] { (void)t23().gather(0, Tensor({0})); }, "gather", {"(1,)", "(2,3)"}); }
TEST(BadInputsOpNames, ScatterRank) { expect_user_error([] { (void)t23().scatter(0, Tensor({0}), 1.0); }, "scatter", {"(1,)", "(2,3)"}); }
TEST(BadInputsOpNames, OneHotFloat) { expect_user_error([] { (void)t23().one_hot(3); }, "one_hot", {"float32", "(2,3)"}); }
TEST(BadInputsOpNames, IndexTooMany) { expect_user_error([] { (void)t23().index({0, 0, 0}); }, "index", {"(2,3)"}); }
TEST(BadInputsOpNames, IndexFloatTensor) { expect_user_error([] { (void)t23().index({t4()}); }, "index", {"float32", "(4,)"}); }

// nn layers name themselves
TEST(BadInputsOpNames, LinearLayer) { expect_user_error([] { (void)nn::Linear(4, 2)(t23()); }, "Linear", {"(2,3)"}); }
TEST(BadInputsOpNames, Conv2dLayer) {
  expect_user_error([] { (void)nn::Conv2d(3, 4, 2)(Tensor::ones({1, 2, 5, 5})); }, "Conv2d", {"(1,2,5,5)"});
}
TEST(BadInputsOpNames, ConvTranspose2dLayer) {
  expect_user_error([] { (void)nn::ConvTranspose2d(3, 4, 2)(Tensor::ones({1, 2, 5, 5})); }, "ConvTranspose2d", {"(1,2,5,5)"});
}
TEST(BadInputsOpNames, BatchNormLayer) { expect_user_error([] { (void)nn::BatchNorm(4)(t23()); }, "BatchNorm", {"(2,3)"}); }
TEST(BadInputsOpNames, LayerNormLayer) { expect_user_error([] { (void)nn::LayerNorm(4)(t23()); }, "LayerNorm", {"(2,3)"}); }
TEST(BadInputsOpNames, EmbeddingFloat) { expect_user_error([] { (void)nn::Embedding(3, 2)(t4()); }, "Embedding", {"float32", "(4,)"}); }
