// Shaping ops (cat, stack, repeat, unfold, split, chunk, tril/triu, roll, pad2d, unflatten, meshgrid) against
// PyTorch, forward and gradients, and their bad-input errors.
#include <gtest/gtest.h>

#include "ref.h"

using namespace tgtest;
using tg::Tensor;

namespace {
// Every piece of a split feeds the gradient: pieces weighted 1, 2, 3... and summed to one scalar.
Tensor weighted_total(const std::vector<Tensor>& pieces) {
  Tensor total = pieces[0].sum();
  for (size_t i = 1; i < pieces.size(); i++) total = total + pieces[i].sum() * static_cast<float>(i + 1);
  return total;
}
const char* kWeighted = "sum((i + 1) * p.sum() for i, p in enumerate(P))";
std::string weighted(const std::string& pieces) { return "(lambda P: " + std::string(kWeighted) + ")(" + pieces + ")"; }
}  // namespace

TEST(Shaping, Cat) {
  check_op({{2, 3}, {4, 3}, {1, 3}}, [](auto& x) { return Tensor::cat({x[0], x[1], x[2]}, 0); }, "torch.cat([x0, x1, x2], 0)");
  check_op({{2, 3}, {2, 1}}, [](auto& x) { return Tensor::cat({x[0], x[1]}, -1); }, "torch.cat([x0, x1], -1)");
  check_op({{2, 3, 2}, {2, 1, 2}}, [](auto& x) { return Tensor::cat({x[0], x[1]}, 1); }, "torch.cat([x0, x1], 1)");
  // a single tensor comes back as it is (* 2: backward() needs a graph, not a leaf)
  check_op({{2, 3}}, [](auto& x) { return Tensor::cat({x[0]}, 1) * 2; }, "torch.cat([x0], 1) * 2");
  check_op({{2, 3}, {2, 3}}, [](auto& x) { return Tensor::cat({x[0] > 0, x[1] > 0}, 0); }, "torch.cat([x0 > 0, x1 > 0], 0)");
  check_op({{2, 3}, {2, 3}}, [](auto& x) { return Tensor::cat({x[0], x[1]}, 0); }, "torch.cat([x0, x1], 0)",
           {.low = -9, .high = 9, .dtype = tg::dtypes::int32});
}

// -0.0 stays -0.0 through cat and stack, as in torch (1 / it is -inf): the pieces are selected, not
// summed with zeros (-0.0 + 0.0 is +0.0). Found by the differential campaign.
TEST(Shaping, CatKeepsNegativeZero) {
  for (tg::DType d : {tg::dtypes::float32, tg::dtypes::float16, tg::dtypes::float64}) {
    Tensor x = Tensor(std::vector<float>{-0.0f, 0.0f, -2.5f, -0.0f, 3.0f, -0.0f}, {2, 3}).cast(d);
    check_op_inputs({x}, [](auto& x) { return std::vector<Tensor>{1 / Tensor::cat({x[0], x[0]}, 1), 1 / Tensor::cat({x[0], x[0], x[0]}, 0),
                                                                  1 / Tensor::stack({x[0], x[0]}, 1)}; },
                    "(1 / torch.cat([x0, x0], 1), 1 / torch.cat([x0, x0, x0], 0), 1 / torch.stack([x0, x0], 1))", {.grad = false});
  }
}

TEST(Shaping, Stack) {
  check_op({{2, 3}, {2, 3}}, [](auto& x) { return Tensor::stack({x[0], x[1]}, 0); }, "torch.stack([x0, x1], 0)");
  check_op({{2, 3}, {2, 3}, {2, 3}}, [](auto& x) { return Tensor::stack({x[0], x[1], x[2]}, -1); }, "torch.stack([x0, x1, x2], -1)");
  check_op({{4}, {4}}, [](auto& x) { return Tensor::stack({x[0], x[1]}, 1); }, "torch.stack([x0, x1], 1)");
}

TEST(Shaping, Repeat) {
  check_op({{2, 3}}, [](auto& x) { return x[0].repeat({2, 1, 3}); }, "x0.repeat(2, 1, 3)");
  check_op({{3}}, [](auto& x) { return x[0].repeat({2, 2}); }, "x0.repeat(2, 2)");
  check_op({{2, 1, 2}}, [](auto& x) { return x[0].repeat({1, 3, 2}); }, "x0.repeat(1, 3, 2)");
}

TEST(Shaping, Unfold) {
  // windows apart (size <= step), overlapping (their gradients add up), whole dim, size 1, any dim
  check_op({{2, 9}}, [](auto& x) { return x[0].unfold(1, 2, 3); }, "x0.unfold(1, 2, 3)");
  check_op({{2, 9}}, [](auto& x) { return x[0].unfold(1, 3, 3); }, "x0.unfold(1, 3, 3)");
  check_op({{2, 9}}, [](auto& x) { return x[0].unfold(-1, 4, 1); }, "x0.unfold(-1, 4, 1)");
  check_op({{3, 10, 2}}, [](auto& x) { return x[0].unfold(1, 5, 2); }, "x0.unfold(1, 5, 2)");
  check_op({{7, 2}}, [](auto& x) { return x[0].unfold(0, 7, 4); }, "x0.unfold(0, 7, 4)");
  check_op({{4, 3}}, [](auto& x) { return x[0].unfold(0, 1, 1); }, "x0.unfold(0, 1, 1)");
  // a window twice over, and windows of windows
  check_op({{12}}, [](auto& x) { return x[0].unfold(0, 4, 2).unfold(1, 2, 1); }, "x0.unfold(0, 4, 2).unfold(1, 2, 1)");
  check_op({{3, 8}}, [](auto& x) { return x[0].unfold(1, 3, 2); }, "x0.unfold(1, 3, 2)", {.low = -50, .high = 50, .dtype = tg::dtypes::int32});
  // 0-d: one entry, no window dim; size 0: empty windows, one more than the entries at step 1
  check_op({{}}, [](auto& x) { return x[0].unfold(0, 1, 1); }, "x0.unfold(0, 1, 1)");
  EXPECT_EQ(Tensor::full({}, 2.f).unfold(-1, 0, 3).shape(), (tg::Shape{0}));
  EXPECT_EQ(Tensor::ones({2, 5}).unfold(1, 0, 1).shape(), (tg::Shape{2, 6, 0}));
  EXPECT_EQ(Tensor::ones({0, 3}).unfold(0, 0, 2).shape(), (tg::Shape{1, 3, 0}));
  EXPECT_EQ(Tensor::ones({6, 3}).unfold(0, 0, 4).shape(), (tg::Shape{2, 3, 0}));
  EXPECT_THROW((void)Tensor::ones({5}).unfold(0, 6, 1), tg::Error);
  EXPECT_THROW((void)Tensor::ones({5}).unfold(0, 2, 0), tg::Error);
  EXPECT_THROW((void)Tensor::ones({5}).unfold(0, -1, 1), tg::Error);
  EXPECT_THROW((void)Tensor::ones({5}).unfold(1, 1, 1), tg::Error);
  EXPECT_THROW((void)Tensor::full({}, 1.f).unfold(0, 2, 1), tg::Error);
}

TEST(Shaping, SplitAndChunk) {
  check_op_multi({{5, 4}}, [](auto& x) { return x[0].split(2, 0); }, "x0.split(2, 0)");
  check_op_multi({{3, 6}}, [](auto& x) { return x[0].split(std::vector<int64_t>{1, 3, 2}, -1); }, "x0.split([1, 3, 2], -1)");
  check_op_multi({{7, 2}}, [](auto& x) { return x[0].chunk(3, 0); }, "x0.chunk(3, 0)");
  check_op_multi({{2, 6}}, [](auto& x) { return x[0].chunk(4, -1); }, "x0.chunk(4, -1)");
  // gradients through every piece, not only the first
  check_op({{5, 4}}, [](auto& x) { return weighted_total(x[0].split(2, 0)); }, weighted("x0.split(2, 0)"));
  check_op({{3, 6}}, [](auto& x) { return weighted_total(x[0].split(std::vector<int64_t>{1, 3, 2}, 1)); },
           weighted("x0.split([1, 3, 2], 1)"));
  check_op({{7, 2}}, [](auto& x) { return weighted_total(x[0].chunk(3, 0)); }, weighted("x0.chunk(3, 0)"));
  EXPECT_EQ(Tensor::zeros({0, 3}).chunk(3, 0).size(), 3u);
}

TEST(Shaping, TrilTriu) {
  check_op({{4, 5}}, [](auto& x) { return x[0].tril(); }, "torch.tril(x0)");
  check_op({{4, 5}}, [](auto& x) { return x[0].tril(1); }, "torch.tril(x0, 1)");
  check_op({{2, 3, 3}}, [](auto& x) { return x[0].tril(-1); }, "torch.tril(x0, -1)");
  check_op({{4, 5}}, [](auto& x) { return x[0].triu(); }, "torch.triu(x0)");
  check_op({{4, 5}}, [](auto& x) { return x[0].triu(2); }, "torch.triu(x0, 2)");
  check_op({{2, 3, 3}}, [](auto& x) { return x[0].triu(-1); }, "torch.triu(x0, -1)");
  check_op({{3, 3}}, [](auto& x) { return x[0].tril(); }, "torch.tril(x0)", {.low = -9, .high = 9, .dtype = tg::dtypes::int32});
}

TEST(Shaping, Roll) {
  check_op({{4, 5}}, [](auto& x) { return x[0].roll({1, -2}, {0, 1}); }, "torch.roll(x0, shifts=(1, -2), dims=(0, 1))");
  check_op({{3, 4}}, [](auto& x) { return x[0].roll({7}, {-1}); }, "torch.roll(x0, 7, -1)");
  check_op({{3, 4}}, [](auto& x) { return x[0].roll({3}, {}); }, "torch.roll(x0, 3)");
  check_op({{3, 4}}, [](auto& x) { return x[0].roll({0, 4}, {0, 1}) * 2; }, "torch.roll(x0, (0, 4), (0, 1)) * 2");
}

TEST(Shaping, Pad2d) {
  check_op({{2, 3, 4}}, [](auto& x) { return x[0].pad2d({1, 2}); }, "F.pad(x0, (1, 2))");
  check_op({{2, 3, 4}}, [](auto& x) { return x[0].pad2d({1, 2, -1, 0}); }, "F.pad(x0, (1, 2, -1, 0))");
  check_op({{2, 3, 4}}, [](auto& x) { return x[0].pad2d({-1, -2, 2, 1, 0, 1}, 2.5); }, "F.pad(x0, (-1, -2, 2, 1, 0, 1), value=2.5)");
  check_op({{3, 4}}, [](auto& x) { return x[0].pad2d({-1, 3}, -1); }, "F.pad(x0, (-1, 3), value=-1)");
  // with a mode, as F.pad(x, padding, mode): the dims before the padded ones stay as they are
  using tg::PadMode;
  check_op({{2, 3, 4}}, [](auto& x) { return x[0].pad2d({1, 3}, PadMode::reflect); }, "F.pad(x0, (1, 3), mode='reflect')");
  check_op({{1, 2, 3, 4}}, [](auto& x) { return x[0].pad2d({2, 1, 0, 2}, PadMode::replicate); }, "F.pad(x0, (2, 1, 0, 2), mode='replicate')");
  check_op({{1, 2, 3, 4}}, [](auto& x) { return x[0].pad2d({4, 0, 1, 3}, PadMode::circular); }, "F.pad(x0, (4, 0, 1, 3), mode='circular')");
  check_op({{2, 3}}, [](auto& x) { return x[0].pad2d({-1, 2}, PadMode::constant, 1.5); }, "F.pad(x0, (-1, 2), value=1.5)");
  Tensor t = Tensor::ones({2, 3});
  EXPECT_THROW(t.pad2d({1, 1, 1}, PadMode::reflect), tg::Error);        // not pairs
  EXPECT_THROW(t.pad2d({1, 1, 1, 1, 1, 1}, PadMode::reflect), tg::Error);  // more dims than the tensor has
  EXPECT_THROW(t.pad2d({3, 0}, PadMode::reflect), tg::Error);            // a mirror of 3 needs 4 entries
  EXPECT_THROW(t.pad2d({-1, 0}, PadMode::replicate), tg::Error);         // only constant crops
  EXPECT_THROW(t.pad2d({1, 0}, PadMode::circular, 2.0), tg::Error);      // only constant takes a value
}

TEST(Shaping, Unflatten) {
  check_op({{4, 6, 2}}, [](auto& x) { return x[0].unflatten(1, {2, 3}); }, "x0.unflatten(1, (2, 3))");
  check_op({{4, 6}}, [](auto& x) { return x[0].unflatten(-1, {-1, 2}); }, "x0.unflatten(-1, (-1, 2))");
  check_op({{4, 6}}, [](auto& x) { return x[0].unflatten(0, {1, 4, 1}); }, "x0.unflatten(0, (1, 4, 1))");
}

TEST(Shaping, Meshgrid) {
  check_op_multi({{3}, {4}}, [](auto& x) { return Tensor::meshgrid({x[0], x[1]}); }, "torch.meshgrid(x0, x1, indexing='ij')");
  check_op_multi({{3}, {4}, {2}}, [](auto& x) { return Tensor::meshgrid({x[0], x[1], x[2]}, "xy"); },
                 "torch.meshgrid(x0, x1, x2, indexing='xy')");
  check_op({{3}, {4}}, [](auto& x) { auto g = Tensor::meshgrid({x[0], x[1]}, "xy"); return g[0] * g[1] + g[0]; },
           "(lambda a, b: a * b + a)(*torch.meshgrid(x0, x1, indexing='xy'))");
}

namespace {
// The message of the tg::Error that fn throws (empty when it throws none).
template <class Fn> std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const tg::Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Shaping, BadInputs) {
  Tensor a = Tensor::ones({2, 3}), b = Tensor::ones({2, 4}), i = Tensor::ones({2, 3}, tg::dtypes::int32);
  std::string m = error_of([&] { Tensor::cat({a, b}, 0); });
  EXPECT_NE(m.find("cat"), std::string::npos) << m;
  EXPECT_NE(m.find("(2,3)"), std::string::npos) << m;
  EXPECT_NE(m.find("(2,4)"), std::string::npos) << m;
  EXPECT_THROW(Tensor::cat({a, i}, 0), tg::Error);          // dtypes
  EXPECT_THROW(Tensor::cat({}, 0), tg::Error);              // empty list
  EXPECT_THROW(Tensor::cat({a, a}, 2), tg::Error);          // dim
  EXPECT_THROW(Tensor::cat({a, Tensor::ones({2, 3, 1})}, 0), tg::Error);  // ranks
  EXPECT_THROW(Tensor::cat({Tensor::ones({}), Tensor::ones({})}, 0), tg::Error);
  EXPECT_NE(error_of([&] { Tensor::stack({a, b}); }).find("stack"), std::string::npos);
  EXPECT_THROW(Tensor::stack({a, i}), tg::Error);
  EXPECT_THROW(Tensor::stack({}), tg::Error);
  EXPECT_THROW(Tensor::stack({a, a}, 3), tg::Error);
  EXPECT_THROW(a.repeat({2}), tg::Error);
  EXPECT_THROW(a.repeat({2, -1}), tg::Error);
  m = error_of([&] { a.split(std::vector<int64_t>{1, 1}, 1); });
  EXPECT_NE(m.find("split"), std::string::npos) << m;
  EXPECT_NE(m.find("(2,3)"), std::string::npos) << m;
  EXPECT_THROW(a.split(0, 1), tg::Error);
  EXPECT_THROW(a.split(1, 2), tg::Error);
  EXPECT_THROW(a.chunk(0), tg::Error);
  EXPECT_THROW(a.chunk(-2), tg::Error);
  EXPECT_THROW(Tensor::ones({3}).tril(), tg::Error);
  EXPECT_THROW(Tensor::ones({3}).triu(), tg::Error);
  EXPECT_THROW(a.roll({1, 2}, {0}), tg::Error);
  EXPECT_THROW(a.roll({1}, {2}), tg::Error);
  EXPECT_THROW(a.roll({1, 1}, {}), tg::Error);
  EXPECT_THROW(a.pad2d({1}), tg::Error);
  EXPECT_THROW(a.pad2d({1, 1, 1, 1, 1, 1}), tg::Error);
  EXPECT_THROW(a.pad2d({-2, -2}), tg::Error);  // crops more than the dim holds
  m = error_of([&] { a.unflatten(1, {2, 2}); });
  EXPECT_NE(m.find("unflatten"), std::string::npos) << m;
  EXPECT_NE(m.find("(2,3)"), std::string::npos) << m;
  EXPECT_THROW(a.unflatten(2, {3}), tg::Error);
  EXPECT_THROW(a.unflatten(1, {-1, -1}), tg::Error);
  EXPECT_THROW(a.unflatten(1, {}), tg::Error);
  EXPECT_THROW(Tensor::meshgrid({}), tg::Error);
  EXPECT_THROW(Tensor::meshgrid({Tensor::ones({3}), Tensor::ones({2, 2})}), tg::Error);
  EXPECT_THROW(Tensor::meshgrid({Tensor::ones({3}), Tensor::ones({3}, tg::dtypes::int32)}), tg::Error);
  EXPECT_THROW(Tensor::meshgrid({Tensor::ones({3})}, "yx"), tg::Error);
}
