// Reductions and scans beyond sum/max (prod, any, all, argmax, argmin, cumsum, cummax, topk, sort) against
// PyTorch, forward and gradients, and their bad-input errors.
#include <gtest/gtest.h>

#include <cmath>

#include "ref.h"

using namespace tgtest;
using tg::Tensor;
using tg::dtypes::int32;
using tg::dtypes::float16;

TEST(Reduce, Prod) {
  check_op({{3, 4, 5}}, [](auto& x) { return x[0].prod({1}); }, "x0.prod(1)");
  check_op({{3, 4}}, [](auto& x) { return x[0].prod(); }, "x0.prod()");
  check_op({{3, 4, 5}}, [](auto& x) { return x[0].prod({-1}, true); }, "x0.prod(-1, keepdim=True)");
  check_op({{3, 4, 5}}, [](auto& x) { return x[0].prod({0, 2}); }, "x0.permute(1, 0, 2).reshape(4, 15).prod(1)");
  // a long axis crosses the intermediate realizations of the multiply tree
  check_op({{2, 37}}, [](auto& x) { return x[0].prod({1}); }, "x0.prod(1)", {.low = 0.8, .high = 1.2});
  check_op({{3, 5}}, [](auto& x) { return x[0].prod({0}); }, "x0.prod(0)", {.low = -4, .high = 5, .dtype = int32});
}

// float16 multiplies in float32 and comes back to float16 on every path: a 0-d input and an empty
// product (all ones) were float32 (differential test, seed 142146). torch 1.13 has no float16 prod on the
// CPU: the values are checked by hand.
TEST(Reduce, ProdOfFloat16StaysFloat16) {
  Tensor zero_d = Tensor(std::vector<float>{2.5f}, tg::Shape{}).cast(float16);
  Tensor empty = Tensor::zeros({2, 0}, float16), row = Tensor(std::vector<float>{1.5f, -2.f, 3.f}, {1, 3}).cast(float16);
  for (const Tensor& t : {zero_d.prod(), empty.prod(), empty.prod({1}), empty.prod({1}, true), row.prod({1}), Tensor::full({2, 3}, 1.5, float16).prod({1})})
    EXPECT_EQ(t.dtype(), float16) << t.shape();
  EXPECT_EQ(zero_d.prod().item<float>(), 2.5f);
  EXPECT_EQ(empty.prod({1}, true).shape(), (tg::Shape{2, 1}));
  EXPECT_EQ(empty.prod({1}).cast(tg::dtypes::float32).tolist<float>(), (std::vector<float>{1.f, 1.f}));
  EXPECT_EQ(row.prod({1}).item<float>(), -9.f);
  EXPECT_EQ(Tensor::full({2, 3}, 1.5, float16).prod({1}).cast(tg::dtypes::float32).tolist<float>(), (std::vector<float>{3.375f, 3.375f}));
}

TEST(Reduce, ProdGradientWithZeros) {
  // one zero: its gradient is the product of the others; two zeros: every gradient is 0
  Tensor x = Tensor(std::vector<float>{1.5f, 0.f, -2.f, 3.f, 0.f, 0.f, 2.f, -1.f}, {2, 4});
  check_op_inputs({x}, [](auto& x) { return std::vector<Tensor>{x[0].prod({1})}; }, "x0.prod(1)");
  check_op_inputs({x}, [](auto& x) { return std::vector<Tensor>{x[0].prod({0})}; }, "x0.prod(0)");
}

TEST(Reduce, AnyAll) {
  check_op({{3, 4}}, [](auto& x) { return (x[0] > 1).any(); }, "(x0 > 1).any()");
  check_op({{3, 4}}, [](auto& x) { return (x[0] > 1).any({1}); }, "(x0 > 1).any(1)");
  check_op({{3, 4, 2}}, [](auto& x) { return (x[0] > 0).any({-1}, true); }, "(x0 > 0).any(-1, keepdim=True)");
  check_op({{3, 4}}, [](auto& x) { return (x[0] > -1.5).all(); }, "(x0 > -1.5).all()");
  check_op({{3, 4}}, [](auto& x) { return (x[0] > -1).all({0}); }, "(x0 > -1).all(0)");
  check_op({{3, 4, 2}}, [](auto& x) { return x[0].all({0, 2}); }, "(x0 != 0).permute(1, 0, 2).reshape(4, 6).all(1)",
           {.low = -1, .high = 3, .dtype = int32});
  EXPECT_FALSE(Tensor::zeros({0, 2}).any().item<bool>());
  EXPECT_TRUE(Tensor::zeros({0, 2}).all().item<bool>());
}

TEST(Reduce, ArgmaxArgmin) {
  check_op({{3, 4, 5}}, [](auto& x) { return x[0].argmax(); }, "x0.argmax()");
  check_op({{3, 4, 5}}, [](auto& x) { return x[0].argmax(1); }, "x0.argmax(1)");
  check_op({{3, 4, 5}}, [](auto& x) { return x[0].argmax(-1, true); }, "x0.argmax(-1, keepdim=True)");
  check_op({{3, 4, 5}}, [](auto& x) { return x[0].argmin(); }, "x0.argmin()");
  check_op({{3, 4, 5}}, [](auto& x) { return x[0].argmin(0); }, "x0.argmin(0)");
  check_op({{3, 4}}, [](auto& x) { return x[0].argmin(-1, true); }, "x0.argmin(-1, keepdim=True)");
  // small ints: many ties, the first index wins as in torch
  check_op({{4, 6}}, [](auto& x) { return x[0].argmax(1); }, "x0.argmax(1)", {.low = -2, .high = 3, .dtype = int32});
  check_op({{4, 6}}, [](auto& x) { return x[0].argmin(0); }, "x0.argmin(0)", {.low = -2, .high = 3, .dtype = int32});
  // a long flattened axis: the index ramp is built in two levels, not by an O(n^2) arange
  check_op({{300, 250}}, [](auto& x) { return x[0].argmax(); }, "x0.argmax()");
  // as torch, the first NaN is both the max and the min
  Tensor nan = Tensor(std::vector<float>{1, NAN, 3, NAN, 2, 0, -1, 4}, {2, 4});
  check_op_inputs({nan}, [](auto& x) { return std::vector<Tensor>{x[0].argmax(1), x[0].argmin(1), x[0].argmax()}; },
                  "x0.argmax(1), x0.argmin(1), x0.argmax()");
  EXPECT_EQ(Tensor({1, 3, 3, 1}).argmax().dtype(), int32);
  EXPECT_EQ(Tensor({1, 3, 3, 1}).argmax().item<int>(), 1);
  EXPECT_EQ(Tensor({1, 3, 3, 1}).argmax(std::nullopt, true).shape(), (tg::Shape{1}));
}

TEST(Reduce, Cumsum) {
  check_op({{3, 5}}, [](auto& x) { return x[0].cumsum(0); }, "x0.cumsum(0)");
  check_op({{3, 5}}, [](auto& x) { return x[0].cumsum(-1); }, "x0.cumsum(-1)");
  check_op({{2, 3, 4}}, [](auto& x) { return x[0].cumsum(1); }, "x0.cumsum(1)");
  check_op({{4, 6}}, [](auto& x) { return x[0].cumsum(1); }, "x0.cumsum(1)", {.low = -9, .high = 9, .dtype = int32});
  // longer than one block: scanned blocks plus carries; positive inputs keep the relative error small
  check_op({{2, 600}}, [](auto& x) { return x[0].cumsum(1); }, "x0.cumsum(1)", {.low = 0, .high = 1});
}

TEST(Reduce, Cummax) {
  check_op({{3, 6}}, [](auto& x) { return x[0].cummax(1); }, "torch.cummax(x0, 1).values");
  check_op({{3, 6}}, [](auto& x) { return x[0].cummax(-2); }, "torch.cummax(x0, -2).values");
  check_op({{4, 6}}, [](auto& x) { return x[0].cummax(1); }, "torch.cummax(x0, 1).values", {.low = -50, .high = 50, .dtype = int32});
  check_op({{2, 300}}, [](auto& x) { return x[0].cummax(1); }, "torch.cummax(x0, 1).values");
}

TEST(Reduce, Cumprod) {
  check_op({{3, 5}}, [](auto& x) { return x[0].cumprod(0); }, "x0.cumprod(0)");
  check_op({{3, 5}}, [](auto& x) { return x[0].cumprod(-1); }, "x0.cumprod(-1)");
  check_op({{2, 3, 4}}, [](auto& x) { return x[0].cumprod(1); }, "x0.cumprod(1)");
  // past 16 entries the doubling realizes an intermediate; values near 1 keep the products in range
  check_op({{2, 100}}, [](auto& x) { return x[0].cumprod(1); }, "x0.cumprod(1)", {.low = 0.9, .high = 1.1});
  // integers exactly (int64 past 2^32); zeros, and the gradient through them (the product
  // of the other entries, which a division by the prefix product would make NaN)
  check_op({{4, 6}}, [](auto& x) { return x[0].cumprod(1); }, "x0.cumprod(1)", {.low = -3, .high = 3, .dtype = int32});
  check_op_inputs({Tensor(std::vector<int64_t>(40, 2), {40})}, [](auto& x) { return std::vector{x[0].cumprod(0)}; }, "x0.cumprod(0)");
  check_op_inputs({Tensor({2.f, 0.f, 3.f, 4.f, 0.5f}), Tensor({0.f, 0.f, 2.f})}, [](auto& x) { return std::vector{x[0].cumprod(0), x[1].cumprod(0)}; },
                  "(x0.cumprod(0), x1.cumprod(0))");
  // cumsum's dtype (tinygrad's sum: int32 stays int32, where torch widens to int64)
  EXPECT_EQ(Tensor({1, 2}).cumprod(0).dtype(), int32);
  EXPECT_EQ(Tensor(std::vector<int8_t>{100, 100}, {2}).cumprod(0).tolist<int>(), (std::vector<int>{100, 10000}));
  EXPECT_EQ(Tensor({true, false}).cumprod(0).tolist<int>(), (std::vector<int>{1, 0}));
  EXPECT_EQ(Tensor({1.5f, 2.f}).cast(float16).cumprod(0).dtype(), float16);
  EXPECT_EQ(Tensor::full({}, 3.f).cumprod(0).item<float>(), 3.f);  // a 0-d tensor is its own scan
  EXPECT_EQ(Tensor::ones({2, 0}).cumprod(1).shape(), (tg::Shape{2, 0}));
  EXPECT_THROW((void)Tensor::ones({2, 3}).cumprod(2), tg::Error);
}

TEST(Reduce, Topk) {
  auto pair = [](std::pair<Tensor, Tensor> p) { return std::vector<Tensor>{p.first, p.second}; };
  check_op_multi({{3, 6}}, [&](auto& x) { return pair(x[0].topk(3)); }, "torch.topk(x0, 3)");
  check_op_multi({{5, 4}}, [&](auto& x) { return pair(x[0].topk(2, 0)); }, "torch.topk(x0, 2, dim=0)");
  check_op_multi({{2, 5, 3}}, [&](auto& x) { return pair(x[0].topk(4, -2, false)); }, "torch.topk(x0, 4, dim=-2, largest=False)");
  check_op_multi({{7}}, [&](auto& x) { return pair(x[0].topk(7)); }, "torch.topk(x0, 7)");
  // distinct ints (a permutation) so the index order is defined
  Tensor perm = Tensor(std::vector<int>{4, -3, 9, 0, 7, 1}, {2, 3});
  check_op_inputs({perm}, [&](auto& x) { return pair(x[0].topk(2, 1)); }, "torch.topk(x0, 2, 1)");
  auto [v, i] = Tensor::full({}, 3.f).topk(1);
  EXPECT_EQ(v.shape(), tg::Shape{});
  EXPECT_EQ(i.item<int>(), 0);
}

TEST(Reduce, Sort) {
  auto pair = [](std::pair<Tensor, Tensor> p) { return std::vector<Tensor>{p.first, p.second}; };
  // lengths that are powers of two and lengths padded up to one, every dim, both orders, with gradients
  check_op_multi({{3, 8}}, [&](auto& x) { return pair(x[0].sort()); }, "torch.sort(x0, stable=True)");
  check_op_multi({{4, 7}}, [&](auto& x) { return pair(x[0].sort(-1, true)); }, "torch.sort(x0, descending=True, stable=True)");
  check_op_multi({{5, 3, 4}}, [&](auto& x) { return pair(x[0].sort(0)); }, "torch.sort(x0, dim=0, stable=True)");
  check_op_multi({{2, 37, 3}}, [&](auto& x) { return pair(x[0].sort(1, true)); }, "torch.sort(x0, dim=1, descending=True, stable=True)");
  // a long row: 1000 entries padded to 1024, 55 steps of the network
  check_op_multi({{2, 1000}}, [&](auto& x) { return pair(x[0].sort()); }, "torch.sort(x0, stable=True)");
  // ties keep their order (integers in a small range repeat): torch's stable sort, both orders
  check_op_multi({{3, 50}}, [&](auto& x) { return pair(x[0].sort()); }, "torch.sort(x0, stable=True)", {.low = -3, .high = 3, .dtype = int32});
  check_op_multi({{3, 50}}, [&](auto& x) { return pair(x[0].sort(-1, true)); }, "torch.sort(x0, descending=True, stable=True)",
                 {.low = -3, .high = 3, .dtype = int32});
  // NaN after every number ascending, before every number descending; infinities and ties among NaNs
  Tensor special = Tensor(std::vector<float>{1, NAN, -INFINITY, 2, NAN, INFINITY, -0.5f, 1, -INFINITY}, {9});
  check_op_inputs({special}, [&](auto& x) { return pair(x[0].sort()); }, "torch.sort(x0, stable=True)", {.grad = false});
  check_op_inputs({special}, [&](auto& x) { return pair(x[0].sort(0, true)); }, "torch.sort(x0, descending=True, stable=True)", {.grad = false});
  // int64 near its ends (the padding must not rest on a value no entry can take; the reference sees
  // values through doubles, so the largest is 2^63 - 1024), bool
  const int64_t big = INT64_MAX - 1023;
  Tensor ends = Tensor(std::vector<int64_t>{big, 3, INT64_MIN, big, -1}, {5});
  check_op_inputs({ends}, [&](auto& x) { return pair(x[0].sort()); }, "torch.sort(x0, stable=True)");
  check_op_inputs({ends}, [&](auto& x) { return pair(x[0].sort(0, true)); }, "torch.sort(x0, descending=True, stable=True)");
  EXPECT_EQ(Tensor(std::vector<int64_t>{INT64_MAX, INT64_MIN, 0}, {3}).sort().first.tolist<int64_t>(), (std::vector<int64_t>{INT64_MIN, 0, INT64_MAX}));
  EXPECT_EQ(Tensor(std::vector<int64_t>{INT64_MIN, INT64_MAX, 0}, {3}).sort(0, true).second.tolist<int>(), (std::vector<int>{1, 2, 0}));
  // the same specials as float64 (compared by value and position) and float16 (through a packed key)
  Tensor special64 = special.cast(tg::dtypes::float64), special16 = special.cast(float16);
  check_op_inputs({special64}, [&](auto& x) { return pair(x[0].sort()); }, "torch.sort(x0, stable=True)", {.grad = false});
  check_op_inputs({special64}, [&](auto& x) { return pair(x[0].sort(0, true)); }, "torch.sort(x0, descending=True, stable=True)", {.grad = false});
  check_op_inputs({special16}, [&](auto& x) { return pair(x[0].sort()); }, "torch.sort(x0.float(), stable=True)", {.grad = false});
  check_op_inputs({special16}, [&](auto& x) { return pair(x[0].sort(0, true)); }, "torch.sort(x0.float(), descending=True, stable=True)", {.grad = false});
  // -0 and 0 are equal (ties keep their order), in both paths
  for (tg::DType dt : {tg::dtypes::float32, tg::dtypes::float64}) {
    Tensor zeros = Tensor(std::vector<float>{0.f, -0.f, 1.f, 0.f, -0.f}, {5}).cast(dt);
    EXPECT_EQ(zeros.sort().second.tolist<int>(), (std::vector<int>{0, 1, 3, 4, 2})) << dt.name();
    EXPECT_EQ(zeros.sort(0, true).second.tolist<int>(), (std::vector<int>{2, 0, 1, 3, 4})) << dt.name();
  }
  // int8 and uint32 at its ends (a key moved down by 2^31)
  check_op_multi({{2, 40}}, [&](auto& x) { return pair(x[0].sort(-1, true)); }, "torch.sort(x0, descending=True, stable=True)",
                 {.low = -100, .high = 100, .dtype = tg::dtypes::int8});
  Tensor u32 = Tensor(std::vector<uint32_t>{4294967295u, 0, 7, 4294967295u, 1}, {5});
  EXPECT_EQ(u32.sort().second.tolist<int>(), (std::vector<int>{1, 4, 2, 0, 3}));
  EXPECT_EQ(u32.sort().first.tolist<uint32_t>(), (std::vector<uint32_t>{0, 1, 7, 4294967295u, 4294967295u}));
  EXPECT_EQ(u32.sort(0, true).second.tolist<int>(), (std::vector<int>{0, 3, 2, 4, 1}));
  Tensor flags = Tensor({true, false, true, false, false});
  check_op_inputs({flags}, [&](auto& x) { return pair(x[0].sort()); }, "torch.sort(x0, stable=True)");
  check_op({{4, 6}}, [](auto& x) { return x[0].argsort(1, true); }, "torch.argsort(x0, dim=1, descending=True)", {.grad = false});
  EXPECT_EQ(Tensor({3.f, 1.f}).sort().second.dtype(), int32);
  EXPECT_EQ(Tensor({2, 1}).sort().first.dtype(), int32);
  // 0-d, one entry, empty
  auto [v0, i0] = Tensor::full({}, 3.f).sort();
  EXPECT_EQ(v0.item<float>(), 3.f);
  EXPECT_EQ(i0.shape(), tg::Shape{});
  EXPECT_EQ(i0.item<int>(), 0);
  EXPECT_EQ(Tensor::ones({3, 1}).sort().second.tolist<int>(), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(Tensor::ones({2, 0}).sort().first.shape(), (tg::Shape{2, 0}));
  EXPECT_EQ(Tensor::ones({0, 4}).sort().second.shape(), (tg::Shape{0, 4}));
  EXPECT_THROW((void)Tensor::ones({2, 3}).sort(2), tg::Error);
  EXPECT_THROW((void)Tensor::ones({2, 3}).argsort(-3), tg::Error);
  // a dim of 2^31 entries has positions its int32 indices cannot number (a lazy constant: nothing allocated)
  EXPECT_THROW((void)Tensor::zeros({1, (int64_t{1} << 31) + 1}, tg::dtypes::int8).sort(1), tg::Error);
}

TEST(Reduce, BadInputs) {
  Tensor a = Tensor::ones({2, 3});
  EXPECT_THROW(a.prod({2}), tg::Error);
  EXPECT_THROW(a.prod({1, -1}), tg::Error);
  EXPECT_THROW(a.any({-3}), tg::Error);
  EXPECT_THROW(a.all({5}), tg::Error);
  EXPECT_THROW(a.argmax(2), tg::Error);
  EXPECT_THROW(a.argmin(-3), tg::Error);
  EXPECT_THROW(Tensor::ones({0, 3}).argmax(), tg::Error);
  EXPECT_THROW(Tensor::ones({0, 3}).argmin(0), tg::Error);
  EXPECT_THROW(a.cumsum(2), tg::Error);
  EXPECT_THROW(a.cummax(-3), tg::Error);
  EXPECT_THROW(a.topk(4, 1), tg::Error);
  EXPECT_THROW(a.topk(-1, 1), tg::Error);
  EXPECT_THROW(a.topk(1, 2), tg::Error);
  try {
    a.topk(4, 1);
  } catch (const tg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("topk"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(2,3)"), std::string::npos) << e.what();
  }
}

TEST(Reduce, TopkLongAxis) {
  // blocks of 256 keep their top k, then the survivors are ranked (the padded tail must never win)
  auto pair = [](std::pair<Tensor, Tensor> p) { return std::vector<Tensor>{p.first, p.second}; };
  check_op_multi({{2, 1500}}, [&](auto& x) { return pair(x[0].topk(5)); }, "torch.topk(x0, 5)");
  check_op_multi({{1100, 2}}, [&](auto& x) { return pair(x[0].topk(3, 0, false)); }, "torch.topk(x0, 3, dim=0, largest=False)");
  // masked logits: -inf entries must neither win nor turn the values into nan
  Tensor x = Tensor(std::vector<float>{1, -INFINITY, 3, -INFINITY, 2}, {5});
  check_op_inputs({x}, [&](auto& x) { return pair(x[0].topk(3)); }, "torch.topk(x0, 3)");
}
