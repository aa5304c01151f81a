// sort and argsort: a bitonic sorting network along the last axis, built from movement and elementwise
// ops. The network orders (value, position) pairs, so the order is strict and the sort stable (values of
// 4 bytes or less packed with their position into one int64 key); the values are then gathered from the
// input, which gives them their gradient.
#include <climits>
#include <cmath>
#include <functional>
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

// A pair's entries, each channel's (lo at position p, hi at p + j), and whether they are out of order.
using Channels = std::vector<Tensor>;
using OutOfOrder = std::function<Tensor(const Channels& lo, const Channels& hi)>;

// The bitonic network over rows of N entries (a power of two), every channel (rows, N) exchanged alike:
// log2(N) (log2(N) + 1) / 2 compare-exchange steps. Step (k, j) compares positions p and p + j (p with
// bit j clear), in the sorted order where bit k of p is clear and in the reverse order where it is set;
// an out-of-order pair trades places, each entry taking its partner's (the pair's dim flipped).
Channels bitonic(Channels ch, const OutOfOrder& out_of_order) {
  int64_t rows = ch[0].shape()[0], N = ch[0].shape()[1];
  const std::string& dev = ch[0].device();
  for (int64_t k = 2; k <= N; k *= 2) {
    for (int64_t j = k / 2; j >= 1; j /= 2) {
      int64_t groups = N / (2 * j);
      Shape s4{rows, groups, 2, j};
      Bounds lo{{0, rows}, {0, groups}, {0, 1}, {0, j}}, hi = lo;
      hi[2] = {1, 2};
      Channels c4, clo, chi;
      for (const Tensor& c : ch) {
        c4.push_back(c.reshape(s4));
        clo.push_back(c4.back().shrink(lo));
        chi.push_back(c4.back().shrink(hi));
      }
      // bit k of a group's first position (group * 2j) is bit k / 2j of the group's number
      Tensor group = Tensor::arange(0, static_cast<double>(groups), 1, dtypes::int32, dev);
      Tensor reversed = ((group & (k / (2 * j))) != 0).reshape({1, groups, 1, 1});
      Tensor swap = out_of_order(clo, chi).logical_xor(reversed).expand(s4);
      for (size_t i = 0; i < ch.size(); i++) ch[i] = swap.where(c4[i].flip({2}), c4[i]).reshape({rows, N}).contiguous();
    }
  }
  return ch;
}

// An order-preserving int64 key in int32's range for a value of 4 bytes or less: floats through their
// bits (negatives with the other 31 bits flipped, so that signed integer order is the float order; -0
// as 0, and every NaN as the one positive NaN, above +inf), integers as they are (uint32 moved down by 2^31).
Tensor int32_range_key(const Tensor& x) {
  DType dt = x.dtype();
  if (dt.is_float()) {
    Tensor f = x.cast(dtypes::float32);
    f = (f != f).where(Tensor::full({}, NAN, dtypes::float32, x.device()), f + 0.0f);
    Tensor bits = f.bitcast(dtypes::int32);
    return (bits < 0).where(bits ^ INT32_MAX, bits).cast(dtypes::int64);
  }
  Tensor k = x.cast(dtypes::int64);
  return dt == dtypes::uint32 ? k - (int64_t{1} << 31) : k;
}

// The positions that sort each row of x (rows, n), n >= 2, in (rows, n), the rows padded to a power of
// two N with entries that go after every real one.
Tensor sorting_positions(const Tensor& x, bool descending) {
  int64_t rows = x.shape()[0], n = x.shape()[1], N = 1;
  while (N < n) N *= 2;
  const std::string& dev = x.device();
  if (x.dtype().itemsize() <= 4) {
    // One channel: key * 2^32 + position, all distinct, so the network compares one int64 a pair and
    // exchanges one. Descending, the position enters as 2^32 - 1 - position, so that equal keys keep their
    // order. Padding takes the last key and, after every real position, still goes last.
    Tensor key = int32_range_key(x);
    if (N > n) key = key.pad({{0, 0}, {0, N - n}}, descending ? INT32_MIN : INT32_MAX);
    Tensor pos = Tensor::arange(0, static_cast<double>(N), 1, dtypes::int64, dev).reshape({1, N});
    constexpr int64_t kLow = (int64_t{1} << 32) - 1;  // the position's 32 bits
    Tensor low = descending ? kLow - pos : pos;
    Tensor packed = key * (kLow + 1) + low;
    Tensor sorted = bitonic({packed}, [&](const Channels& lo, const Channels& hi) { return descending ? lo[0] < hi[0] : lo[0] > hi[0]; })[0];
    Tensor p = sorted & kLow;
    if (descending) p = kLow - p;
    return (N > n ? p.shrink({{0, rows}, {0, n}}) : p).cast(dtypes::int32);
  }
  // Two channels, value and position, for 8-byte values: the order by value, then by position
  DType pos_dtype = N > INT32_MAX ? dtypes::int64 : dtypes::int32;
  Tensor v = x, pos = Tensor::arange(0, static_cast<double>(N), 1, pos_dtype, dev).reshape({1, N}).expand({rows, N});
  if (N > n) v = v.pad({{0, 0}, {0, N - n}});
  std::optional<Tensor> real_end;
  if (N > n) real_end = Tensor::full({}, static_cast<double>(n), pos_dtype, dev);
  Channels sorted = bitonic({v, pos}, [&](const Channels& lo, const Channels& hi) { return precedes(hi[0], hi[1], lo[0], lo[1], descending, real_end); });
  return (N > n ? sorted[1].shrink({{0, rows}, {0, n}}) : sorted[1]).cast(dtypes::int32);
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
