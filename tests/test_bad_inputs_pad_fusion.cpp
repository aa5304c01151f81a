// Bad-input catalogue: padding (which cat, stack, strided slices and roll are built on) must leave zeros
// even when the padded expression has f(0) != 0 (exp, log, reciprocal, sigmoid, division, cos, +const).
#include "bad_inputs.h"

using namespace tg;
using namespace bad_inputs;
using indexing::Slice;

namespace {
Tensor X() { return Tensor({0.f, 1.f}); }
Tensor Y() { return Tensor({0.5f, 2.5f}); }
}  // namespace

TEST(BadInputsPadFusion, CatExp) { expect_ref(Tensor::cat({X().exp(), Y()}), pad_cat_exp); }
TEST(BadInputsPadFusion, CatLog) { expect_ref(Tensor::cat({Y(), (X() + 1).log()}), pad_cat_log); }
TEST(BadInputsPadFusion, CatReciprocal) { expect_ref(Tensor::cat({(X() + 1).reciprocal(), Y()}), pad_cat_reciprocal); }
TEST(BadInputsPadFusion, CatSigmoid) { expect_ref(Tensor::cat({Y(), X().sigmoid()}), pad_cat_sigmoid); }
TEST(BadInputsPadFusion, CatDiv) { expect_ref(Tensor::cat({Y() / (X() + 1), Y()}), pad_cat_div); }
TEST(BadInputsPadFusion, CatCos) { expect_ref(Tensor::cat({X().cos(), Y()}), pad_cat_cos); }
TEST(BadInputsPadFusion, CatPlusConst) { expect_ref(Tensor::cat({X() + 1.5f, Y()}), pad_cat_plus_const); }
TEST(BadInputsPadFusion, StackExp) { expect_ref(Tensor::stack({X().exp(), Y()}), pad_stack_exp); }
TEST(BadInputsPadFusion, StridedSliceOfCatExp) {
  expect_ref(Tensor::cat({X().exp(), Y()}).index({Slice(std::nullopt, std::nullopt, 2)}), pad_strided_slice_cat_exp);
}
TEST(BadInputsPadFusion, StridedSliceOfExp) {
  expect_ref(Tensor({0.f, 1.f, 2.f, 3.f, 4.f}).exp().index({Slice(1, std::nullopt, 3)}), pad_strided_slice_exp);
}
TEST(BadInputsPadFusion, PadExp) { expect_ref(X().exp().pad({{1, 1}}), pad_pad_exp); }
TEST(BadInputsPadFusion, PadSigmoid) { expect_ref(X().sigmoid().pad({{2, 0}}), pad_pad_sigmoid); }
TEST(BadInputsPadFusion, ExpOfPad) { expect_ref(X().pad({{1, 0}}).exp(), pad_exp_of_pad); }
TEST(BadInputsPadFusion, RollExp) { expect_ref(X().exp().roll({1}, {0}), pad_roll_exp); }
TEST(BadInputsPadFusion, Pad2dLog) { expect_ref((X() + 1).log().reshape({1, 2}).pad2d({1, 1, 1, 0}), pad_pad2d_log); }
