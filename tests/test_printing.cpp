// Printing a Tensor shows its values the way torch does, summarizing long dims; raw data in and out.
#include <gtest/gtest.h>

#include <cstring>
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

// Raw data in and out: from_host copies n elements of a dtype; any nonzero byte is a true bool;
// bytes() gives the elements back in C order, also for views.
TEST(RawData, FromHostAndBytes) {
  int16_t v[] = {1, -2, 300, 4};
  Tensor t = Tensor::from_host(v, 4, {2, 2}, dtypes::int16);
  EXPECT_EQ(t.tolist<int16_t>(), (std::vector<int16_t>{1, -2, 300, 4}));
  std::vector<uint8_t> b = t.T().bytes();  // (1, 300, -2, 4)
  ASSERT_EQ(b.size(), 8u);
  int16_t back[4];
  std::memcpy(back, b.data(), 8);
  EXPECT_EQ(std::vector<int16_t>(back, back + 4), (std::vector<int16_t>{1, 300, -2, 4}));
  uint8_t raw_bools[] = {0, 2, 255, 1};
  Tensor m = Tensor::from_host(raw_bools, 4, {4}, dtypes::bool_);
  EXPECT_EQ(m.bytes(), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(m.cast(dtypes::int32).sum().item<int>(), 3);
  EXPECT_THROW(Tensor::from_host(v, 3, {2, 2}, dtypes::int16), tg::Error);
}
