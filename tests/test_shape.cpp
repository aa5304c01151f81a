// Tests for View / ShapeTracker: hand-derived movement ops, reshape merging, and a randomized check of
// the index expressions against movement ops applied to an explicit array of element ids.
#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "shape/shapetracker.h"
#include "uop/rewrite.h"
#include "test_util.h"

using namespace tg;
using Mask = std::vector<std::pair<int64_t, int64_t>>;

namespace {

// ---------------------------------------------------------------------------------------------------
// A tiny integer evaluator for index UOps. Index inputs are RANGE / DEFINE_VAR nodes bound in `env`.
// Every value is computed as the generated C would: in the node's own dtype, wrapping around on
// overflow (so an int32 index expression that overflows gives the wrong index here too).
// ---------------------------------------------------------------------------------------------------
int64_t wrap_to(DType dt, uint64_t v) {
  switch (dt.scalar) {
    case Scalar::Bool: return v != 0;
    case Scalar::Int32: return static_cast<int32_t>(static_cast<uint32_t>(v));
    case Scalar::Int64: return static_cast<int64_t>(v);
    default: ADD_FAILURE() << "evaluator: unexpected index dtype " << dt.name(); return 0;
  }
}
struct Evaluator {
  std::vector<UOpPtr> order;  // topological
  std::unordered_map<const UOp*, size_t> slot;
  explicit Evaluator(const std::vector<UOpPtr>& roots) {
    for (const UOpPtr& r : roots)
      for (const UOpPtr& u : r->toposort())
        if (slot.emplace(u.get(), order.size()).second) order.push_back(u);
  }
  std::vector<int64_t> run(const std::unordered_map<const UOp*, int64_t>& env) const {
    std::vector<int64_t> v(order.size());
    for (size_t i = 0; i < order.size(); i++) {
      const UOp& u = *order[i];
      auto s = [&](size_t k) { return v[slot.at(u.src[k].get())]; };
      auto us = [&](size_t k) { return static_cast<uint64_t>(s(k)); };
      uint64_t r = 0;
      switch (u.op) {
        case Ops::CONST: r = static_cast<uint64_t>(u.const_int()); break;
        case Ops::RANGE: case Ops::DEFINE_VAR: case Ops::SPECIAL: r = static_cast<uint64_t>(env.at(&u)); break;
        case Ops::ADD: r = us(0) + us(1); break;
        case Ops::MUL: r = us(0) * us(1); break;
        case Ops::IDIV: case Ops::MOD:  // C semantics; index math never divides by zero
          if (s(1) == 0) { ADD_FAILURE() << "evaluator: division by zero"; break; }
          r = static_cast<uint64_t>(u.op == Ops::IDIV ? s(0) / s(1) : s(0) % s(1));
          break;
        case Ops::MAX: r = static_cast<uint64_t>(std::max(s(0), s(1))); break;
        case Ops::NEG: r = 0 - us(0); break;
        case Ops::CMPLT: r = s(0) < s(1); break;
        case Ops::CMPNE: r = s(0) != s(1); break;
        case Ops::AND: r = us(0) & us(1); break;
        case Ops::OR: r = us(0) | us(1); break;
        case Ops::XOR: r = us(0) ^ us(1); break;
        case Ops::SHL: r = us(0) << s(1); break;
        case Ops::SHR: r = static_cast<uint64_t>(s(0) >> s(1)); break;
        case Ops::WHERE: r = static_cast<uint64_t>(s(0) ? s(1) : s(2)); break;
        case Ops::CAST: r = us(0); break;
        default: ADD_FAILURE() << "evaluator: unexpected op " << op_name(u.op);
      }
      v[i] = wrap_to(u.dtype, r);
    }
    return v;
  }
  int64_t at(const std::vector<int64_t>& v, const UOpPtr& u) const { return v[slot.at(u.get())]; }
};

// ---------------------------------------------------------------------------------------------------
// Reference: the same movement ops on an explicit array of element ids (-1 = padding).
// ---------------------------------------------------------------------------------------------------
struct Ref {
  Shape shape;
  std::vector<int64_t> data;
};

Shape unravel(const Shape& shape, int64_t i) {
  Shape idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) idx[d] = i % shape[d], i /= shape[d];
  return idx;
}
int64_t ravel(const Shape& shape, const Shape& idx) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); d++) i = i * shape[d] + idx[d];
  return i;
}
// Builds a new Ref of `shape` where each element is fetched from `src` by `from` (nullopt: -1).
template <class F> Ref remap(const Ref& src, const Shape& shape, F from) {
  Ref out{shape, std::vector<int64_t>(static_cast<size_t>(prod(shape)))};
  for (int64_t i = 0; i < prod(shape); i++) {
    std::optional<Shape> s = from(unravel(shape, i));
    out.data[i] = s ? src.data[ravel(src.shape, *s)] : -1;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Numeric evaluation of a view stack (independent of UOps): (index, valid) at one output index.
// ---------------------------------------------------------------------------------------------------
std::pair<int64_t, bool> eval_views(const ShapeTracker& st, Shape idx) {
  bool valid = true;
  int64_t flat = 0;
  for (size_t k = st.views.size(); k-- > 0;) {
    const View& v = st.views[k];
    if (k + 1 < st.views.size()) idx = unravel(v.shape, flat);
    flat = v.offset;
    for (size_t d = 0; d < v.shape.size(); d++) {
      flat += idx[d] * v.strides[d];
      if (v.mask) valid &= (*v.mask)[d].first <= idx[d] && idx[d] < (*v.mask)[d].second;
    }
    if (!valid) return {0, false};
  }
  return {flat, true};
}

std::string mask_str(const std::optional<Mask>& m) {
  if (!m) return "None";
  std::string s;
  for (auto [b, e] : *m) s += "(" + std::to_string(b) + "," + std::to_string(e) + ")";
  return s;
}

void expect_view(const View& v, Shape shape, Shape strides, int64_t offset, std::optional<Mask> mask) {
  EXPECT_EQ(v.shape, shape) << v.str();
  EXPECT_EQ(v.strides, strides) << v.str();
  EXPECT_EQ(v.offset, offset) << v.str();
  EXPECT_EQ(mask_str(v.mask), mask_str(mask)) << v.str();
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Basics and View::create canonicalization
// ---------------------------------------------------------------------------------------------------
TEST(ShapeHelpers, Helpers) {
  EXPECT_EQ(prod({2, 3, 4}), 24);
  EXPECT_EQ(prod({}), 1);
  EXPECT_EQ(shape_str({2, 3}), "(2,3)");
  EXPECT_EQ(shape_str({4}), "(4,)");
  EXPECT_EQ(shape_str({}), "()");
  EXPECT_EQ(strides_for_shape({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(strides_for_shape({2, 1, 4}), (Shape{4, 0, 1}));
  EXPECT_EQ(strides_for_shape({}), Shape{});
}

// Shape is a small vector: dims up to kInline live in the object itself, and beyond that it spills to the
// heap and still behaves as std::vector<int64_t> does.
bool stored_inline(const Shape& s) {
  auto* p = reinterpret_cast<const char*>(s.data());
  return p >= reinterpret_cast<const char*>(&s) && p < reinterpret_cast<const char*>(&s + 1);
}
TEST(ShapeSmallVector, ShortShapesLiveInTheObject) {
  Shape s{64, 512};
  EXPECT_TRUE(stored_inline(s));
  Shape copy = s, moved = Shape{1, 2, 3, 4, 5, 6};
  EXPECT_TRUE(stored_inline(copy));
  EXPECT_TRUE(stored_inline(moved));
  EXPECT_EQ(copy, s);
  EXPECT_EQ(moved.size(), Shape::kInline);
  EXPECT_TRUE(stored_inline(strides_for_shape(s)));
}
TEST(ShapeSmallVector, LongShapesSpillAndKeepTheirValues) {
  Shape s;
  for (int64_t i = 0; i < 40; i++) s.push_back(i * 3);
  EXPECT_FALSE(stored_inline(s));
  ASSERT_EQ(s.size(), 40u);
  for (int64_t i = 0; i < 40; i++) EXPECT_EQ(s[static_cast<size_t>(i)], i * 3);
  Shape copy = s;  // a copy of a spilled shape owns its own block
  copy[0] = 7;
  EXPECT_EQ(s[0], 0);
  Shape moved = std::move(copy);
  EXPECT_EQ(moved[0], 7);
  EXPECT_EQ(moved.size(), 40u);
  EXPECT_TRUE(copy.empty());  // NOLINT: a spilled shape moved from gives its block away and is left empty
  moved = Shape{1, 2};  // assigning a short shape to a spilled one
  EXPECT_EQ(moved, (Shape{1, 2}));
}
TEST(ShapeSmallVector, BehavesAsAVector) {
  Shape s{2, 3, 4};
  s.insert(s.begin() + 1, 9);
  EXPECT_EQ(s, (Shape{2, 9, 3, 4}));
  s.insert(s.begin(), size_t{5}, 1);  // 9 dims: spills in the middle of an insert
  EXPECT_EQ(s, (Shape{1, 1, 1, 1, 1, 2, 9, 3, 4}));
  s.erase(s.begin(), s.begin() + 5);
  EXPECT_EQ(s, (Shape{2, 9, 3, 4}));
  s.insert(s.end(), s.begin(), s.begin() + 2);  // a range from the shape itself
  EXPECT_EQ(s, (Shape{2, 9, 3, 4, 2, 9}));
  Shape spill = s;
  spill.insert(spill.begin() + 1, spill.begin(), spill.end());  // from itself, spilling on the way
  EXPECT_EQ(spill, (Shape{2, 2, 9, 3, 4, 2, 9, 9, 3, 4, 2, 9}));
  s.erase(s.begin() + 1);
  s.pop_back();
  EXPECT_EQ(s, (Shape{2, 3, 4, 2}));
  s.resize(6, -1);
  EXPECT_EQ(s, (Shape{2, 3, 4, 2, -1, -1}));
  EXPECT_EQ(s.back(), -1);
  EXPECT_EQ(std::vector<int64_t>(s.rbegin(), s.rend()), (std::vector<int64_t>{-1, -1, 2, 4, 3, 2}));
  EXPECT_THROW(s.at(6), std::out_of_range);
  EXPECT_EQ(Shape(3, 7), (Shape{7, 7, 7}));
  // to and from std::vector<int64_t>, and comparisons as a vector's
  std::vector<int64_t> v = s;
  EXPECT_EQ(Shape(v), s);
  EXPECT_TRUE(s == v);
  EXPECT_LT((Shape{1, 2}), (Shape{1, 3}));
  EXPECT_LT((Shape{1, 2}), (Shape{1, 2, 0}));
  EXPECT_NE((Shape{}), (Shape{0}));
  std::ostringstream os;
  os << Shape{4} << Shape{} << Shape{2, 3};
  EXPECT_EQ(os.str(), "(4,)()(2,3)");
}

TEST(ShapeView, Create) {
  View v = View::create({2, 3});
  expect_view(v, {2, 3}, {3, 1}, 0, std::nullopt);
  EXPECT_TRUE(v.contiguous);
  // size-1 dims get stride 0
  expect_view(View::create({1, 3}, Shape{7, 1}), {1, 3}, {0, 1}, 0, std::nullopt);
  EXPECT_TRUE(View::create({1, 3}, Shape{7, 1}).contiguous);
  // a full mask is dropped
  v = View::create({2, 3}, Shape{3, 1}, 0, Mask{{0, 2}, {0, 3}});
  EXPECT_FALSE(v.mask.has_value());
  EXPECT_TRUE(v.contiguous);
  // an empty mask dim: everything invalid, canonical zeros
  v = View::create({2, 3}, Shape{3, 1}, 5, Mask{{0, 2}, {2, 2}});
  expect_view(v, {2, 3}, {0, 0}, 0, Mask{{0, 0}, {0, 0}});
  EXPECT_FALSE(v.contiguous);
  // a dim with one valid index folds into the offset
  v = View::create({4, 3}, Shape{3, 1}, 0, Mask{{2, 3}, {0, 3}});
  expect_view(v, {4, 3}, {0, 1}, 6, Mask{{2, 3}, {0, 3}});
  // zero-size shape
  v = View::create({0, 3});
  expect_view(v, {0, 3}, {0, 0}, 0, std::nullopt);
  EXPECT_TRUE(v.contiguous);
  // offset breaks contiguity
  EXPECT_FALSE(View::create({2, 3}, std::nullopt, 1).contiguous);
}

// from_shape builds its view in place: the same view View::create makes, size-1 and zero-size dims included
TEST(ShapeView, FromShapeIsCreate) {
  for (Shape s : {Shape{}, Shape{5}, Shape{2, 3}, Shape{1, 3}, Shape{4, 1, 1, 2}, Shape{0, 3}, Shape{3, 0, 2}, Shape{2, 3, 4, 5, 6, 7, 2}}) {
    ShapeTracker st = ShapeTracker::from_shape(s);
    ASSERT_EQ(st.views.size(), 1u);
    EXPECT_EQ(st.views[0], View::create(s)) << shape_str(s);
    EXPECT_TRUE(st.contiguous()) << shape_str(s);
  }
}

// ---------------------------------------------------------------------------------------------------
// Movement ops on one view, against hand-derived values
// ---------------------------------------------------------------------------------------------------
TEST(ShapeView, Pad) {
  View v = View::create({2, 3}).pad({{1, 1}, {0, 2}});
  // offset -= 1*3; the original sits at rows [1,3), cols [0,3)
  expect_view(v, {4, 5}, {3, 1}, -3, Mask{{1, 3}, {0, 3}});
  EXPECT_FALSE(v.contiguous);
  // pad of nothing is the identity
  EXPECT_EQ(View::create({2, 3}).pad({{0, 0}, {0, 0}}), View::create({2, 3}));
  // pad twice: masks compose
  v = View::create({3}).pad({{2, 0}}).pad({{1, 1}});
  expect_view(v, {7}, {1}, -3, Mask{{3, 6}});
}

TEST(ShapeView, Shrink) {
  View v = View::create({4, 5}).shrink({{1, 3}, {2, 5}});
  expect_view(v, {2, 3}, {5, 1}, 7, std::nullopt);
  // shrink a padded view: mask moves and clamps
  v = View::create({2, 3}).pad({{1, 1}, {1, 1}}).shrink({{0, 3}, {2, 5}});
  // pad: shape (4,5) strides (3,1) offset -4 mask ((1,3),(1,4)); shrink cols from 2: offset -2
  expect_view(v, {3, 3}, {3, 1}, -2, Mask{{1, 3}, {0, 2}});
  // shrink back to exactly the original: mask disappears
  v = View::create({2, 3}).pad({{1, 1}, {1, 1}}).shrink({{1, 3}, {1, 4}});
  expect_view(v, {2, 3}, {3, 1}, 0, std::nullopt);
  EXPECT_TRUE(v.contiguous);
  // shrink into the padding only: a one-index window of a masked dim
  v = View::create({2, 3}).pad({{0, 2}, {0, 0}}).shrink({{2, 4}, {0, 3}});
  expect_view(v, {2, 3}, {0, 0}, 0, Mask{{0, 0}, {0, 0}});
}

TEST(ShapeView, Expand) {
  View v = View::create({1, 3}).expand({4, 3});
  expect_view(v, {4, 3}, {0, 1}, 0, std::nullopt);
  EXPECT_FALSE(v.contiguous);
  // an expanded dim whose single index is valid becomes fully valid
  v = View::create({1, 3}).pad({{0, 0}, {1, 0}}).expand({5, 4});
  expect_view(v, {5, 4}, {0, 1}, -1, Mask{{0, 5}, {1, 4}});
  // ... and one that is invalid (padding of a size-1 dim, then shrunk to the pad) stays invalid
  View p = View::create({1, 3}).pad({{1, 0}, {0, 0}}).shrink({{0, 1}, {0, 3}});
  expect_view(p, {1, 3}, {0, 0}, 0, Mask{{0, 0}, {0, 0}});
  v = p.expand({4, 3});
  expect_view(v, {4, 3}, {0, 0}, 0, Mask{{0, 0}, {0, 0}});
}

TEST(ShapeView, Permute) {
  View v = View::create({2, 3, 4}).permute({2, 0, 1});
  expect_view(v, {4, 2, 3}, {1, 12, 4}, 0, std::nullopt);
  EXPECT_FALSE(v.contiguous);
  v = View::create({2, 3}).pad({{1, 0}, {0, 2}}).permute({1, 0});
  expect_view(v, {5, 3}, {1, 3}, -3, Mask{{0, 3}, {1, 3}});
}

TEST(ShapeView, Flip) {
  View v = View::create({2, 3}).flip({false, true});
  expect_view(v, {2, 3}, {3, -1}, 2, std::nullopt);
  v = View::create({2, 3}).flip({true, true});
  expect_view(v, {2, 3}, {-3, -1}, 5, std::nullopt);
  // flip mirrors the mask
  v = View::create({3}).pad({{1, 2}}).flip({true});
  // pad: shape 6, offset -1, mask (1,4); flip: offset -1 + 5 = 4, mask (6-4, 6-1) = (2,5)
  expect_view(v, {6}, {-1}, 4, Mask{{2, 5}});
}

// ---------------------------------------------------------------------------------------------------
// Reshape
// ---------------------------------------------------------------------------------------------------
TEST(ShapeReshape, ContiguousStaysOneView) {
  ShapeTracker st = ShapeTracker::from_shape({2, 3, 4}).reshape({6, 4});
  ASSERT_EQ(st.views.size(), 1u);
  expect_view(st.views[0], {6, 4}, {4, 1}, 0, std::nullopt);
  EXPECT_TRUE(st.contiguous());
  st = st.reshape({24}).reshape({4, 1, 6});
  ASSERT_EQ(st.views.size(), 1u);
  expect_view(st.views[0], {4, 1, 6}, {6, 0, 1}, 0, std::nullopt);
}

TEST(ShapeReshape, PermutedMerges) {
  // (2,3,4) permuted to (4,2,3) strides (1,12,4): the last two dims are one run of 6 with stride 4
  View v = View::create({2, 3, 4}).permute({2, 0, 1});
  auto r = v.reshape({4, 6});
  ASSERT_TRUE(r.has_value());
  expect_view(*r, {4, 6}, {1, 4}, 0, std::nullopt);
  r = v.reshape({2, 2, 2, 3});
  ASSERT_TRUE(r.has_value());
  expect_view(*r, {2, 2, 2, 3}, {2, 1, 12, 4}, 0, std::nullopt);
}

TEST(ShapeReshape, PermutedIncompatiblePushesView) {
  ShapeTracker st = ShapeTracker::from_shape({2, 3}).permute({1, 0});  // (3,2) strides (1,3)
  EXPECT_FALSE(st.views.back().reshape({6}).has_value());
  ShapeTracker r = st.reshape({6});
  ASSERT_EQ(r.views.size(), 2u);
  expect_view(r.views[0], {3, 2}, {1, 3}, 0, std::nullopt);
  expect_view(r.views[1], {6}, {1}, 0, std::nullopt);
  EXPECT_EQ(r.simplify().views.size(), 2u);  // genuinely two views
  // element at flat i of the transposed (3,2) array: row i/2, col i%2 -> buffer (i%2)*3 + i/2
  auto [idx, valid] = r.to_indexed_uops({loop_range(0, 6)}, dtypes::int32);
  Evaluator ev({idx, valid});
  UOpPtr ridx = loop_range(0, 6);
  for (int64_t i = 0; i < 6; i++) {
    auto vals = ev.run({{ridx.get(), i}});
    EXPECT_EQ(ev.at(vals, idx), (i % 2) * 3 + i / 2) << render_expr(idx);
    EXPECT_EQ(ev.at(vals, valid), 1);
  }
}

TEST(ShapeReshape, Expanded) {
  // (1,3) expanded to (4,3): strides (0,1); reshape (2,2,3) keeps the broadcast
  View v = View::create({1, 3}).expand({4, 3});
  auto r = v.reshape({2, 2, 3});
  ASSERT_TRUE(r.has_value());
  expect_view(*r, {2, 2, 3}, {0, 0, 1}, 0, std::nullopt);
  // merging an expanded dim with a real one is impossible
  EXPECT_FALSE(v.reshape({12}).has_value());
  // (3,1) expanded to (3,4) -> (12,) is impossible, (3,2,2) fine
  v = View::create({3, 1}).expand({3, 4});
  EXPECT_FALSE(v.reshape({12}).has_value());
  r = v.reshape({3, 2, 2});
  ASSERT_TRUE(r.has_value());
  expect_view(*r, {3, 2, 2}, {1, 0, 0}, 0, std::nullopt);
}

TEST(ShapeReshape, Masked) {
  // pad rows of (2,3) -> (4,3) mask ((1,3),(0,3)); reshape to (12,): the valid rows are contiguous
  View v = View::create({2, 3}).pad({{1, 1}, {0, 0}});
  auto r = v.reshape({12});
  ASSERT_TRUE(r.has_value());
  expect_view(*r, {12}, {1}, -3, Mask{{3, 9}});
  // split the padded dim: (4,3) -> (2,2,3): rows 1..2 straddle the split -> not a box
  EXPECT_FALSE(v.reshape({2, 2, 3}).has_value());
  // padding the columns makes the valid set non-contiguous in flat order
  v = View::create({2, 3}).pad({{0, 0}, {1, 0}});
  EXPECT_FALSE(v.reshape({8}).has_value());
  // adding unit dims to a masked view
  r = v.reshape({2, 1, 4});
  ASSERT_TRUE(r.has_value());
  expect_view(*r, {2, 1, 4}, {3, 0, 1}, -1, Mask{{0, 2}, {0, 1}, {1, 4}});
  // the ShapeTracker falls back to a second view when the mask cannot be carried
  ShapeTracker st = ShapeTracker::from_shape({2, 3}).pad({{0, 0}, {1, 0}}).reshape({8});
  EXPECT_EQ(st.views.size(), 2u);
}

TEST(ShapeTracker, AddAndSimplify) {
  ShapeTracker a = ShapeTracker::from_shape({2, 3, 4}).permute({2, 0, 1});
  ShapeTracker b = ShapeTracker::from_shape({4, 6}).shrink({{1, 3}, {0, 6}});
  ShapeTracker c = a.reshape({4, 6}) + b;  // one view: the permute absorbed into (4,6) and then shrunk
  ASSERT_EQ(c.views.size(), 1u);
  expect_view(c.views[0], {2, 6}, {1, 4}, 1, std::nullopt);
  // a contiguous view on top merges when the bottom can be reshaped to it
  ShapeTracker d(Views{View::create({4, 5}).shrink({{1, 3}, {0, 5}}), View::create({10})});
  ShapeTracker s = d.simplify();
  ASSERT_EQ(s.views.size(), 1u);
  expect_view(s.views[0], {10}, {1}, 5, std::nullopt);
  // row-flipped (2,3) read as (3,2): rows of the result straddle the flipped rows, no single view
  ShapeTracker f(Views{View::create({2, 3}).flip({true, false}), View::create({3, 2})});
  EXPECT_EQ(f.simplify().views.size(), 2u);
  // a permute on top of a flip merges into one view
  ShapeTracker g(Views{View::create({2, 3}).flip({true, false}), View::create({2, 3}).permute({1, 0})});
  s = g.simplify();
  ASSERT_EQ(s.views.size(), 1u);
  expect_view(s.views[0], {3, 2}, {1, -3}, 3, std::nullopt);
}

TEST(ShapeTracker, ZeroSize) {
  ShapeTracker st = ShapeTracker::from_shape({0, 3}).reshape({3, 0});
  ASSERT_EQ(st.views.size(), 1u);
  expect_view(st.views[0], {3, 0}, {0, 0}, 0, std::nullopt);
  EXPECT_EQ(st.size(), 0);
  EXPECT_EQ(st.real_size(), 0);
  st = ShapeTracker::from_shape({0, 1}).expand({0, 4});
  expect_view(st.views[0], {0, 4}, {0, 0}, 0, std::nullopt);
  EXPECT_EQ(View::create({2, 3}).shrink({{0, 2}, {1, 1}}).shape, (Shape{2, 0}));
}

TEST(ShapeTracker, HashEqualsStr) {
  ShapeTracker a = ShapeTracker::from_shape({2, 3}).permute({1, 0});
  ShapeTracker b = ShapeTracker::from_shape({2, 3}).permute({1, 0});
  ShapeTracker c = ShapeTracker::from_shape({3, 2});
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_TRUE(a.equals(b));
  EXPECT_FALSE(a.equals(c));
  EXPECT_TRUE(a == b);
  EXPECT_EQ(a.str(), "ShapeTracker(views=(View(shape=(3,2), strides=(1,3), offset=0, mask=None, contiguous=False),))");
}

TEST(ShapeTracker, RealSizeAndStrides) {
  EXPECT_EQ(ShapeTracker::from_shape({2, 3}).real_size(), 6);
  EXPECT_EQ(ShapeTracker::from_shape({4, 5}).shrink({{1, 3}, {2, 5}}).real_size(), 15);  // max 7+5+2
  EXPECT_EQ(ShapeTracker::from_shape({3}).pad({{2, 2}}).real_size(), 3);
  EXPECT_EQ(ShapeTracker::from_shape({1, 3}).expand({4, 3}).real_size(), 3);
  EXPECT_EQ(ShapeTracker::from_shape({0, 3}).real_size(), 0);
  // footprint: the span from the lowest index touched, wherever the view starts in its buffer
  EXPECT_EQ(ShapeTracker::from_shape({4, 5}).shrink({{1, 3}, {2, 5}}).footprint(), 8);  // 7 .. 14
  EXPECT_EQ(ShapeTracker::from_shape({8, 100}).shrink({{7, 8}, {0, 100}}).footprint(), 100);  // the last of 8 stacked rows
  EXPECT_EQ(ShapeTracker::from_shape({8, 100}).shrink({{7, 8}, {0, 100}}).real_size(), 800);
  EXPECT_EQ(ShapeTracker::from_shape({6}).flip({true}).shrink({{1, 3}}).footprint(), 2);  // 4, 3
  EXPECT_EQ(ShapeTracker::from_shape({3}).pad({{2, 2}}).footprint(), 3);
  EXPECT_EQ(ShapeTracker::from_shape({1, 3}).expand({4, 3}).footprint(), 3);
  EXPECT_EQ(ShapeTracker::from_shape({0, 3}).footprint(), 0);

  using S = std::vector<std::optional<int64_t>>;
  EXPECT_EQ(ShapeTracker::from_shape({2, 3}).permute({1, 0}).real_strides(), (S{1, 3}));
  EXPECT_EQ(ShapeTracker::from_shape({2, 3}).pad({{1, 0}, {0, 0}}).real_strides(), (S{std::nullopt, 1}));
  ShapeTracker two = ShapeTracker::from_shape({2, 3}).permute({1, 0}).reshape({6});
  EXPECT_EQ(two.real_strides(), (S{std::nullopt}));
  // two views where the top one is affine anyway: (3,2)^T -> (6,) -> (3,2)
  ShapeTracker back = two.reshape({3, 2});
  auto rs = back.real_strides();
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0], std::optional<int64_t>(1));
  EXPECT_EQ(rs[1], std::optional<int64_t>(3));
}

TEST(ShapeTracker, IndexedUopsSimple) {
  ShapeTracker st = ShapeTracker::from_shape({2, 3}).pad({{1, 0}, {0, 1}});  // (3,4)
  UOpPtr i0 = loop_range(0, 3), i1 = loop_range(1, 4);
  auto [idx, valid] = st.to_indexed_uops({i0, i1}, dtypes::int32);
  Evaluator ev({idx, valid});
  for (int64_t a = 0; a < 3; a++)
    for (int64_t b = 0; b < 4; b++) {
      auto v = ev.run({{i0.get(), a}, {i1.get(), b}});
      bool ok = a >= 1 && b < 3;
      EXPECT_EQ(ev.at(v, valid), ok ? 1 : 0) << render_expr(valid);
      if (ok) { EXPECT_EQ(ev.at(v, idx), (a - 1) * 3 + b) << render_expr(idx); }
    }
  // no mask: valid is the constant true
  auto [idx2, valid2] = ShapeTracker::from_shape({2, 3}).to_indexed_uops({loop_range(0, 2), loop_range(1, 3)}, dtypes::int32);
  EXPECT_TRUE(valid2->is_const(1));
  (void)idx2;
}

// A view that addresses past 2^31: its bound says so, its int64 expression is right at the far corner,
// and the same expression in int32 would wrap (which the evaluator, computing in the node's dtype, sees).
TEST(ShapeTracker, IndexBoundAndInt64Index) {
  const int64_t big = int64_t{1} << 30;
  ShapeTracker st = ShapeTracker({View::create({4, 3}, Shape{big, 1})});
  EXPECT_EQ(st.index_bound(), 3 * big + 2);
  EXPECT_LE(ShapeTracker::from_shape({1 << 15, 1 << 15}).index_bound(), int64_t{INT32_MAX});
  for (DType dt : {dtypes::int64, dtypes::int32}) {
    UOpPtr i0 = UOp::make(Ops::RANGE, dt, {UOp::cnst_int(dt, 0), UOp::cnst_int(dt, 4)}, RangeArg{RangeKind::Loop, 0, 0, {}});
    UOpPtr i1 = UOp::make(Ops::RANGE, dt, {UOp::cnst_int(dt, 0), UOp::cnst_int(dt, 3)}, RangeArg{RangeKind::Loop, 1, 1, {}});
    auto [idx, valid] = st.to_indexed_uops({i0, i1}, dt);
    EXPECT_EQ(idx->dtype, dt);
    Evaluator ev({idx});
    int64_t got = ev.at(ev.run({{i0.get(), 3}, {i1.get(), 2}}), idx);
    if (dt == dtypes::int64) EXPECT_EQ(got, 3 * big + 2) << render_expr(idx);
    else EXPECT_NE(got, 3 * big + 2) << "int32 index math cannot hold 3*2^30+2";
  }
}

// A 0-d view has no index to take the dtype from: its offset alone may pass 2^31 (t[n-1] of a big t),
// so the expression is built in the dtype asked for.
TEST(ShapeTracker, ZeroDimViewPast2e31InTheGivenIndexDtype) {
  const int64_t off = (int64_t{1} << 31) + 15;
  ShapeTracker st({View::create({}, Shape{}, off)});
  EXPECT_EQ(st.index_bound(), off);
  auto [idx, valid] = st.to_indexed_uops({}, dtypes::int64);
  EXPECT_EQ(idx->dtype, dtypes::int64);
  EXPECT_EQ(idx->const_int(), off);
  EXPECT_TRUE(valid->is_const(1));
  EXPECT_EQ(st.real_size(), off + 1);
}

// Merging a zero-size view (a shrink to nothing of a padded view) onto any view: nothing to address,
// and the merge terminates.
TEST(ShapeTracker, ZeroSizeOnTopOfPaddedViews) {
  ShapeTracker base = ShapeTracker::from_shape({3, 1}).pad({{1, 1}, {0, 2}}).permute({1, 0});  // (3,5)
  // the views the differential fuzz test met (a padded constant under a zero-size view): this merge
  // used to recurse without end
  View bot = View::create({6, 5}, Shape{0, 0}, 0, Mask{{1, 6}, {1, 5}});
  auto merged = bot.merge_on_top(View::create({6, 0}));
  ASSERT_TRUE(merged.has_value());
  EXPECT_EQ(merged->shape, (Shape{6, 0}));
  for (int64_t a = 0; a <= 5; a++) {
    ShapeTracker z = base.shrink({{0, 3}, {a, a}});
    EXPECT_EQ(z.size(), 0);
    ShapeTracker st = ShapeTracker::from_shape({3, 5}).permute({1, 0}).reshape({3, 5}) + z;
    EXPECT_EQ(st.size(), 0);
    ShapeTracker padded = z.pad({{1, 1}, {2, 0}});  // all padding
    auto [idx, valid] = padded.to_indexed_uops({loop_range(0, 5), loop_range(1, 2)}, dtypes::int32);
    EXPECT_TRUE(valid->is_const(0)) << render_expr(valid);
  }
}

// ---------------------------------------------------------------------------------------------------
// Randomized: chains of movement ops vs the explicit reference
// ---------------------------------------------------------------------------------------------------
namespace {

Shape random_factorization(std::mt19937& rng, int64_t n) {
  std::vector<int64_t> primes;
  for (int64_t p = 2; n > 1; p++)
    while (n % p == 0) primes.push_back(p), n /= p;
  std::shuffle(primes.begin(), primes.end(), rng);
  Shape out;
  for (int64_t p : primes) {
    if (!out.empty() && rng() % 2) out.back() *= p;
    else out.push_back(p);
  }
  int ones = static_cast<int>(rng() % 3);
  for (int k = 0; k < ones; k++) out.insert(out.begin() + static_cast<std::ptrdiff_t>(rng() % (out.size() + 1)), 1);
  if (out.empty()) out.push_back(1);
  return out;
}

struct Chain {
  ShapeTracker st;
  Ref ref;
  std::string log;
};

// Applies one random movement op to both the tracker and the reference.
void random_op(std::mt19937& rng, Chain& c) {
  const Shape& sh = c.ref.shape;
  const size_t n = sh.size();
  auto rnd = [&](int64_t k) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(k)); };
  switch (rng() % 6) {
    case 0: {  // reshape
      Shape ns = random_factorization(rng, prod(sh));
      c.st = c.st.reshape(ns);
      c.ref.shape = ns;
      c.log += " reshape" + shape_str(ns);
      break;
    }
    case 1: {  // permute
      std::vector<int> order(n);
      for (size_t i = 0; i < n; i++) order[i] = static_cast<int>(i);
      std::shuffle(order.begin(), order.end(), rng);
      Shape ns;
      for (int a : order) ns.push_back(sh[a]);
      c.ref = remap(c.ref, ns, [&](const Shape& o) -> std::optional<Shape> {
        Shape s(n);
        for (size_t i = 0; i < n; i++) s[order[i]] = o[i];
        return s;
      });
      c.st = c.st.permute(order);
      c.log += " permute";
      break;
    }
    case 2: {  // expand the size-1 dims
      Shape ns = sh;
      for (auto& d : ns)
        if (d == 1) d = 1 + rnd(3);
      if (prod(ns) > 300 || ns == sh) return;
      c.ref = remap(c.ref, ns, [&](const Shape& o) -> std::optional<Shape> {
        Shape s = o;
        for (size_t i = 0; i < n; i++)
          if (sh[i] == 1) s[i] = 0;
        return s;
      });
      c.st = c.st.expand(ns);
      c.log += " expand" + shape_str(ns);
      break;
    }
    case 3: {  // shrink (non-empty)
      Mask arg;
      Shape ns;
      for (int64_t d : sh) {
        int64_t b = rnd(d), e = b + 1 + rnd(d - b);
        arg.push_back({b, e}), ns.push_back(e - b);
      }
      c.ref = remap(c.ref, ns, [&](const Shape& o) -> std::optional<Shape> {
        Shape s(n);
        for (size_t i = 0; i < n; i++) s[i] = o[i] + arg[i].first;
        return s;
      });
      c.st = c.st.shrink(arg);
      c.log += " shrink";
      break;
    }
    case 4: {  // pad
      Mask arg;
      Shape ns;
      for (int64_t d : sh) {
        int64_t b = rnd(3), e = rnd(3);
        arg.push_back({b, e}), ns.push_back(d + b + e);
      }
      if (prod(ns) > 300) return;
      c.ref = remap(c.ref, ns, [&](const Shape& o) -> std::optional<Shape> {
        Shape s(n);
        for (size_t i = 0; i < n; i++) {
          s[i] = o[i] - arg[i].first;
          if (s[i] < 0 || s[i] >= sh[i]) return std::nullopt;
        }
        return s;
      });
      c.st = c.st.pad(arg);
      c.log += " pad";
      break;
    }
    default: {  // flip
      std::vector<bool> axes(n);
      for (size_t i = 0; i < n; i++) axes[i] = rng() % 2;
      c.ref = remap(c.ref, sh, [&](const Shape& o) -> std::optional<Shape> {
        Shape s = o;
        for (size_t i = 0; i < n; i++)
          if (axes[i]) s[i] = sh[i] - 1 - o[i];
        return s;
      });
      c.st = c.st.flip(axes);
      c.log += " flip";
      break;
    }
  }
}

// Checks `st` against the reference at every output index, both numerically and through the UOps.
void check_against_ref(const ShapeTracker& st, const Ref& ref, const std::string& what) {
  ASSERT_EQ(st.shape(), ref.shape) << what;
  const size_t n = ref.shape.size();
  std::vector<UOpPtr> idxs;
  for (size_t i = 0; i < n; i++) idxs.push_back(loop_range(static_cast<int>(i), ref.shape[i]));
  auto [idx, valid] = st.to_indexed_uops(idxs, dtypes::int32);
  UOpPtr flat_var = loop_range(7, prod(ref.shape));
  auto [fidx, fvalid] = st.to_indexed_uops_flat(flat_var);
  Evaluator ev({idx, valid, fidx, fvalid});
  const int64_t real = st.real_size(), lowest = real - st.footprint();
  int failures = 0;
  for (int64_t i = 0; i < prod(ref.shape) && failures < 3; i++) {
    Shape pos = unravel(ref.shape, i);
    std::unordered_map<const UOp*, int64_t> env;
    for (size_t d = 0; d < n; d++) env[idxs[d].get()] = pos[d];
    env[flat_var.get()] = i;
    auto vals = ev.run(env);
    const int64_t want = ref.data[i];
    auto [nidx, nvalid] = eval_views(st, pos);
    bool ok = true;
    ok &= nvalid == (want >= 0) && (!nvalid || nidx == want);
    ok &= ev.at(vals, valid) == (want >= 0 ? 1 : 0);
    ok &= ev.at(vals, fvalid) == (want >= 0 ? 1 : 0);
    if (want >= 0) ok &= ev.at(vals, idx) == want && ev.at(vals, fidx) == want && want < real && want >= lowest;
    if (!ok) {
      failures++;
      ADD_FAILURE() << what << " at " << shape_str(pos) << ": want " << want << ", views give " << (nvalid ? nidx : -1)
                    << ", uops give idx=" << ev.at(vals, idx) << " valid=" << ev.at(vals, valid) << " real_size=" << real << " footprint from " << lowest
                    << "\n  " << st.str() << "\n  idx=" << render_expr(idx) << "\n  valid=" << render_expr(valid);
    }
  }
}

}  // namespace

TEST(ShapeTracker, RandomChains) {
  std::mt19937 rng(1234);
  int multi_view = 0, merged = 0;
  for (int iter = 0; iter < 400; iter++) {
    Shape start;
    int rank = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < rank; i++) start.push_back(1 + static_cast<int64_t>(rng() % 4));
    Chain c{ShapeTracker::from_shape(start), Ref{start, {}}, "start" + shape_str(start)};
    for (int64_t i = 0; i < prod(start); i++) c.ref.data.push_back(i);
    int len = 1 + static_cast<int>(rng() % 7);
    for (int k = 0; k < len; k++) random_op(rng, c);
    check_against_ref(c.st, c.ref, c.log);
    ShapeTracker s = c.st.simplify();
    EXPECT_LE(s.views.size(), c.st.views.size());
    multi_view += c.st.views.size() > 1;
    merged += s.views.size() < c.st.views.size();
    if (s.views.size() != c.st.views.size()) check_against_ref(s, c.ref, c.log + " [simplified]");
    // composing with a fresh tracker of the same shape is the identity
    ShapeTracker id = ShapeTracker::from_shape(start) + c.st;
    check_against_ref(id, c.ref, c.log + " [from_shape + st]");
    if (HasFailure()) break;
  }
  EXPECT_GT(multi_view, 20);  // the generator exercises stacked views
  RecordProperty("multi_view", multi_view);
  RecordProperty("merged", merged);
}

// Composition of two random trackers (st_a then st_b) against applying both op chains in sequence.
TEST(ShapeTracker, RandomComposition) {
  std::mt19937 rng(99);
  for (int iter = 0; iter < 150; iter++) {
    Shape start;
    int rank = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < rank; i++) start.push_back(1 + static_cast<int64_t>(rng() % 4));
    Chain a{ShapeTracker::from_shape(start), Ref{start, {}}, "A" + shape_str(start)};
    for (int64_t i = 0; i < prod(start); i++) a.ref.data.push_back(i);
    for (int k = 0; k < 3; k++) random_op(rng, a);
    // B starts from A's output shape; its ref indexes A's output positions
    Chain b{ShapeTracker::from_shape(a.ref.shape), Ref{a.ref.shape, {}}, " B"};
    for (int64_t i = 0; i < prod(a.ref.shape); i++) b.ref.data.push_back(i);
    for (int k = 0; k < 3; k++) random_op(rng, b);
    Ref both{b.ref.shape, {}};
    for (int64_t x : b.ref.data) both.data.push_back(x < 0 ? -1 : a.ref.data[x]);
    check_against_ref(a.st + b.st, both, a.log + b.log);
    if (HasFailure()) break;
  }
}
