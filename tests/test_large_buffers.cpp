// Buffers of 2^31 elements and more: loop counters and index math must be 64-bit there (an `int` loop
// counter wraps and the kernel reads garbage). Slow and memory hungry (2 GiB), so plain build only.
#include <gtest/gtest.h>

#include <cstdint>

#include "tg/tensor.h"

using namespace tg;

TEST(LargeBuffers, SumOfMoreThan2e31Uint8) {
#ifdef TG_SANITIZED
  GTEST_SKIP() << "2 GiB stress case: runs in the plain build";
#endif
  const int64_t n = (int64_t{1} << 31) + 16;
  Tensor x = Tensor::full({n}, 1, dtypes::uint8).contiguous();
  x.realize();
  EXPECT_EQ(x.sum().item<uint32_t>(), static_cast<uint32_t>(n));
  // the last 16 elements, past 2^31, through a padded view (read at indices above 2^31)
  Tensor y = x.shrink({{0, n - 16}}).pad({{0, 16}}, 3);
  EXPECT_EQ(y.sum().item<uint32_t>(), static_cast<uint32_t>(n - 16 + 3 * 16));
  EXPECT_EQ(y.index({n - 1}).item<int>(), 3);
  EXPECT_EQ(y.index({n - 17}).item<int>(), 1);
}
