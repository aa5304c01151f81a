// The rest of tinygrad's Tensor API in the C++ API, against PyTorch: einsum (forward and gradients, and a
// matmul-shaped formula as one kernel), interpolate, max_pool2d and avg_pool2d(ceil_mode), pow's gradient where the base is
// 0 or negative, multinomial's statistics, and torch_load of files torch.save writes in both formats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "ref.h"
#include "tg/state.h"

using namespace tgtest;
using tg::Tensor;
namespace dt = tg::dtypes;

TEST(Einsum, FormulasAgainstTorch) {
  struct Case { std::string f; std::vector<Shape> shapes; };
  for (const Case& c : std::vector<Case>{{"ij,jk->ik", {{3, 4}, {4, 5}}},
                                         {"bij,bjk", {{2, 3, 4}, {2, 4, 5}}},
                                         {"ii->i", {{4, 4}}},
                                         {"ii", {{4, 4}}},
                                         {"i,j->ij", {{3}, {4}}},
                                         {"...ij,...jk->...ik", {{2, 3, 4}, {1, 4, 5}}},
                                         {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}},
                                         {"bii->bi", {{2, 3, 3}}},
                                         {"ij->", {{3, 4}}}}) {
    std::string args;
    for (size_t i = 0; i < c.shapes.size(); i++) args += ", x" + std::to_string(i);
    check_op(c.shapes, [&](auto& x) { return Tensor::einsum(c.f, x); }, "torch.einsum('" + c.f + "'" + args + ")", {.atol = 1e-5});
  }
}

TEST(Einsum, MatmulFormulaIsOneKernel) {
  Tensor a = Tensor::rand({16, 8}).realize(), b = Tensor::rand({8, 12}).realize();
  tg::GlobalCounters::reset();
  Tensor c = Tensor::einsum("ij,jk->ik", {a, b}).realize();
  EXPECT_EQ(tg::GlobalCounters::kernel_count, 1);
  expect_close(to_doubles(c), to_doubles(a.matmul(b)), 1e-6, 1e-6, "einsum vs matmul");
}

TEST(Interpolate, ModesAgainstTorch) {
  check_op({{2, 3, 5, 7}}, [](auto& x) { return x[0].interpolate({8, 3}, "nearest"); }, "F.interpolate(x0, size=(8, 3), mode='nearest')");
  check_op({{2, 3, 5, 7}}, [](auto& x) { return x[0].interpolate({8, 3}, "nearest-exact"); },
           "F.interpolate(x0, size=(8, 3), mode='nearest-exact')");
  check_op({{2, 3, 5, 7}}, [](auto& x) { return x[0].interpolate({8, 3}, "bilinear"); },
           "F.interpolate(x0, size=(8, 3), mode='bilinear', align_corners=False)", {.atol = 1e-5});
  check_op({{2, 3, 5, 7}}, [](auto& x) { return x[0].interpolate({8, 3}, "bilinear", true); },
           "F.interpolate(x0, size=(8, 3), mode='bilinear', align_corners=True)", {.atol = 1e-5});
  check_op({{1, 2, 3, 4, 5}}, [](auto& x) { return x[0].interpolate({5, 2, 7}, "trilinear"); },
           "F.interpolate(x0, size=(5, 2, 7), mode='trilinear')", {.atol = 1e-5});
  check_op({{2, 3, 9}}, [](auto& x) { return x[0].interpolate({4}); }, "F.interpolate(x0, size=(4,), mode='linear')", {.atol = 1e-5});
}

TEST(MaxPool2d, CeilModeAgainstTorch) {
  check_op({{1, 2, 7, 9}}, [](auto& x) { return x[0].max_pool2d({2, 2}, {}, {1}, {0}, true); }, "F.max_pool2d(x0, 2, ceil_mode=True)");
  check_op({{1, 2, 7, 9}}, [](auto& x) { return x[0].max_pool2d({3, 3}, {2}, {1}, {1}, true); },
           "F.max_pool2d(x0, 3, stride=2, padding=1, ceil_mode=True)");
  check_op({{1, 1, 6, 6}}, [](auto& x) { return x[0].max_pool2d({3, 3}, {2}, {1}, {1}, true); },
           "F.max_pool2d(x0, 3, stride=2, padding=1, ceil_mode=True)");
  check_op({{1, 2, 7, 9}}, [](auto& x) { return x[0].max_pool2d({3, 3}, {3}, {2}, {1}, true); },
           "F.max_pool2d(x0, 3, stride=3, padding=1, dilation=2, ceil_mode=True)");
}

// The divisor is over the entries in the input and (count_include_pad) the asked-for padding, never over
// those past them that ceil_mode adds; torch's avg_pool2d has no dilation.
TEST(AvgPool2d, CeilModeAgainstTorch) {
  for (bool count_pad : {true, false}) {
    std::string cp = count_pad ? "True" : "False";
    check_op({{1, 2, 7, 9}}, [&](auto& x) { return x[0].avg_pool2d({2, 2}, {}, {1}, {0}, count_pad, true); },
             "F.avg_pool2d(x0, 2, ceil_mode=True, count_include_pad=" + cp + ")");
    check_op({{1, 2, 7, 9}}, [&](auto& x) { return x[0].avg_pool2d({3, 3}, {2}, {1}, {1}, count_pad, true); },
             "F.avg_pool2d(x0, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=" + cp + ")");
    check_op({{1, 1, 6, 6}}, [&](auto& x) { return x[0].avg_pool2d({3, 3}, {2}, {1}, {1}, count_pad, true); },
             "F.avg_pool2d(x0, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=" + cp + ")");
    check_op({{2, 3, 8, 5}}, [&](auto& x) { return x[0].avg_pool2d({2, 3}, {3, 2}, {1}, {1}, count_pad, true); },
             "F.avg_pool2d(x0, (2, 3), stride=(3, 2), padding=1, ceil_mode=True, count_include_pad=" + cp + ")");
  }
}

// Every (base, exponent) pair of bases with 0, -0 and negatives and whole, half and other exponents.
TEST(Pow, GradientAtZeroAndNegativeBases) {
  std::vector<float> bases = {0.f, -0.f, 1.f, -1.f, 2.f, -2.f, 0.5f, -0.5f}, exps = {0.f, 0.5f, 1.f, 1.5f, 2.f, 2.5f, 3.f, -1.f, -2.f, -0.5f, -1.5f};
  std::vector<float> b, e;
  for (float x : bases)
    for (float y : exps) b.push_back(x), e.push_back(y);
  Shape s{static_cast<int64_t>(b.size())};
  check_op_inputs({Tensor(b, s), Tensor(e, s)}, [](auto& x) { return std::vector<Tensor>{x[0].pow(x[1])}; }, "torch.pow(x0, x1)",
                  {.atol = 1e-5, .rtol = 1e-5, .grad_atol = 1e-5, .grad_rtol = 1e-5});
  for (double y : {0.0, 0.5, 1.5, 2.0, 2.5, 3.0, -1.0, -1.5, 0.25}) {
    char expr[64];
    std::snprintf(expr, sizeof expr, "torch.pow(x0, %.2f)", y);
    check_op_inputs({Tensor(bases, {8})}, [y](auto& x) { return std::vector<Tensor>{x[0].pow(y)}; }, expr,
                    {.atol = 1e-5, .rtol = 1e-5, .grad_atol = 1e-5, .grad_rtol = 1e-5});
  }
}

TEST(Autograd, ComparisonsDoNotRequireGrad) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).requires_grad_();
  for (const Tensor& c : {x < 2.f, x == 2.f, x >= 1.f, x.ne(x), x.cast(dt::int32)}) {
    EXPECT_EQ(c.requires_grad(), std::optional<bool>(false));
    EXPECT_THROW(c.cast(dt::float32).sum().backward(), tg::Error);
  }
  (x * (x > 1.5f)).sum().backward();
  EXPECT_EQ(x.grad().tolist<float>(), (std::vector<float>{0, 1, 1}));
}

TEST(Multinomial, Statistics) {
  Tensor::manual_seed(5);
  std::vector<float> w = {1, 2, 0, 5};
  std::vector<int32_t> s = Tensor(w, {4}).multinomial(20000, true).tolist<int32_t>();
  std::vector<double> count(4, 0);
  for (int32_t v : s) count.at(static_cast<size_t>(v)) += 1;
  for (size_t i = 0; i < 4; i++) EXPECT_NEAR(count[i] / 20000, w[i] / 8.0, 0.012) << "category " << i;
  std::vector<int32_t> nr = Tensor(w, {4}).multinomial(3).tolist<int32_t>();  // without replacement: the 3 non-zero ones
  std::sort(nr.begin(), nr.end());
  EXPECT_EQ(nr, (std::vector<int32_t>{0, 1, 3}));
}

// Files written by torch.save (Debian's python3-torch, through the reference process), read by tg.
TEST(TorchLoad, FilesTorchWrites) {
  std::string dir = ::testing::TempDir() + "tg_torch_load_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  for (bool zip : {true, false}) {
    std::string path = dir + (zip ? "/new.pth" : "/old.pth");
    std::string save = "(torch.save({'w': x0, 'wt': x0.t(), 'h': x0.half(), 'i': x1, 'n': {'b': x0[1]}, 'epoch': 3}, '" + path +
                       "', _use_new_zipfile_serialization=" + (zip ? "True" : "False") + "), x0)[1]";
    Tensor w = random_tensor({3, 4}, -2, 2, dt::float32, 1), i = Tensor({1, -2, 3}).cast(dt::int64);
    torch_eval(save, {w, i});
    std::map<std::string, Tensor> sd = tg::nn::state::torch_load(path);
    ASSERT_EQ(sd.size(), 5u) << path;  // the int is skipped; the nested dict's tensor is "n.b"
    expect_close(to_doubles(sd.at("w")), to_doubles(w), 0, 0, path + " w");
    expect_close(to_doubles(sd.at("wt")), to_doubles(w.transpose()), 0, 0, path + " wt");
    expect_close(to_doubles(sd.at("h")), to_doubles(w.cast(dt::float16)), 0, 0, path + " h");
    expect_close(to_doubles(sd.at("n.b")), to_doubles(w[1]), 0, 0, path + " n.b");
    EXPECT_EQ(sd.at("i").dtype(), dt::int64);
    EXPECT_EQ(sd.at("i").tolist<int64_t>(), (std::vector<int64_t>{1, -2, 3}));
    EXPECT_EQ(sd.at("h").dtype(), dt::float16);
  }
  std::filesystem::remove_all(dir);
}
