// interpolate: resizing the trailing dims with torch.nn.functional.interpolate's sampling.
//
// Which input elements an output element reads, and their weights, depend only on the sizes: they are
// computed here on the host, in the precision torch computes them in (float for float16/float32 inputs,
// double for float64), and each resized dim is then one gather (two and a weighted sum for linear).
#include <cmath>

#include "tensor/internal.h"

namespace tg {

namespace {

// For each output position along a dim: the first input index read, the second (linear only) and the
// second's weight.
struct Taps {
  std::vector<int32_t> i0, i1;
  std::vector<double> w1;
};

template <class T>
Taps taps(int64_t in, int64_t out, bool linear, bool exact, bool align_corners) {
  Taps t;
  for (int64_t dst = 0; dst < out; dst++) {
    if (!linear) {  // torch's nearest: floor(dst * in/out); nearest-exact: floor((dst + 0.5) * in/out)
      T scale = static_cast<T>(in) / static_cast<T>(out);
      T src = exact ? (static_cast<T>(dst) + static_cast<T>(0.5)) * scale : static_cast<T>(dst) * scale;
      t.i0.push_back(static_cast<int32_t>(std::min<int64_t>(static_cast<int64_t>(std::floor(src)), in - 1)));
      continue;
    }
    T src;
    if (align_corners) {  // the corners' centres map onto each other
      T scale = out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
      src = scale * static_cast<T>(dst);
    } else {  // the pixels' centres: (dst + 0.5) * in/out - 0.5, at least 0
      T scale = static_cast<T>(in) / static_cast<T>(out);
      src = std::max(scale * (static_cast<T>(dst) + static_cast<T>(0.5)) - static_cast<T>(0.5), T(0));
    }
    auto i0 = std::min<int64_t>(static_cast<int64_t>(src), in - 1);
    t.i0.push_back(static_cast<int32_t>(i0));
    t.i1.push_back(static_cast<int32_t>(i0 < in - 1 ? i0 + 1 : i0));
    t.w1.push_back(static_cast<double>(std::min(src - static_cast<T>(i0), T(1))));
  }
  return t;
}

// x gathered along dim by idx (one index per output position), broadcast over the other dims.
Tensor take(const Tensor& x, int dim, const std::vector<int32_t>& idx) {
  auto out = static_cast<int64_t>(idx.size());
  Shape view(static_cast<size_t>(x.ndim()), 1), full = x.shape();
  view[static_cast<size_t>(dim)] = full[static_cast<size_t>(dim)] = out;
  return x.gather(dim, Tensor(idx, {out}, x.device()).reshape(view).expand(full));
}

// A weight per output position, shaped to broadcast along dim of a rank-`ndim` tensor.
Tensor weights_along(const std::vector<double>& w, int dim, int ndim, DType dtype, const std::string& device) {
  Shape view(static_cast<size_t>(ndim), 1);
  view[static_cast<size_t>(dim)] = static_cast<int64_t>(w.size());
  return Tensor(w, {static_cast<int64_t>(w.size())}, device).cast(dtype).reshape(view);
}

}  // namespace

Tensor Tensor::interpolate(const Shape& size, const std::string& mode, bool align_corners) const {
  bool linear = mode == "linear" || mode == "bilinear" || mode == "trilinear";
  TG_CHECK(linear || mode == "nearest" || mode == "nearest-exact", "interpolate: mode '", mode,
           "' is not supported (nearest, nearest-exact, linear, bilinear, trilinear are)");
  TG_CHECK(!size.empty() && size.size() <= shape().size(), "interpolate: size ", size, " must name 1 to ", ndim(),
           " trailing dims of the input of shape ", shape());
  TG_CHECK(mode != "bilinear" || size.size() == 2, "interpolate: mode 'bilinear' needs 2 sizes, got ", size, " (input of shape ", shape(), ")");
  TG_CHECK(mode != "trilinear" || size.size() == 3, "interpolate: mode 'trilinear' needs 3 sizes, got ", size, " (input of shape ", shape(), ")");
  TG_CHECK(linear || !align_corners, "interpolate: align_corners can only be set with the linear modes, not '", mode, "'");
  size_t k = size.size(), lead = shape().size() - k;
  for (size_t j = 0; j < k; j++) {
    TG_CHECK(size[j] > 0 && shape()[lead + j] > 0, "interpolate: input and output sizes must be greater than 0, got input ", shape(),
             " and size ", size);
    TG_CHECK(size[j] <= INT32_MAX && shape()[lead + j] <= INT32_MAX, "interpolate: size ", size, " or input ", shape(),
             " has a dim of 2^31 or more");
  }
  Tensor x = linear ? detail::to_float(*this) : *this;
  bool dbl = x.dtype() == dtypes::float64;
  for (size_t j = 0; j < k; j++) {
    int dim = static_cast<int>(lead + j);
    int64_t in = shape()[lead + j], out = size[j];
    if (in == out) continue;  // every mode reads element i at position i
    bool exact = mode == "nearest-exact";
    Taps t = dbl ? taps<double>(in, out, linear, exact, align_corners) : taps<float>(in, out, linear, exact, align_corners);
    if (!linear) {
      x = take(x, dim, t.i0);
      continue;
    }
    std::vector<double> w0(t.w1.size());
    for (size_t i = 0; i < w0.size(); i++) w0[i] = 1.0 - t.w1[i];
    Tensor a = weights_along(w0, dim, x.ndim(), x.dtype(), x.device()), b = weights_along(t.w1, dim, x.ndim(), x.dtype(), x.device());
    x = take(x, dim, t.i0) * a + take(x, dim, t.i1) * b;
  }
  return x;
}

}  // namespace tg
