// Checks of user input that many ops share: shapes whose element count must fit, values that must fit
// a dtype, and the opt-in data-dependent range check of index tensors (CHECK_INDEX=1).
#include <cmath>
#include <limits>

#include "lazy/lazybuffer.h"
#include "tensor/internal.h"
#include "tg/helpers.h"

namespace tg::detail {

std::optional<int64_t> numel_if_fits(const Shape& shape, DType dtype) {
  // the product of the nonzero dims must fit too, even when a zero dim makes the count 0: the strides of
  // the shape's views are such products
  int64_t span = static_cast<int64_t>(dtype.itemsize());
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d == 0) empty = true;
    else if (__builtin_mul_overflow(span, d, &span)) return std::nullopt;
  }
  return empty ? 0 : span / dtype.itemsize();
}

int64_t checked_numel(const Shape& shape, DType dtype, const char* op) {
  for (int64_t d : shape) TG_CHECK(d >= 0, op, ": negative dimension in shape ", shape, " (", dtype.name(), ")");
  std::optional<int64_t> n = numel_if_fits(shape, dtype);
  TG_CHECK(n, op, ": shape ", shape, " (", dtype.name(), ") is too large: its element count or byte size overflows int64");
  return *n;
}

Shape checked_pad_shape(const Shape& shape, const std::vector<std::pair<int64_t, int64_t>>& padding, DType dtype, const char* op) {
  Shape out = shape;
  for (size_t i = 0; i < shape.size() && i < padding.size(); i++) {
    bool overflow = __builtin_add_overflow(out[i], padding[i].first, &out[i]) || __builtin_add_overflow(out[i], padding[i].second, &out[i]);
    TG_CHECK(!overflow, op, ": padding (", padding[i].first, ", ", padding[i].second, ") of dim ", i, " of shape ", shape,
             " overflows int64");
  }
  TG_CHECK(numel_if_fits(out, dtype), op, ": padding shape ", shape, " (", dtype.name(), ") to ", out,
           " is too large: the element count or byte size overflows int64");
  return out;
}

namespace {
double largest_finite(DType d) {
  switch (d.scalar) {
    case Scalar::Float16: return 65504.0;
    case Scalar::Float32: return std::numeric_limits<float>::max();
    default: return std::numeric_limits<double>::max();
  }
}
}  // namespace

bool is_value_of(double v, DType dtype) {
  if (dtype.is_bool()) return true;  // any value: nonzero is true
  // NaN and the infinities exist in every float type; a finite value must not overflow to one (torch's rule)
  if (dtype.is_float()) return !std::isfinite(v) || std::fabs(v) <= largest_finite(dtype);
  // max() + 1 is exact where max() itself rounds up (int64, uint64), so 2^63 is not an int64
  return std::isfinite(v) && v >= dtype.min() && v < dtype.max() + 1;
}

void check_fill_value(double v, DType dtype, const char* op) {
  // a whole negative value for an unsigned type wraps (as torch for an int)
  bool wraps = dtype.is_unsigned() && v < 0 && v == std::floor(v) && -v < dtype.max() + 1;
  TG_CHECK(is_value_of(v, dtype) || wraps, op, ": value ", v, " cannot be converted to ", dtype.name(), " without overflow");
}

Tensor const_tensor(const Shape& shape, double v, DType dtype, const std::string& device) {
  return Tensor(LazyBuffer::cnst(v, dtype, dev_or_default(device), shape));  // an integer wraps (UOp::cnst)
}

void check_index_range(const Tensor& idx, int64_t lo, int64_t hi, const char* op, const std::string& what, std::optional<int64_t> ignore) {
  if (!CHECK_INDEX || idx.numel() == 0) return;
  NoGradGuard no_grad;
  // compared in the index's own type: every type but uint64 fits int64; a uint64 entry past int64's
  // range is out of range as itself, not as the negative number its bits would make in int64
  bool u64 = idx.dtype() == dtypes::uint64;
  DType dt = u64 ? dtypes::uint64 : dtypes::int64;
  Tensor i = idx.detach().cast(dt);
  if (ignore) i = i.eq(const_tensor({}, static_cast<double>(*ignore), dt, i.device())).where(const_tensor({}, static_cast<double>(u64 ? 0 : lo), dt, i.device()), i);
  // one reduce gives both ends: max(~x) is ~min(x), and ~ cannot overflow as negation can
  Tensor flat = i.reshape({1, i.numel()});
  Tensor ends = Tensor::cat({flat.bitwise_not(), flat}, 0).max({1});
  std::string bad;
  if (u64) {
    std::vector<uint64_t> e = ends.tolist<uint64_t>();
    if (hi <= 0 || ~e[0] < static_cast<uint64_t>(std::max<int64_t>(lo, 0)) || e[1] >= static_cast<uint64_t>(hi)) bad = std::to_string(hi <= 0 ? ~e[0] : e[1]);
  } else {
    std::vector<int64_t> e = ends.tolist<int64_t>();
    if (~e[0] < lo) bad = std::to_string(~e[0]);
    else if (e[1] >= hi) bad = std::to_string(e[1]);
  }
  TG_CHECK_AS(IndexError, bad.empty(), op, ": index ", bad, " out of range [", lo, ", ", hi, ") for ", what, " (index tensor of shape ",
              idx.shape(), ", ", idx.dtype().name(), "; checked because CHECK_INDEX=1)");
}

}  // namespace tg::detail
