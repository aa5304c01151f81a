// Reductions beyond sum/max (prod, any, all, argmax, argmin, topk) and the scans (cumsum, cummax, cumprod),
// composed from the Sum/Max Functions, movement ops and elementwise ops.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "lazy/lazybuffer.h"
#include "tensor/internal.h"

namespace tg {

std::pair<std::vector<int>, std::vector<int>> detail::axis_last(int ndim, int axis) {
  std::vector<int> order;
  for (int i = 0; i < ndim; i++) if (i != axis) order.push_back(i);
  order.push_back(axis);
  std::vector<int> inv(static_cast<size_t>(ndim));
  for (int i = 0; i < ndim; i++) inv[static_cast<size_t>(order[static_cast<size_t>(i)])] = i;
  return {order, inv};
}
using detail::axis_last;

namespace {

// The int dtype of positions along an axis of n: int32, int64 from 2^31 on.
DType position_dtype(int64_t n) { return n > INT32_MAX ? dtypes::int64 : dtypes::int32; }
// 0..n-1 in position_dtype(n).
Tensor index_ramp(int64_t n, const std::string& device) { return Tensor::arange(0, static_cast<double>(n), 1, position_dtype(n), device); }

// The engine reduces only with ADD and MAX. A product is a tree of pairwise multiplies instead of
// exp(sum(log)): exact for integers, and Mul's backward gives the exact gradient (the product of the
// other entries) even where an entry is zero.
Tensor prod_last_axis(Tensor x) {
  int last = x.ndim() - 1;
  int level = 0;
  while (x.shape()[last] > 1) {
    int64_t n = x.shape()[last], h = (n + 1) / 2;
    std::vector<std::pair<int64_t, int64_t>> pad(static_cast<size_t>(x.ndim()), {0, 0});
    pad[static_cast<size_t>(last)] = {0, 2 * h - n};
    Tensor even = x.pad(pad, 1);  // an odd length gets a trailing 1
    std::vector<std::pair<int64_t, int64_t>> lo, hi;
    for (int64_t s : even.shape()) { lo.emplace_back(0, s); hi.emplace_back(0, s); }
    lo[static_cast<size_t>(last)] = {0, h};
    hi[static_cast<size_t>(last)] = {h, 2 * h};
    x = even.shrink(lo) * even.shrink(hi);
    // realize every few levels so that no kernel reads more than 16 inputs per output
    if (++level % 4 == 0 && x.shape()[last] > 1) x = x.contiguous();
  }
  return x;
}

enum class Cum { Sum, Max };

// The value a scan pads with: the identity of its combine.
double cum_identity(Cum op, DType d) {
  if (op == Cum::Sum) return 0;
  return d.is_float() ? -INFINITY : d.min();
}

Tensor cum_combine(Cum op, const Tensor& a, const Tensor& b) { return op == Cum::Sum ? a + b : a.maximum(b); }

// Inclusive scan along the last axis as one masked reduce: row i of an (n, n) grid keeps x0..xi and
// holds the identity elsewhere, then the rows are reduced. O(n^2) work, but every load is a plain
// x[j] (tinygrad's pad+expand window needs index arithmetic the kernel cannot simplify).
Tensor cum_window(Cum op, const Tensor& x) {
  int64_t n = x.shape().back();
  Tensor i = index_ramp(n, x.device());
  Tensor keep = i.reshape({n, 1}).ge(i.reshape({1, n}));  // [i, j]: j <= i
  Tensor win = keep.where(x.unsqueeze(-2), Tensor::full({}, cum_identity(op, x.dtype()), x.dtype(), x.device()));
  return op == Cum::Sum ? win.sum({-1}) : win.max({-1});
}

// Inclusive scan along the last axis; axes longer than 256 scan blocks of B = 64 and add each block's
// carry (the scan of the block totals, recursively): O(n*B) instead of O(n^2).
Tensor cum_last_axis(Cum op, const Tensor& x) {
  constexpr int64_t B = 64;
  int64_t n = x.shape().back();
  if (n <= 256) return cum_window(op, x);
  int64_t nb = (n + B - 1) / B;
  std::vector<std::pair<int64_t, int64_t>> pad(static_cast<size_t>(x.ndim()), {0, 0});
  pad.back() = {0, nb * B - n};
  Shape lead(x.shape().begin(), x.shape().end() - 1);
  Shape blocked = lead;
  blocked.insert(blocked.end(), {nb, B});
  Tensor inner = cum_window(op, x.pad(pad, cum_identity(op, x.dtype())).reshape(blocked));  // (..., nb, B)
  // the carry into block j is the scan of the blocks before it: an exclusive scan of block totals
  std::vector<std::pair<int64_t, int64_t>> last;
  for (int64_t s : lead) last.emplace_back(0, s);
  last.insert(last.end(), {{0, nb}, {B - 1, B}});
  Tensor totals = inner.shrink(last).squeeze(-1);  // (..., nb)
  Tensor scanned = cum_last_axis(op, totals);
  std::vector<std::pair<int64_t, int64_t>> shift(static_cast<size_t>(scanned.ndim()), {0, 0});
  shift.back() = {1, 0};
  std::vector<std::pair<int64_t, int64_t>> drop;
  for (int64_t s : lead) drop.emplace_back(0, s);
  drop.emplace_back(0, nb);
  Tensor carry = scanned.pad(shift, cum_identity(op, x.dtype())).shrink(drop).unsqueeze(-1);  // (..., nb, 1)
  Shape flat = lead;
  flat.push_back(nb * B);
  std::vector<std::pair<int64_t, int64_t>> first_n;
  for (int64_t s : lead) first_n.emplace_back(0, s);
  first_n.emplace_back(0, n);
  return cum_combine(op, inner, carry).reshape(flat).shrink(first_n);
}

// Inclusive product scan along the last axis by doubling (Hillis and Steele): x_i *= x_(i-d) for
// d = 1, 2, 4, ..., O(n log n) multiplies. As prod: exact for integers, and Mul's backward gives the
// exact gradient where entries are zero (no division by the prefix product).
Tensor cumprod_last_axis(Tensor x) {
  int64_t n = x.shape().back();
  std::vector<std::pair<int64_t, int64_t>> shift(static_cast<size_t>(x.ndim()), {0, 0}), first_n;
  for (int64_t s : x.shape()) first_n.emplace_back(0, s);
  int level = 0;
  for (int64_t d = 1; d < n; d *= 2) {
    shift.back() = {d, 0};
    x = x * x.pad(shift, 1).shrink(first_n);  // x_(i-d), 1 before the start
    // realize every few levels so that no kernel reads more than 16 inputs per output
    if (++level % 4 == 0 && 2 * d < n) x = x.contiguous();
  }
  return x;
}

// scan(t with `axis` moved last), moved back; a 0-d tensor and an empty axis are their own scan.
template <class Scan> Tensor along_last_axis(const Tensor& t, int axis, const char* name, Scan scan) {
  if (t.ndim() == 0) { t.norm_axis(axis, name); return t; }
  int a = t.norm_axis(axis, name);
  if (t.shape()[static_cast<size_t>(a)] == 0) return t;
  auto [order, inv] = axis_last(t.ndim(), a);
  return scan(t.permute(order)).permute(inv);
}
Tensor cum_scan(Cum op, const Tensor& t, int axis, const char* name) {
  return along_last_axis(t, axis, name, [op](const Tensor& x) { return cum_last_axis(op, x); });
}

// Index of the first true entry of `hit` along `a` (one exists), as int32 (int64 for an axis of 2^31
// entries or more, which int32 cannot number).
Tensor first_index_of(const Tensor& hit, int a, bool keepdim) {
  int64_t n = hit.shape()[static_cast<size_t>(a)];
  DType dt = position_dtype(n);
  Shape s(static_cast<size_t>(hit.ndim() - a), 1);
  s[0] = n;
  // entry i scores n - i where it hits: the largest score is the first index
  Tensor score = (Tensor::full({}, static_cast<double>(n), dt, hit.device()) - index_ramp(n, hit.device())).reshape(s);
  Tensor scored = hit.cast(dt) * score;
  return Tensor::full({}, static_cast<double>(n), dt, hit.device()) - scored.max({a}, keepdim);
}

Tensor arg_extreme(const Tensor& self, std::optional<int> axis, bool keepdim, bool largest, const char* name) {
  Tensor x = self.detach();
  if (!axis) {
    TG_CHECK(x.numel() > 0, name, ": cannot reduce an empty tensor of shape ", x.shape());
    Tensor i = arg_extreme(x.flatten(), 0, false, largest, name);
    return keepdim ? i.reshape(Shape(static_cast<size_t>(x.ndim()), 1)) : i;
  }
  int a = x.norm_axis(*axis, name);
  if (x.ndim() == 0) return Tensor::zeros({}, dtypes::int32, x.device());
  TG_CHECK(x.shape()[static_cast<size_t>(a)] > 0, name, ": cannot reduce zero-size dim ", *axis, " of shape ", x.shape());
  Tensor hit = x.eq(largest ? x.max({a}, true) : x.min({a}, true));
  if (x.dtype().is_float()) {  // as torch, a NaN is both the max and the min: the first NaN wins
    Tensor nan = x.ne(x);
    hit = nan.max({a}, true).where(nan, hit);
  }
  return first_index_of(hit, a, keepdim);
}

// topk by ranking: entry i's rank is the number of entries that beat it (ties go to the lower key,
// the original index), then output slot p takes the entry of rank p. O(n^2) comparisons along the
// last axis, fused into one reduce. Values keep their gradient through a where, not a product, so an
// unselected inf or nan does not leak into them.
std::pair<Tensor, Tensor> topk_rank(const Tensor& x, const Tensor& key, int64_t k, bool largest) {
  Tensor d = x.detach();
  Tensor xi = d.unsqueeze(-1), xj = d.unsqueeze(-2);  // [.., i, j]
  Tensor ki = key.unsqueeze(-1), kj = key.unsqueeze(-2);
  Tensor beats = largest ? xj.gt(xi) : xj.lt(xi), same = xj.eq(xi);
  if (x.dtype().is_float()) {  // NaN is larger than every number and equal to itself (torch's order)
    Tensor ni = xi.ne(xi), nj = xj.ne(xj);
    beats = beats.logical_or(largest ? nj.logical_and(ni.logical_not()) : ni.logical_and(nj.logical_not()));
    same = same.logical_or(ni.logical_and(nj));
  }
  Tensor rank = beats.logical_or(kj.lt(ki).logical_and(same)).cast(dtypes::int32).sum({-1});  // (.., n)
  Tensor slot = index_ramp(k, x.device());
  Tensor onehot = rank.unsqueeze(-1).eq(slot);  // (.., n, k)
  Tensor values = onehot.where(x.unsqueeze(-1), Tensor::zeros({}, x.dtype(), x.device())).sum({-2}).cast(x.dtype());
  Tensor keys = onehot.where(key.unsqueeze(-1), Tensor::zeros({}, dtypes::int32, x.device())).sum({-2}).cast(dtypes::int32);
  return {values, keys};
}

// A long axis first keeps the top k of each block of B, then ranks the survivors: O(n*B + (n*k/B)^2)
// instead of O(n^2). Padding entries lose every comparison and carry keys above any real index.
std::pair<Tensor, Tensor> topk_last(const Tensor& x, const Tensor& key, int64_t k, bool largest) {
  constexpr int64_t B = 256;
  int64_t n = x.shape().back(), nb = (n + B - 1) / B;
  if (n <= 4 * B || nb * k * 2 > n) return topk_rank(x, key, k, largest);
  DType dt = x.dtype();
  // NaN is the largest float: padding with it for the smallest k ties with a real NaN, whose lower key wins
  double worst = dt.is_float() ? (largest ? -INFINITY : NAN) : (largest ? dt.min() : dt.max());
  std::vector<std::pair<int64_t, int64_t>> pad(static_cast<size_t>(x.ndim()), {0, 0});
  pad.back() = {0, nb * B - n};
  Shape lead(x.shape().begin(), x.shape().end() - 1), pk = lead;
  pk.push_back(nb * B - n);
  Tensor keys = key;
  if (nb * B > n) {
    Tensor pad_keys = index_ramp(nb * B - n, x.device()) + (1 << 30);
    keys = Tensor::cat({key, pad_keys.expand(pk)}, -1);
  }
  Shape blocked = lead, flat = lead;
  blocked.insert(blocked.end(), {nb, B});
  flat.push_back(nb * k);
  auto [bv, bk] = topk_rank(x.pad(pad, worst).reshape(blocked), keys.reshape(blocked), k, largest);  // (.., nb, k)
  return topk_last(bv.reshape(flat), bk.reshape(flat), k, largest);
}

}  // namespace

Tensor Tensor::prod(const std::vector<int>& axes, bool keepdim) const {
  auto [ax, out] = detail::reduce_axes(*this, axes, keepdim, "prod");
  DType acc = detail::sum_acc_dtype(dtype());
  // float16 multiplies in float32 and comes back to float16, on every path (a 0-d or empty one too)
  auto in_dtype = [&](const Tensor& r) { return dtype().scalar == Scalar::Float16 ? r.cast(dtype()) : r; };
  Tensor x = cast(acc);
  if (ax.empty()) return in_dtype(x.reshape(out));
  std::vector<int> order;
  Shape kept;
  int64_t n = 1;
  for (int i = 0; i < ndim(); i++)
    if (std::find(ax.begin(), ax.end(), i) == ax.end()) { order.push_back(i); kept.push_back(shape()[static_cast<size_t>(i)]); }
  for (int a : ax) { order.push_back(a); n *= shape()[static_cast<size_t>(a)]; }
  if (n == 0) return in_dtype(Tensor::ones(out, acc, device()));  // the empty product
  if (x.lazydata()->is_unpadded_const()) return in_dtype(Function::apply<F::ConstProd>({x}, ax).reshape(out));  // v^n, no kernel
  kept.push_back(n);
  return in_dtype(prod_last_axis(x.permute(order).reshape(kept)).reshape(out));
}

Tensor Tensor::any(const std::vector<int>& axes, bool keepdim) const {
  auto [ax, out] = detail::reduce_axes(*this, axes, keepdim, "any");
  for (int a : ax) if (shape()[static_cast<size_t>(a)] == 0) return Tensor::zeros(out, dtypes::bool_, device());
  return cast(dtypes::bool_).max(ax, keepdim);
}

Tensor Tensor::all(const std::vector<int>& axes, bool keepdim) const {
  auto [ax, out] = detail::reduce_axes(*this, axes, keepdim, "all");
  for (int a : ax) if (shape()[static_cast<size_t>(a)] == 0) return Tensor::ones(out, dtypes::bool_, device());
  return logical_not().max(ax, keepdim).logical_not();
}

Tensor Tensor::argmax(std::optional<int> axis, bool keepdim) const { return arg_extreme(*this, axis, keepdim, true, "argmax"); }
Tensor Tensor::argmin(std::optional<int> axis, bool keepdim) const { return arg_extreme(*this, axis, keepdim, false, "argmin"); }

Tensor Tensor::cumsum(int axis) const {
  Tensor r = cum_scan(Cum::Sum, cast(detail::sum_acc_dtype(dtype())), axis, "cumsum");
  return dtype().scalar == Scalar::Float16 ? r.cast(dtype()) : r;  // half sums in float, as sum()
}
Tensor Tensor::cummax(int axis) const { return cum_scan(Cum::Max, *this, axis, "cummax"); }
Tensor Tensor::cumprod(int axis) const {
  Tensor r = along_last_axis(cast(detail::sum_acc_dtype(dtype())), axis, "cumprod", cumprod_last_axis);
  return dtype().scalar == Scalar::Float16 ? r.cast(dtype()) : r;  // in float for half, as prod()
}

std::pair<Tensor, Tensor> Tensor::topk(int64_t k, int dim, bool largest) const {
  if (ndim() == 0) {  // as torch: a scalar is a one-element dim
    norm_axis(dim, "topk");
    TG_CHECK(k == 0 || k == 1, "topk: k ", k, " out of range for a scalar");
    auto [v, i] = reshape({1}).topk(k, 0, largest);
    return k == 1 ? std::pair{v.reshape({}), i.reshape({})} : std::pair{v, i};
  }
  int a = norm_axis(dim, "topk");
  int64_t n = shape()[static_cast<size_t>(a)];
  TG_CHECK(k >= 0 && k <= n, "topk: k ", k, " out of range for dim ", dim, " of shape ", shape());
  TG_CHECK(n <= INT32_MAX, "topk: dim ", dim, " of shape ", shape(), " has 2^31 entries or more, which its int32 indices cannot number");
  auto [order, inv] = axis_last(ndim(), a);
  Tensor x = permute(order);
  Shape s(static_cast<size_t>(ndim()), 1);
  s.back() = n;
  Tensor key = index_ramp(n, device()).reshape(s).expand(x.shape());
  auto [v, i] = topk_last(x, key, k, largest);
  return {v.permute(inv), i.permute(inv)};
}

}  // namespace tg
