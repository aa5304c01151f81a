// Shared by the Tensor op files: broadcasting, dtype helpers and axis handling. Not a public header.
#pragma once
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "tensor/function.h"
#include "tg/tensor.h"

namespace tg::detail {

std::string dev_or_default(const std::string& d);
// The shape numpy's broadcasting rule gives these shapes (dims aligned from the right, 1 stretches),
// or nullopt when they are incompatible.
std::optional<Shape> broadcast_shape(const std::vector<Shape>& shapes);
// Two tensors broadcast to one shape and (when match_dtype) one dtype, as tinygrad's _broadcasted:
// `auto [x, y] = broadcasted(op, a, b)`. x and y are references, to a and b themselves when they need
// neither (an eager op's usual case copies no handle), so a and b must outlive them: a temporary
// argument does not compile.
class Broadcasted {
 public:
  Broadcasted(const Tensor& a, const Tensor& b) : a_(a), b_(b) {}
  Broadcasted(const Tensor& a, const Tensor& b, Tensor x, Tensor y) : a_(a), b_(b), x_(std::move(x)), y_(std::move(y)) {}
  template <size_t I> const Tensor& get() const {
    static_assert(I < 2);
    if constexpr (I == 0) return x_ ? *x_ : a_;
    else return y_ ? *y_ : b_;
  }

 private:
  const Tensor &a_, &b_;
  std::optional<Tensor> x_, y_;
};
Broadcasted broadcasted(const char* op, const Tensor& a, const Tensor& b, bool match_dtype = true);
Broadcasted broadcasted(const char* op, Tensor&& a, const Tensor& b, bool match_dtype = true) = delete;
Broadcasted broadcasted(const char* op, const Tensor& a, Tensor&& b, bool match_dtype = true) = delete;
Broadcasted broadcasted(const char* op, Tensor&& a, Tensor&& b, bool match_dtype = true) = delete;
// The float type of t (ints and bool become default_float).
Tensor to_float(const Tensor& t);
// The dtype a sum accumulates in: float16 -> float32, small ints -> int32/uint32.
DType sum_acc_dtype(DType d);
// The normalized reduce axes (all when `axes` is empty) and the shape the reduce returns.
std::pair<std::vector<int>, Shape> reduce_axes(const Tensor& t, const std::vector<int>& axes, bool keepdim, const char* op);
// Moves `axis` last: (the permutation, its inverse).
std::pair<std::vector<int>, std::vector<int>> axis_last(int ndim, int axis);
// A constant of t's dtype and device, broadcast to shape `shape` (or t's shape).
Tensor const_like(const Tensor& t, double v);
// `placed` (a piece padded to its full shape by `padding`) where the piece lies, `rest` elsewhere: how
// cat joins its pieces and autograd the gradients of disjoint slices. A WHERE, not a sum with zero
// padding (-0.0 + 0.0 is +0.0), and a stack that grouping can read in place (is_concat).
Tensor where_placed(const Tensor& placed, const std::vector<std::pair<int64_t, int64_t>>& padding, const Tensor& rest);
// The conv of x (N, C, H, W), already padded, by w (O, C, kh, r), stride and dilation 1, one group, by
// Winograd's F(4, r) along the rows (winograd.cpp), r <= 5, plus the bias (O) when given. conv2d
// decides when it applies (r = 5).
Tensor winograd_conv2d(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias);

// ---- checks of user input shared by the ops (checks.cpp); each tg::Error names `op` ----------------
// The element count of `shape` for a tensor of `dtype`: every dim >= 0, and the count, its byte size and
// the product of the nonzero dims fit int64. One check for every op that makes a shape.
int64_t checked_numel(const Shape& shape, DType dtype, const char* op);
std::optional<int64_t> numel_if_fits(const Shape& shape, DType dtype);  // the same test, without throwing
// shape with (before, after) padding added per dim, checked as above.
Shape checked_pad_shape(const Shape& shape, const std::vector<std::pair<int64_t, int64_t>>& padding, DType dtype, const char* op);
// v is a value of dtype: NaN, +-inf or a finite value within a float's range, an integer within range
// (an int64 or uint64 bound that rounds in double excluded), any value for bool.
bool is_value_of(double v, DType dtype);
// v fits dtype as torch's full/masked_fill require: a value of it, or a whole negative value that wraps
// into an unsigned type.
void check_fill_value(double v, DType dtype, const char* op);
// A constant tensor without the user-facing checks: for values an op computes itself, and for a C++
// scalar next to a tensor (which wraps into an integer dtype, as torch).
Tensor const_tensor(const Shape& shape, double v, DType dtype, const std::string& device);
// The opt-in data-dependent check (CHECK_INDEX=1): realizes idx, finds its min and max in one reduce and
// raises a tg::Error naming op, the offending value and the valid range [lo, hi) unless every entry (but
// those equal to `ignore`) is in range. Off by default: then out-of-range entries behave as each op
// documents. `what` says what is indexed ("dim 0 of size 3", "num_classes 10").
void check_index_range(const Tensor& idx, int64_t lo, int64_t hi, const char* op, const std::string& what,
                       std::optional<int64_t> ignore = std::nullopt);

}  // namespace tg::detail

template <> struct std::tuple_size<tg::detail::Broadcasted> : std::integral_constant<size_t, 2> {};
template <size_t I> struct std::tuple_element<I, tg::detail::Broadcasted> { using type = const tg::Tensor; };
