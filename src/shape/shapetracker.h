// View and ShapeTracker: movement ops as index arithmetic, no data moved.
//
// A View is shape + strides + offset + an optional mask (the valid region, for pad). A ShapeTracker is a
// stack of views: views.back() is what the user sees; each view's flat index is reinterpreted by the
// view below it. Movement ops change only the last view, and reshape pushes a new view when it cannot
// be merged. to_indexed_uops() turns an index per output dimension into (buffer index, valid) UOps.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "helpers/recycle.h"
#include "tg/shape.h"
#include "uop/uop.h"

namespace tg {

int64_t prod(const Shape& s);  // tg::Error when the product does not fit in int64
std::string shape_str(const Shape& s);  // "(2,3)", "(4,)", "()"
Shape strides_for_shape(const Shape& shape);  // contiguous row-major strides, 0 for size-1 dims

struct View {
  Shape shape, strides;
  int64_t offset = 0;
  std::optional<std::vector<std::pair<int64_t, int64_t>>> mask;  // [begin, end) per dim
  bool contiguous = true;

  // Canonical form: size-1 dims get stride 0, a mask covering everything is dropped, `contiguous` set.
  static View create(const Shape& shape, std::optional<Shape> strides = std::nullopt, int64_t offset = 0,
                     std::optional<std::vector<std::pair<int64_t, int64_t>>> mask = std::nullopt);
  bool operator==(const View& o) const = default;

  View pad(const std::vector<std::pair<int64_t, int64_t>>& arg) const;
  View shrink(const std::vector<std::pair<int64_t, int64_t>>& arg) const;
  View expand(const Shape& new_shape) const;
  View permute(const std::vector<int>& order) const;
  View flip(const std::vector<bool>& axes) const;
  std::optional<View> reshape(const Shape& new_shape) const;  // nullopt when one view cannot express it
  // The composition self∘other (`other` indexes this view's output) as one view, if it exists.
  std::optional<View> merge_on_top(const View& top) const;
  std::string str() const;
};

// A tracker's views. Nearly every tracker has one, made and dropped with each lazy op: its block is
// recycled (helpers/recycle.h) rather than returned to malloc.
using Views = std::vector<View, recycle::Allocator<View>>;

struct ShapeTracker final : ArgObject {
  Views views;

  ShapeTracker() = default;
  explicit ShapeTracker(Views v) : views(std::move(v)) {}
  static ShapeTracker from_shape(const Shape& shape);
  static ShapeTracker from_view(View v);  // one view, moved in

  const Shape& shape() const { return views.back().shape; }
  int64_t size() const { return prod(shape()); }
  bool contiguous() const { return views.size() == 1 && views[0].contiguous; }
  // Elements of the underlying buffer this tracker can touch (largest valid index + 1).
  int64_t real_size() const;
  // Elements from the lowest to the highest index it touches: its span of the buffer wherever it
  // starts (a slice of a stacked buffer spans its own part; real_size also counts what lies before).
  int64_t footprint() const;

  // Movement ops. Arguments are validated by the Tensor layer; these assume they are legal.
  ShapeTracker reshape(const Shape& new_shape) const;
  ShapeTracker permute(const std::vector<int>& order) const;
  ShapeTracker expand(const Shape& new_shape) const;
  ShapeTracker pad(const std::vector<std::pair<int64_t, int64_t>>& arg) const;
  ShapeTracker shrink(const std::vector<std::pair<int64_t, int64_t>>& arg) const;
  ShapeTracker flip(const std::vector<bool>& axes) const;

  // `this` then `top`: top indexes what this tracker produces. Views are merged where possible.
  ShapeTracker operator+(const ShapeTracker& top) const;
  ShapeTracker simplify() const;  // merges adjacent views where one view can express both

  // The largest absolute value any index expression of this tracker can take (offsets, strided sums,
  // flat indices of each view): an index dtype must hold it.
  int64_t index_bound() const;
  // (index into the buffer, validity) for one index UOp per dimension of shape(); both simplified. The
  // index, and every one of idxs, has dtype `index_dtype` (int32, or int64 where index_bound() needs it;
  // a 0-d view has no idxs to take it from, and its offset alone may pass 2^31).
  std::pair<UOpPtr, UOpPtr> to_indexed_uops(const std::vector<UOpPtr>& idxs, DType index_dtype) const;
  // Same, over a single flat index of shape() (row-major).
  std::pair<UOpPtr, UOpPtr> to_indexed_uops_flat(const UOpPtr& idx) const;

  // The stride of each dim in the underlying buffer when it is a simple affine function, else nullopt.
  // A dim that the validity (a mask) depends on counts as not affine, unless ignore_valid.
  std::vector<std::optional<int64_t>> real_strides(bool ignore_valid = false) const;

  // The VIEW UOp that carries this tracker (how an AST sees a buffer; hash-consed: equal trackers give
  // the same node), and the tracker of such a VIEW.
  UOpPtr to_uop() const;
  static const ShapeTracker& of(const UOp& view);

  uint64_t hash() const override;
  bool equals(const ArgObject& o) const override;
  std::string str() const override;
  bool operator==(const ShapeTracker& o) const { return views == o.views; }

 private:
  // [lowest, highest] buffer index a valid access can take; nullopt when none is valid
  std::optional<std::pair<int64_t, int64_t>> valid_index_range() const;
};

}  // namespace tg
