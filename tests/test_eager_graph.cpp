// What an eager op builds and copies, beyond its values (the op tests check those against torch): a scalar
// operand is a constant of its tensor's shape, so x * 2 needs no broadcast, and broadcasting two tensors
// that need none hands back the tensors themselves (no handle copied: each copy of a shared_ptr is an
// atomic increment and decrement once the CPU pool has started its threads).
#include <gtest/gtest.h>

#include <vector>

#include "lazy/lazybuffer.h"
#include "tensor/internal.h"
#include "tg/tensor.h"

using namespace tg;

TEST(EagerGraph, ScalarOperandIsAConstantOfTheTensorsShape) {
  Tensor x = Tensor(std::vector<float>(6, 1.f), {2, 3});
  Tensor s = scalar_like(x, 2, dtypes::default_float);
  EXPECT_EQ(s.shape(), x.shape());
  EXPECT_EQ(s.dtype(), dtypes::float32);
  EXPECT_TRUE(s.lazydata()->is_unpadded_const());
  // an int tensor and a float scalar: the constant is float (tinygrad's rule), still of x's shape
  Tensor i = Tensor(std::vector<int32_t>(6, 1), {2, 3});
  Tensor f = scalar_like(i, 2.5, dtypes::default_float);
  EXPECT_EQ(f.shape(), i.shape());
  EXPECT_EQ(f.dtype(), dtypes::default_float);
  // x * 2: the MUL reads x and the constant as they are (no expand of a 0-d constant in between)
  Tensor m = x * 2.0;
  const LazyBuffer& mul = *m.lazydata();
  ASSERT_EQ(mul.srcs.size(), 2u);
  EXPECT_TRUE(mul.srcs[0] == x.lazydata());
  EXPECT_TRUE(mul.srcs[1]->is_unpadded_const());
  EXPECT_EQ(mul.srcs[1]->shape(), x.shape());
  EXPECT_EQ((x * 2.0).tolist<float>(), std::vector<float>(6, 2.f));
  EXPECT_EQ((2.0 - x).tolist<float>(), std::vector<float>(6, 1.f));
}

TEST(EagerGraph, BroadcastedBindsTheInputsThemselvesWhenTheyNeedNothing) {
  Tensor x = Tensor(std::vector<float>(6, 1.f), {2, 3}), y = Tensor(std::vector<float>(6, 2.f), {2, 3});
  auto [a, b] = detail::broadcasted("add", x, y);
  EXPECT_EQ(&a, &x);
  EXPECT_EQ(&b, &y);
  // a row broadcast makes new tensors, of the common shape
  Tensor r = Tensor(std::vector<float>(3, 3.f), {3});
  auto [c, d] = detail::broadcasted("add", x, r);
  EXPECT_EQ(c.shape(), x.shape());
  EXPECT_EQ(d.shape(), x.shape());
  EXPECT_EQ(r.shape(), Shape({3}));
  // dtypes that differ: both in the wider one
  Tensor h = Tensor(std::vector<float>(6, 1.f), {2, 3}).cast(dtypes::float16);
  auto [e, g] = detail::broadcasted("add", x, h);
  EXPECT_EQ(e.dtype(), dtypes::float32);
  EXPECT_EQ(g.dtype(), dtypes::float32);
}
