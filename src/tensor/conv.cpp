// Convolutions and pooling, after tinygrad: the input is cut into sliding windows by movement ops alone
// (`pool`: pad/shrink/reshape/expand/permute, all views), so a conv is one multiply and one sum, and a
// pool is one max or sum. Nothing is copied until the kernel that reads the windows runs.
#include <algorithm>
#include <numeric>

#include "renderer/renderer.h"
#include "runtime/device.h"
#include "tensor/internal.h"
#include "tg/helpers.h"

namespace tg {

namespace {

// One value for every spatial dim, or one per dim.
Shape per_dim(const std::vector<int64_t>& v, size_t n, const char* op, const char* what) {
  TG_CHECK(v.size() == 1 || v.size() == n, op, ": ", what, " needs 1 or ", n, " values, got ", v);
  Shape r = v.size() == 1 ? Shape(n, v[0]) : Shape(v);
  return r;
}

// Padding in pad2d order ((begin, end) pairs from the last dim backwards): from one value, one per dim
// (begin == end) or the pairs themselves.
std::vector<int64_t> padding_pairs(const std::vector<int64_t>& p, size_t n, const char* op) {
  TG_CHECK(p.size() == 1 || p.size() == n || p.size() == 2 * n, op, ": padding needs 1, ", n, " or ", 2 * n,
           " values for ", n, " spatial dims, got ", p);
  if (p.size() == 2 * n) return p;
  if (p.size() == 1) return std::vector<int64_t>(2 * n, p[0]);
  std::vector<int64_t> r;
  for (size_t i = n; i-- > 0;) r.insert(r.end(), {p[i], p[i]});
  return r;
}

// (..., *i) -> (..., *o, *k): every window of size k (stride s, dilation d) over the trailing dims.
Tensor pool(const Tensor& x, const Shape& k, const Shape& s, const Shape& d, const char* op) {
  size_t n = k.size(), lead = static_cast<size_t>(x.ndim()) - n;
  auto mid = x.shape().begin() + static_cast<std::ptrdiff_t>(lead);
  Shape noop(x.shape().begin(), mid), i(mid, x.shape().end()), o(n);
  for (size_t j = 0; j < n; j++) {
    TG_CHECK(k[j] > 0 && s[j] > 0 && d[j] > 0, op, ": kernel ", k, ", stride ", s, " and dilation ", d, " must be positive");
    TG_CHECK(d[j] * (k[j] - 1) + 1 <= i[j], op, ": kernel ", k, " with dilation ", d, " is bigger than the (padded) input ",
             x.shape(), " (", x.dtype().name(), ")");
    o[j] = (i[j] - d[j] * (k[j] - 1) - 1) / s[j] + 1;
  }
  auto grid = [&](auto&& f) { Shape r = noop; for (size_t j = 0; j < n; j++) f(r, j); return r; };
  // (begin, end) bounds keeping the leading dims whole; f adds or sets those of the window dims
  auto bounds = [&](auto&& f, size_t dims = 0) {
    std::vector<std::pair<int64_t, int64_t>> r(lead + dims, {0, 0});
    for (size_t j = 0; j < lead; j++) r[j] = {0, noop[j]};
    for (size_t j = 0; j < n; j++) f(r, j);
    return r;
  };
  std::vector<int> order(lead);
  std::iota(order.begin(), order.end(), 0);
  bool overlap = false;
  for (size_t j = 0; j < n; j++) overlap |= k[j] > s[j] || d[j] != 1;
  if (!overlap) {
    // windows do not overlap: pad/crop to o*s, split each dim into (o, s) and keep the first k of s
    std::vector<std::pair<int64_t, int64_t>> pad(lead + n, {0, 0});
    for (size_t j = 0; j < n; j++) pad[lead + j] = {0, std::max<int64_t>(0, o[j] * s[j] - i[j])};
    Tensor t = x.pad(pad);
    t = t.shrink(bounds([&](auto& r, size_t j) { r[lead + j] = {0, o[j] * s[j]}; }, n));
    t = t.reshape(grid([&](Shape& r, size_t j) { r.insert(r.end(), {o[j], s[j]}); }));
    t = t.shrink(bounds([&](auto& r, size_t j) { r.insert(r.end(), {{0, o[j]}, {0, k[j]}}); }));
    for (size_t j = 0; j < n; j++) order.push_back(static_cast<int>(lead + 2 * j));
    for (size_t j = 0; j < n; j++) order.push_back(static_cast<int>(lead + 2 * j + 1));
    return t.permute(order);
  }
  // Overlapping windows: repeat each dim, then read it as k rows of length L = m*i + d. Row r then starts
  // at element r*d of the input (mod i), so column c*s of row r is input element c*s + r*d. L must hold
  // o*s columns; m = 1 is enough unless the stride is much larger than the kernel.
  Shape L(n), rep(n);
  for (size_t j = 0; j < n; j++) {
    int64_t m = std::max<int64_t>(1, (o[j] * s[j] - d[j] + i[j] - 1) / i[j]);
    L[j] = m * i[j] + d[j];
    rep[j] = (k[j] * L[j] + i[j] - 1) / i[j];
  }
  Tensor t = x.reshape(grid([&](Shape& r, size_t j) { r.insert(r.end(), {1, i[j]}); }))
                 .expand(grid([&](Shape& r, size_t j) { r.insert(r.end(), {rep[j], i[j]}); }))
                 .reshape(grid([&](Shape& r, size_t j) { r.push_back(rep[j] * i[j]); }));
  t = t.shrink(bounds([&](auto& r, size_t j) { r[lead + j] = {0, k[j] * L[j]}; }, n));
  t = t.reshape(grid([&](Shape& r, size_t j) { r.insert(r.end(), {k[j], L[j]}); }));
  t = t.shrink(bounds([&](auto& r, size_t j) { r.insert(r.end(), {{0, k[j]}, {0, o[j] * s[j]}}); }));
  t = t.reshape(grid([&](Shape& r, size_t j) { r.insert(r.end(), {k[j], o[j], s[j]}); }));
  t = t.shrink(bounds([&](auto& r, size_t j) { r.insert(r.end(), {{0, k[j]}, {0, o[j]}, {0, 1}}); }));
  t = t.reshape(grid([&](Shape& r, size_t j) { r.insert(r.end(), {k[j], o[j]}); }));
  for (size_t j = 0; j < n; j++) order.push_back(static_cast<int>(lead + 2 * j + 1));
  for (size_t j = 0; j < n; j++) order.push_back(static_cast<int>(lead + 2 * j));
  return t.permute(order);
}

// The last n axes, as negative reduce axes.
std::vector<int> last_axes(size_t n) {
  std::vector<int> ax;
  for (size_t j = 0; j < n; j++) ax.push_back(-1 - static_cast<int>(j));
  return ax;
}

struct PoolArgs {
  Shape k, s, d;
  std::vector<int64_t> pad;
};
PoolArgs pool_args(const Tensor& x, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride,
                   const std::vector<int64_t>& dilation, const std::vector<int64_t>& padding, const char* op) {
  TG_CHECK(!kernel_size.empty(), op, ": kernel_size is empty");
  PoolArgs a;
  a.k = kernel_size.size() == 1 ? Shape(2, kernel_size[0]) : Shape(kernel_size);  // one value: a square kernel
  size_t n = a.k.size();
  TG_CHECK(static_cast<size_t>(x.ndim()) >= n, op, ": a ", n, "-D kernel ", kernel_size, " needs an input with at least ", n,
           " dims, got shape ", x.shape(), " (", x.dtype().name(), ")");
  a.s = stride.empty() ? a.k : per_dim(stride, n, op, "stride");
  a.d = per_dim(dilation, n, op, "dilation");
  a.pad = padding_pairs(padding, n, op);
  for (size_t j = 0; j < 2 * n; j++) {  // pad2d order: pair j/2 pads spatial dim n-1-j/2; torch's bound
    int64_t k = a.k[n - 1 - j / 2];
    TG_CHECK(a.pad[j] >= 0 && a.pad[j] <= k / 2, op, ": padding ", padding, " must be non-negative and at most half of kernel_size ",
             a.k, " (input ", x.shape(), ", ", x.dtype().name(), ")");
  }
  return a;
}

// ceil_mode: torch's output size ceil((L - span) / s) + 1 over the padded length L, less one when that last
// window would start in the right padding. The right padding grows to hold the last window.
void grow_for_ceil_mode(const Tensor& x, PoolArgs& a) {
  size_t n = a.k.size(), lead = x.shape().size() - n;
  for (size_t j = 0; j < n; j++) {
    int64_t i = x.shape()[lead + j], k = a.k[j], s = a.s[j], d = a.d[j];
    int64_t& pb = a.pad[2 * (n - 1 - j)];
    int64_t& pa = a.pad[2 * (n - 1 - j) + 1];
    int64_t span = d * (k - 1) + 1, L = i + pb + pa;
    if (k <= 0 || s <= 0 || d <= 0 || L < span) continue;  // pool() names the problem
    int64_t o = (L - span + s - 1) / s + 1;
    if ((o - 1) * s >= i + pb) o--;
    pa += std::max<int64_t>(0, s * (o - 1) + span - L);
  }
}

}  // namespace

Tensor Tensor::unfold(int dim, int64_t size, int64_t step) const {
  int a = norm_axis(dim, "unfold");
  TG_CHECK(step > 0, "unfold: step ", step, " must be positive (shape ", shape(), ", ", dtype().name(), ")");
  TG_CHECK(size >= 0, "unfold: size ", size, " must not be negative (shape ", shape(), ", ", dtype().name(), ")");
  if (ndim() == 0) {  // as torch: the scalar is one entry along dim, and no window dim is added
    TG_CHECK(size <= 1, "unfold: size ", size, " is more than the 1 entry of a 0-d tensor (", dtype().name(), ")");
    return reshape({1}).shrink({{0, size}});
  }
  int64_t n = shape()[static_cast<size_t>(a)];
  TG_CHECK(size <= n, "unfold: size ", size, " is more than the ", n, " entries of dim ", dim, " of shape ", shape(), " (", dtype().name(), ")");
  int64_t windows = (n - size) / step + 1;
  if (size == 0) {  // windows of nothing: the input cut to no entries, at the output's shape
    Tensor t = unsqueeze(-1);
    std::vector<std::pair<int64_t, int64_t>> cut, grow(static_cast<size_t>(t.ndim()), {0, 0});
    for (int64_t d : t.shape()) cut.emplace_back(0, d);
    cut.back() = {0, 0};
    cut[static_cast<size_t>(a)] = {0, std::min(n, windows)};
    grow[static_cast<size_t>(a)] = {0, windows - std::min(n, windows)};
    return t.shrink(cut).pad(grow);
  }
  auto [order, inv] = detail::axis_last(ndim(), a);
  inv.push_back(ndim());  // the window's entries stay last
  return pool(permute(order), {size}, {step}, {1}, "unfold").permute(inv);
}

namespace {

// The output channels of a block that a conv (one group) of weights w (Cout, C, *kernel) over a padded
// input of spatial shape `in` to `out` with stride s reads as whole vectors, in the heuristics' channel
// tile (heuristic.cpp), or 0 when it is not one: the tile for where the kernel's output rows would give
// short vectors or no pairs of them (a 20-wide row makes 4-float vectors of AVX-512's 16-float
// registers; a 24-wide one three 8-float vectors on AVX2, one per register-tile row), over a reduce long
// enough that the channel-strided stores of the outputs are a small part of the work. The kernel's row is
// the output's last dim and those before it that the input's view merges with it (a 1x1 conv's whole
// image: 56x56 makes 3136-wide rows, a matmul's). A block is two cache lines of channels (AVX-512's two
// vectors) or the largest power of two of them below that: the same kernel on every target that tiles.
int64_t channel_block(const Shape& w, DType dt, const std::string& device, const Shape& in, const Shape& out, const Shape& s) {
  constexpr int64_t kTwoCacheLines = 128;
  Compiled& dev = Device::get(device);
  int64_t lanes = dev.has_renderer() && dt.is_float() ? dev.renderer().vector_unit().bytes / dt.itemsize() : 0;
  int64_t cout = w[0], row = out.back();
  for (size_t j = out.size() - 1; j > 0 && w[2 + j] == 1 && s[j] == 1 && in[j] == out[j] && s[j - 1] == 1; j--) row *= out[j - 1];
  if (lanes < 2 || cout % lanes != 0 || row % (2 * lanes) == 0 || prod(w) / cout < 4 * lanes) return 0;
  int64_t block = 1;
  while (block < kTwoCacheLines / dt.itemsize() && cout % (2 * block) == 0) block *= 2;
  return std::max(block, lanes);
}
int64_t channel_block(const Tensor& w, const Shape& in, const Shape& out, const Shape& s) {
  return channel_block(w.shape(), w.dtype(), w.device(), in, out, s);
}

// Whether a conv's weight gradient (one group) is the sum of x's windows times dy as it is, rather than a
// conv of x by dy: when each output pixel has few taps (input channels x kernel: c1's 1 x 5x5), the
// windows step by one along the row, and the output's rows make vectors of half a register or more. The
// conv would read dy through a channel-last copy that costs more than the sum (c1: 9.4 ms, the sum 4),
// and the heuristics' window tile sums it straight from dy and x along those rows (on 28-wide rows,
// 4-float vectors of AVX-512's 16, it does not apply and the sum took 1.5x the conv's time).
bool sums_windows_directly(const Shape& w, DType dt, const std::string& device, const Shape& out, const Shape& s) {
  constexpr int64_t kFewTaps = 32;
  Compiled& dev = Device::get(device);
  int64_t lanes = dev.has_renderer() && dt.is_float() ? dev.renderer().vector_unit().bytes / dt.itemsize() : 0;
  return lanes >= 2 && prod(w) / w[0] <= kFewTaps && s.back() == 1 && out.back() % (lanes / 2) == 0;
}

// Whether conv2d runs a 2D conv by Winograd's F(4, 5) along the rows (winograd.cpp; WINO=0 turns it
// off): a 5-wide kernel of 2+ rows, one group, stride and dilation 1, float32, and the 1-column convs it
// makes are channel tiles (enough channels; see channel_block) over two tiles of 4 outputs or more.
// Like cuDNN's workspace limit, the transformed input (8 values per 4 outputs of each row) stays under
// 256 MiB: beautiful_mnist's eval over its 10,000 test images would make 1.2 GB of it, double the peak
// memory and the time of the JIT's first calls (fresh pages) for a replay 9% faster.
// F(4, 3) was not taken: beautiful_mnist's 3x3 convs (forward and both gradients, Zen 5) went from 12.8
// to 13.9-14.8 ms (32->64 on 10x10 images) and from 13.0 to 16.6-17.3 ms (64->64 on 8x8: 6-wide rows, 2
// tiles, the last half empty); on such small images the transforms cost more than 6 / 12 of the
// multiply-adds save.
bool winograd_applies(const Tensor& x, const Tensor& w, int64_t groups, const Shape& s, const Shape& d, DType dt) {
  if (!WINO || w.ndim() != 4 || groups != 1 || dt != dtypes::float32 || s != Shape{1, 1} || d != Shape{1, 1}) return false;
  int64_t kh = w.shape()[2], r = w.shape()[3], h = x.shape()[2], wo = x.shape()[3] - r + 1, tiles = (wo + 3) / 4;
  constexpr double kWorkspaceBytes = 256.0 * (1 << 20);  // (in double: a lazy input's shape may be past int64 bytes x 2)
  if (r != 5 || kh < 2 || tiles < 2 || 8.0 * double(x.shape()[0]) * double(x.shape()[1]) * double(tiles * h) * dt.itemsize() > kWorkspaceBytes) return false;
  return channel_block(Shape{w.shape()[0], w.shape()[1], kh, 1}, dt, x.device(), Shape{h, tiles}, Shape{h - kh + 1, tiles}, Shape{1, 1}) != 0;
}

// The rows of the input (per spatial dim) that a conv's windows reach: its weight gradient reads no others
Shape reach(const Shape& out, const Shape& k, const Shape& s, const Shape& d) {
  Shape r;
  for (size_t j = 0; j < out.size(); j++) r.push_back((out[j] - 1) * s[j] + (k[j] - 1) * d[j] + 1);
  return r;
}

// The weights (Cout, C, *kernel) packed for the channel tile's vector loads: a copy laid out as
// (Cout / block, C, *kernel, block), seen as (Cout / block, block, C, *kernel). Each tile of channels
// then reads its weights as one stream; in rows of all Cout channels it read a vector or two from each
// (256->256 channels, 3x3: 1 KB apart, half the speed of 64 channels). A small copy per conv.
Tensor packed_by_channel_block(const Tensor& w, int64_t block) {
  Shape blocked{w.shape()[0] / block, block};
  blocked.insert(blocked.end(), w.shape().begin() + 1, w.shape().end());
  std::vector<int> to{0}, back{0, w.ndim()};
  for (int i = 2; i <= w.ndim(); i++) to.push_back(i), back.push_back(i - 1);
  to.push_back(1);
  return w.reshape(blocked).permute(to).contiguous().permute(back);
}

// The convolution of an already padded input x (N, groups*C, *spatial) by w (Cout, C, *kernel): the windows
// of x (pool) times w, summed over C and the kernel: Conv's forward, and differentiable through its
// views (conv_skipping_padding's transposed convs). A channel-tiled conv (one group) splits the output
// channels in blocks (see packed_by_channel_block), as the kernel's dims (Cout / block, block).
Tensor conv_windows(const Tensor& x_padded, const Tensor& weight, int64_t groups, const Shape& s, const Shape& d, const char* op,
                    const std::optional<Tensor>& present = std::nullopt) {
  int64_t bs = x_padded.shape()[0], cout = weight.shape()[0], cin = weight.shape()[1];
  Shape hw(weight.shape().begin() + 2, weight.shape().end());
  size_t n = hw.size();
  Tensor x = pool(x_padded, hw, s, d, op);  // (bs, groups*cin, *oyx, *hw)
  int64_t rcout = cout / groups;
  Shape oyx(x.shape().begin() + 2, x.shape().begin() + 2 + static_cast<std::ptrdiff_t>(n));
  auto shape_of = [&](Shape head, const Shape& mid, Shape tail) {
    head.insert(head.end(), mid.begin(), mid.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  int64_t block = groups == 1 ? channel_block(weight, Shape(x_padded.shape().begin() + 2, x_padded.shape().end()), oyx, s) : 0;
  Shape channels = block ? Shape{rcout / block, block} : Shape{rcout};  // the kernel's output-channel dims
  int c = static_cast<int>(channels.size());
  Shape xs = shape_of({bs, groups, cin}, Shape(channels.size(), 1), shape_of(oyx, hw, {})),
        xe = shape_of({bs, groups, cin}, channels, shape_of(oyx, hw, {}));
  std::vector<int> order{0, 1};
  for (int j = 0; j < c; j++) order.push_back(3 + j);
  for (size_t j = 0; j < n; j++) order.push_back(static_cast<int>(3 + c + j));
  order.push_back(2);
  for (size_t j = 0; j < n; j++) order.push_back(static_cast<int>(3 + c + n + j));
  x = x.reshape(xs).expand(xe).permute(order);  // (bs, groups, *channels, *oyx, cin, *hw)
  Tensor w = (block ? packed_by_channel_block(weight, block) : weight).reshape(shape_of(shape_of({1, groups}, channels, {}), Shape(n, 1), shape_of({cin}, hw, {})));
  Tensor terms = x * w;
  if (present) terms = pool(*present, hw, s, d, op).reshape(xs).expand(xe).permute(order).where(terms, Tensor::zeros({}, terms.dtype(), terms.device()));
  return terms.sum(last_axes(n + 1)).reshape(shape_of({bs, cout}, oyx, {}));
}

// A transposed conv with stride 1 (one group: the input gradient of a conv) is a conv of x, padded by
// up to the kernel's reach on each side, by the flipped weights wf (Cout, Cin, *k). For the channel tile
// (whose rows are the image's last dim) that dim is padded in a copy (x is read as it is when that dim
// needs no padding: a k x 1 kernel's, Winograd's points' convs); the others stay a padded view whose
// terms are absent rather than 0 x w: a `present` mask of the same view selects them, and the kernel's
// reduce then skips the padded kernel rows (the lowerer's reduce bounds), as a direct backward does.
// The padded rows were 17-25% of the multiply-adds of beautiful_mnist's input gradients (c2's dx 39 ->
// 32 ms, c4's 6.1 -> 4.8). An infinite weight then gives inf, as torch does, where only its padded
// rows would have met it as 0 x inf = NaN; a padded column (the copy's zeros) still meets it so.
// Rows of at most kFewColumns outputs are read unpadded, their padded columns absent under the mask too:
// a sixth or more of a 3x3 kernel's multiply-adds would be on padded columns. The tile takes a row of 8
// whole (AVX-512: each mask a constant, the absent terms dropped), or bounds the kernel columns' loop by
// the padding as the rows' (beautiful_mnist's 3x3 convs' input gradients on 512 images, Zen 5: 8 columns
// 4.7 -> 3.5 ms, AVX2's code 10.6 -> 7.6; 10 columns 4.8-5.3 -> 4.2-4.6, AVX2's 10.1 -> 7.8-8.1; rows of
// 10 to 12 on 4 to 512 images as fast or faster; of 14 and 16 the copy was faster).
// `pad`: (begin, end) per spatial dim. Nothing when the conv is not channel-tiled.
constexpr int64_t kFewColumns = 12;
std::optional<Tensor> conv_skipping_padding(const Tensor& x, const Tensor& wf, const Shape& d, const std::vector<std::pair<int64_t, int64_t>>& pad) {
  size_t n = d.size();
  std::vector<std::pair<int64_t, int64_t>> last(n + 2, {0, 0}), rest(n + 2, {0, 0});
  for (size_t j = 0; j < n; j++) (j + 1 == n ? last : rest)[2 + j] = pad[j];
  Shape in, out;
  for (size_t j = 0; j < n; j++) {
    in.push_back(x.shape()[2 + j] + pad[j].first + pad[j].second);
    out.push_back(in.back() - d[j] * (wf.shape()[2 + j] - 1));
  }
  if (n < 2 || !channel_block(wf, in, out, Shape(n, 1))) return std::nullopt;
  bool columns_as_they_are = out.back() <= kFewColumns || last.back() == std::pair<int64_t, int64_t>{0, 0};
  if (columns_as_they_are) rest.back() = last.back();  // (all padding read under the mask)
  Tensor xp = columns_as_they_are ? x : x.pad(last).contiguous();
  Tensor present = Tensor::ones(xp.shape(), dtypes::bool_, xp.device()).pad(rest);
  return conv_windows(xp.pad(rest), wf, 1, Shape(n, 1), d, "conv_transpose2d", present);
}

// y (N, C, *spatial) plus a per-channel bias (C,), when there is one
Tensor with_bias(const Tensor& y, const std::optional<Tensor>& bias) {
  if (!bias) return y;
  Shape bshape{1, y.shape()[1]};
  bshape.insert(bshape.end(), static_cast<size_t>(y.ndim() - 2), 1);
  return y + bias->reshape(bshape);
}

// dy realized once for both gradients: as it is computed (the base's own order) when it reaches the conv
// as a permutation of a whole unrealized buffer, else as a copy in the conv's layout. Both gradients copy
// dy into a layout of their own (padded, channel-packed) or read it as broadcasts, so its layout only
// matters to the kernel that computes it (Winograd's points' dy, computed along the image's rows, in
// rows of 5 tiles when realized as the points' convs see it: 3.5 -> 4.5 ms).
Tensor realized_once(const Tensor& g) {
  const LBPtr& lb = g.lazydata();
  const LazyBuffer* base = lb->base();
  bool permuted = lb->is_view() && !base->realized() && !lb->is_unrealized_const() && lb->st.views.size() == 1 && !lb->st.views[0].mask &&
                  lb->st.views[0].offset == 0 && prod(lb->shape()) == prod(base->shape());
  for (size_t i = 0; permuted && i < lb->shape().size(); i++) permuted = lb->shape()[i] == 1 || lb->st.views[0].strides[i] != 0;
  if (!permuted) return g.contiguous();
  Tensor(lb->base_ptr(), false).contiguous();  // (marks the base realized; g stays its view)
  return g;
}

// A convolution of a padded input as one Function: forward is conv_windows, and backward is two more
// convolutions through the same path, which the kernel heuristics handle as well as any forward conv:
// dx a transposed conv of dy by w, dw a conv of x by dy (batch and channels swapped, the stride and
// dilation trading places; with groups, each group's sum over the windows). The gradients of the
// sliding-window views themselves would be sums over overlapping windows, an order of magnitude slower
// (a depthwise 3x3 conv's input gradient, 576 channels on 8 14x14 images: 40 ms, torch's step 1.5 ms).
struct Conv : Function {
  Conv(Shape s, Shape d, int64_t groups) : s(std::move(s)), d(std::move(d)), groups(groups) {}
  Shape s, d;
  int64_t groups;
  LBPtr x, w;
  LBPtr forward(Inputs xs) override {
    return conv_windows(Tensor(save(x, xs[0]), false), Tensor(save(w, xs[1]), false), groups, s, d, "conv2d").lazydata();
  }
  std::vector<LBPtr> backward(const LBPtr& g_) override {
    Tensor g(g_, false), tx(x, false), tw(w, false);
    // both gradients read dy, most through a copy of its own layout (padded, channel-packed): dy is
    // computed once (it is the backward of whatever followed the conv, fused into its kernel)
    if (needs_input_grad[0] && needs_input_grad[1]) g = realized_once(g);
    size_t n = s.size();
    Shape k(tw.shape().begin() + 2, tw.shape().end()), in(tx.shape().begin() + 2, tx.shape().end()), out(g.shape().begin() + 2, g.shape().end());
    LBPtr dx, dw;
    if (needs_input_grad[0]) {
      // the transposed conv covers the rows the windows reached; output_padding adds those the stride skipped
      std::vector<int64_t> extra;
      for (size_t j = 0; j < n; j++) extra.push_back(in[j] - ((out[j] - 1) * s[j] + d[j] * (k[j] - 1) + 1));
      bool any = std::any_of(extra.begin(), extra.end(), [](int64_t e) { return e > 0; });
      dx = g.conv_transpose2d(tw, std::nullopt, groups, s, d, {0}, any ? extra : std::vector<int64_t>{0}).lazydata();
    }
    if (needs_input_grad[1]) {
      // dw[o, c, *k] = sum over (batch, *out) of dy[b, o, *out] x[b, c, out*s + k*d], over the rows of x
      // the windows reach (a stride-2 1x1 conv's x is 2x2 windows of 1 row each: all of x made 4 outputs)
      std::vector<std::pair<int64_t, int64_t>> reached{{0, tx.shape()[0]}, {0, tx.shape()[1]}};
      Shape rows = reach(out, k, s, d);
      for (size_t j = 0; j < n; j++) reached.emplace_back(0, rows[j]);
      Tensor xr = tx.shrink(reached);
      if (groups > 1 || sums_windows_directly(tw.shape(), tw.dtype(), tw.device(), out, s)) {
        // each group's sum as one reduce of x's windows times dy (a conv of x by dy per group would be a
        // batch of convs; for few taps, see sums_windows_directly)
        int64_t bs = tx.shape()[0], cg = tw.shape()[1], og = tw.shape()[0] / groups;
        Shape xs{bs, groups, 1, cg}, gs{bs, groups, og, 1};
        std::vector<int> over{0};
        for (size_t j = 0; j < n; j++) over.push_back(static_cast<int>(4 + j));
        xs.insert(xs.end(), out.begin(), out.end()), xs.insert(xs.end(), k.begin(), k.end());
        gs.insert(gs.end(), out.begin(), out.end()), gs.insert(gs.end(), n, 1);
        Tensor terms = pool(xr, k, s, d, "conv2d").reshape(xs) * g.reshape(gs);  // (N, G, og, cg, *out, *k)
        dw = terms.sum(over).reshape(tw.shape()).lazydata();
      } else {
        // a conv of x seen as (C, N, *in) by dy seen as (O, N, *out), stride d and dilation s: (C, O, *k)
        std::vector<int> swap{1, 0};
        for (size_t j = 0; j < n; j++) swap.push_back(static_cast<int>(2 + j));
        dw = xr.permute(swap).conv2d(g.permute(swap), std::nullopt, 1, d, s, {0}).permute(swap).lazydata();
      }
    }
    return {dx, dw};
  }
};

// `count` entries of t along dim, `step` apart from `start` (a strided slice: padded past the end to
// whole steps, split into (count, step), the first of each step kept)
Tensor every_nth(const Tensor& t, int dim, int64_t start, int64_t step, int64_t count) {
  size_t d = static_cast<size_t>(dim);
  std::vector<std::pair<int64_t, int64_t>> pad(t.shape().size(), {0, 0}), range, first;
  pad[d].second = std::max<int64_t>(0, start + count * step - t.shape()[d]);
  Shape split = t.shape(), kept = t.shape();
  split[d] = count, kept[d] = count;
  split.insert(split.begin() + dim + 1, step);
  for (size_t i = 0; i < t.shape().size(); i++) range.emplace_back(i == d ? start : 0, i == d ? start + count * step : t.shape()[i]);
  for (size_t i = 0; i < split.size(); i++) first.emplace_back(0, i == d + 1 ? 1 : split[i]);
  return t.pad(pad).shrink(range).reshape(split).shrink(first).reshape(kept);
}

// A transposed conv with stride s > 1 (no dilation) as s^n stride-1 ones, one per phase of the output:
// the full output row Y = s*i + k gets taps k = r, r + s, r + 2s... of the kernel at the rows Y = s*Y' + r,
// so phase r is the stride-1 transposed conv of x by those taps, and the phases interleave. The
// stride-1 convs take conv_skipping_padding's path; dilating x by s - 1 zeros between its rows instead
// multiplied by zeros in all but 1/s^n of the multiply-adds, under a mask per load (a 7x7 stride-2
// stem's input gradient on 8 224x224 images took 0.95 s). A phase with no taps is zeros.
Tensor strided_transposed_conv(const Tensor& x, const Tensor& weight, int64_t groups, const Shape& s, const Shape& p, const Shape& op_) {
  size_t n = s.size();
  int64_t cout = weight.shape()[1] * groups;
  Shape lengths, full;  // per dim: the rows of each phase; the full output's rows (before the padding crop)
  for (size_t j = 0; j < n; j++) {
    full.push_back((x.shape()[2 + j] - 1) * s[j] + weight.shape()[2 + j] + op_[j]);
    lengths.push_back((full[j] + s[j] - 1) / s[j]);
  }
  int64_t phases = prod(s);
  std::vector<Tensor> outs;
  for (int64_t ph = 0; ph < phases; ph++) {
    Shape r(n);  // this phase's row offset per dim, the last dim fastest
    for (int64_t rem = ph, j = static_cast<int64_t>(n) - 1; j >= 0; j--) r[j] = rem % s[j], rem /= s[j];
    Tensor w = weight;  // the taps r, r + s, ... of each spatial dim
    bool any = true;
    for (size_t j = 0; j < n; j++) {
      int64_t k = weight.shape()[2 + j], m = k > r[j] ? (k - r[j] + s[j] - 1) / s[j] : 0;
      any &= m > 0;
      if (m > 0) w = every_nth(w, static_cast<int>(2 + j), r[j], s[j], m);
    }
    if (!any) {
      Shape out_shape{x.shape()[0], cout};
      out_shape.insert(out_shape.end(), lengths.begin(), lengths.end());
      outs.push_back(Tensor::zeros(out_shape, x.dtype(), x.device()));
      continue;
    }
    Tensor y = x.conv_transpose2d(w, std::nullopt, groups);  // (N, Cout, H + m - 1, ...): no row past `lengths`
    std::vector<std::pair<int64_t, int64_t>> fill{{0, 0}, {0, 0}};
    for (size_t j = 0; j < n; j++) fill.emplace_back(0, lengths[j] - y.shape()[2 + j]);
    outs.push_back(y.pad(fill));
  }
  // (phases, N, Cout, *lengths) -> (N, Cout, length0, s0, length1, s1, ...) -> the rows interleaved
  Shape split(s.begin(), s.end());
  split.insert(split.end(), {x.shape()[0], cout});
  split.insert(split.end(), lengths.begin(), lengths.end());
  std::vector<int> order{static_cast<int>(n), static_cast<int>(n) + 1};
  Shape merged{x.shape()[0], cout};
  std::vector<std::pair<int64_t, int64_t>> crop{{0, x.shape()[0]}, {0, cout}};
  for (size_t j = 0; j < n; j++) {
    order.insert(order.end(), {static_cast<int>(n + 2 + j), static_cast<int>(j)});
    merged.push_back(lengths[j] * s[j]);
    crop.emplace_back(p[j], full[j] - p[j]);
  }
  return Tensor::stack(outs).reshape(split).permute(order).reshape(merged).shrink(crop);
}

// A strided transposed conv (one group, no dilation) as one Function: forward by phases, backward as
// convs, its adjoints: dx the strided conv of dy by w, dw a conv of dy by x (batch and channels swapped,
// x's rows s apart) whose padding of dy stops at the last tap. Autograd through the phases' interleave gave kernels the
// heuristics tile badly (128->64 channels, 4x4, stride 2 on 16 16x16 images: 170 ms for the backward).
struct ConvTranspose : Function {
  ConvTranspose(Shape s, Shape p, Shape op) : s(std::move(s)), p(std::move(p)), op(std::move(op)) {}
  Shape s, p, op;
  LBPtr x, w;
  LBPtr forward(Inputs xs) override {
    return strided_transposed_conv(Tensor(save(x, xs[0]), false), Tensor(save(w, xs[1]), false), 1, s, p, op).lazydata();
  }
  std::vector<LBPtr> backward(const LBPtr& g_) override {
    Tensor g(g_, false), tx(x, false), tw(w, false);
    if (needs_input_grad[0] && needs_input_grad[1]) g = realized_once(g);
    size_t n = s.size();
    LBPtr dx, dw;
    // (output_padding's rows reach no input row: the strided conv's windows stop short of them)
    if (needs_input_grad[0]) dx = g.conv2d(tw, std::nullopt, 1, s, {1}, p).lazydata();
    if (needs_input_grad[1]) {
      // dw[c, o, *k] = sum over (batch, *in) of x[b, c, *in] dy[b, o, s*in + k - p]: dy padded by p before
      // and p - output_padding after (the rows past the last tap meet no weight), so that the conv's
      // outputs are the kernel's taps
      std::vector<int> swap{1, 0};
      std::vector<int64_t> pairs;  // (before, after), the last dim first
      for (size_t j = 0; j < n; j++) swap.push_back(static_cast<int>(2 + j));
      for (size_t j = n; j-- > 0;) pairs.insert(pairs.end(), {p[j], p[j] - op[j]});
      dw = g.permute(swap).conv2d(tx.permute(swap), std::nullopt, 1, {1}, s, pairs).permute(swap).lazydata();
    }
    return {dx, dw};
  }
};

}  // namespace

Tensor Tensor::conv2d(const Tensor& weight, const std::optional<Tensor>& bias, int64_t groups, const std::vector<int64_t>& stride,
                      const std::vector<int64_t>& dilation, const std::vector<int64_t>& padding) const {
  const char* op = "conv2d";
  TG_CHECK(weight.ndim() >= 3 && ndim() == weight.ndim(), op, ": input ", shape(), " (", dtype().name(), ") and weight ", weight.shape(),
           " (", weight.dtype().name(), ") need the same rank, (N, C, *spatial) and (Cout, C/groups, *kernel) with 1+ spatial dims");
  TG_CHECK(groups > 0, op, ": groups must be positive, got ", groups);
  int64_t cin_ = shape()[1], cout = weight.shape()[0], cin = weight.shape()[1];
  TG_CHECK(cin * groups == cin_, op, ": input ", shape(), " has ", cin_, " channels but weight ", weight.shape(), " with groups=", groups,
           " expects ", cin * groups);
  TG_CHECK(cout % groups == 0, op, ": groups=", groups, " does not divide the ", cout, " output channels of weight ", weight.shape());
  if (bias) TG_CHECK(bias->ndim() == 1 && bias->shape()[0] == cout, op, ": bias ", bias->shape(), " must have shape (", cout, ",)");
  size_t n = static_cast<size_t>(weight.ndim() - 2);
  Shape s = per_dim(stride, n, op, "stride"), d = per_dim(dilation, n, op, "dilation");
  std::vector<int64_t> pairs = padding_pairs(padding, n, op);
  Tensor xp = pad2d(pairs);
  Shape hw(weight.shape().begin() + 2, weight.shape().end());
  Tensor windows = pool(xp, hw, s, d, op);  // the shape checks, under the user's op name (a view: nothing is computed)
  DType dt = least_upper_dtype({xp.dtype(), weight.dtype()});  // as x * w would promote
  if (winograd_applies(xp, weight, groups, s, d, dt)) return detail::winograd_conv2d(xp.cast(dt), weight.cast(dt), bias);
  // the channel tile (one group) reads the image as broadcast scalars, one per row of its tile: a padded
  // image is copied with its zeros first, rather than read under a mask per row (a transposed conv pads by
  // the kernel's size). So does the weight gradient's, a conv of x by dy when it is a channel tile, or the
  // sum of x's windows times dy (sums_windows_directly): else each read of x is under a mask.
  if (groups == 1 && std::any_of(pairs.begin(), pairs.end(), [](int64_t p) { return p != 0; })) {
    Shape in(xp.shape().begin() + 2, xp.shape().end()), out(windows.shape().begin() + 2, windows.shape().begin() + 2 + static_cast<std::ptrdiff_t>(n));
    Shape dy{cout, shape()[0]};
    dy.insert(dy.end(), out.begin(), out.end());
    bool dw_tiled = weight.requires_grad().value_or(false) &&
                    (sums_windows_directly(weight.shape(), weight.dtype(), device(), out, s) || channel_block(dy, weight.dtype(), device(), reach(out, hw, s, d), hw, d));
    if (channel_block(weight, in, out, s) || dw_tiled) xp = xp.contiguous();
  }
  return with_bias(Function::apply<Conv>({xp.cast(dt), weight.cast(dt)}, s, d, groups), bias);
}

Tensor Tensor::conv_transpose2d(const Tensor& weight, const std::optional<Tensor>& bias, int64_t groups, const std::vector<int64_t>& stride,
                                const std::vector<int64_t>& dilation, const std::vector<int64_t>& padding,
                                const std::vector<int64_t>& output_padding) const {
  const char* op = "conv_transpose2d";
  TG_CHECK(weight.ndim() >= 3 && ndim() == weight.ndim(), op, ": input ", shape(), " (", dtype().name(), ") and weight ", weight.shape(),
           " (", weight.dtype().name(), ") need the same rank, (N, C, *spatial) and (C, Cout/groups, *kernel) with 1+ spatial dims");
  TG_CHECK(groups > 0, op, ": groups must be positive, got ", groups);
  int64_t cin = weight.shape()[0], rcout = weight.shape()[1];
  TG_CHECK(shape()[1] == cin, op, ": input ", shape(), " has ", shape()[1], " channels but weight ", weight.shape(), " expects ", cin);
  TG_CHECK(cin % groups == 0, op, ": groups=", groups, " does not divide the ", cin, " input channels of weight ", weight.shape());
  Shape hw(weight.shape().begin() + 2, weight.shape().end());
  size_t n = hw.size();
  Shape s = per_dim(stride, n, op, "stride"), d = per_dim(dilation, n, op, "dilation"), p = per_dim(padding, n, op, "padding"),
        op_ = per_dim(output_padding, n, op, "output_padding");
  for (size_t j = 0; j < n; j++) {
    TG_CHECK(s[j] > 0 && d[j] > 0, op, ": stride ", stride, " and dilation ", dilation, " must be positive");
    TG_CHECK(op_[j] >= 0 && op_[j] < std::max(s[j], d[j]), op, ": output_padding ", output_padding,
             " must be smaller than stride or dilation (", stride, ", ", dilation, ")");
    TG_CHECK(p[j] >= 0, op, ": padding ", padding, " must be non-negative");
    int64_t out = (shape()[2 + j] - 1) * s[j] - 2 * p[j] + d[j] * (hw[j] - 1) + op_[j] + 1;
    TG_CHECK(out > 0, op, ": input ", shape(), " and weight ", weight.shape(), " with stride ", stride, ", padding ", padding,
             " and dilation ", dilation, " give output size ", out, " in spatial dim ", j);
  }
  if (bias) TG_CHECK(bias->ndim() == 1 && bias->shape()[0] == rcout * groups, op, ": bias ", bias->shape(), " must have shape (", rcout * groups, ",)");
  bool strided = std::any_of(s.begin(), s.end(), [](int64_t v) { return v > 1; });
  // by phases (see strided_transposed_conv); one group differentiates as convs (ConvTranspose), more
  // groups only where no gradient flows through it (a grouped conv's input gradient, inference)
  bool grad = requires_grad().value_or(false) || weight.requires_grad().value_or(false);
  if (strided && std::all_of(d.begin(), d.end(), [](int64_t v) { return v == 1; })) {
    if (groups == 1) {
      DType dt = least_upper_dtype({dtype(), weight.dtype()});
      return with_bias(Function::apply<ConvTranspose>({cast(dt), weight.cast(dt)}, s, p, op_), bias);
    }
    if (!grad) return with_bias(strided_transposed_conv(*this, weight, groups, s, p, op_), bias);
  }
  // the transposed conv is a conv with the kernel flipped and in/out channels swapped per group
  Shape wg{groups, cin / groups, rcout};
  wg.insert(wg.end(), hw.begin(), hw.end());
  std::vector<int> flip_axes;
  for (size_t j = 0; j < n; j++) flip_axes.push_back(static_cast<int>(3 + j));
  Shape wf{groups * rcout, cin / groups};
  wf.insert(wf.end(), hw.begin(), hw.end());
  Tensor w = weight.reshape(wg).transpose(1, 2).flip(flip_axes).reshape(wf);
  // dilate the input by the stride: s-1 zeros between neighbours (with a dilated kernel, or groups under
  // autograd: the phases above take the others)
  Tensor x = *this;
  if (strided) {
    Shape a(shape().begin(), shape().begin() + 2), b = a;
    std::vector<std::pair<int64_t, int64_t>> pad(2, {0, 0}), crop{{0, shape()[0]}, {0, shape()[1]}};
    for (size_t j = 0; j < n; j++) {
      int64_t k = shape()[2 + j];
      a.insert(a.end(), {k, 1});
      pad.insert(pad.end(), {{0, 0}, {0, s[j] - 1}});
      b.push_back(k * s[j]);
      crop.emplace_back(0, k * s[j] - (s[j] - 1));
    }
    x = x.reshape(a).pad(pad).reshape(b).shrink(crop);
  }
  std::vector<int64_t> pairs;
  std::vector<std::pair<int64_t, int64_t>> pad(n);
  for (size_t j = n; j-- > 0;) {
    int64_t e = (hw[j] - 1) * d[j] - p[j];
    pairs.insert(pairs.end(), {e, e + op_[j]});
    pad[j] = {e, e + op_[j]};
  }
  // (the reduce bounds take a kernel row's unit step: no dilation)
  bool padded = std::all_of(pad.begin(), pad.end(), [](auto& pr) { return pr.first >= 0; });
  bool undilated = std::all_of(d.begin(), d.end(), [](int64_t v) { return v == 1; });
  if (!strided && undilated && groups == 1 && padded && dtype() == w.dtype())
    if (std::optional<Tensor> r = conv_skipping_padding(x, w, d, pad)) return with_bias(*r, bias);
  return x.conv2d(w, bias, groups, {1}, d, pairs);
}

Tensor Tensor::max_pool2d(const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation,
                          const std::vector<int64_t>& padding, bool ceil_mode) const {
  PoolArgs a = pool_args(*this, kernel_size, stride, dilation, padding, "max_pool2d");
  if (ceil_mode) grow_for_ceil_mode(*this, a);
  // padding must never win the max: the dtype's lowest value (-inf for floats)
  Tensor x = pad2d(a.pad, dtype().min());
  return pool(x, a.k, a.s, a.d, "max_pool2d").max(last_axes(a.k.size()));
}

Tensor Tensor::avg_pool2d(const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation,
                          const std::vector<int64_t>& padding, bool count_include_pad, bool ceil_mode) const {
  PoolArgs a = pool_args(*this, kernel_size, stride, dilation, padding, "avg_pool2d");
  std::vector<int64_t> asked = a.pad, grown(a.pad.size());
  if (ceil_mode) grow_for_ceil_mode(*this, a);
  for (size_t j = 0; j < a.pad.size(); j++) grown[j] = a.pad[j] - asked[j];
  auto windows = [&](const Tensor& t, const std::vector<int64_t>& pad) { return pool(t.pad2d(pad), a.k, a.s, a.d, "avg_pool2d"); };
  std::vector<int> ax = last_axes(a.k.size());
  if (count_include_pad && a.pad == asked) return windows(*this, a.pad).mean(ax);
  // divide by the entries of each window that count, as torch: the input's, and the asked-for padding's
  // with count_include_pad, never those ceil_mode's padding adds
  Tensor ones = ones_like(dtypes::default_float);
  Tensor counted = count_include_pad ? windows(ones.pad2d(asked, 1), grown) : windows(ones, a.pad);
  return windows(*this, a.pad).sum(ax) / counted.sum(ax);
}

}  // namespace tg
