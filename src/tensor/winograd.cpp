// Winograd's minimal filtering along the rows of a 2D conv (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks"; the Toom-Cook construction). A conv whose kernel is r wide computes
// each tile of m = 4 outputs of a row from alpha = m + r - 1 inputs with alpha multiplies per kernel row
// instead of m * r: the inputs' transform V = Bt x (alpha values per tile), the weights' U = G w, and the
// outputs At (V * U). Over channels and the kernel's rows, the products are alpha ordinary convs, one per
// point, each with a kernel one column wide: a 5x5 conv does 8 / 20 of a direct conv's multiply-adds in
// convs the kernel heuristics tile as well as any (beautiful_mnist's 32->32 5x5 conv on 512 24x24
// images, Zen 5: forward 27 -> 17 ms, both gradients 61 -> 44-55 ms). The transforms are about a third
// of that: they turn rows of 4-float runs into rows of points, transposes at 30-60 GB/s.
// The steps are Tensor ops, so autograd makes the gradients of the same shape (a conv's gradient through
// its transforms is again alpha 1-column convs and two transforms).
// Along the rows only: F(4x4, 5x5) in 2D needs 64 / 400 of the multiply-adds, and a prototype's 64
// point products (one batched matmul, channels last) took 6 ms where the 8 1-column convs take 13, but
// its transforms (Tensor ops that move the channels last) took 5-30 ms per kernel: 155 ms forward.
#include <cmath>

#include "tensor/internal.h"

namespace tg::detail {

namespace {

// The transform matrices of F(4, r) in double: the alpha - 1 finite points a_j and the point at infinity.
// Row j of Bt holds the coefficients (lowest first) of prod over l != j of (x - a_l), and the last row
// those of prod over all l; G's row j is a_j^k / prod over l != j of (a_j - a_l), and the last row picks
// the kernel's last tap; At's column j is the powers a_j^i, and the last column picks the last output.
// Points near 0 keep the products of few large terms: 0, +-1, +-2, +-1/2 (F(4,5) in fp32: relative
// error ~3e-6 on N(0,1) inputs).
struct Matrices {
  int64_t alpha;
  std::vector<double> bt, g, at;  // (alpha, alpha), (alpha, r), (m, alpha) row-major
};

constexpr int64_t kTile = 4;  // m: outputs per tile

constexpr double kPoints[] = {0, 1, -1, 2, -2, 0.5, -0.5};
constexpr int64_t kOnesPoint = 1;  // At's column of the point 1 is all ones: the bias joins its product
static_assert(kPoints[kOnesPoint] == 1);

Matrices matrices(int64_t r) {
  int64_t alpha = kTile + r - 1, finite = alpha - 1;
  TG_ASSERT(finite <= static_cast<int64_t>(std::size(kPoints)), "winograd: no points for F(", kTile, ", ", r, ")");
  auto poly = [&](int64_t skip) {  // coefficients of prod over l != skip of (x - a_l), lowest first
    std::vector<double> c{1};
    for (int64_t l = 0; l < finite; l++) {
      if (l == skip) continue;
      std::vector<double> next(c.size() + 1, 0);
      for (size_t i = 0; i < c.size(); i++) next[i + 1] += c[i], next[i] -= kPoints[l] * c[i];
      c = next;
    }
    return c;
  };
  Matrices m{alpha, std::vector<double>(alpha * alpha, 0), std::vector<double>(alpha * r, 0), std::vector<double>(kTile * alpha, 0)};
  for (int64_t j = 0; j < alpha; j++) {
    std::vector<double> c = poly(j < finite ? j : -1);
    for (size_t a = 0; a < c.size(); a++) m.bt[j * alpha + a] = c[a];
  }
  for (int64_t j = 0; j < finite; j++) {
    double denom = 1;
    for (int64_t l = 0; l < finite; l++)
      if (l != j) denom *= kPoints[j] - kPoints[l];
    for (int64_t k = 0; k < r; k++) m.g[j * r + k] = std::pow(kPoints[j], static_cast<double>(k)) / denom;
    for (int64_t i = 0; i < kTile; i++) m.at[i * alpha + j] = std::pow(kPoints[j], static_cast<double>(i));
  }
  m.g[finite * r + r - 1] = 1;
  m.at[(kTile - 1) * alpha + finite] = 1;
  return m;
}

Tensor on_device(const std::vector<double>& v, const Shape& shape, DType dt, const std::string& device) {
  return Tensor(std::vector<float>(v.begin(), v.end()), shape, device).cast(dt);
}

// V = Bt x along the rows, as (alpha, N, C, tiles, H): each tile's inputs are its own block of 4 columns
// of x and `tail` of the next block's, two views of x cut in blocks (not overlapping windows, whose
// gradient is a gather). One tensor of all alpha points, not alpha sums of x's columns: those (one kernel
// of 8 outputs) make the input gradient a single elementwise kernel but both ran slower in the step (Zen 5,
// forward 3.4 -> 6.1 ms, input gradient 8.0 -> 8.8-15.8 ms). The rows of points run along H, so that the
// transform writes whole rows of the image's length (along the tiles, rows of 5: 3.5 -> 6.6 ms).
// Its backward reads dV the other way round, (alpha, N, C, H, tiles): the points' convs give their input
// gradients so (they run over (H, tiles), see winograd_conv2d), and so does the image, each row of x a
// row of tiles (through autograd of the forward, its two sums read the 8 gradients transposed: 3.7 -> 8.3 ms).
struct RowTransform : Function {
  RowTransform(std::vector<double> bt, int64_t alpha, int64_t tiles) : bt(std::move(bt)), alpha(alpha), tiles(tiles) {}
  std::vector<double> bt;
  int64_t alpha, tiles;
  Shape x_shape;
  // the coefficients of a tile's own block (columns 0..kTile-1 of Bt) and of the next block's first `tail`
  std::pair<Tensor, Tensor> halves(DType dt, const std::string& device) const {
    Tensor m = on_device(bt, {alpha, alpha}, dt, device);
    return {m.shrink({{0, alpha}, {0, kTile}}), m.shrink({{0, alpha}, {kTile, alpha}})};
  }
  LBPtr forward(Inputs xs) override {
    Tensor x(xs[0], false);
    x_shape = x.shape();
    int64_t n = x_shape[0], c = x_shape[1], h = x_shape[2], width = x_shape[3], tail = alpha - kTile;
    auto [own_bt, next_bt] = halves(x.dtype(), x.device());
    Tensor xb = x.pad({{0, 0}, {0, 0}, {0, 0}, {0, kTile * (tiles + 1) - width}}).reshape({n, c, h, tiles + 1, kTile}).permute({0, 1, 3, 2, 4});
    Tensor own = xb.shrink({{0, n}, {0, c}, {0, tiles}, {0, h}, {0, kTile}}).reshape({1, n, c, tiles, h, kTile});
    Tensor next = xb.shrink({{0, n}, {0, c}, {1, tiles + 1}, {0, h}, {0, tail}}).reshape({1, n, c, tiles, h, tail});
    return ((own * own_bt.reshape({alpha, 1, 1, 1, 1, kTile})).sum({-1}) + (next * next_bt.reshape({alpha, 1, 1, 1, 1, tail})).sum({-1})).lazydata();
  }
  std::vector<LBPtr> backward(const LBPtr& g_) override {
    // dx[.., y, 4t + j] = sum over p of Bt[p, j] dV[p, .., t, y] + Bt[p, kTile + j] dV[p, .., t - 1, y]
    Tensor g = Tensor(g_, false).permute({0, 1, 2, 4, 3});  // (alpha, N, C, H, tiles)
    int64_t n = x_shape[0], c = x_shape[1], h = x_shape[2], width = x_shape[3], tail = alpha - kTile;
    auto [own_bt, next_bt] = halves(g.dtype(), g.device());
    // one reduce over the points of two views of dV padded by a tile each side: block T's columns take
    // tile T's own coefficients and tile T - 1's next ones
    Tensor gp = g.pad({{0, 0}, {0, 0}, {0, 0}, {0, 0}, {1, 1}}).reshape({alpha, n, c, h, tiles + 2, 1});
    auto block = [&](int64_t from, const Tensor& coef, int64_t len) {
      Tensor view = gp.shrink({{0, alpha}, {0, n}, {0, c}, {0, h}, {from, from + tiles + 1}, {0, 1}});
      Tensor k = coef.reshape({alpha, 1, 1, 1, 1, len});
      if (len < kTile) k = k.pad({{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, kTile - len}});
      return view * k;
    };
    Tensor blocks = (block(1, own_bt, kTile) + block(0, next_bt, tail)).sum({0});  // (N, C, H, tiles + 1, kTile)
    return {blocks.reshape({n, c, h, (tiles + 1) * kTile}).shrink({{0, n}, {0, c}, {0, h}, {0, width}}).lazydata()};
  }
};
}  // namespace

Tensor winograd_conv2d(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias) {
  int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], width = x.shape()[3];
  int64_t o = w.shape()[0], kh = w.shape()[2], r = w.shape()[3];
  int64_t ho = h - kh + 1, wo = width - r + 1, tiles = (wo + kTile - 1) / kTile;
  Matrices mat = matrices(r);
  int64_t alpha = mat.alpha;
  Tensor g = on_device(mat.g, {alpha, r}, x.dtype(), x.device()), at = on_device(mat.at, {kTile, alpha}, x.dtype(), x.device());
  Tensor v = Function::apply<RowTransform>({x}, mat.bt, alpha, tiles);  // (alpha, N, C, tiles, H)
  Tensor u = (w.reshape({1, o, c, kh, r}) * g.reshape({alpha, 1, 1, 1, r})).sum({-1});  // (alpha, O, C, kh)
  // out[.., y, 4t + i] = sum over points p of At[i, p] M_p[.., t, y]: one kernel of alpha inputs
  std::optional<Tensor> out;
  for (int64_t p = 0; p < alpha; p++) {
    // each point's conv over (H, tiles) by a one-column kernel: H is not the last dim, so its input
    // gradient (a full conv, dy padded by kh - 1 rows each side) skips the padded rows in the reduce's
    // bounds; along the last dim they were a padded copy of dy multiplied in (a sixth of the multiply-adds)
    Tensor vp = v.shrink({{p, p + 1}, {0, n}, {0, c}, {0, tiles}, {0, h}}).reshape({n, c, tiles, h}).permute({0, 1, 3, 2});
    Tensor up = u.shrink({{p, p + 1}, {0, o}, {0, c}, {0, kh}}).reshape({o, c, kh, 1});
    Tensor mp = vp.conv2d(up);  // (N, O, ho, tiles)
    // the bias joins the point 1, whose column of At is all ones: the bias gradient is then the sum
    // of that point's transformed dy, which the products read anyway (6.5 MB), rather than a reduce of
    // the whole dy computed again from what follows the conv (a batchnorm's backward: 26 MB and more)
    if (bias && p == kOnesPoint) mp = mp + bias->reshape({1, o, 1, 1});
    // (M_p seen as (N, O, tiles, ho): its dy is computed along the image's rows, and reaches the conv as
    // their permutation, realized as computed: see Conv's realized_once)
    Tensor term = mp.permute({0, 1, 3, 2}).reshape({n, o, tiles, ho, 1}) * at.shrink({{0, kTile}, {p, p + 1}}).reshape({1, 1, 1, 1, kTile});
    out = out ? *out + term : term;
  }
  // realized: each reader would otherwise recompute the alpha-term sums (a batchnorm's kernels read it twice)
  Tensor rows = out->permute({0, 1, 3, 2, 4}).reshape({n, o, ho, tiles * kTile}).contiguous();
  return rows.shrink({{0, n}, {0, o}, {0, ho}, {0, wo}});
}

}  // namespace tg::detail
