// Bad-input catalogue: reductions and products over zero-length axes give the identity (sum 0, prod 1,
// any false, all true, logsumexp -inf, mean/var NaN) as PyTorch, never stale data; max/argmax of nothing
// is a tg::Error naming the op.
#include "bad_inputs.h"

using namespace tg;
using namespace bad_inputs;

namespace {
Tensor empty20() { return Tensor::ones({2, 0}); }
}  // namespace

TEST(BadInputsZeroSize, Sum) { expect_ref(empty20().sum({1}), zero_size_sum); }
TEST(BadInputsZeroSize, SumInt) { expect_ref(Tensor::ones({2, 0}, dtypes::int32).sum({1}), zero_size_sum_int); }
TEST(BadInputsZeroSize, SumAxis0) { expect_ref(Tensor::ones({0, 3}).sum({0}), zero_size_sum_axis0); }
TEST(BadInputsZeroSize, Matmul) { expect_ref(empty20().dot(Tensor::ones({0, 4})), zero_size_matmul); }
TEST(BadInputsZeroSize, DotVectors) { expect_ref(Tensor::ones({0}).dot(Tensor::ones({0})), zero_size_dot_vectors); }
TEST(BadInputsZeroSize, Prod) { expect_ref(empty20().prod({1}), zero_size_prod); }
TEST(BadInputsZeroSize, Mean) { expect_ref(empty20().mean({1}), zero_size_mean); }
TEST(BadInputsZeroSize, Var) { expect_ref(empty20().var({1}), zero_size_var); }
TEST(BadInputsZeroSize, Any) { expect_ref(empty20().any({1}), zero_size_any); }
TEST(BadInputsZeroSize, All) { expect_ref(empty20().all({1}), zero_size_all); }
TEST(BadInputsZeroSize, Logsumexp) { expect_ref(empty20().logsumexp({1}), zero_size_logsumexp); }
TEST(BadInputsZeroSize, Softmax) { expect_ref(empty20().softmax(1), zero_size_softmax); }
TEST(BadInputsZeroSize, Cumsum) { expect_ref(empty20().cumsum(1), zero_size_cumsum); }
TEST(BadInputsZeroSize, ShrinkOfPad) { expect_ref(Tensor({1.f, 2.f}).pad({{1, 1}}).shrink({{1, 1}}), zero_size_shrink_of_pad); }
TEST(BadInputsZeroSize, SumOfPaddedShrink) {
  expect_ref(Tensor({1.f, 2.f}).pad({{1, 1}}).shrink({{1, 1}}).sum(), zero_size_sum_of_padded_shrink);
}
TEST(BadInputsZeroSize, PadOfEmptyShrink) {
  expect_ref(Tensor({1.f, 2.f}).pad({{1, 1}}).shrink({{1, 1}}).pad({{1, 1}}), zero_size_pad_of_empty_shrink);
}
TEST(BadInputsZeroSize, EmptyShrinkOfPadded2d) {
  expect_ref(Tensor::ones({2, 3}).exp().pad({{1, 1}, {1, 1}}).shrink({{1, 1}, {0, 5}}).sum({0}), zero_size_empty_shrink_2d);
}
TEST(BadInputsZeroSize, Max) { expect_user_error([] { (void)empty20().max({1}); }, "max", {"(2,0)"}); }
TEST(BadInputsZeroSize, MinAll) { expect_user_error([] { (void)Tensor::zeros({0}).min(); }, "min", {"(0,)"}); }
TEST(BadInputsZeroSize, Argmax) { expect_user_error([] { (void)empty20().argmax(1); }, "argmax", {"(2,0)"}); }
TEST(BadInputsZeroSize, ArgminAll) { expect_user_error([] { (void)Tensor::zeros({0}).argmin(); }, "argmin", {"(0,)"}); }
