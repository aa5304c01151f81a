// Indexing against PyTorch: Tensor::index (ints, slices, None, Ellipsis, integer tensors), gather,
// scatter, scatter_reduce, masked_fill and one_hot, forward values and gradients; bad indices are tg::Errors.
#include <gtest/gtest.h>

#include "ref.h"

using namespace tgtest;
using tg::Tensor;
using namespace tg::indexing;

namespace {

Tensor rnd(const Shape& s, uint32_t seed = 1) { return random_tensor(s, -2, 2, tg::dtypes::float32, seed); }
Tensor ints(const std::vector<int>& v, const Shape& s) { return Tensor(v, s); }
// check_op_inputs with one tg output
void check(std::vector<Tensor> in, const TgFn& fn, const std::string& expr) {
  check_op_inputs(std::move(in), [&](std::vector<Tensor>& x) { return std::vector<Tensor>{fn(x)}; }, expr);
}

}  // namespace

TEST(Indexing, IntsSlicesNoneEllipsis) {
  check_op({{4, 5}}, [](auto& x) { return x[0][2]; }, "x0[2]");
  check_op({{4, 5}}, [](auto& x) { return x[0][-1]; }, "x0[-1]");
  check_op({{4, 5, 6}}, [](auto& x) { return x[0].index({1, -2}); }, "x0[1, -2]");
  check_op({{4, 5, 6}}, [](auto& x) { return x[0].index({Slice(1, 3), Slice(), Slice(std::nullopt, std::nullopt, 2)}); },
           "x0[1:3, :, ::2]");
  check_op({{7, 5}}, [](auto& x) { return x[0].index({Slice(std::nullopt, std::nullopt, -1)}); }, "x0.flip(0)");
  check_op({{7, 5}}, [](auto& x) { return x[0].index({Slice(5, 0, -2), Slice(-4, std::nullopt, 3)}); },
           "x0.flip(0)[1:7:2][:3][:, 1::3]");
  check_op({{4, 5, 6}}, [](auto& x) { return x[0].index({Ellipsis, 2}); }, "x0[..., 2]");
  check_op({{4, 5, 6}}, [](auto& x) { return x[0].index({None, 1, Ellipsis, None, Slice(1, -1)}); },
           "x0[None, 1, ..., None, 1:-1]");
  check_op({{4, 5}}, [](auto& x) { return x[0].index({Slice(10, 20)}); }, "x0[10:20]");
  check_op({{4, 5}}, [](auto& x) { return x[0].index({Slice(-100, 100, 3), Slice(3, 1)}); }, "x0[-100:100:3, 3:1]");
}

TEST(Indexing, OneIntegerTensorOnAnyDim) {
  Tensor idx = ints({0, 3, -1, 3, 1}, {5});
  check({rnd({4, 3}), idx}, [](auto& x) { return x[0].index({x[1]}); }, "x0[x1.long()]");
  check({rnd({3, 4, 2}), idx}, [](auto& x) { return x[0].index({Slice(), x[1]}); }, "x0[:, x1.long()]");
  check({rnd({2, 3, 4}), idx}, [](auto& x) { return x[0].index({Ellipsis, x[1]}); }, "x0[..., x1.long()]");
  // a 2-d index and ints/None around it
  Tensor idx2 = ints({2, 0, -3, 1, 1, 2}, {2, 3});
  check({rnd({3, 3, 5}), idx2}, [](auto& x) { return x[0].index({1, x[1], None}); }, "x0[1, x1.long(), None]");
  check({rnd({2, 3}), ints({1}, {})}, [](auto& x) { return x[0].index({Slice(), x[1]}); }, "x0[:, x1.long()]");
}

// data seen through views the gather cannot read in place (a pad along the axis, two views) is
// copied first; a computed or constant tensor is realized first
TEST(Indexing, IntegerTensorThroughViews) {
  Tensor idx = ints({4, 0, -2, 1}, {4});
  check({rnd({3, 4}), idx}, [](auto& x) { return x[0].pad({{1, 1}, {0, 0}}).index({x[1]}); }, "F.pad(x0, (0, 0, 1, 1))[x1.long()]");
  check({rnd({3, 4}), idx}, [](auto& x) { return x[0].pad({{0, 0}, {1, 1}}).index({Slice(), x[1]}); }, "F.pad(x0, (1, 1))[:, x1.long()]");
  // a pad on another dim is read in place, its mask kept
  check({rnd({3, 4}), ints({2, 0, -1}, {3})}, [](auto& x) { return x[0].pad({{0, 0}, {1, 2}}).index({x[1]}); },
        "F.pad(x0, (1, 2))[x1.long()]");
  check({rnd({3, 4}), idx}, [](auto& x) { return x[0].transpose().reshape({12}).index({x[1]}); }, "x0.T.reshape(12)[x1.long()]");
  check({rnd({1, 3}), idx}, [](auto& x) { return x[0].expand({5, 3}).index({x[1]}); }, "x0.expand(5, 3)[x1.long()]");
  check({rnd({5, 2}), idx}, [](auto& x) { return (x[0] * 2).exp().index({x[1]}); }, "(x0 * 2).exp()[x1.long()]");
  check({idx}, [](auto&) { return Tensor::full({5, 2}, 3.f).index({Tensor(std::vector<int>{4, -5, 0}, {3})}); }, "torch.full((3, 2), 3.)");
  Tensor empty = Tensor::zeros({5, 2}).index({Tensor(std::vector<int>{}, {0})});
  EXPECT_EQ(empty.shape(), (Shape{0, 2}));
}

TEST(Indexing, SeveralIntegerTensors) {
  Tensor r = ints({0, 2, -1, 1}, {4, 1}), c = ints({1, 0, 3}, {3});
  // adjacent: the broadcast shape replaces the indexed dims in place
  check({rnd({2, 3, 4, 5}), r, c}, [](auto& x) { return x[0].index({Slice(), x[1], x[2]}); }, "x0[:, x1.long(), x2.long()]");
  check({rnd({3, 4}), r, c}, [](auto& x) { return x[0].index({x[1], x[2]}); }, "x0[x1.long(), x2.long()]");
  // not adjacent: the broadcast shape comes first
  check({rnd({3, 2, 4}), r, c}, [](auto& x) { return x[0].index({x[1], Slice(), x[2]}); }, "x0[x1.long(), :, x2.long()]");
  check({rnd({3, 4}), r, c}, [](auto& x) { return x[0].index({x[1], None, x[2]}); }, "x0[x1.long(), None, x2.long()]");
}

TEST(Indexing, Gather) {
  Tensor i1 = ints({0, 3, 3, 1, 2, 0}, {3, 2});
  check({rnd({3, 4}), i1}, [](auto& x) { return x[0].gather(1, x[1]); }, "x0.gather(1, x1.long())");
  Tensor i0 = ints({2, 0, 1, 1, 2, 2, 0, 0}, {2, 4});
  check({rnd({3, 4}), i0}, [](auto& x) { return x[0].gather(0, x[1]); }, "x0.gather(0, x1.long())");
  // index smaller than the input in the other dims
  Tensor i2 = ints({1, 1, 0, 2}, {2, 2, 1});
  check({rnd({3, 3, 2}), i2}, [](auto& x) { return x[0].gather(-2, x[1]); }, "x0.gather(-2, x1.long())");
}

TEST(Indexing, Scatter) {
  Tensor i0 = ints({1, 0, 2, 0, 2, 1}, {2, 3});
  check({rnd({3, 4}), i0, rnd({2, 3}, 2)}, [](auto& x) { return x[0].scatter(0, x[1], x[2]); },
        "x0.scatter(0, x1.long(), x2)");
  Tensor i1 = ints({3, 0, 1, 2}, {2, 2});
  check({rnd({2, 5}), i1, rnd({2, 2}, 3)}, [](auto& x) { return x[0].scatter(1, x[1], x[2]); },
        "x0.scatter(1, x1.long(), x2)");
  // src larger than the index (torch 1.13's backward cannot do this one: forward only)
  check_op_inputs({rnd({2, 5}), i1, rnd({2, 3}, 3)}, [](auto& x) { return std::vector<Tensor>{x[0].scatter(1, x[1], x[2])}; },
                  "x0.scatter(1, x1.long(), x2)", {.grad = false});
  check({rnd({2, 5}), i1}, [](auto& x) { return x[0].scatter(-1, x[1], 7.5); }, "x0.scatter(-1, x1.long(), 7.5)");
}

TEST(Indexing, ScatterReduce) {
  // repeated and negative indices, positions nothing hits, an index smaller than the input in the other
  // dim; every reduce with and without the input's values, and the gradients torch has (sum, mean, amax,
  // amin, prod without zeros)
  Tensor i0 = ints({1, 0, -1, 0, 2, 0}, {2, 3});
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"})
    for (bool self : {true, false}) {
      std::string expr = std::string("x0.scatter_reduce(0, torch.where(x1 < 0, x1 + 4, x1).long(), x2, '") + reduce +
                         "', include_self=" + (self ? "True" : "False") + ")";
      check_op_inputs({rnd({4, 5}), i0, rnd({2, 3}, 2)}, [&](auto& x) { return std::vector<Tensor>{x[0].scatter_reduce(0, x[1], x[2], reduce, self)}; },
                      expr, {.grad = std::string(reduce) != "prod" || self});
    }
  // src larger than the index (torch 1.13's backward cannot do this one: forward only)
  check_op_inputs({rnd({4, 5}), i0, rnd({2, 4}, 2)}, [](auto& x) { return std::vector<Tensor>{x[0].scatter_reduce(0, x[1], x[2], "amax")}; },
                  "x0.scatter_reduce(0, torch.where(x1 < 0, x1 + 4, x1).long(), x2, 'amax')", {.grad = false});
  Tensor i1 = ints({3, 0, 3, 3, 1, 1}, {2, 3});
  check({rnd({2, 5}), i1, rnd({2, 3}, 3)}, [](auto& x) { return x[0].scatter_reduce(1, x[1], x[2], "mean"); },
        "x0.scatter_reduce(1, x1.long(), x2, 'mean')");
  // integers: sums and products exact, mean by floor division (as torch)
  Tensor si = ints({10, 20, 30, 41}, {4}), ii = ints({0, 0, 1, 3, 3}, {5}), srci = ints({1, -2, 3, 4, 6}, {5});
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"})
    for (bool self : {true, false})
      check_op_inputs({si, ii, srci}, [&](auto& x) { return std::vector<Tensor>{x[0].scatter_reduce(0, x[1], x[2], reduce, self)}; },
                      std::string("x0.scatter_reduce(0, x1.long(), x2, '") + reduce + "', include_self=" + (self ? "True" : "False") + ")");
  EXPECT_EQ(ints({-7, 0}, {2}).scatter_reduce(0, ints({0, 0}, {2}), ints({0, 0}, {2}), "mean").tolist<int>(), (std::vector<int>{-3, 0}));
  // 0-d, an empty index
  EXPECT_EQ(Tensor::full({}, 2.f).scatter_reduce(0, Tensor::full({}, 0, tg::dtypes::int32), Tensor::full({}, 5.f), "sum").item<float>(), 7.f);
  EXPECT_EQ(Tensor({1.f, 2.f}).scatter_reduce(0, Tensor::zeros({0}, tg::dtypes::int32), Tensor::zeros({0}), "prod").tolist<float>(),
            (std::vector<float>{1.f, 2.f}));
  Tensor x = Tensor({1.f, 2.f});
  EXPECT_THROW((void)x.scatter_reduce(0, ints({0}, {1}), Tensor({1.f}), "max"), tg::Error);
  EXPECT_THROW((void)x.scatter_reduce(0, ints({0}, {1}), ints({1}, {1}), "sum"), tg::Error);     // src dtype
  EXPECT_THROW((void)x.scatter_reduce(0, Tensor({0.f}), Tensor({1.f}), "sum"), tg::Error);        // float index
  EXPECT_THROW((void)x.scatter_reduce(1, ints({0}, {1}), Tensor({1.f}), "sum"), tg::Error);       // dim
  EXPECT_THROW((void)x.scatter_reduce(0, ints({0, 1, 0}, {3}), Tensor({1.f}), "sum"), tg::Error);  // index past src
}

TEST(Indexing, MaskedFillAndOneHot) {
  Tensor m = Tensor(std::vector<bool>{true, false, false, true, true}, {5});
  check({rnd({3, 5}), m}, [](auto& x) { return x[0].masked_fill(x[1], -3.5); }, "x0.masked_fill(x1, -3.5)");
  Tensor cls = ints({0, 3, 1, 3, 2, 0}, {2, 3});
  check({cls}, [](auto& x) { return x[0].one_hot(); }, "F.one_hot(x0.long())");
  check({cls}, [](auto& x) { return x[0].one_hot(6); }, "F.one_hot(x0.long(), 6)");
}

TEST(Indexing, FiniteDifferences) {
  Tensor idx = ints({2, 0, 2, -1}, {4});
  fd_check({{3, 2}}, [&](auto& x) { return x[0].index({idx}); });
  fd_check({{3, 4}}, [&](auto& x) { return x[0].index({Slice(std::nullopt, std::nullopt, -2), 1}); });
}

// A bool mask selects its true entries (the output's size depends on the data, read on the host).
TEST(Indexing, BoolMask) {
  Tensor row_mask = Tensor(std::vector<bool>{true, false, true}, {3});
  Tensor col_mask = Tensor(std::vector<bool>{false, true, true, false}, {4});
  Tensor full_mask = Tensor(std::vector<bool>{true, false, false, true, true, true, false, false, false, true, false, true}, {3, 4});
  check({rnd({3, 4}), row_mask}, [](auto& x) { return x[0].index({x[1]}); }, "x0[x1]");
  check({rnd({3, 4}), col_mask}, [](auto& x) { return x[0].index({Slice(), x[1]}); }, "x0[:, x1]");
  check({rnd({3, 4}), full_mask}, [](auto& x) { return x[0].index({x[1]}); }, "x0[x1]");
  check({rnd({2, 3, 4}), full_mask}, [](auto& x) { return x[0].index({1, x[1]}); }, "x0[1, x1]");
  check({rnd({3, 4}), Tensor::zeros({3}, tg::dtypes::bool_)}, [](auto& x) { return x[0].index({x[1]}); }, "x0[x1]");
  EXPECT_THROW(rnd({3, 4}).index({Tensor::ones({3, 5}, tg::dtypes::bool_)}), tg::Error);
}

TEST(Indexing, BadInputs) {
  Tensor x = Tensor::zeros({3, 4});
  EXPECT_THROW(x.index({3}), tg::Error);
  EXPECT_THROW(x.index({0, 4}), tg::Error);
  EXPECT_THROW(x.index({Slice(0, 2, 0)}), tg::Error);
  EXPECT_THROW(x.index({0, 0, 0}), tg::Error);
  EXPECT_THROW(x.index({Ellipsis, 0, Ellipsis}), tg::Error);
  EXPECT_THROW(x.index({Tensor({1.f, 0.f})}), tg::Error);
  EXPECT_THROW(x.index({Tensor({true, false})}), tg::Error);
  EXPECT_THROW(x.index({Tensor(std::vector<int>{0, 1}, {2}), Tensor(std::vector<int>{0, 1, 2}, {3})}), tg::Error);
  EXPECT_THROW(x.gather(1, Tensor(std::vector<int>{0, 1}, {2})), tg::Error);
  EXPECT_THROW(x.gather(2, Tensor(std::vector<int>{0, 1}, {1, 2})), tg::Error);
  EXPECT_THROW(x.gather(1, Tensor(std::vector<int>{0, 1, 0, 0, 0}, {5, 1})), tg::Error);
  EXPECT_THROW(x.scatter(0, Tensor(std::vector<int>{0}, {1, 1}), Tensor::zeros({1, 1}, tg::dtypes::int32)), tg::Error);
  EXPECT_THROW(x.masked_fill(Tensor({1, 0, 1, 0}), 1), tg::Error);
  EXPECT_THROW(x.masked_fill(Tensor::ones({2, 3, 4}, tg::dtypes::bool_), 1), tg::Error);
  EXPECT_THROW(x.one_hot(), tg::Error);
  EXPECT_THROW(Tensor({-1, 2}).one_hot(), tg::Error);
  try {
    x.index({0, 7});
    FAIL() << "no error";
  } catch (const tg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("index"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(3,4)"), std::string::npos) << e.what();
  }
}
