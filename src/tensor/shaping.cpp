// Shaping ops: joining, tiling, splitting and masking tensors, all composed from the movement
// primitives (pad, shrink, reshape, expand) and where, so autograd comes for free.
#include <algorithm>
#include <numeric>

#include "tensor/internal.h"

namespace tg {

namespace {

std::string shapes_of(const std::vector<Tensor>& ts) {
  std::string s;
  for (const Tensor& t : ts) s += (s.empty() ? "" : ", ") + detail::cat(t.shape());
  return s;
}

std::string dtypes_of(const std::vector<Tensor>& ts) {
  std::string s;
  for (const Tensor& t : ts) s += (s.empty() ? "" : ", ") + t.dtype().name();
  return s;
}

// Every tensor has the first one's dtype and device (no silent promotion or copies while joining).
void check_same_kind(const std::vector<Tensor>& ts, const char* op) {
  TG_CHECK(!ts.empty(), op, ": expected a non-empty list of tensors");
  for (const Tensor& t : ts) {
    TG_CHECK_AS(TypeError, t.dtype() == ts[0].dtype(), op, ": tensors have different dtypes (", dtypes_of(ts), ")");
    TG_CHECK(t.device() == ts[0].device(), op, ": tensors are on different devices ", ts[0].device(), " and ", t.device());
  }
}

// The pairs for pad/shrink that touch only `dim`.
std::vector<std::pair<int64_t, int64_t>> along(const Shape& s, int dim, int64_t begin, int64_t end) {
  std::vector<std::pair<int64_t, int64_t>> arg;
  for (size_t i = 0; i < s.size(); i++) arg.emplace_back(0, s[i]);
  arg[static_cast<size_t>(dim)] = {begin, end};
  return arg;
}

std::vector<std::pair<int64_t, int64_t>> pad_along(size_t ndim, int dim, int64_t before, int64_t after) {
  std::vector<std::pair<int64_t, int64_t>> arg(ndim, {0, 0});
  arg[static_cast<size_t>(dim)] = {before, after};
  return arg;
}

// (rows, cols) grid of bools: col - row compared with `diagonal` (the masks of tril and triu).
Tensor diagonal_mask(const Tensor& t, int64_t diagonal, bool lower) {
  int64_t r = t.shape()[t.ndim() - 2], c = t.shape()[t.ndim() - 1];
  Tensor row = Tensor::arange(0, static_cast<double>(r), 1, dtypes::int32, t.device()).reshape({r, 1});
  Tensor col = Tensor::arange(0, static_cast<double>(c), 1, dtypes::int32, t.device()).reshape({1, c});
  Tensor off = col - row;  // (r, c)
  Tensor d = Tensor::full({}, static_cast<double>(diagonal), dtypes::int32, t.device());
  return lower ? off.le(d) : off.ge(d);
}

}  // namespace

Tensor detail::where_placed(const Tensor& placed, const std::vector<std::pair<int64_t, int64_t>>& padding, const Tensor& rest) {
  Shape region = placed.shape();
  for (size_t d = 0; d < region.size(); d++) region[d] -= padding[d].first + padding[d].second;
  return Tensor::full(region, 1, dtypes::bool_, placed.device()).pad(padding).where(placed, rest);
}

Tensor Tensor::cat(const std::vector<Tensor>& tensors, int dim) {
  check_same_kind(tensors, "cat");
  const Tensor& first = tensors[0];
  // an IndexError: tinygrad v0.9 indexes the missing dim (IndexError), torch raises a RuntimeError (both are caught from Python)
  for (const Tensor& t : tensors)
    TG_CHECK_AS(IndexError, t.ndim() > 0, "cat: zero-dimensional tensors cannot be concatenated, got shapes ", shapes_of(tensors));
  int d = first.norm_axis(dim, "cat");
  int64_t total = 0;
  for (const Tensor& t : tensors) {
    bool ok = t.ndim() == first.ndim();
    for (int i = 0; ok && i < t.ndim(); i++) ok = i == d || t.shape()[i] == first.shape()[i];
    TG_CHECK(ok, "cat: shapes ", shapes_of(tensors), " differ outside dim ", dim);
    TG_CHECK(!__builtin_add_overflow(total, t.shape()[d], &total), "cat: shapes ", shapes_of(tensors), " joined along dim ", dim,
             " overflow int64");
  }
  Shape joined = first.shape();
  joined[static_cast<size_t>(d)] = total;
  TG_CHECK(detail::numel_if_fits(joined, first.dtype()), "cat: shapes ", shapes_of(tensors), " (", first.dtype().name(),
           ") joined along dim ", dim, " are too large: the element count or byte size overflows int64");
  if (tensors.size() == 1) return first;
  // each piece padded to the full length at its offset, and selected where it lies
  std::optional<Tensor> out;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    int64_t n = t.shape()[d];
    auto padding = pad_along(t.shape().size(), d, offset, total - offset - n);
    Tensor p = t.pad(padding);
    offset += n;
    if (!out) out = p;
    else out = detail::where_placed(p, padding, *out);
  }
  return *out;
}

Tensor Tensor::stack(const std::vector<Tensor>& tensors, int dim) {
  check_same_kind(tensors, "stack");
  for (const Tensor& t : tensors)
    TG_CHECK(t.shape() == tensors[0].shape(), "stack: all tensors must have the same shape, got ", shapes_of(tensors));
  int n = tensors[0].ndim() + 1;
  TG_CHECK_AS(IndexError, dim >= -n && dim < n, "stack: dim ", dim, " out of range for shape ", tensors[0].shape());
  Shape stacked = tensors[0].shape();
  stacked.insert(stacked.begin(), static_cast<int64_t>(tensors.size()));
  TG_CHECK(detail::numel_if_fits(stacked, tensors[0].dtype()), "stack: ", tensors.size(), " tensors of shape ", tensors[0].shape(),
           " (", tensors[0].dtype().name(), ") are too large together: the element count or byte size overflows int64");
  std::vector<Tensor> us;
  for (const Tensor& t : tensors) us.push_back(t.unsqueeze(dim));
  return cat(us, dim);
}

std::vector<Tensor> Tensor::meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing) {
  check_same_kind(tensors, "meshgrid");
  TG_CHECK(indexing == "ij" || indexing == "xy", "meshgrid: indexing must be \"ij\" or \"xy\", got \"", indexing, "\"");
  for (const Tensor& t : tensors)
    TG_CHECK(t.ndim() <= 1, "meshgrid: expects 0-D or 1-D tensors, got shapes ", shapes_of(tensors));
  // "xy" is "ij" with the first two output dims swapped (cartesian instead of matrix indexing)
  size_t n = tensors.size();
  std::vector<size_t> pos(n);
  std::iota(pos.begin(), pos.end(), 0);
  if (indexing == "xy" && n >= 2) std::swap(pos[0], pos[1]);
  Shape out(n);
  for (size_t i = 0; i < n; i++) out[pos[i]] = tensors[i].numel();
  detail::checked_numel(out, tensors.empty() ? dtypes::default_float : tensors[0].dtype(), "meshgrid");
  std::vector<Tensor> r;
  for (size_t i = 0; i < n; i++) {
    Shape s(n, 1);
    s[pos[i]] = out[pos[i]];
    r.push_back(tensors[i].reshape(s).expand(out));
  }
  return r;
}

Tensor Tensor::repeat(const std::vector<int64_t>& repeats) const {
  TG_CHECK(repeats.size() >= shape().size(), "repeat: ", repeats.size(), " repeats for shape ", shape(),
           "; need at least one per dimension");
  for (int64_t r : repeats) TG_CHECK(r >= 0, "repeat: negative repeat in ", repeats, " for shape ", shape());
  Shape base(repeats.size() - shape().size(), 1);
  base.insert(base.end(), shape().begin(), shape().end());
  // (1, s0, 1, s1, ...) expanded to (r0, s0, r1, s1, ...) and merged pairwise: r copies of each dim
  Shape unit, expanded, out;
  for (size_t i = 0; i < base.size(); i++) {
    unit.insert(unit.end(), {1, base[i]});
    expanded.insert(expanded.end(), {repeats[i], base[i]});
  }
  TG_CHECK(detail::numel_if_fits(expanded, dtype()), "repeat: repeats ", repeats, " of shape ", shape(), " (", dtype().name(),
           ") are too large: the element count or byte size overflows int64");
  for (size_t i = 0; i < base.size(); i++) out.push_back(repeats[i] * base[i]);
  return reshape(unit).expand(expanded).reshape(out);
}

Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int> dim) const {
  TG_CHECK(repeats >= 0, "repeat_interleave: repeats must be non-negative, got ", repeats, " (shape ", shape(), ")");
  // checked on the caller's shape so an error names it, not the (1,) a 0-d tensor is treated as below
  int d = dim ? norm_axis(*dim, "repeat_interleave") : 0;
  Tensor x = dim ? *this : flatten();
  if (x.ndim() == 0) x = x.reshape({1});  // our norm_axis rule: a 0-d tensor takes dim 0/-1 as one of size 1
  // (.., n, ..) -> (.., n, 1, ..) expanded to (.., n, repeats, ..) and merged: each entry repeated in place
  Shape unit = x.shape(), expanded = x.shape(), out = x.shape();
  unit.insert(unit.begin() + d + 1, 1);
  expanded.insert(expanded.begin() + d + 1, repeats);
  TG_CHECK(detail::numel_if_fits(expanded, dtype()), "repeat_interleave: ", repeats, " repeats of shape ", shape(), " (", dtype().name(),
           ") are too large: the element count or byte size overflows int64");
  out[static_cast<size_t>(d)] *= repeats;
  return x.reshape(unit).expand(expanded).reshape(out);
}

std::vector<Tensor> Tensor::split(const std::vector<int64_t>& sizes, int dim) const {
  TG_CHECK(ndim() > 0, "split: cannot split a zero-dimensional tensor");
  int d = norm_axis(dim, "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    TG_CHECK(s >= 0, "split: negative size in ", sizes, " for shape ", shape());
    total += s;
  }
  TG_CHECK(total == shape()[d], "split: sizes ", sizes, " sum to ", total, " but dim ", dim, " of shape ", shape(), " has size ",
           shape()[d]);
  std::vector<Tensor> r;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    r.push_back(shrink(along(shape(), d, offset, offset + s)));
    offset += s;
  }
  return r;
}

std::vector<Tensor> Tensor::split(int64_t size, int dim) const {
  TG_CHECK(ndim() > 0, "split: cannot split a zero-dimensional tensor");
  int d = norm_axis(dim, "split");
  int64_t n = shape()[d];
  TG_CHECK(size > 0, "split: size must be positive, got ", size, " for shape ", shape());
  if (n == 0) return {*this};  // as torch: one empty piece
  std::vector<int64_t> sizes;
  for (int64_t o = 0; o < n; o += size) sizes.push_back(std::min(size, n - o));
  return split(sizes, dim);
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int dim) const {
  TG_CHECK(chunks > 0, "chunk: number of chunks must be positive, got ", chunks, " for shape ", shape());
  TG_CHECK(ndim() > 0, "chunk: cannot chunk a zero-dimensional tensor");
  int64_t n = shape()[norm_axis(dim, "chunk")];
  if (n == 0) return std::vector<Tensor>(static_cast<size_t>(chunks), *this);  // as torch: `chunks` empty pieces
  // torch's rule: pieces of ceil(n / chunks), so there may be fewer than `chunks`
  return split((n + chunks - 1) / chunks, dim);
}

Tensor Tensor::tril(int64_t diagonal) const {
  TG_CHECK(ndim() >= 2, "tril: needs at least 2 dimensions, got shape ", shape());
  return diagonal_mask(*this, diagonal, true).where(*this, Tensor::zeros({}, dtype(), device()));
}

Tensor Tensor::triu(int64_t diagonal) const {
  TG_CHECK(ndim() >= 2, "triu: needs at least 2 dimensions, got shape ", shape());
  return diagonal_mask(*this, diagonal, false).where(*this, Tensor::zeros({}, dtype(), device()));
}

Tensor Tensor::roll(const std::vector<int64_t>& shifts, const std::vector<int>& dims) const {
  if (dims.empty()) {  // as torch: roll the flattened tensor
    TG_CHECK(shifts.size() == 1, "roll: without dims, expected one shift, got ", shifts, " for shape ", shape());
    return flatten().roll(shifts, {0}).reshape(shape());
  }
  TG_CHECK(shifts.size() == dims.size(), "roll: ", shifts.size(), " shifts for ", dims.size(), " dims, shape ", shape());
  TG_CHECK_AS(IndexError, ndim() > 0, "roll: dims ", std::vector<int64_t>(dims.begin(), dims.end()), " out of range for shape () (a 0-d tensor rolls only without dims, as torch)");
  Tensor r = *this;
  for (size_t i = 0; i < dims.size(); i++) {
    int d = norm_axis(dims[i], "roll");
    int64_t n = shape()[d];
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    // two copies end to end; the window starting at n - s is the rolled dim
    std::vector<int64_t> reps(static_cast<size_t>(ndim()), 1);
    reps[static_cast<size_t>(d)] = 2;
    Tensor twice = r.repeat(reps);
    r = twice.shrink(along(twice.shape(), d, n - s, 2 * n - s));
  }
  return r;
}

Tensor Tensor::pad(const std::vector<std::pair<int64_t, int64_t>>& padding, PadMode mode, double value) const {
  if (mode == PadMode::constant) return pad(padding, value);
  const char* name = mode == PadMode::reflect ? "reflect" : mode == PadMode::replicate ? "replicate" : "circular";
  TG_CHECK(padding.size() == shape().size(), "pad: ", padding.size(), " (before, after) pairs for shape ", shape(), " (mode ", name, ")");
  TG_CHECK(value == 0, "pad: mode ", name, " takes no value (only constant does), got ", value, " for shape ", shape());
  for (size_t d = 0; d < padding.size(); d++) {
    auto [b, e] = padding[d];
    int64_t n = shape()[d];
    TG_CHECK(b >= 0 && e >= 0, "pad: negative padding (", b, ", ", e, ") for dim ", d, " of shape ", shape(), " (mode ", name, ")");
    // torch's limits: a mirror has n - 1 entries besides the edge, a wrap n, an edge needs one entry
    int64_t most = mode == PadMode::reflect ? n - 1 : mode == PadMode::circular ? n : (n > 0 ? INT64_MAX : 0);
    TG_CHECK(std::max(b, e) <= most, "pad: padding (", b, ", ", e, ") of dim ", d, " of shape ", shape(), " is more than mode ", name,
             " allows (", mode == PadMode::reflect ? "less than the dim" : mode == PadMode::circular ? "at most the dim" : "a nonempty dim", ")");
  }
  detail::checked_pad_shape(shape(), padding, dtype(), "pad");
  // each dim in turn: the entries before and after it, cut from the dim itself and joined to it
  Tensor x = *this;
  for (size_t d = 0; d < padding.size(); d++) {
    auto [b, e] = padding[d];
    if (b == 0 && e == 0) continue;
    int64_t n = x.shape()[d];
    int axis = static_cast<int>(d);
    auto part = [&](int64_t lo, int64_t hi) {
      std::vector<std::pair<int64_t, int64_t>> r;
      for (int64_t s : x.shape()) r.emplace_back(0, s);
      r[d] = {lo, hi};
      return x.shrink(r);
    };
    auto edge = [&](int64_t at, int64_t count) {
      Shape s = x.shape();
      s[d] = count;
      return part(at, at + 1).expand(s);
    };
    std::vector<Tensor> parts;
    if (b > 0) parts.push_back(mode == PadMode::reflect ? part(1, b + 1).flip({axis}) : mode == PadMode::replicate ? edge(0, b) : part(n - b, n));
    parts.push_back(x);
    if (e > 0) parts.push_back(mode == PadMode::reflect ? part(n - 1 - e, n - 1).flip({axis}) : mode == PadMode::replicate ? edge(n - 1, e) : part(0, e));
    x = Tensor::cat(parts, axis);
  }
  return x;
}

namespace {
// pad2d's flat padding, (before, after) from the last dim backwards, as one (before, after) pair per dim
std::vector<std::pair<int64_t, int64_t>> pad2d_pairs(const std::vector<int64_t>& padding, const Shape& shape) {
  TG_CHECK(padding.size() % 2 == 0 && padding.size() / 2 <= shape.size(), "pad2d: padding ", padding,
           " must have an even length of at most 2 * ndim for shape ", shape);
  std::vector<std::pair<int64_t, int64_t>> pairs(shape.size(), {0, 0});
  for (size_t i = 0; i < padding.size() / 2; i++) pairs[shape.size() - 1 - i] = {padding[2 * i], padding[2 * i + 1]};
  return pairs;
}
}  // namespace

Tensor Tensor::pad2d(const std::vector<int64_t>& padding, PadMode mode, double value) const {
  if (mode == PadMode::constant) return pad2d(padding, value);
  return pad(pad2d_pairs(padding, shape()), mode, value);
}

Tensor Tensor::pad2d(const std::vector<int64_t>& padding, double value) const {
  std::vector<std::pair<int64_t, int64_t>> pairs = pad2d_pairs(padding, shape()), crop, grow;
  for (int64_t s : shape()) crop.emplace_back(0, s);
  grow.assign(shape().size(), {0, 0});
  for (size_t d = 0; d < pairs.size(); d++) {
    auto [b, e] = pairs[d];
    // negative entries crop first, positive ones pad the cropped tensor
    crop[d] = {std::max<int64_t>(0, -b), shape()[d] - std::max<int64_t>(0, -e)};
    TG_CHECK(crop[d].first <= crop[d].second, "pad2d: padding ", padding, " crops more than dim ", d, " of shape ", shape(),
             " holds");
    grow[d] = {std::max<int64_t>(0, b), std::max<int64_t>(0, e)};
  }
  Shape cropped;
  for (auto [b, e] : crop) cropped.push_back(e - b);
  detail::checked_pad_shape(cropped, grow, dtype(), "pad2d");
  detail::check_fill_value(value, dtype(), "pad2d");
  return shrink(crop).pad(grow, value);
}

Tensor Tensor::unflatten(int dim, const Shape& sizes) const {
  int d = norm_axis(dim, "unflatten");
  TG_CHECK(ndim() > 0 && !sizes.empty(), "unflatten: needs a dimension to split and non-empty sizes, got shape ", shape(),
           " and sizes ", sizes);
  int64_t n = shape()[d], known = 1;
  int infer = -1;
  for (size_t i = 0; i < sizes.size(); i++) {
    if (sizes[i] == -1 && infer < 0) { infer = static_cast<int>(i); continue; }
    TG_CHECK(sizes[i] >= 0, "unflatten: invalid sizes ", sizes, " for dim ", dim, " of shape ", shape());
    known *= sizes[i];
  }
  Shape sz = sizes;
  if (infer >= 0) {
    TG_CHECK(known != 0 && n % known == 0, "unflatten: sizes ", sizes, " do not divide dim ", dim, " of shape ", shape());
    sz[static_cast<size_t>(infer)] = n / known;
  }
  TG_CHECK(tg::prod(sz) == n, "unflatten: sizes ", sizes, " do not multiply to ", n, ", the size of dim ", dim, " of shape ",
           shape());
  Shape s(shape().begin(), shape().begin() + d);
  s.insert(s.end(), sz.begin(), sz.end());
  s.insert(s.end(), shape().begin() + d + 1, shape().end());
  return reshape(s);
}

}  // namespace tg
