// sort and argsort: a bitonic sorting network along the last axis, built from movement and elementwise
// ops. The network orders (value, position) pairs, so the order is strict and the sort stable; the
// values are then gathered from the input, which gives them their gradient.
#include <cmath>
#include <optional>

#include "tensor/internal.h"

namespace tg {

namespace {

using Bounds = std::vector<std::pair<int64_t, int64_t>>;

// Whether (a, ia) goes before (b, ib): by value (NaN after every number ascending and before every number
// descending, as torch), equal values by position. Positions from `n` on (when given) are padding, after
// every real entry whatever their values.
Tensor precedes(const Tensor& a, const Tensor& ia, const Tensor& b, const Tensor& ib, bool descending, const std::optional<Tensor>& n) {
  Tensor before = descending ? b.lt(a) : a.lt(b), same = a.eq(b);
  if (a.dtype().is_float()) {
    Tensor an = a.ne(a), bn = b.ne(b);
    before = before.logical_or(descending ? an.logical_and(bn.logical_not()) : bn.logical_and(an.logical_not()));
    same = same.logical_or(an.logical_and(bn));
  }
  Tensor by_value = before.logical_or(same.logical_and(ia.lt(ib)));
  if (!n) return by_value;
  Tensor a_real = ia.lt(*n), b_real = ib.lt(*n);
  return a_real.ne(b_real).where(a_real, by_value);
}

// The positions that sort each row of x (rows, n), n >= 2, in (rows, n). The rows are padded to a power
// of two N and sorted by a bitonic network of log2(N) (log2(N) + 1) / 2 compare-exchange steps: step
// (k, j) compares positions p and p + j (p with bit j clear), in ascending order where bit k of p is clear
// and descending where it is set. A step is two kernels: the pairs' order (one flag a pair, computed
// once, not once for each of the two entries), then the exchange of values and positions.
Tensor sorting_positions(const Tensor& x, bool descending) {
  int64_t rows = x.shape()[0], n = x.shape()[1], N = 1;
  while (N < n) N *= 2;
  DType pos_dtype = N > INT32_MAX ? dtypes::int64 : dtypes::int32;
  const std::string& dev = x.device();
  Tensor v = x.dtype().is_bool() ? x.cast(dtypes::uint8) : x;
  if (N > n) v = v.pad({{0, 0}, {0, N - n}});
  Tensor pos = Tensor::arange(0, static_cast<double>(N), 1, pos_dtype, dev).reshape({1, N}).expand({rows, N});
  std::optional<Tensor> real_end;
  if (N > n) real_end = Tensor::full({}, static_cast<double>(n), pos_dtype, dev);
  for (int64_t k = 2; k <= N; k *= 2) {
    for (int64_t j = k / 2; j >= 1; j /= 2) {
      int64_t groups = N / (2 * j);
      Shape s4{rows, groups, 2, j};
      Bounds lo{{0, rows}, {0, groups}, {0, 1}, {0, j}}, hi = lo;
      hi[2] = {1, 2};
      Tensor v4 = v.reshape(s4), p4 = pos.reshape(s4);
      Tensor vlo = v4.shrink(lo), vhi = v4.shrink(hi), plo = p4.shrink(lo), phi = p4.shrink(hi);
      // bit k of a group's first position (group * 2j) is bit k / 2j of the group's number
      Tensor group = Tensor::arange(0, static_cast<double>(groups), 1, pos_dtype, dev);
      Tensor reversed = ((group & (k / (2 * j))) != 0).reshape({1, groups, 1, 1});
      // a pair that is out of order trades places: each entry takes its partner's (the pair's dim flipped)
      Tensor swap = precedes(vhi, phi, vlo, plo, descending, real_end).logical_xor(reversed).expand(s4);
      v = swap.where(v4.flip({2}), v4).reshape({rows, N}).contiguous();
      pos = swap.where(p4.flip({2}), p4).reshape({rows, N}).contiguous();
    }
  }
  return N > n ? pos.shrink({{0, rows}, {0, n}}) : pos;
}

}  // namespace

std::pair<Tensor, Tensor> Tensor::sort(int dim, bool descending) const {
  int a = norm_axis(dim, "sort");
  if (ndim() == 0) return {*this, Tensor::zeros({}, dtypes::int32, device())};  // as torch: one element
  int64_t n = shape()[static_cast<size_t>(a)];
  TG_CHECK(n <= INT32_MAX, "sort: dim ", dim, " of shape ", shape(), " (", dtype().name(), ") has 2^31 entries or more, which its int32 indices cannot number");
  if (n <= 1) return {*this, Tensor::zeros(shape(), dtypes::int32, device())};
  auto [order, inv] = detail::axis_last(ndim(), a);
  Tensor x = permute(order);
  Shape rows_shape(x.shape().begin(), x.shape().end() - 1);
  int64_t rows = tg::prod(rows_shape);
  if (rows == 0) return {*this, Tensor::zeros(shape(), dtypes::int32, device())};
  Shape full = rows_shape;
  full.push_back(n);
  Tensor idx = [&] {
    NoGradGuard no_grad;
    return sorting_positions(x.detach().reshape({rows, n}), descending).cast(dtypes::int32).reshape(full);
  }();
  return {x.gather(-1, idx).permute(inv), idx.permute(inv)};
}

Tensor Tensor::argsort(int dim, bool descending) const { return sort(dim, descending).second; }

}  // namespace tg
