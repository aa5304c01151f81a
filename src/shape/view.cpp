// View: one affine window (shape, strides, offset, mask) over a flat buffer, and the movement ops on it.
// Everything here is plain integer arithmetic; the index expressions (UOps) live in shapetracker.cpp.
#include <algorithm>
#include <map>
#include <sstream>

#include "shape/shapetracker.h"
#include "tg/error.h"

namespace tg {

using Mask = std::vector<std::pair<int64_t, int64_t>>;

namespace {

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ceildiv(int64_t a, int64_t b) { return -floordiv(-a, b); }

bool has_zero(const Shape& s) { return std::find(s.begin(), s.end(), 0) != s.end(); }
bool mask_empty(const Mask& m) {
  return std::any_of(m.begin(), m.end(), [](auto& p) { return p.first >= p.second; });
}

// Coordinates of flat position `pos` in a row-major `shape` (floor semantics, so negative and
// out-of-range positions decompose too: the outermost coordinate absorbs the excess).
Shape unravel(const Shape& shape, int64_t pos) {
  Shape st = strides_for_shape(shape), out(shape.size(), 0);
  for (size_t i = 0; i < shape.size(); i++) {
    if (st[i] == 0) continue;
    out[i] = floordiv(pos, st[i]);
    pos -= out[i] * st[i];
  }
  return out;
}

// Maximal runs of dims that address memory as one dim: (size, innermost stride, size of the part that
// is not broadcast). A dim whose mask admits one index merges with the next regardless of strides.
struct Run { int64_t size, stride, real; };
std::vector<Run> merge_runs(const View& v) {
  std::vector<Run> runs;
  if (v.shape.empty()) return runs;
  auto single = [&](size_t i) { return v.mask ? (*v.mask)[i].second - (*v.mask)[i].first == 1 : v.shape[i] == 1; };
  runs.push_back({v.shape[0], v.strides[0], v.strides[0] ? v.shape[0] : 0});
  bool glue = single(0);
  for (size_t i = 1; i < v.shape.size(); i++) {
    int64_t s = v.shape[i], st = v.strides[i];
    if (s == 1) continue;
    Run& last = runs.back();
    if (glue || last.stride == s * st) last = {last.size * s, st, st ? (glue ? s : last.real * s) : 0};
    else runs.push_back({s, st, st ? s : 0});
    glue = single(i);
  }
  return runs;
}

// The mask of `old_shape` carried over to `new_shape` (same element count), when the valid region is
// still a box; nullopt otherwise. Walks both shapes from the innermost dim.
std::optional<Mask> reshape_mask(const std::optional<Mask>& mask, const Shape& old_shape, const Shape& new_shape) {
  if (!mask) {
    Mask full;
    for (int64_t s : new_shape) full.push_back({0, s});
    return full;
  }
  if (mask_empty(*mask)) return Mask(new_shape.size(), {0, 0});

  size_t oi = old_shape.size(), ni = new_shape.size();
  auto next_old = [&]() -> std::pair<int64_t, std::pair<int64_t, int64_t>> {
    if (oi == 0) return {1, {0, 1}};
    --oi;
    return {old_shape[oi], (*mask)[oi]};
  };
  auto next_new = [&]() -> int64_t { return ni == 0 ? 1 : new_shape[--ni]; };

  Mask out;  // innermost first
  auto [old_dim, m] = next_old();
  int64_t new_dim = next_new(), inner = 1;  // inner: product of the new dims already taken from old_dim
  while (out.size() < new_shape.size()) {
    auto [l, r] = m;
    int64_t span = new_dim * inner;
    if (old_dim == span) {  // new_dim closes this old dim
      out.push_back({l / inner, (r - 1) / inner + 1});
      std::tie(old_dim, m) = next_old();
      new_dim = next_new(), inner = 1;
    } else if (old_dim > span) {  // new_dim splits this old dim: the mask must not straddle blocks
      if (old_dim % span != 0) return std::nullopt;
      bool aligned = l % span == 0 && r % span == 0;
      if (!aligned && l / span != (r - 1) / span) return std::nullopt;
      out.push_back({l % span / inner, (r - 1) % span / inner + 1});
      inner = span, new_dim = next_new();
    } else {  // new_dim spans several old dims: fuse the next one, contiguously
      TG_ASSERT(oi > 0, "reshape_mask: sizes do not match");
      auto [d, nm] = next_old();
      if (m != std::pair<int64_t, int64_t>{0, old_dim} && nm.second - nm.first != 1) return std::nullopt;
      m = {nm.first * old_dim + l, (nm.second - 1) * old_dim + r};
      old_dim *= d;
    }
  }
  while (oi > 0)  // leftover leading 1s of the old shape must be fully valid
    if ((*mask)[--oi] != std::pair<int64_t, int64_t>{0, 1}) return Mask(new_shape.size(), {0, 0});
  std::reverse(out.begin(), out.end());
  return out;
}

// Crop/extend every dim to [arg.first, arg.second) of the current coordinates; `mask` (in the new
// coordinates) is intersected with the moved old mask.
View resize(const View& v, const Mask& arg, std::optional<Mask> mask) {
  int64_t offset = v.offset;
  Shape shape;
  for (size_t i = 0; i < arg.size(); i++) {
    offset += v.strides[i] * arg[i].first;
    shape.push_back(arg[i].second - arg[i].first);
  }
  if (v.mask) {
    Mask moved;
    for (size_t i = 0; i < arg.size(); i++) {
      int64_t a = arg[i].first, b = arg[i].second;
      auto clamp = [&](int64_t x) { return std::max<int64_t>(0, std::min(x - a, b - a)); };
      moved.push_back({clamp((*v.mask)[i].first), clamp((*v.mask)[i].second)});
    }
    if (mask)
      for (size_t i = 0; i < moved.size(); i++)
        moved[i] = {std::max(moved[i].first, (*mask)[i].first), std::min(moved[i].second, (*mask)[i].second)};
    mask = moved;
  }
  return View::create(shape, v.strides, offset, mask);
}

}  // namespace

int64_t prod(const Shape& s) {
  int64_t p = 1;
  if (std::find(s.begin(), s.end(), 0) != s.end()) return 0;  // no overflow to report: nothing at all
  for (int64_t x : s) TG_CHECK(!__builtin_mul_overflow(p, x, &p), "shape ", shape_str(s), " has too many elements (more than 2^63)");
  return p;
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

Shape strides_for_shape(const Shape& shape) {
  Shape st(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = shape[i] == 1 ? 0 : acc;
    acc *= shape[i];
  }
  return st;
}

View View::create(const Shape& shape, std::optional<Shape> strides, int64_t offset, std::optional<Mask> mask) {
  View v;
  v.shape = shape;
  if (has_zero(shape)) {  // nothing to address
    v.strides = Shape(shape.size(), 0);
    return v;
  }
  if ((!strides || strides->empty()) && offset == 0 && !mask) {  // the contiguous view of shape, the usual case
    v.strides = strides_for_shape(shape);
    return v;
  }
  v.strides = strides && !strides->empty() ? std::move(*strides) : strides_for_shape(shape);
  TG_ASSERT(v.strides.size() == shape.size(), "View::create: ", shape_str(shape), " vs strides ", shape_str(v.strides));
  for (size_t i = 0; i < shape.size(); i++)
    if (shape[i] == 1) v.strides[i] = 0;
  if (mask) {
    TG_ASSERT(mask->size() == shape.size(), "View::create: mask rank");
    bool full = true;
    for (size_t i = 0; i < shape.size(); i++) full &= (*mask)[i] == std::pair<int64_t, int64_t>{0, shape[i]};
    if (full) {
      mask.reset();
    } else if (mask_empty(*mask)) {  // nothing valid: a canonical all-invalid view
      v.strides.assign(shape.size(), 0);
      offset = 0;
      mask = Mask(shape.size(), {0, 0});
    } else {  // a dim with one valid index needs no stride: fold it into the offset
      for (size_t i = 0; i < shape.size(); i++)
        if ((*mask)[i].second - (*mask)[i].first == 1) offset += v.strides[i] * (*mask)[i].first, v.strides[i] = 0;
    }
  }
  v.offset = offset;
  v.mask = std::move(mask);
  v.contiguous = v.offset == 0 && !v.mask && v.strides == strides_for_shape(v.shape);
  return v;
}

View View::pad(const Mask& arg) const {
  TG_ASSERT(arg.size() == shape.size(), "pad rank");
  if (std::all_of(arg.begin(), arg.end(), [](auto& p) { return p.first == 0 && p.second == 0; })) return *this;
  Mask window, valid;
  for (size_t i = 0; i < shape.size(); i++) {
    window.push_back({-arg[i].first, shape[i] + arg[i].second});
    valid.push_back({arg[i].first, shape[i] + arg[i].first});
  }
  return resize(*this, window, valid);
}

View View::shrink(const Mask& arg) const {
  TG_ASSERT(arg.size() == shape.size(), "shrink rank");
  for (size_t i = 0; i < shape.size(); i++)
    TG_ASSERT(0 <= arg[i].first && arg[i].first <= arg[i].second && arg[i].second <= shape[i], "shrink bounds");
  return resize(*this, arg, std::nullopt);
}

View View::expand(const Shape& new_shape) const {
  TG_ASSERT(new_shape.size() == shape.size(), "expand rank");
  if (has_zero(shape)) return create(new_shape);
  std::optional<Mask> m = mask;
  for (size_t i = 0; i < shape.size(); i++) {
    if (shape[i] == new_shape[i]) continue;
    TG_ASSERT(shape[i] == 1 && strides[i] == 0, "expand ", shape_str(shape), " to ", shape_str(new_shape));
    if (m) (*m)[i] = (*m)[i] == std::pair<int64_t, int64_t>{0, 1} ? std::pair<int64_t, int64_t>{0, new_shape[i]}
                                                                 : std::pair<int64_t, int64_t>{0, 0};
  }
  return create(new_shape, strides, offset, m);
}

View View::permute(const std::vector<int>& order) const {
  TG_ASSERT(order.size() == shape.size(), "permute rank");
  Shape s, st;
  std::optional<Mask> m;
  if (mask) m.emplace();
  for (int a : order) {
    s.push_back(shape[a]), st.push_back(strides[a]);
    if (mask) m->push_back((*mask)[a]);
  }
  return create(s, st, offset, m);
}

View View::flip(const std::vector<bool>& axes) const {
  TG_ASSERT(axes.size() == shape.size(), "flip rank");
  Shape st = strides;
  int64_t off = offset;
  std::optional<Mask> m = mask;
  for (size_t i = 0; i < shape.size(); i++) {
    if (!axes[i]) continue;
    off += (shape[i] - 1) * st[i];
    st[i] = -st[i];
    if (m) (*m)[i] = {shape[i] - (*m)[i].second, shape[i] - (*m)[i].first};
  }
  return create(shape, st, off, m);
}

std::optional<View> View::reshape(const Shape& new_shape) const {
  if (shape == new_shape) return *this;
  if (has_zero(shape)) return create(new_shape);
  TG_ASSERT(prod(shape) == prod(new_shape), "reshape ", shape_str(shape), " to ", shape_str(new_shape));
  if (new_shape.empty() && mask && mask_empty(*mask)) return std::nullopt;  // () cannot be all-invalid
  if (contiguous) return create(new_shape);

  // Give each new dim (innermost first) a stride by splitting the merged runs of the old view.
  Shape rstrides;
  size_t ni = new_shape.size();
  std::vector<Run> runs = merge_runs(*this);
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    int64_t acc = 1, st = it->stride;
    while (acc < it->size && ni > 0) {
      int64_t d = new_shape[--ni];
      rstrides.push_back(st);
      if (d != 1) acc *= d, st *= acc < it->real ? d : 0;
    }
    if (acc != it->size) return std::nullopt;  // a new dim straddles two runs
  }
  rstrides.resize(new_shape.size(), 0);  // leading 1s
  Shape new_strides(rstrides.rbegin(), rstrides.rend());

  std::optional<Mask> new_mask = reshape_mask(mask, shape, new_shape);
  if (!new_mask) return std::nullopt;
  // Anchor the new view so that the first valid element stays where it was.
  int64_t off = offset;
  for (size_t i = 0; mask && i < shape.size(); i++) off += (*mask)[i].first * strides[i];
  for (size_t i = 0; i < new_shape.size(); i++) {
    if ((*new_mask)[i].second - (*new_mask)[i].first == 1) new_strides[i] = 0;
    off -= (*new_mask)[i].first * new_strides[i];
  }
  return create(new_shape, new_strides, off, new_mask);
}

// The composition bot∘top as one view, if it exists. Each recursive step transforms one side into an
// equivalent simpler form; `budget` bounds the steps, since giving up (nullopt: the views stay stacked)
// is always correct.
static std::optional<View> merge_views(const View& bot, const View& top, int budget) {
  if (budget <= 0) return std::nullopt;
  if (has_zero(top.shape)) return View::create(top.shape);  // addresses nothing
  if (bot.contiguous) return top;
  if (top.contiguous && top.shape == bot.shape) return bot;
  if (top.contiguous && prod(top.shape) == prod(bot.shape))
    if (auto r = bot.reshape(top.shape)) return r;
  if (top.mask) {  // merge the valid window, then pad it back out
    if (mask_empty(*top.mask)) return View::create(top.shape, Shape(top.shape.size(), 0), 0, Mask(top.shape.size(), {0, 0}));
    auto inner = merge_views(bot, top.shrink(*top.mask), budget - 1);
    if (!inner) return std::nullopt;
    Mask arg;
    for (size_t i = 0; i < top.shape.size(); i++)
      arg.push_back({(*top.mask)[i].first, top.shape[i] - (*top.mask)[i].second});
    return inner->pad(arg);
  }

  // Where does a unit step along each top dim land in bot's coordinates? (from top's origin)
  const size_t n1 = top.shape.size(), n2 = bot.shape.size();
  Shape origin = unravel(bot.shape, top.offset), strides(n1, 0);
  std::vector<std::vector<std::pair<size_t, int64_t>>> terms(n2);  // per bot dim: (top dim, step)
  for (size_t d1 = 0; d1 < n1; d1++) {
    if (top.strides[d1] == 0) continue;
    Shape pos = unravel(bot.shape, top.offset + top.strides[d1]);
    for (size_t d2 = 0; d2 < n2; d2++) {
      int64_t step = pos[d2] - origin[d2];
      if (step == 0) continue;
      terms[d2].push_back({d1, step});
      strides[d1] += step * bot.strides[d2];
    }
  }

  // That is exact only if each bot coordinate stays in range. Group bot dims (innermost first) until
  // the group's affine value provably stays in [0, group size).
  Shape groups;
  std::vector<std::pair<int64_t, int64_t>> ranges;  // value range of each group's coordinate
  std::map<size_t, int64_t> coef;
  int64_t cst = 0, gsize = 1;
  auto value_range = [&]() {
    int64_t lo = cst, hi = cst;
    for (auto [d1, c] : coef) (c > 0 ? hi : lo) += c * (top.shape[d1] - 1);
    return std::pair<int64_t, int64_t>{lo, hi};
  };
  for (size_t d2 = n2; d2-- > 0;) {
    for (auto [d1, s] : terms[d2]) coef[d1] += s * gsize;
    cst += origin[d2] * gsize;
    gsize *= bot.shape[d2];
    auto [lo, hi] = value_range();
    if (lo >= 0 && hi < gsize) {
      groups.push_back(gsize), ranges.push_back({lo, hi});
      coef.clear(), cst = 0, gsize = 1;
    }
  }
  if (cst != 0 || std::any_of(coef.begin(), coef.end(), [](auto& p) { return p.second != 0; })) return std::nullopt;
  std::reverse(groups.begin(), groups.end());
  std::reverse(ranges.begin(), ranges.end());
  if (groups != bot.shape) {
    auto r = bot.reshape(groups);
    if (!r) return std::nullopt;
    return merge_views(*r, top, budget - 1);
  }

  if (bot.mask) {  // express bot's mask as a mask on top's dims, where each bot dim follows one top dim
    Shape nb(n1, 0), ne = top.shape;
    bool bad = false;
    for (size_t d2 = 0; d2 < n2; d2++) {
      auto [b, e] = (*bot.mask)[d2];
      if (ranges[d2].first >= b && ranges[d2].second < e) continue;
      if (terms[d2].size() != 1) {
        if (terms[d2].empty() && n1 > 0) ne[0] = 0;  // constant and outside the mask: nothing valid
        else bad = true;
        continue;
      }
      auto [d1, s] = terms[d2][0];
      int64_t o = origin[d2];
      nb[d1] = std::max(nb[d1], ceildiv(s > 0 ? b - o : e - o - 1, s));
      ne[d1] = std::min(ne[d1], floordiv(s < 0 ? b - o : e - o - 1, s) + 1);
    }
    if (nb != Shape(n1, 0) || ne != top.shape) {
      Mask m;
      for (size_t i = 0; i < n1; i++) m.push_back({nb[i], ne[i]});
      return merge_views(bot, View::create(top.shape, top.strides, top.offset, m), budget - 1);
    }
    if (bad) return std::nullopt;
  }

  int64_t off = bot.offset;
  for (size_t d2 = 0; d2 < n2; d2++) off += origin[d2] * bot.strides[d2];
  return View::create(top.shape, strides, off);
}

std::optional<View> View::merge_on_top(const View& top) const { return merge_views(*this, top, 16); }

std::string View::str() const {
  std::ostringstream os;
  os << "View(shape=" << shape_str(shape) << ", strides=" << shape_str(strides) << ", offset=" << offset << ", mask=";
  if (!mask) {
    os << "None";
  } else {
    os << "(";
    for (size_t i = 0; i < mask->size(); i++) os << (i ? "," : "") << "(" << (*mask)[i].first << "," << (*mask)[i].second << ")";
    os << (mask->size() == 1 ? ",)" : ")");
  }
  os << ", contiguous=" << (contiguous ? "True" : "False") << ")";
  return os.str();
}

}  // namespace tg
