// Bad-input catalogue: NaN and infinities give PyTorch's answers (NaN propagates through max/min,
// logsumexp of an infinity is that infinity, topk and argmax rank NaN above every number).
#include "bad_inputs.h"

using namespace tg;
using namespace bad_inputs;

namespace {
constexpr float kInf = INFINITY, kNan = NAN;

Tensor long_with_nan() {  // 0..1999 with a NaN at 777
  std::vector<float> v(2000);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i);
  v[777] = kNan;
  return Tensor(v, {2000});
}
}  // namespace

TEST(BadInputsNanInf, LogsumexpInf) { expect_ref(Tensor({kInf, 1.f}).logsumexp(), nan_logsumexp_inf); }
TEST(BadInputsNanInf, LogsumexpNegInf) { expect_ref(Tensor({-kInf, -kInf}).logsumexp(), nan_logsumexp_neg_inf); }
TEST(BadInputsNanInf, LogsumexpInfNegInf) { expect_ref(Tensor({kInf, -kInf}).logsumexp(), nan_logsumexp_inf_neg_inf); }
TEST(BadInputsNanInf, LogsumexpInfInf) { expect_ref(Tensor({kInf, kInf}).logsumexp(), nan_logsumexp_inf_inf); }
TEST(BadInputsNanInf, LogsumexpNan) { expect_ref(Tensor({kNan, 1.f}).logsumexp(), nan_logsumexp_nan); }
TEST(BadInputsNanInf, LogsumexpRows) {
  expect_ref(Tensor(std::vector<float>{kInf, 1, 1, 2, -kInf, -kInf}, {3, 2}).logsumexp({1}), nan_logsumexp_rows);
}
TEST(BadInputsNanInf, LogsumexpKeepdim) {
  expect_ref(Tensor(std::vector<float>{-kInf, 0, -kInf, -kInf}, {2, 2}).logsumexp({1}, true), nan_logsumexp_keepdim);
}
TEST(BadInputsNanInf, Maximum) { expect_ref(Tensor({1.f, kNan}).maximum(Tensor({kNan, 2.f})), nan_maximum); }
TEST(BadInputsNanInf, Minimum) { expect_ref(Tensor({1.f, kNan}).minimum(Tensor({kNan, 2.f})), nan_minimum); }
TEST(BadInputsNanInf, MaximumNanSecond) { expect_ref(Tensor({1.f, -kInf}).maximum(Tensor({kNan, kNan})), nan_maximum_second); }
TEST(BadInputsNanInf, MinimumNanSecond) { expect_ref(Tensor({1.f, kInf}).minimum(Tensor({kNan, kNan})), nan_minimum_second); }
TEST(BadInputsNanInf, MaximumInf) { expect_ref(Tensor({-kInf, 1.f, kInf}).maximum(Tensor({0.f})), nan_maximum_inf); }
TEST(BadInputsNanInf, TruncSignedZero) { expect_ref(Tensor({-0.5f, 0.5f, -0.f, 0.f, -2.5f}).trunc().reciprocal(), nan_trunc_signed_zero); }
TEST(BadInputsNanInf, CeilSignedZero) { expect_ref(Tensor({-0.5f, 0.5f, -0.f, -1.5f}).ceil().reciprocal(), nan_ceil_signed_zero); }
TEST(BadInputsNanInf, FloorSignedZero) { expect_ref(Tensor({-0.f, 0.5f, -0.5f, 1.5f}).floor().reciprocal(), nan_floor_signed_zero); }
TEST(BadInputsNanInf, RoundSignedZero) { expect_ref(Tensor({-0.4f, 0.4f, -0.5f, 0.5f, -1.5f}).round().reciprocal(), nan_round_signed_zero); }
TEST(BadInputsNanInf, MaximumTieGradient) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).requires_grad_();
  x.maximum(Tensor({1.f, 3.f, 2.f})).sum().backward();
  expect_ref(x.grad(), nan_maximum_tie_grad);
}
TEST(BadInputsNanInf, MinimumTieGradient) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).requires_grad_();
  x.minimum(Tensor({1.f, 3.f, 2.f})).sum().backward();
  expect_ref(x.grad(), nan_minimum_tie_grad);
}
TEST(BadInputsNanInf, Topk) {
  auto [v, i] = Tensor({1.f, kNan, 2.f}).topk(2);
  expect_ref(v, nan_topk_values);
  expect_ref(i, nan_topk_indices);
}
TEST(BadInputsNanInf, TopkSmallest) {
  auto [v, i] = Tensor({1.f, kNan, 2.f}).topk(2, -1, false);
  expect_ref(v, nan_topk_smallest_values);
  expect_ref(i, nan_topk_smallest_indices);
}
TEST(BadInputsNanInf, TopkSmallestAll) {
  auto [v, i] = Tensor({1.f, kNan, 2.f, -kInf}).topk(4, -1, false);
  expect_ref(v, nan_topk_smallest_all_values);
  expect_ref(i, nan_topk_smallest_all_indices);
}
TEST(BadInputsNanInf, TopkInf) {
  auto [v, i] = Tensor({-kInf, kInf, kNan, 0.f}).topk(4);
  expect_ref(v, nan_topk_inf_values);
  expect_ref(i, nan_topk_inf_indices);
}
TEST(BadInputsNanInf, TopkLongAxis) {  // the blocked path (n > 1024)
  auto [v, i] = long_with_nan().topk(3);
  expect_ref(v, nan_topk_long_values);
  expect_ref(i, nan_topk_long_indices);
}
TEST(BadInputsNanInf, TopkLongAxisSmallestPicksNan) {  // padding of the last block must not beat a real NaN
  std::vector<float> v(1030, kNan);
  v[0] = 5, v[1] = 6, v[2] = 7;
  auto [values, idx] = Tensor(v, {1030}).topk(5, -1, false);
  expect_ref(values, nan_topk_long_smallest_values);
  for (int32_t i : idx.tolist<int32_t>()) EXPECT_TRUE(i >= 0 && i < 1030) << i;
}
TEST(BadInputsNanInf, Argmax) { expect_ref(Tensor({1.f, kNan, 3.f, kNan}).argmax(), nan_argmax); }
TEST(BadInputsNanInf, Argmin) { expect_ref(Tensor({1.f, kNan, -3.f}).argmin(), nan_argmin); }
TEST(BadInputsNanInf, ArgmaxInf) { expect_ref(Tensor({1.f, kInf, kInf}).argmax(), nan_argmax_inf); }
TEST(BadInputsNanInf, ArgminNegInf) { expect_ref(Tensor({1.f, -kInf, -kInf}).argmin(), nan_argmin_neg_inf); }
TEST(BadInputsNanInf, ArgmaxRows) {
  expect_ref(Tensor(std::vector<float>{1, 5, kNan, 2, 1, 0}, {2, 3}).argmax(1), nan_argmax_rows);
}
TEST(BadInputsNanInf, Max) { expect_ref(Tensor({1.f, kNan, 3.f}).max(), nan_max); }
TEST(BadInputsNanInf, MaxRows) { expect_ref(Tensor(std::vector<float>{1, kNan, 3, 4}, {2, 2}).max({1}), nan_max_rows); }
TEST(BadInputsNanInf, Min) { expect_ref(Tensor({1.f, kNan, -3.f}).min(), nan_min); }
TEST(BadInputsNanInf, Relu) { expect_ref(Tensor({kNan, -1.f, kInf}).relu(), nan_relu); }
TEST(BadInputsNanInf, Cummax) { expect_ref(Tensor({1.f, kNan, 3.f, 0.f}).cummax(0), nan_cummax); }
TEST(BadInputsNanInf, CummaxLongAxis) {  // blocks of 64: the NaN reaches later blocks through the carry
  std::vector<float> v(300);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i);
  v[10] = kNan;
  expect_ref(Tensor(v, {300}).cummax(0), nan_cummax_long);
}
TEST(BadInputsNanInf, CummaxInf) { expect_ref(Tensor({-kInf, 1.f, kInf, 0.f}).cummax(0), nan_cummax_inf); }
TEST(BadInputsNanInf, CumsumInf) { expect_ref(Tensor({kInf, -kInf, 1.f}).cumsum(0), nan_cumsum_inf); }
TEST(BadInputsNanInf, Clip) { expect_ref(Tensor({kNan, -5.f, 5.f}).clip(-1, 1), nan_clip); }
TEST(BadInputsNanInf, ClipInf) { expect_ref(Tensor({kInf, -kInf}).clip(-1, 1), nan_clip_inf); }
TEST(BadInputsNanInf, ClipNanMin) { expect_ref(Tensor({1.f, -5.f, 5.f}).clip(NAN, 1), nan_clip_nan_min); }
TEST(BadInputsNanInf, ClipNanMax) { expect_ref(Tensor({1.f, -5.f, 5.f}).clip(-1, NAN), nan_clip_nan_max); }
TEST(BadInputsNanInf, ClipIntWithFloatBounds) { expect_ref(Tensor({3, 1}).clip(1.5, 2.5), nan_clip_int_float_bounds); }
TEST(BadInputsNanInf, SoftmaxNegInf) { expect_ref(Tensor({-kInf, 1.f}).softmax(0), nan_softmax_neg_inf); }
TEST(BadInputsNanInf, SoftmaxInf) { expect_ref(Tensor({kInf, 1.f}).softmax(0), nan_softmax_inf); }
TEST(BadInputsNanInf, LogSoftmaxNegInf) { expect_ref(Tensor({-kInf, 1.f}).log_softmax(0), nan_log_softmax_neg_inf); }
TEST(BadInputsNanInf, Sigmoid) { expect_ref(Tensor({kInf, -kInf, kNan}).sigmoid(), nan_sigmoid); }
TEST(BadInputsNanInf, Tanh) { expect_ref(Tensor({kInf, -kInf}).tanh(), nan_tanh); }
TEST(BadInputsNanInf, Exp) { expect_ref(Tensor({kInf, -kInf, kNan}).exp(), nan_exp); }
TEST(BadInputsNanInf, Log) { expect_ref(Tensor({0.f, -1.f, kInf}).log(), nan_log); }
TEST(BadInputsNanInf, DivByZero) { expect_ref(Tensor({1.f, -1.f, 0.f}) / 0.f, nan_div_zero); }
TEST(BadInputsNanInf, MeanInf) { expect_ref(Tensor({kInf, -kInf}).mean(), nan_mean_inf); }
TEST(BadInputsNanInf, MaxPool) {
  expect_ref(Tensor(std::vector<float>{1, kNan, 3, 4}, {1, 1, 2, 2}).max_pool2d({2, 2}), nan_max_pool);
}
