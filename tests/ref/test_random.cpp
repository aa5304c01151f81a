// The device random generator (threefry2x32 against Random123's known answers), reproducibility,
// loose statistical checks of every random creation op, and the deterministic creation ops
// (linspace, *_like) against PyTorch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ref.h"
#include "tensor/random.h"

using namespace tgtest;
using tg::Tensor;
namespace dt = tg::dtypes;

namespace {

Tensor u32(std::vector<uint32_t> v) { return Tensor(v, {static_cast<int64_t>(v.size())}); }

struct Stats {
  double mean, std, min, max;
};
Stats stats(const Tensor& t) {
  std::vector<double> v = to_doubles(t);
  double m = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return {m, std::sqrt(s / static_cast<double>(v.size() - 1)), *std::min_element(v.begin(), v.end()),
          *std::max_element(v.begin(), v.end())};
}

}  // namespace

// Random123's tests/kat_vectors: "threefry2x32 20 ctr0 ctr1 key0 key1 -> out0 out1".
TEST(Random, Threefry2x32KnownAnswers) {
  auto [a, b] = tg::detail::threefry2x32(u32({0x00000000, 0xffffffff, 0x243f6a88}), u32({0x00000000, 0xffffffff, 0x85a308d3}),
                                         u32({0x00000000, 0xffffffff, 0x13198a2e}), u32({0x00000000, 0xffffffff, 0x03707344}));
  EXPECT_EQ(a.tolist<uint32_t>(), (std::vector<uint32_t>{0x6b200159, 0x1cb996fc, 0xc4923a9c}));
  EXPECT_EQ(b.tolist<uint32_t>(), (std::vector<uint32_t>{0x99ba4efe, 0xbb002be7, 0x483df7a0}));
  // scalar keys broadcast against a counter vector
  Tensor k0 = Tensor::full({}, 0x13198a2e, dt::uint32), k1 = Tensor::full({}, 0x03707344, dt::uint32);
  auto [c, d] = tg::detail::threefry2x32(u32({0, 0x243f6a88}), u32({0, 0x85a308d3}), k0, k1);
  EXPECT_EQ(c.tolist<uint32_t>()[1], 0xc4923a9cu);
  EXPECT_EQ(d.tolist<uint32_t>()[1], 0x483df7a0u);
  EXPECT_THROW(tg::detail::threefry2x32(Tensor({1, 2}), u32({1, 2}), k0, k1), tg::Error);
}

TEST(Random, BitsAreBalanced) {
  Tensor::manual_seed(7);
  std::vector<uint32_t> w = tg::detail::random_bits(20001, "").tolist<uint32_t>();
  ASSERT_EQ(w.size(), 20001u);
  for (int bit = 0; bit < 32; bit++) {
    int64_t ones = 0;
    for (uint32_t x : w) ones += (x >> bit) & 1;
    EXPECT_NEAR(static_cast<double>(ones) / 20001.0, 0.5, 0.02) << "bit " << bit;
  }
  std::sort(w.begin(), w.end());
  EXPECT_GT(std::unique(w.begin(), w.end()) - w.begin(), 19990);  // 32-bit collisions are rare
}

TEST(Random, Reproducible) {
  Tensor::manual_seed(42);
  std::vector<float> a = Tensor::rand({3, 50}).tolist<float>(), b = Tensor::rand({3, 50}).tolist<float>();
  std::vector<float> n1 = Tensor::randn({77}).tolist<float>();
  Tensor::manual_seed(42);
  EXPECT_EQ(Tensor::rand({3, 50}).tolist<float>(), a);
  EXPECT_EQ(Tensor::rand({3, 50}).tolist<float>(), b);
  EXPECT_EQ(Tensor::randn({77}).tolist<float>(), n1);
  EXPECT_NE(a, b);  // a new call draws new numbers
  Tensor::manual_seed(43);
  EXPECT_NE(Tensor::rand({3, 50}).tolist<float>(), a);
  Tensor::manual_seed(uint64_t{42} | (uint64_t{1} << 40));  // the seed's high word is part of the key
  EXPECT_NE(Tensor::rand({3, 50}).tolist<float>(), a);
  // the elements of one call are not copies of each other
  std::sort(a.begin(), a.end());
  EXPECT_GT(std::unique(a.begin(), a.end()) - a.begin(), 145);
}

TEST(Random, Uniform) {
  Tensor::manual_seed(1);
  Tensor r = Tensor::rand({100, 1000});
  EXPECT_EQ(r.shape(), (Shape{100, 1000}));
  EXPECT_EQ(r.dtype(), dt::float32);
  Stats s = stats(r);
  EXPECT_NEAR(s.mean, 0.5, 0.005);
  EXPECT_NEAR(s.std, 1 / std::sqrt(12.0), 0.005);
  EXPECT_GE(s.min, 0.0);
  EXPECT_LT(s.max, 1.0);
  // ten equal bins hold about a tenth each
  std::vector<int> bins(10);
  for (double x : to_doubles(r)) bins[static_cast<size_t>(x * 10)]++;
  for (int b : bins) EXPECT_NEAR(b / 1e5, 0.1, 0.005);

  for (tg::DType d : {dt::float16, dt::float64}) {
    Tensor h = Tensor::rand({20000}, d);
    EXPECT_EQ(h.dtype(), d);
    Stats hs = stats(h);
    EXPECT_NEAR(hs.mean, 0.5, 0.01) << d.name();
    EXPECT_GE(hs.min, 0.0) << d.name();
    EXPECT_LT(hs.max, 1.0) << d.name();
  }
  Stats u = stats(Tensor::uniform({100000}, -2, 5));
  EXPECT_NEAR(u.mean, 1.5, 0.05);
  EXPECT_NEAR(u.std, 7 / std::sqrt(12.0), 0.03);
  EXPECT_GE(u.min, -2.0);
  EXPECT_LT(u.max, 5.0);
  Tensor like = Tensor::zeros({4, 5}, dt::float64).rand_like();
  EXPECT_EQ(like.shape(), (Shape{4, 5}));
  EXPECT_EQ(like.dtype(), dt::float64);
  EXPECT_EQ(Tensor::zeros({2}).rand_like(dt::float16).dtype(), dt::float16);
  EXPECT_EQ(Tensor::rand({0, 3}).numel(), 0);
}

TEST(Random, Normal) {
  Tensor::manual_seed(2);
  Tensor n = Tensor::randn({100000});
  Stats s = stats(n);
  EXPECT_NEAR(s.mean, 0, 0.015);
  EXPECT_NEAR(s.std, 1, 0.015);
  // the tails of a normal: about 4.55% beyond 2 sigma, both ways
  std::vector<double> v = to_doubles(n);
  double tail = static_cast<double>(std::count_if(v.begin(), v.end(), [](double x) { return std::fabs(x) > 2; })) / 1e5;
  EXPECT_NEAR(tail, 0.0455, 0.004);
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); }));
  Stats g = stats(Tensor::normal({100000}, 3, 2));
  EXPECT_NEAR(g.mean, 3, 0.03);
  EXPECT_NEAR(g.std, 2, 0.03);
  EXPECT_EQ(Tensor::randn({2, 3}, dt::float64).dtype(), dt::float64);
}

TEST(Random, Randint) {
  Tensor::manual_seed(3);
  Tensor r = Tensor::randint({100000}, -3, 7);
  EXPECT_EQ(r.dtype(), dt::int32);
  std::vector<int> v = r.tolist<int>();
  std::vector<int> count(10);
  for (int x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 7);
    count[static_cast<size_t>(x + 3)]++;
  }
  for (int c : count) EXPECT_NEAR(c / 1e5, 0.1, 0.005);
  std::vector<int64_t> big = Tensor::randint({1000}, -3000000000ll, 1000000000ll, dt::int64).tolist<int64_t>();
  EXPECT_GE(*std::min_element(big.begin(), big.end()), -3000000000ll);
  EXPECT_LT(*std::max_element(big.begin(), big.end()), 1000000000ll);
  EXPECT_LT(*std::min_element(big.begin(), big.end()), -2000000000ll);  // the whole range is used
  std::vector<int8_t> one = Tensor::randint({50}, 5, 6, dt::int8).tolist<int8_t>();
  EXPECT_TRUE(std::all_of(one.begin(), one.end(), [](int8_t x) { return x == 5; }));
}

TEST(Random, WeightInits) {
  Tensor::manual_seed(4);
  double a = 0.01, fan = 300;
  double bound = std::sqrt(3.0) * std::sqrt(2.0 / (1 + a * a)) / std::sqrt(fan);
  Stats ku = stats(Tensor::kaiming_uniform({200, 30, 10}));
  EXPECT_NEAR(ku.std, bound / std::sqrt(3.0), 0.02 * bound);
  EXPECT_GE(ku.min, -bound);
  EXPECT_LT(ku.max, bound);
  Stats kn = stats(Tensor::kaiming_normal({200, 30, 10}, 0.5));
  double std_n = std::sqrt(2.0 / 1.25) / std::sqrt(fan);
  EXPECT_NEAR(kn.std, std_n, 0.02 * std_n);
  EXPECT_NEAR(kn.mean, 0, 0.02 * std_n);
  Stats gu = stats(Tensor::glorot_uniform({300, 200}));
  double gb = std::sqrt(6.0 / 500);
  EXPECT_NEAR(gu.std, gb / std::sqrt(3.0), 0.02 * gb);
  EXPECT_GE(gu.min, -gb);
  EXPECT_LT(gu.max, gb);
  Stats su = stats(Tensor::scaled_uniform({250, 400}));
  EXPECT_NEAR(su.std, 1 / std::sqrt(100000.0) / std::sqrt(3.0), 0.02 / std::sqrt(100000.0));
  EXPECT_LT(su.max, 1 / std::sqrt(100000.0));
}

TEST(Random, DeterministicCreationAgainstTorch) {
  check_op_inputs({}, [](auto&) { return std::vector{Tensor::linspace(-1, 3, 7)}; }, "torch.linspace(-1, 3, 7)");
  check_op_inputs({}, [](auto&) { return std::vector{Tensor::linspace(5, -5, 11)}; }, "torch.linspace(5, -5, 11)");
  check_op_inputs({}, [](auto&) { return std::vector{Tensor::linspace(2, 9, 1)}; }, "torch.linspace(2, 9, 1)");
  check_op_inputs({}, [](auto&) { return std::vector{Tensor::linspace(0, 1, 0)}; }, "torch.linspace(0, 1, 0)");
  check_op_inputs({}, [](auto&) { return std::vector{Tensor::linspace(0, 1, 1000)}; }, "torch.linspace(0, 1, 1000)");
  check_op_inputs({}, [](auto&) { return std::vector{Tensor::linspace(0, 10, 5, dt::int32)}; },
                  "torch.linspace(0, 10, 5, dtype=torch.int32)");
  EXPECT_EQ(Tensor::linspace(0, 10, 5, dt::int32).dtype(), dt::int32);
  check_op({{3, 4}}, [](auto& x) { return x[0].full_like(2.5); }, "torch.full_like(x0, 2.5)");
  check_op({{3, 4}}, [](auto& x) { return x[0].zeros_like(); }, "torch.zeros_like(x0)");
  check_op({{2, 3, 1}}, [](auto& x) { return x[0].ones_like(); }, "torch.ones_like(x0)");
  check_op({{3, 4}}, [](auto& x) { return x[0].ones_like(dt::int32); }, "torch.ones_like(x0, dtype=torch.int32)");
  check_op({{3, 4}}, [](auto& x) { return x[0].full_like(-7); }, "torch.full_like(x0, -7)", {.dtype = dt::int32});
  EXPECT_EQ(Tensor({1, 2}).full_like(3).dtype(), dt::int32);
  EXPECT_EQ(Tensor({1, 2}).zeros_like(dt::float16).dtype(), dt::float16);
}

TEST(Random, BadInputs) {
  EXPECT_THROW(Tensor::rand({3}, dt::int32), tg::Error);
  EXPECT_THROW(Tensor::randn({3}, dt::bool_), tg::Error);
  EXPECT_THROW(Tensor::rand({2, -1}), tg::Error);
  EXPECT_THROW(Tensor::randint({3}, 5, 5), tg::Error);
  EXPECT_THROW(Tensor::randint({3}, 6, 5), tg::Error);
  EXPECT_THROW(Tensor::randint({3}, 0, 5, dt::float32), tg::Error);
  EXPECT_THROW(Tensor::randint({3}, 0, 300, dt::int8), tg::Error);
  EXPECT_THROW(Tensor::randint({3}, 0, int64_t{1} << 40, dt::int64), tg::Error);
  EXPECT_THROW(Tensor::uniform({3}, 0, 1, dt::int32), tg::Error);
  EXPECT_THROW(Tensor::glorot_uniform({}), tg::Error);
  EXPECT_THROW(Tensor::kaiming_normal({}), tg::Error);
  EXPECT_THROW(Tensor({1, 2}).rand_like(), tg::Error);
  EXPECT_THROW(Tensor::linspace(0, 1, -1), tg::Error);
  try {
    Tensor::randint({3}, 4, 2);
  } catch (const tg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("randint"), std::string::npos);
  }
}
