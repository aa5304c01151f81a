// tg::Tensor: a lazy, device-resident n-dimensional array with tinygrad's API.
//
// Operations build a graph; nothing runs until realize(), item() or tolist(). Movement ops (reshape,
// permute, expand, pad, shrink, flip...) are views and cost nothing until a kernel reads them. Data given
// by the user lives first on the host device "EXT" and is copied to the compute device when used.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "tg/dtype.h"
#include "tg/error.h"
#include "tg/shape.h"

namespace tg {

class LazyBuffer;
class TensorIndex;
struct TensorImpl;

// What pad puts around a dim (torch's modes): the value, the dim mirrored without its edge entry
// (reflect: padding less than the dim), its edge entry repeated (replicate), or its other end (circular:
// padding at most the dim).
enum class PadMode { constant, reflect, replicate, circular };

class Tensor {
 public:
  // From data. The dtype follows the C++ type (int -> int32, float -> float32, bool -> bool...).
  Tensor(std::initializer_list<float> data, const std::string& device = "");
  Tensor(std::initializer_list<double> data, const std::string& device = "");
  Tensor(std::initializer_list<int> data, const std::string& device = "");
  Tensor(std::initializer_list<bool> data, const std::string& device = "");
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  Tensor(const std::vector<T>& data, const Shape& shape, const std::string& device = "")
      : Tensor(from_vector(data, shape, device)) {}
  // A scalar (shape ()).
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  explicit Tensor(T v, std::optional<DType> dtype = std::nullopt, const std::string& device = "")
      : Tensor(scalar_tensor(static_cast<double>(v), dtype.value_or(scalar_dtype<T>()), device)) {}
  explicit Tensor(std::shared_ptr<LazyBuffer> lb, std::optional<bool> requires_grad = std::nullopt);

  // ---- autograd (tinygrad's function.py design) ---------------------------------------------------
  // A Tensor is a handle: copies share one tensor (its data, grad and requires_grad), as Python
  // references do. `requires_grad` is unset (nullopt) until set; an op's result requires grad when any
  // input does. backward() runs from a scalar (or with an explicit gradient of this tensor's shape) and
  // accumulates into the .grad of every tensor that requires grad.
  std::optional<bool> requires_grad() const;
  Tensor& requires_grad_(bool value = true);
  bool has_grad() const;
  Tensor grad() const;                       // tg::Error when there is none
  void set_grad(const std::optional<Tensor>& g);
  Tensor& backward();
  Tensor& backward(const Tensor& gradient);
  Tensor detach() const;                     // same data, cut from the graph
  // In place: this tensor (and every handle to it) now holds x's data. Shapes, dtypes and devices must
  // match. When this tensor is realized (a whole buffer), the kernel that computes x writes it into that
  // buffer (tinygrad's ASSIGN): optimizer steps, BatchNorm's running stats and TinyJit replays update the
  // same memory. Kernels that read the old values in the same realize run first; a graph built before
  // the assign that reads the old values after it ran is a tg::Error (they are gone). An unrealized
  // tensor simply becomes x.
  Tensor& assign(const Tensor& x);
  // This tensor (every handle to it) now is x's data (tinygrad's replace): same shape, any dtype or
  // device; x must not require grad and this tensor must not be an op's result in a graph. Unlike assign
  // nothing is written: the tensor's buffer is not kept (a TinyJit plan holding it does not see x).
  Tensor& replace(const Tensor& x);
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  // Scopes: NoGradGuard turns graph building off; Tensor::training is read by dropout and BatchNorm.
  // Both are per thread (as torch's grad mode): a guard in one thread does not change another's graphs.
  static thread_local bool training;
  static thread_local bool no_grad;

  // ---- creation -------------------------------------------------------------------------------------
  // Every op that makes a shape rejects one whose element count or byte size does not fit int64. A fill
  // value must fit the dtype as torch requires (NaN/inf only in float types, no finite float overflow;
  // a whole negative value wraps into an unsigned type). arange needs finite ends and a nonzero step that
  // points from start to stop (as torch).
  static Tensor empty(const Shape& shape, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor full(const Shape& shape, double value, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor zeros(const Shape& shape, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor ones(const Shape& shape, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor arange(double start, double stop, double step = 1, std::optional<DType> dtype = std::nullopt, const std::string& device = "");
  static Tensor arange(int64_t stop) { return arange(0, static_cast<double>(stop), 1, dtypes::default_int); }
  static Tensor linspace(double start, double stop, int64_t steps, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor eye(int64_t n, DType dtype = dtypes::default_float, const std::string& device = "");
  // n rows, m columns: ones where row == column (tinygrad's and torch's eye(n, m)).
  static Tensor eye(int64_t n, int64_t m, DType dtype = dtypes::default_float, const std::string& device = "");
  Tensor full_like(double value, std::optional<DType> dtype = std::nullopt) const;
  Tensor zeros_like(std::optional<DType> dtype = std::nullopt) const;
  Tensor ones_like(std::optional<DType> dtype = std::nullopt) const;
  Tensor rand_like(std::optional<DType> dtype = std::nullopt) const;
  // Random numbers come from a counter-based generator (threefry) that runs on the device: the same
  // manual_seed gives the same numbers.
  static void manual_seed(uint64_t seed);
  static Tensor rand(const Shape& shape, DType dtype = dtypes::default_float, const std::string& device = "");  // [0, 1)
  static Tensor randn(const Shape& shape, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor randint(const Shape& shape, int64_t low, int64_t high, DType dtype = dtypes::int32, const std::string& device = "");  // [low, high)
  static Tensor normal(const Shape& shape, double mean = 0, double std = 1, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor uniform(const Shape& shape, double low = 0, double high = 1, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor scaled_uniform(const Shape& shape, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor glorot_uniform(const Shape& shape, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor kaiming_uniform(const Shape& shape, double a = 0.01, DType dtype = dtypes::default_float, const std::string& device = "");
  static Tensor kaiming_normal(const Shape& shape, double a = 0.01, DType dtype = dtypes::default_float, const std::string& device = "");
  // num_samples category indices per row of this 1-D or 2-D tensor of non-negative weights (tinygrad's
  // multinomial; int32). With replacement each sample inverts the row's CDF at a uniform number; without,
  // the num_samples (<= categories) largest keys log2(u) / w are taken (Efraimidis-Spirakis), so a
  // category of weight 0 is never drawn while others are left. Weights are not checked (no host sync).
  Tensor multinomial(int64_t num_samples = 1, bool replacement = false) const;

  // ---- elementwise (broadcasting, tinygrad's dtype promotion) ---------------------------------------
  Tensor add(const Tensor& o) const;
  Tensor sub(const Tensor& o) const;
  Tensor mul(const Tensor& o) const;
  Tensor div(const Tensor& o) const;  // true division: integer inputs give a float result
  Tensor idiv(const Tensor& o) const; // integer division, truncating toward zero (C semantics)
  // remainder with the divisor's sign, as Python's % and torch.remainder: a - floor(a / b) * b; integers
  // exactly, and a % 0 == a for them (idiv's a / 0 == 0 keeps a == a.idiv(b) * b + a % b where signs agree)
  Tensor mod(const Tensor& o) const;
  // the quotient rounded down, as Python's // and torch.floor_divide: floor(a / b) for floats; integers
  // exactly, with a // 0 == 0, so that a == a.floor_divide(b) * b + a % b for every pair of integers
  Tensor floor_divide(const Tensor& o) const;
  Tensor neg() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor exp2() const;
  Tensor log2() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor asin() const;
  Tensor acos() const;
  Tensor atan() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor asinh() const;
  Tensor acosh() const;
  Tensor atanh() const;
  Tensor tanh() const;
  Tensor erf() const;
  Tensor reciprocal() const;
  Tensor square() const { return mul(*this); }
  Tensor abs() const;
  Tensor sign() const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(double exponent) const;
  Tensor clip(std::optional<double> min, std::optional<double> max) const;
  Tensor clamp(std::optional<double> min, std::optional<double> max) const { return clip(min, max); }
  Tensor trunc() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;  // half to even, as torch
  Tensor isnan() const;
  Tensor isinf(bool detect_positive = true, bool detect_negative = true) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor where(const Tensor& x, const Tensor& y) const;  // this is the condition
  Tensor where(double x, double y) const;
  // activations
  Tensor relu() const;
  Tensor relu6() const;
  Tensor sigmoid() const;
  Tensor softplus(double beta = 1) const;
  Tensor logsigmoid() const;  // log(sigmoid(x)) = -softplus(-x)
  Tensor softsign() const;    // x / (1 + |x|)
  Tensor gelu() const;        // tanh approximation, as tinygrad
  Tensor quick_gelu() const;
  Tensor leakyrelu(double neg_slope = 0.01) const;
  Tensor elu(double alpha = 1) const;
  Tensor celu(double alpha = 1) const;
  Tensor selu() const;
  Tensor swish() const;
  Tensor silu() const { return swish(); }
  Tensor mish() const;
  Tensor hardtanh(double min_val = -1, double max_val = 1) const;
  Tensor hardsigmoid() const;
  Tensor hardswish() const;
  // comparisons and logic (bool results)
  Tensor lt(const Tensor& o) const;
  Tensor le(const Tensor& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor eq(const Tensor& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor logical_not() const;
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  Tensor logical_xor(const Tensor& o) const;
  // bitwise ops and shifts (integers and bool)
  Tensor bitwise_and(const Tensor& o) const;
  Tensor bitwise_or(const Tensor& o) const;
  Tensor bitwise_xor(const Tensor& o) const;
  Tensor bitwise_not() const;
  Tensor lshift(int64_t bits) const;
  Tensor rshift(int64_t bits) const;
  Tensor cast(DType dtype) const;
  Tensor bitcast(DType dtype) const;

  // ---- reductions and scans: all axes when `axes` is empty; negative axes count from the end --------
  // As torch, every op that takes a dim accepts 0 and -1 for a 0-d tensor and treats it as one element.
  // max/min/argmax/argmin of a zero-length axis are a tg::Error; the others give the empty reduction's
  // value (sum 0, prod 1, mean/var NaN, logsumexp -inf, any false, all true).
  Tensor sum(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor prod(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor max(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor min(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor any(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor all(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor mean(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor var(const std::vector<int>& axes = {}, bool keepdim = false, double correction = 1) const;
  Tensor std(const std::vector<int>& axes = {}, bool keepdim = false, double correction = 1) const;
  // int32 indices (int64 where the axis has 2^31 entries or more); flattened when no axis
  Tensor argmax(std::optional<int> axis = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int> axis = std::nullopt, bool keepdim = false) const;
  Tensor cumsum(int axis = 0) const;
  Tensor cummax(int axis = 0) const;
  Tensor cumprod(int axis = 0) const;  // in cumsum's dtype (sum's: int32 at least for integers and bool); exact for integers
  Tensor logsumexp(const std::vector<int>& axes = {}, bool keepdim = false) const;
  Tensor softmax(int axis = -1) const;
  Tensor log_softmax(int axis = -1) const;
  // (values, int32 indices), sorted; NaN counts as larger than any number, as torch.
  std::pair<Tensor, Tensor> topk(int64_t k, int dim = -1, bool largest = true) const;
  // (values, int32 indices) along dim, ascending or descending, NaN as in topk. Stable: equal values keep
  // their order (torch's stable=True). A bitonic network: log2(n)^2 / 2 steps of two kernels each.
  std::pair<Tensor, Tensor> sort(int dim = -1, bool descending = false) const;
  Tensor argsort(int dim = -1, bool descending = false) const;  // sort's indices

  // ---- movement (views) -----------------------------------------------------------------------------
  Tensor reshape(const Shape& shape) const;  // one dim may be -1
  Tensor permute(const std::vector<int>& order) const;
  Tensor transpose(int dim0 = 1, int dim1 = 0) const;
  Tensor T() const { return transpose(); }  // tinygrad's .T: dims 0 and 1 swapped
  Tensor expand(const Shape& shape) const;   // -1 keeps a dim
  Tensor pad(const std::vector<std::pair<int64_t, int64_t>>& padding, double value = 0) const;
  Tensor pad(const std::vector<std::pair<int64_t, int64_t>>& padding, PadMode mode, double value = 0) const;
  Tensor shrink(const std::vector<std::pair<int64_t, int64_t>>& bounds) const;
  Tensor flip(const std::vector<int>& axes) const;
  Tensor squeeze(std::optional<int> dim = std::nullopt) const;
  Tensor unsqueeze(int dim) const;
  Tensor flatten(int start_dim = 0, int end_dim = -1) const;
  Tensor unflatten(int dim, const Shape& sizes) const;
  // torch's unfold: the windows of `size` entries along dim, `step` apart, as a view. Dim becomes the
  // window count (n - size) / step + 1 and a last dim of `size` is appended (a 0-d tensor: shape (size,)).
  Tensor unfold(int dim, int64_t size, int64_t step) const;

  // ---- shaping ---------------------------------------------------------------------------------------
  static Tensor cat(const std::vector<Tensor>& tensors, int dim = 0);
  static Tensor stack(const std::vector<Tensor>& tensors, int dim = 0);
  static std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing = "ij");
  Tensor repeat(const std::vector<int64_t>& repeats) const;
  // Each entry `repeats` times in a row along dim (torch's repeat_interleave with a number; no dim: flattened).
  Tensor repeat_interleave(int64_t repeats, std::optional<int> dim = std::nullopt) const;
  std::vector<Tensor> split(int64_t size, int dim = 0) const;
  std::vector<Tensor> split(const std::vector<int64_t>& sizes, int dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int dim = 0) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor roll(const std::vector<int64_t>& shifts, const std::vector<int>& dims) const;
  // torch.nn.functional.pad order: (left, right, top, bottom, ...) from the last dim backwards;
  // negative values crop. With a mode, torch's F.pad(x, padding, mode): reflect, replicate and circular
  // take no value and do not crop.
  Tensor pad2d(const std::vector<int64_t>& padding, double value = 0) const;
  Tensor pad2d(const std::vector<int64_t>& padding, PadMode mode, double value = 0) const;
  // Resizes the last size.size() dims to `size` (torch.nn.functional.interpolate's sampling, any number
  // of leading dims). mode: "nearest" (torch's, floor(dst * in/out)), "nearest-exact" (floor((dst+0.5) *
  // in/out)), "linear" (over every resized dim: bilinear for two, trilinear for three), or "bilinear" /
  // "trilinear" (linear, with 2 / 3 sizes). align_corners (linear only) maps the corner pixels onto each
  // other. Linear interpolation of an integer tensor gives default_float; nearest keeps the dtype.
  Tensor interpolate(const Shape& size, const std::string& mode = "linear", bool align_corners = false) const;

  // ---- indexing --------------------------------------------------------------------------------------
  // libtorch style: t.index({Slice(0, 2), 1, None, Ellipsis, idx_tensor}). Integer tensors index by a
  // data-dependent load (work proportional to the output); negative entries count from the end and
  // entries still out of range read 0. Python ints out of range are a tg::Error. A bool tensor is a mask
  // (its true entries' coordinates, read on the host: the output's size depends on it). gather reads the same
  // way; scatter (one-hot, last entry wins) wraps negative entries and ignores out-of-range ones.
  // one_hot gives an all-zero row for an entry outside [0, num_classes).
  // With CHECK_INDEX=1 (tg::Context{{"CHECK_INDEX", 1}} or the environment) each of these reads its
  // index tensor when called and raises a tg::Error naming the op, the bad entry and the valid range:
  // [-n, n) for index/gather/scatter along a dim of size n, [0, num_classes) for one_hot.
  Tensor index(const std::vector<TensorIndex>& indices) const;
  Tensor operator[](int64_t i) const;
  // A copy of this tensor with this[indices] = values (libtorch's index_put; Python's t[...] = v assigns
  // it in place): values broadcast to the selection's shape and have this tensor's dtype and device.
  // Basic indices cost one lazy where; with index tensors it is a scatter to the selection's flat
  // positions (cost: the selection's size times this tensor's), where a repeated position takes the last
  // value and an entry out of range writes nothing (CHECK_INDEX=1 raises instead).
  Tensor index_put(const std::vector<TensorIndex>& indices, const Tensor& values) const;
  // In place (Python's t[indices] = values). Outside autograd every handle to this tensor sees the write
  // (assign). Where this tensor or values is part of a graph, the write is a graph node, as torch records
  // it: this handle takes the result, and uses of the old value made before (graph nodes, other
  // handles) keep it, so gradients flow to what each use read. A leaf that requires grad is an error
  // (as torch), unless Tensor::no_grad.
  Tensor& index_put_(const std::vector<TensorIndex>& indices, const Tensor& values);
  Tensor gather(int dim, const Tensor& index) const;
  Tensor scatter(int dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int dim, const Tensor& index, double value) const;
  // torch's scatter_reduce: every src entry whose index names a position along dim joins that position's
  // "sum", "prod", "mean" (integers: floor division), "amax" or "amin", with the input's value when
  // include_self; positions nothing is scattered to keep the input's value. Index entries as scatter's.
  Tensor scatter_reduce(int dim, const Tensor& index, const Tensor& src, const std::string& reduce, bool include_self = true) const;
  Tensor masked_fill(const Tensor& mask, double value) const;
  Tensor one_hot(int64_t num_classes = -1) const;

  // ---- networks (tinygrad's names and defaults) ------------------------------------------------------
  // torch.einsum's formulas: "ij,jk->ik" (explicit output), "ij,jk" (implicit: the subscripts that appear
  // once, sorted), "..." for broadcast dims, a repeated subscript for a diagonal/trace ("ii->i", "ii"),
  // any number of operands (contracted left to right, two at a time). A size-1 dim broadcasts against
  // its subscript's size. A matmul-shaped formula builds matmul's graph: one kernel.
  static Tensor einsum(const std::string& formula, const std::vector<Tensor>& operands);
  Tensor dot(const Tensor& w) const;
  Tensor matmul(const Tensor& w) const;  // dot, with errors that say matmul
  Tensor linear(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt) const;  // x @ weight.T + bias
  // Convolution over the trailing dims of the input (N, C, *spatial): 1-D, 2-D and 3-D by the weight's
  // rank. Each of stride/dilation is one value for every dim or one per dim; padding is one value,
  // one per dim, or (begin, end) per dim in pad2d order.
  Tensor conv2d(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt, int64_t groups = 1,
                const std::vector<int64_t>& stride = {1}, const std::vector<int64_t>& dilation = {1},
                const std::vector<int64_t>& padding = {0}) const;
  Tensor conv_transpose2d(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt, int64_t groups = 1,
                          const std::vector<int64_t>& stride = {1}, const std::vector<int64_t>& dilation = {1},
                          const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& output_padding = {0}) const;
  // ceil_mode: torch's output size ceil((in + pads - dilation*(k-1) - 1) / stride) + 1, less one where
  // the last window would start in the right padding; the windows past the input see the dtype's lowest value.
  Tensor max_pool2d(const std::vector<int64_t>& kernel_size = {2, 2}, const std::vector<int64_t>& stride = {},
                    const std::vector<int64_t>& dilation = {1}, const std::vector<int64_t>& padding = {0},
                    bool ceil_mode = false) const;
  // ceil_mode as max_pool2d's; a window's average is over its entries in the input and (count_include_pad)
  // the asked-for padding, not over those past them that ceil_mode adds (torch's divisor).
  Tensor avg_pool2d(const std::vector<int64_t>& kernel_size = {2, 2}, const std::vector<int64_t>& stride = {},
                    const std::vector<int64_t>& dilation = {1}, const std::vector<int64_t>& padding = {0},
                    bool count_include_pad = true, bool ceil_mode = false) const;
  // (x - mean) * invstd * weight + bias, broadcast along `axis` (tinygrad's batchnorm).
  Tensor batchnorm(const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, const Tensor& mean,
                   const Tensor& invstd, int axis = 1) const;
  Tensor layernorm(const std::vector<int>& axes = {-1}, double eps = 1e-5) const;
  Tensor dropout(double p = 0.5) const;  // identity unless Tensor::training
  // this is the query (..., L, E); key (..., S, E); value (..., S, Ev). A bool mask keeps true entries.
  Tensor scaled_dot_product_attention(const Tensor& key, const Tensor& value, const std::optional<Tensor>& attn_mask = std::nullopt,
                                      double dropout_p = 0, bool is_causal = false) const;
  // Losses. `this` holds logits/predictions; reduction is "mean", "sum" or "none". A class-index target
  // outside [0, C) matches no class: by default its term is 0 (it still counts in a "mean"'s divisor,
  // unless it equals ignore_index); with CHECK_INDEX=1 it is a tg::Error, ignore_index exempt.
  Tensor sparse_categorical_crossentropy(const Tensor& Y, int64_t ignore_index = -1, double label_smoothing = 0,
                                         const std::string& reduction = "mean") const;
  Tensor cross_entropy(const Tensor& Y, const std::string& reduction = "mean", double label_smoothing = 0) const;
  Tensor nll_loss(const Tensor& Y, const std::optional<Tensor>& weight = std::nullopt, int64_t ignore_index = -1,
                  const std::string& reduction = "mean") const;
  Tensor binary_crossentropy(const Tensor& Y, const std::string& reduction = "mean") const;
  Tensor binary_crossentropy_logits(const Tensor& Y, const std::string& reduction = "mean") const;

  // ---- realization and data --------------------------------------------------------------------------
  Tensor& realize();
  // this through each function in turn (tinygrad's sequential): layers[n-1](...layers[0](this)).
  Tensor sequential(const std::vector<std::function<Tensor(const Tensor&)>>& layers) const;
  // Realizes all of them in one schedule (tinygrad's Tensor.corealize): shared work runs once.
  static void corealize(const std::vector<Tensor>& tensors);
  Tensor contiguous() const;
  Tensor contiguous_backward() const;  // identity forward; makes the gradient contiguous
  Tensor to(const std::string& device) const;
  template <class T> T item() const;
  template <class T> std::vector<T> tolist() const;
  // Raw data: n elements of `dtype` in C order, little-endian, copied from host memory; and back.
  static Tensor from_host(const void* data, size_t n, const Shape& shape, DType dtype, const std::string& device = "");
  std::vector<uint8_t> bytes() const;  // realizes

  const Shape& shape() const;
  int64_t size(int dim) const;  // a 0-d tensor has no dims: tg::Error for any dim, as torch
  DType dtype() const;
  const std::string& device() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  int64_t numel() const;
  int64_t nbytes() const { return numel() * dtype().itemsize(); }
  const std::shared_ptr<LazyBuffer>& lazydata() const;

 private:
  std::shared_ptr<TensorImpl> impl_;
  static Tensor wrap(std::shared_ptr<TensorImpl> impl);
  friend struct TensorImpl;
  friend class Function;
  template <class T> static Tensor from_vector(const std::vector<T>& data, const Shape& shape, const std::string& device) {
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> is packed: unpack to one byte each
      std::vector<uint8_t> bytes(data.begin(), data.end());
      return from_host(bytes.data(), bytes.size(), shape, dtypes::bool_, device, "Tensor");
    } else {
      return from_host(data.data(), data.size(), shape, dtype_of<T>(), device, "Tensor");
    }
  }
  template <class T> static constexpr DType scalar_dtype() {
    if constexpr (std::is_same_v<T, bool>) return dtypes::bool_;
    else if constexpr (std::is_integral_v<T>) return dtypes::default_int;
    else return dtypes::default_float;
  }
  static Tensor scalar_tensor(double v, DType dtype, const std::string& device);  // checks v fits dtype
  static Tensor from_host(const void* data, size_t n, const Shape& shape, DType dtype, const std::string& device, const char* op);
  friend Tensor scalar_like(const Tensor& t, double v, DType pytype);
  void read(void* out, DType as) const;  // realizes, converts every element to `as`
 public:
  // -1 -> ndim-1; tg::Error naming `op` when out of range. A 0-d tensor takes 0 and -1 (PyTorch's rule)
  // and gets 0, which does not index shape(): every caller handles 0-d tensors itself.
  int norm_axis(int axis, const char* op) const;
};

// RAII scopes for Tensor::no_grad and Tensor::training.
class NoGradGuard {
 public:
  NoGradGuard() : prev_(Tensor::no_grad) { Tensor::no_grad = true; }
  ~NoGradGuard() { Tensor::no_grad = prev_; }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;
 private:
  bool prev_;
};
class TrainingGuard {
 public:
  explicit TrainingGuard(bool mode = true) : prev_(Tensor::training) { Tensor::training = mode; }
  ~TrainingGuard() { Tensor::training = prev_; }
  TrainingGuard(const TrainingGuard&) = delete;
  TrainingGuard& operator=(const TrainingGuard&) = delete;
 private:
  bool prev_;
};

// Index arguments for Tensor::index, as libtorch's torch::indexing.
namespace indexing {
struct NoneIndex {};
struct EllipsisIndex {};
inline constexpr NoneIndex None{};
inline constexpr EllipsisIndex Ellipsis{};
struct Slice {
  std::optional<int64_t> start, stop, step;
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt) : start(start), stop(stop), step(step) {}
};
}  // namespace indexing
class TensorIndex {
 public:
  TensorIndex(int64_t i) : v_(i) {}
  TensorIndex(int i) : v_(static_cast<int64_t>(i)) {}
  TensorIndex(indexing::Slice s) : v_(s) {}
  TensorIndex(indexing::NoneIndex n) : v_(n) {}
  TensorIndex(indexing::EllipsisIndex e) : v_(e) {}
  TensorIndex(Tensor t) : v_(std::move(t)) {}
  const std::variant<int64_t, indexing::Slice, indexing::NoneIndex, indexing::EllipsisIndex, Tensor>& value() const { return v_; }
 private:
  std::variant<int64_t, indexing::Slice, indexing::NoneIndex, indexing::EllipsisIndex, Tensor> v_;
};

// A C++ scalar combined with a tensor follows tinygrad: an int keeps an int or float tensor's dtype,
// a float makes an int tensor float. The constant has t's shape and device.
Tensor scalar_like(const Tensor& t, double v, DType pytype);
template <class T> DType py_dtype() {
  if constexpr (std::is_same_v<T, bool>) return dtypes::bool_;
  else if constexpr (std::is_integral_v<T>) return dtypes::default_int;
  else return dtypes::default_float;
}

#define TG_BINARY_OPERATOR(OP, FN, PYTYPE)                                                                 \
  inline Tensor operator OP(const Tensor& a, const Tensor& b) { return a.FN(b); }                          \
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>                                   \
  Tensor operator OP(const Tensor& a, T b) { return a.FN(scalar_like(a, static_cast<double>(b), PYTYPE)); } \
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>                                   \
  Tensor operator OP(T a, const Tensor& b) { return scalar_like(b, static_cast<double>(a), PYTYPE).FN(b); }
TG_BINARY_OPERATOR(+, add, py_dtype<T>())
TG_BINARY_OPERATOR(-, sub, py_dtype<T>())
TG_BINARY_OPERATOR(*, mul, py_dtype<T>())
// True division takes an int scalar at its value, as torch and tinygrad: as a float, not wrapped into an
// integer tensor's dtype first (an int8 tensor / 200 divides by 200, not by -56).
TG_BINARY_OPERATOR(/, div, dtypes::default_float)
TG_BINARY_OPERATOR(%, mod, py_dtype<T>())
TG_BINARY_OPERATOR(<, lt, py_dtype<T>())
TG_BINARY_OPERATOR(<=, le, py_dtype<T>())
TG_BINARY_OPERATOR(>, gt, py_dtype<T>())
TG_BINARY_OPERATOR(>=, ge, py_dtype<T>())
TG_BINARY_OPERATOR(==, eq, py_dtype<T>())
TG_BINARY_OPERATOR(!=, ne, py_dtype<T>())
TG_BINARY_OPERATOR(&, bitwise_and, py_dtype<T>())
TG_BINARY_OPERATOR(|, bitwise_or, py_dtype<T>())
TG_BINARY_OPERATOR(^, bitwise_xor, py_dtype<T>())
#undef TG_BINARY_OPERATOR
inline Tensor operator-(const Tensor& a) { return a.neg(); }
inline Tensor operator~(const Tensor& a) { return a.bitwise_not(); }
// Prints the values (realizing them), as torch does: "tensor([[1, 2], [3, 4]], dtype=int32, device=CPU)".
// Dims longer than 6 show their first and last 3 entries.
std::ostream& operator<<(std::ostream& os, const Tensor& t);
inline Tensor operator<<(const Tensor& a, int64_t bits) { return a.lshift(bits); }
inline Tensor operator>>(const Tensor& a, int64_t bits) { return a.rshift(bits); }

template <class T> T Tensor::item() const {
  TG_CHECK(numel() == 1, "item: tensor of shape ", shape(), " has ", numel(), " elements, expected exactly 1");
  T v;
  read(&v, dtype_of<T>());
  return v;
}
template <class T> std::vector<T> Tensor::tolist() const {
  std::vector<T> v(static_cast<size_t>(numel()));
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> b(v.size());
    read(b.data(), dtypes::bool_);
    for (size_t i = 0; i < b.size(); i++) v[i] = b[i] != 0;
  } else {
    read(v.data(), dtype_of<T>());
  }
  return v;
}

}  // namespace tg
