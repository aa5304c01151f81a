// Network ops after tinygrad: softmax and friends, normalizations, dropout, attention and losses, each
// a short composition of elementwise ops and reductions so the scheduler can fuse them.
#include <cmath>

#include "tensor/internal.h"

namespace tg {

namespace {

// "mean", "sum" or "none", as tinygrad's _do_reduction.
Tensor do_reduction(const Tensor& t, const std::string& reduction, const char* op) {
  TG_CHECK(reduction == "mean" || reduction == "sum" || reduction == "none", op, ": reduction must be \"mean\", \"sum\" or \"none\", got \"",
           reduction, "\"");
  return reduction == "mean" ? t.mean() : reduction == "sum" ? t.sum() : t;
}

// A bool (..., C, ...) mask, true where the class index along `axis` equals Y's entry. Y has the shape
// of the logits without `axis`. Built from an arange comparison, so it costs no data-dependent load.
// A target outside [0, classes) matches no class: its row is all false (CHECK_INDEX=1 raises instead;
// entries equal to `ignore` are exempt).
Tensor class_mask(const Tensor& Y, int64_t classes, int axis, const char* op, std::optional<int64_t> ignore = std::nullopt) {
  TG_CHECK_AS(TypeError, Y.dtype().is_int(), op, ": targets must be integers, got ", Y.dtype().name(), " of shape ", Y.shape());
  detail::check_index_range(Y, 0, classes, op, detail::cat(classes, " classes"), ignore);
  Shape s(static_cast<size_t>(Y.ndim() + 1), 1);
  s[static_cast<size_t>(axis)] = classes;
  // compared in int64, so a class count beyond Y's dtype cannot wrap onto a real label
  Tensor classes_ = Tensor::arange(0, static_cast<double>(classes), 1, dtypes::int32, Y.device()).cast(dtypes::int64).reshape(s);
  return Y.cast(dtypes::int64).unsqueeze(axis).eq(classes_);
}

// Entries of Y other than ignore_index (compared in int64: an ignore_index outside Y's dtype matches none).
Tensor not_ignored(const Tensor& Y, int64_t ignore_index) {
  return Y.cast(dtypes::int64).ne(detail::const_tensor({}, static_cast<double>(ignore_index), dtypes::int64, Y.device()));
}

// Logits (..., C, ...) with the class dim at `axis` and targets Y of the same shape without it.
void check_targets(const Tensor& x, const Tensor& Y, int axis, const char* op) {
  Shape want = x.shape();
  want.erase(want.begin() + axis);
  TG_CHECK(Y.shape() == want, op, ": targets ", Y.shape(), " (", Y.dtype().name(), ") do not match input ", x.shape(), " (",
           x.dtype().name(), "), expected targets of shape ", want);
}

// Predictions and targets of one shape (torch's binary losses require it).
void check_same_shape(const Tensor& x, const Tensor& Y, const char* op) {
  TG_CHECK(x.shape() == Y.shape(), op, ": targets ", Y.shape(), " (", Y.dtype().name(), ") must have the input's shape ", x.shape(), " (",
           x.dtype().name(), ")");
}

// The max along `axes` (keepdim), detached: subtracting it only keeps exp() in range, the gradient
// through it cancels, so it need not be differentiated.
Tensor stable_max(const Tensor& t, const std::vector<int>& axes) { return t.max(axes, true).detach(); }

}  // namespace

// ---- softmax family --------------------------------------------------------------------------------

Tensor Tensor::softmax(int axis) const {
  Tensor x = detail::to_float(*this);
  int a = norm_axis(axis, "softmax");
  if (numel() == 0) return x;  // nothing to normalize (torch returns the empty tensor)
  Tensor e = (x - stable_max(x, {a})).exp();
  return e / e.sum({a}, true);
}

Tensor Tensor::log_softmax(int axis) const {
  Tensor x = detail::to_float(*this);
  int a = norm_axis(axis, "log_softmax");
  if (numel() == 0) return x;
  Tensor m = x - stable_max(x, {a});
  return m - m.exp().sum({a}, true).log();
}

Tensor Tensor::logsumexp(const std::vector<int>& axes, bool keepdim) const {
  auto [ax, out] = detail::reduce_axes(*this, axes, keepdim, "logsumexp");
  Tensor x = detail::to_float(*this);
  for (int a : ax)  // the log of an empty sum
    if (shape()[static_cast<size_t>(a)] == 0) return detail::const_tensor(out, -INFINITY, x.dtype(), device());
  Tensor m = stable_max(x, ax);
  // an infinite max would make x - m NaN (inf - inf): shift by 0 there instead, as torch
  m = m.isinf().where(m.zeros_like(), m);
  Tensor s = (x - m).exp().sum(ax, keepdim).log();
  return s + m.reshape(s.shape());
}

// ---- normalization and regularization ----------------------------------------------------------------

Tensor Tensor::batchnorm(const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, const Tensor& mean, const Tensor& invstd,
                         int axis) const {
  // as torch: a 0-d tensor has no channel axis (dims 0 and -1 name its element, not channels)
  TG_CHECK_AS(IndexError, ndim() > 0, "batchnorm: input of shape () has no channel axis (axis ", axis, ", ", dtype().name(), ")");
  int a = norm_axis(axis, "batchnorm");
  Shape s(static_cast<size_t>(ndim()), 1);
  s[static_cast<size_t>(a)] = shape()[static_cast<size_t>(a)];
  auto per_channel = [&](const Tensor& t, const char* what) {
    if (t.numel() == 1) return t.reshape({});  // one value for every channel
    TG_CHECK(t.numel() == s[static_cast<size_t>(a)], "batchnorm: ", what, " of shape ", t.shape(), " does not match the ",
             s[static_cast<size_t>(a)], " channels along axis ", axis, " of input ", shape(), " (", dtype().name(), ")");
    return t.reshape(s);
  };
  Tensor x = *this - per_channel(mean, "mean");
  if (weight) x = x * per_channel(*weight, "weight");
  x = x * per_channel(invstd, "invstd");
  return bias ? x + per_channel(*bias, "bias") : x;
}

Tensor Tensor::layernorm(const std::vector<int>& axes, double eps) const {
  // as torch: the normalized dims must exist (a 0-d tensor's dims 0 and -1 are not dims to normalize over)
  TG_CHECK_AS(IndexError, ndim() > 0, "layernorm: input of shape () has no dims to normalize over (axes ", axes, ", ", dtype().name(), ")");
  auto [ax, kept] = detail::reduce_axes(*this, axes, true, "layernorm");
  // the means as sums times 1/n, the first one negated (x + -mean: x - mean would put a negation of the
  // mean in the graph); the same values as mean(), bit for bit, with fewer ops to build in an eager call
  int64_t n = numel() / std::max<int64_t>(1, tg::prod(kept));
  double inv_n = n == 0 ? NAN : 1.0 / static_cast<double>(n);
  Tensor y = detail::to_float(*this) + detail::to_float(sum(ax, true)) * -inv_n;
  return y * ((y * y).sum(ax, true) * inv_n + eps).sqrt().reciprocal();
}

Tensor Tensor::dropout(double p) const {
  TG_CHECK(p >= 0 && p <= 1, "dropout: p must be in [0, 1], got ", p);
  if (!training || p == 0) return *this;
  if (p == 1) return *this * 0;
  // keep where a uniform draw is >= p; the mask is data, not part of the graph
  Tensor keep = Tensor::rand(shape(), dtypes::default_float, device()).ge(Tensor::full({}, p, dtypes::default_float, device()));
  return keep.detach().where(*this, Tensor::full({}, 0, dtype(), device())) * (1.0 / (1.0 - p));
}

Tensor Tensor::scaled_dot_product_attention(const Tensor& key, const Tensor& value, const std::optional<Tensor>& attn_mask, double dropout_p,
                                            bool is_causal) const {
  const char* op = "scaled_dot_product_attention";
  TG_CHECK(ndim() >= 2 && key.ndim() >= 2 && value.ndim() >= 2, op, ": query ", shape(), ", key ", key.shape(), " and value ",
           value.shape(), " need at least 2 dims");
  TG_CHECK(!(is_causal && attn_mask), op, ": give either attn_mask or is_causal, not both");
  {  // (..., L, E) x (..., S, E) x (..., S, Ev): checked here so errors name this op and the user's shapes
    Shape q = shape(), k = key.shape(), v = value.shape();
    bool ok = q.back() == k.back() && k[k.size() - 2] == v[v.size() - 2];
    Shape qb(q.begin(), q.end() - 2), kb(k.begin(), k.end() - 2), vb(v.begin(), v.end() - 2);
    std::optional<Shape> batch = detail::broadcast_shape({qb, kb, vb});
    TG_CHECK(ok && batch, op, ": query ", q, ", key ", k, " and value ", v, " do not match ((..., L, E), (..., S, E), (..., S, Ev))");
    if (attn_mask) {
      Shape scores = *batch;
      scores.insert(scores.end(), {q[q.size() - 2], k[k.size() - 2]});
      TG_CHECK(detail::broadcast_shape({scores, attn_mask->shape()}) == scores, op, ": attn_mask ", attn_mask->shape(),
               " does not broadcast to the scores ", scores, " of query ", q, " and key ", k);
    }
  }
  std::optional<Tensor> mask = attn_mask;
  int64_t L = shape()[static_cast<size_t>(ndim() - 2)], S = key.shape()[static_cast<size_t>(key.ndim() - 2)];
  if (is_causal) {  // query i sees keys 0..i: a lower triangle from comparing two aranges
    Tensor row = Tensor::arange(0, static_cast<double>(L), 1, dtypes::int32, device()).reshape({L, 1});
    Tensor col = Tensor::arange(0, static_cast<double>(S), 1, dtypes::int32, device()).reshape({1, S});
    mask = col.le(row);
  }
  Tensor qk = dot(key.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(shape().back())));
  if (mask) qk = qk + (mask->dtype().is_bool() ? mask->where(0.0, -INFINITY) : *mask);
  return qk.softmax(-1).cast(dtype()).dropout(dropout_p).dot(value);
}

// ---- losses ---------------------------------------------------------------------------------------------

Tensor Tensor::sparse_categorical_crossentropy(const Tensor& Y, int64_t ignore_index, double label_smoothing,
                                               const std::string& reduction) const {
  const char* op = "sparse_categorical_crossentropy";
  TG_CHECK(ndim() >= 1, op, ": input must have a class dim, got shape ", shape());
  TG_CHECK(label_smoothing >= 0 && label_smoothing <= 1, op, ": label_smoothing must be in [0, 1], got ", label_smoothing);
  check_targets(*this, Y, ndim() - 1, op);
  do_reduction(Tensor::zeros({}), reduction, op);  // validate before building the graph
  Tensor log_probs = log_softmax(-1);
  Tensor counted = not_ignored(Y, ignore_index);
  // the smoothed target distribution, so the picked log-prob and the smoothing term are one reduce
  double C = static_cast<double>(shape().back());
  Tensor target = class_mask(Y, shape().back(), Y.ndim(), op, ignore_index).where(1 - label_smoothing + label_smoothing / C, label_smoothing / C);
  Tensor unreduced = counted.where((log_probs * target).sum({-1}), Tensor::zeros({}, log_probs.dtype(), device()));
  // ignored targets count in neither the sum nor the mean's divisor
  if (reduction == "mean") return -(unreduced.sum() / counted.cast(log_probs.dtype()).sum());
  return -(reduction == "sum" ? unreduced.sum() : unreduced);
}

Tensor Tensor::cross_entropy(const Tensor& Y, const std::string& reduction, double label_smoothing) const {
  const char* op = "cross_entropy";
  TG_CHECK(ndim() >= 1, op, ": input must have a class dim, got shape ", shape());
  TG_CHECK(label_smoothing >= 0 && label_smoothing <= 1, op, ": label_smoothing must be in [0, 1], got ", label_smoothing);
  int axis = ndim() == 1 ? 0 : 1;  // torch's class dim
  int64_t C = shape()[static_cast<size_t>(axis)];
  Tensor probs = Y;
  if (Y.ndim() == ndim() - 1) {  // class indices
    check_targets(*this, Y, axis, op);
    probs = class_mask(Y, C, axis, op).where(1.0, 0.0);
  } else {
    TG_CHECK(Y.shape() == shape(), op, ": targets ", Y.shape(), " (", Y.dtype().name(), ") must be class indices of shape ", shape(),
             " without dim ", axis, " or probabilities of the input's shape ", shape(), " (", dtype().name(), ")");
  }
  probs = probs * (1 - label_smoothing) + label_smoothing / static_cast<double>(C);
  return do_reduction(-(log_softmax(axis) * probs).sum({axis}), reduction, op);
}

Tensor Tensor::nll_loss(const Tensor& Y, const std::optional<Tensor>& weight, int64_t ignore_index, const std::string& reduction) const {
  const char* op = "nll_loss";
  TG_CHECK(ndim() >= 1, op, ": input must have a class dim, got shape ", shape());
  int axis = ndim() == 1 ? 0 : 1;
  int64_t C = shape()[static_cast<size_t>(axis)];
  check_targets(*this, Y, axis, op);
  do_reduction(Tensor::zeros({}), reduction, op);
  Tensor mask = class_mask(Y, C, axis, op, ignore_index).where(1.0, 0.0);  // one-hot (float)
  Tensor w = not_ignored(Y, ignore_index).where(1.0, 0.0);
  if (weight) {
    TG_CHECK(weight->ndim() == 1 && weight->shape()[0] == C, op, ": weight ", weight->shape(), " must have one entry per class (", C, ")");
    Shape s(static_cast<size_t>(ndim()), 1);
    s[static_cast<size_t>(axis)] = C;
    w = w * (mask * weight->reshape(s)).sum({axis});  // weight[Y]
  }
  Tensor nll = -(*this * mask).sum({axis}) * w;
  if (reduction == "mean") return nll.sum() / w.sum();
  return reduction == "sum" ? nll.sum() : nll;
}

Tensor Tensor::binary_crossentropy(const Tensor& Y, const std::string& reduction) const {
  check_same_shape(*this, Y, "binary_crossentropy");
  do_reduction(Tensor::zeros({}), reduction, "binary_crossentropy");
  // log clamped at -100 as torch, so a prediction of exactly 0 or 1 gives a finite loss
  auto clamped_log = [](const Tensor& t) { return t.log().maximum(scalar_like(t, -100, dtypes::default_float)); };
  return do_reduction(-Y * clamped_log(*this) - (1 - Y) * clamped_log(1 - *this), reduction, "binary_crossentropy");
}

Tensor Tensor::binary_crossentropy_logits(const Tensor& Y, const std::string& reduction) const {
  check_same_shape(*this, Y, "binary_crossentropy_logits");
  do_reduction(Tensor::zeros({}), reduction, "binary_crossentropy_logits");
  // log(1 + exp(-|x|)) keeps exp() from overflowing
  Tensor x = detail::to_float(*this);
  return do_reduction(x.relu() - Y * x + (1 + (-x.abs()).exp()).log(), reduction, "binary_crossentropy_logits");
}

}  // namespace tg
