// conv2d by Winograd's F(4, 5) along the rows (tensor/winograd.cpp): the output and both gradients
// against loops in double, with the tiles' padding (output rows not a multiple of 4), the conv's own
// padding and a bias; and which convs take the path.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "engine/schedule.h"
#include "runtime/device.h"
#include "tg/helpers.h"
#include "tg/tensor.h"

using namespace tg;

namespace {

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw, pad;
};

std::vector<float> randn(std::mt19937& rng, size_t count) {
  std::normal_distribution<float> d;
  std::vector<float> v(count);
  for (float& x : v) x = d(rng);
  return v;
}

// y = conv(x, w) + b, and the gradients of sum(y * g), in double
struct Reference {
  std::vector<double> y, dx, dw, db;
};
Reference reference(const ConvCase& k, const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                    const std::vector<float>& g) {
  int64_t ho = k.h + 2 * k.pad - k.kh + 1, wo = k.w + 2 * k.pad - k.kw + 1;
  Reference r{std::vector<double>(k.n * k.o * ho * wo), std::vector<double>(x.size()), std::vector<double>(w.size()), std::vector<double>(b.size())};
  for (int64_t n = 0; n < k.n; n++)
    for (int64_t o = 0; o < k.o; o++)
      for (int64_t y = 0; y < ho; y++)
        for (int64_t xo = 0; xo < wo; xo++) {
          int64_t yi = ((n * k.o + o) * ho + y) * wo + xo;
          double acc = b[o];
          r.db[o] += g[yi];
          for (int64_t c = 0; c < k.c; c++)
            for (int64_t ky = 0; ky < k.kh; ky++)
              for (int64_t kx = 0; kx < k.kw; kx++) {
                int64_t iy = y + ky - k.pad, ix = xo + kx - k.pad;
                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
                int64_t xi = ((n * k.c + c) * k.h + iy) * k.w + ix, wi = ((o * k.c + c) * k.kh + ky) * k.kw + kx;
                acc += double(x[xi]) * w[wi];
                r.dx[xi] += double(g[yi]) * w[wi];
                r.dw[wi] += double(g[yi]) * x[xi];
              }
          r.y[yi] = acc;
        }
  return r;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < got.size(); i++) ASSERT_NEAR(got[i], want[i], tol * scale) << what << " at " << i;
}

// The conv's kernels, forward and backward, realized eagerly
int64_t kernels_of_step(const ConvCase& k) {
  Tensor x = Tensor::rand({k.n, k.c, k.h, k.w}).realize().requires_grad_(), w = Tensor::rand({k.o, k.c, k.kh, k.kw}).realize().requires_grad_();
  Tensor loss = x.conv2d(w, std::nullopt, 1, {1}, {1}, {k.pad}).sum();
  loss.backward();
  GlobalCounters::reset();
  Tensor::corealize({loss, x.grad(), w.grad()});
  return GlobalCounters::kernel_count;
}

// Whether conv2d ran k by Winograd's: the 8 points' convs at least, more kernels than the direct conv
bool takes_winograd(const ConvCase& k) {
  int64_t direct;
  {
    Context ctx{{"WINO", 0}};
    direct = kernels_of_step(k);
  }
  return kernels_of_step(k) >= direct + 8;
}

}  // namespace

// Against loops: 16 -> 16 channels (channel tiles on AVX-512's 16-float vectors and AVX2's 8), rows of
// 10 outputs (3 tiles of 4, the last padded) and of 20 (5 whole tiles), with padding and a bias.
TEST(Winograd, MatchesLoopsForwardAndBackward) {
  std::mt19937 rng(5);
  for (const ConvCase& k : {ConvCase{2, 16, 13, 14, 16, 5, 5, 0}, ConvCase{2, 16, 9, 20, 32, 5, 5, 2}}) {
    std::string what = "x (" + std::to_string(k.n) + ", " + std::to_string(k.c) + ", " + std::to_string(k.h) + ", " + std::to_string(k.w) +
                       "), pad " + std::to_string(k.pad);
    ASSERT_TRUE(takes_winograd(k)) << what;
    std::vector<float> hx = randn(rng, k.n * k.c * k.h * k.w), hw = randn(rng, k.o * k.c * k.kh * k.kw), hb = randn(rng, k.o);
    int64_t ho = k.h + 2 * k.pad - k.kh + 1, wo = k.w + 2 * k.pad - k.kw + 1;
    std::vector<float> hg = randn(rng, k.n * k.o * ho * wo);
    Reference want = reference(k, hx, hw, hb, hg);
    Tensor x = Tensor(hx, {k.n, k.c, k.h, k.w}).requires_grad_(), w = Tensor(hw, {k.o, k.c, k.kh, k.kw}).requires_grad_();
    Tensor b = Tensor(hb, {k.o}).requires_grad_();
    Tensor y = x.conv2d(w, b, 1, {1}, {1}, {k.pad});
    (y * Tensor(hg, {k.n, k.o, ho, wo})).sum().backward();
    // fp32 rounding: F(4, 5)'s transforms scale values by up to ~10 (points +-2, +-1/2)
    expect_close(y.tolist<float>(), want.y, 2e-5, what + ": y");
    expect_close(x.grad().tolist<float>(), want.dx, 2e-5, what + ": dx");
    expect_close(w.grad().tolist<float>(), want.dw, 2e-5, what + ": dw");
    expect_close(b.grad().tolist<float>(), want.db, 2e-5, what + ": db");  // (the sum of the point 1's transformed dy)
  }
}

// The path is taken for a 5-wide kernel over enough channels (more kernels: transforms and one conv per
// point), and not with WINO=0, for a 3-wide kernel, too few channels or columns, a transformed input
// over 256 MiB, or a stride.
TEST(Winograd, WhichConvsTakeThePath) {
  ConvCase c5{2, 16, 13, 14, 16, 5, 5, 0};
  EXPECT_TRUE(takes_winograd(c5));
  {
    Context ctx{{"WINO", 0}};
    EXPECT_FALSE(takes_winograd(c5));
  }
  ConvCase c3{2, 16, 13, 14, 16, 5, 3, 0}, few{2, 2, 13, 14, 16, 5, 5, 0}, narrow{2, 16, 13, 7, 16, 5, 5, 0};
  for (const ConvCase& k : {c3, few, narrow}) EXPECT_FALSE(takes_winograd(k)) << k.c << " channels, " << k.kw << " wide, " << k.w << " columns";
  // a transformed input over 256 MiB (as a large batch's forward): the direct conv, scheduled (not run)
  auto forward_kernels = [](int64_t batch) {
    Tensor y = Tensor::empty({batch, 16, 13, 14}).conv2d(Tensor::empty({16, 16, 5, 5}));
    int64_t kernels = 0;
    for (const ScheduleItem& si : create_schedule({y.lazydata()})) kernels += si.is_kernel();
    return kernels;
  };
  EXPECT_GE(forward_kernels(12000), 8);  // 8 x 12000 x 16 x 3 tiles x 13 rows x 4 bytes: 240 MB
  EXPECT_LE(forward_kernels(14000), 2);  // 280 MB
  Tensor x = Tensor::rand({2, 16, 13, 14}).realize(), w = Tensor::rand({16, 16, 5, 5}).realize();
  GlobalCounters::reset();
  x.conv2d(w, std::nullopt, 1, {2}).realize();
  EXPECT_LE(GlobalCounters::kernel_count, 2);  // a strided conv: the direct kernel (and its weights' packing)
}

// The bias joins the product of the point 1 (At's column of ones), so its gradient sums that point's
// transformed dy, which the products read anyway: after the input and weight gradients, the bias
// gradient reads a buffer of the tiles' size (N, O, tiles, H), and neither the conv's output nor dy
// again (a batchnorm's backward would otherwise be recomputed for it: 26 MB in beautiful_mnist).
TEST(Winograd, BiasGradientSumsThePointOnesProduct) {
  ConvCase k{2, 16, 9, 20, 16, 5, 5, 0};
  int64_t ho = k.h - k.kh + 1, wo = k.w - k.kw + 1, tiles = (wo + 3) / 4;
  Tensor x = Tensor::rand({k.n, k.c, k.h, k.w}).realize().requires_grad_(), w = Tensor::rand({k.o, k.c, k.kh, k.kw}).realize().requires_grad_();
  Tensor b = Tensor::rand({k.o}).realize().requires_grad_(), g = Tensor::rand({k.n, k.o, ho, wo}).realize();
  Tensor y = x.conv2d(w, b);
  (y.relu() * g).sum().backward();
  Tensor::corealize({x.grad(), w.grad()});
  std::vector<size_t> read;
  for (const ScheduleItem& si : create_schedule({b.grad().lazydata()}))
    for (size_t i = si.outputs.size(); i < si.bufs.size(); i++) read.push_back(si.bufs[i]->size);
  EXPECT_NE(std::find(read.begin(), read.end(), static_cast<size_t>(k.n * k.o * tiles * ho)), read.end());
  EXPECT_EQ(std::find(read.begin(), read.end(), static_cast<size_t>(k.n * k.o * ho * wo)), read.end()) << "dy computed again";
  std::vector<float> hy = y.tolist<float>(), hg = g.tolist<float>(), db = b.grad().tolist<float>();
  for (int64_t o = 0; o < k.o; o++) {
    double want = 0;
    for (int64_t n = 0; n < k.n; n++)
      for (int64_t i = 0; i < ho * wo; i++) {
        size_t at = static_cast<size_t>((n * k.o + o) * ho * wo + i);
        want += hy[at] > 0 ? hg[at] : 0;
      }
    EXPECT_NEAR(db[static_cast<size_t>(o)], want, 1e-4 * std::max(1.0, std::abs(want))) << "channel " << o;
  }
}

// The points' convs run over (H, tiles): their input gradients (full convs, dy padded by kh - 1 rows each
// side) skip the padded rows in the reduce's bounds rather than copy each point's dy with zero rows
// around it; and dy, the same values either way, is realized once, in the order it is computed.
TEST(Winograd, InputGradientSkipsThePaddedRows) {
  ConvCase k{2, 16, 13, 20, 16, 5, 5, 0};
  int64_t ho = k.h - k.kh + 1, tiles = (k.w - k.kw + 1 + 3) / 4;
  Tensor x = Tensor::rand({k.n, k.c, k.h, k.w}).realize().requires_grad_(), w = Tensor::rand({k.o, k.c, k.kh, k.kw}).realize().requires_grad_();
  Tensor y = x.conv2d(w);
  (y.relu() * Tensor::rand(y.shape()).realize()).sum().backward();
  std::vector<size_t> written;
  for (const ScheduleItem& si : create_schedule({x.grad().lazydata(), w.grad().lazydata()}))
    for (size_t i = 0; i < si.outputs.size(); i++) written.push_back(si.bufs[i]->size);
  size_t padded = static_cast<size_t>(k.n * k.o * tiles * (ho + 2 * (k.kh - 1))), points_dy = static_cast<size_t>(k.n * k.o * tiles * ho);
  EXPECT_EQ(std::count(written.begin(), written.end(), padded), 0) << "a point's dy copied with its padded rows";
  EXPECT_GE(std::count(written.begin(), written.end(), points_dy), 8) << "the points' dy";
}

// The input transform's gradient is one reduce over the 8 points' gradients, each block of 4 columns
// taking tile T's own coefficients and tile T - 1's next ones (dV read through two views padded by a
// tile), with what follows in the backward (a relu's mask) in the same kernel: no buffer of the two
// sums (N, C, H, tiles, 4) written and added in a third pass.
TEST(Winograd, InputGradientIsOnePassOverThePoints) {
  ConvCase k{2, 16, 9, 20, 16, 5, 5, 0};
  int64_t tiles = (k.w - k.kw + 1 + 3) / 4;
  Tensor x = Tensor::rand({k.n, k.c, k.h, k.w}).realize().requires_grad_(), w = Tensor::rand({k.o, k.c, k.kh, k.kw}).realize().requires_grad_();
  Tensor y = (x - 0.5f).relu().conv2d(w);
  (y * Tensor::rand(y.shape()).realize()).sum().backward();
  Tensor::corealize({w.grad()});
  std::vector<size_t> written;
  for (const ScheduleItem& si : create_schedule({x.grad().lazydata()}))
    for (size_t i = 0; i < si.outputs.size(); i++) written.push_back(si.bufs[i]->size);
  EXPECT_EQ(std::count(written.begin(), written.end(), static_cast<size_t>(k.n * k.c * k.h * tiles * 4)), 0) << "a sum of the points' gradients";
  EXPECT_EQ(std::count(written.begin(), written.end(), static_cast<size_t>(k.n * k.c * k.h * k.w)), 1) << "x's gradient";
}
