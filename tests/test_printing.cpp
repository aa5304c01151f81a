// Printing a Tensor shows its values the way torch does, summarizing long dims.
#include <gtest/gtest.h>

#include <sstream>

#include "tg/tensor.h"

using namespace tg;

namespace {
std::string str(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}
}  // namespace

TEST(Printing, ValuesDtypeAndDevice) {
  EXPECT_EQ(str(Tensor({1.f, 2.5f})), "tensor([1., 2.5], dtype=float32, device=CPU)");
  EXPECT_EQ(str(Tensor::arange(6).reshape({2, 3})), "tensor([[0, 1, 2], [3, 4, 5]], dtype=int32, device=CPU)");
  EXPECT_EQ(str(Tensor({true, false})), "tensor([True, False], dtype=bool, device=CPU)");
  EXPECT_EQ(str(Tensor(3.f)), "tensor(3., dtype=float32, device=CPU)");
  EXPECT_EQ(str(Tensor::zeros({0})), "tensor([], dtype=float32, device=CPU)");
  EXPECT_EQ(str(Tensor({1.f, 2.f}).reshape({2, 1}).T()), "tensor([[1., 2.]], dtype=float32, device=CPU)");
}

TEST(Printing, LongDimsAreSummarized) {
  EXPECT_EQ(str(Tensor::arange(10)), "tensor([0, 1, 2, ..., 7, 8, 9], dtype=int32, device=CPU)");
  EXPECT_EQ(str(Tensor::arange(6)), "tensor([0, 1, 2, 3, 4, 5], dtype=int32, device=CPU)");
}
