// LazyBuffer: the lazy graph. Nothing is computed when a LazyBuffer is built.
//
// A LazyBuffer is either concrete (an op with srcs, and a Buffer it will be realized into) or a view (a
// base LazyBuffer seen through a ShapeTracker). base() is the buffer itself when concrete. Once the
// scheduler has run its kernel, a concrete buffer drops its srcs and is realized() (seed 003): the next
// schedule stops there.
#pragma once
#include <atomic>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "shape/shapetracker.h"
#include "uop/uop.h"

namespace tg {

class LazyBuffer;
using LBPtr = std::shared_ptr<LazyBuffer>;
// An operand of e(), by reference: it is copied once, into the new node's srcs (a copy of a shared_ptr
// is an atomic increment, and its release a decrement, once the process has a second thread).
class LBRef {
 public:
  LBRef(const LBPtr& p) : p_(&p) {}  // implicit: x->e(op, {y}) as with values
  const LBPtr& operator*() const { return *p_; }

 private:
  const LBPtr* p_;
};

class LazyBuffer : public std::enable_shared_from_this<LazyBuffer> {
 public:
  // Concrete constructors
  static LBPtr metaop(Ops op, const Shape& shape, DType dtype, const std::string& device, Arg arg = {},
                      std::vector<LBPtr> srcs = {});
  static LBPtr from_host(const void* data, const Shape& shape, DType dtype);  // realized, on "EXT"
  // Realized: an allocated Buffer seen as `shape` (TinyJit's outputs on a replay).
  static LBPtr from_buffer(std::shared_ptr<Buffer> buffer, const Shape& shape);
  static LBPtr cnst(double value, DType dtype, const std::string& device, const Shape& shape);  // CONST, expanded
  static LBPtr cnst_arg(Arg value, DType dtype, const std::string& device, const Shape& shape);  // exact value
  LBPtr const_like(double value) const { return cnst(value, dtype, device, shape()); }
  // This 0-d buffer (a CONST's base) seen at `shape`: every stride 0, as reshaping to all ones and
  // expanding would give.
  LBPtr broadcast_scalar(const Shape& shape) const;

  // Graph ops. Arguments are validated by the Tensor layer.
  // Elementwise; srcs must share shape. Constants fold: an op of unpadded constants is a constant.
  LBPtr e(Ops op, std::initializer_list<LBRef> others = {}) const;
  // Reduce to size 1 along axes (keepdim). A reduction of 32768 or more inputs per output into fewer than
  // 4096 outputs splits one axis and reduces in two kernels, so the first has outputs for every thread
  // (split_reduceop). A
  // reduce of an unpadded constant folds to a constant (fold_reduce).
  LBPtr r(Ops op, const std::vector<int>& axes) const;
  // The reduce `op` (ADD, MAX or MUL) along axes (keepdim) of an unpadded unrealized constant, as a
  // constant: n*v, v or v^n (reduce_repeated's exact values) with no kernel; nullptr for anything else.
  LBPtr fold_reduce(Ops op, const std::vector<int>& axes) const;
  LBPtr cast(DType dtype, bool bitcast = false) const;
  // tinygrad's ASSIGN: x's values end up in this tensor's Buffer (the same Buffer object, so whatever
  // holds it, an optimizer's parameter or a TinyJit's plan, sees the update). The kernel computes x into
  // a buffer of its own (so it may read the old values anywhere), and when the schedule has run, the
  // two buffers trade memory (engine/schedule.h): the target's Buffer holds the new values, and the old
  // values stay with the LazyBuffer that had them if anything still reads it. A whole, contiguous view
  // of a realized buffer, or of one an earlier ASSIGN writes, can be assigned (can_assign()).
  LBPtr assign(const LBPtr& x) const;
  bool can_assign() const;
  LBPtr copy_to_device(const std::string& device) const;
  LBPtr contiguous() const;
  LBPtr reshape(const Shape& s) const;
  LBPtr permute(const std::vector<int>& order) const;
  LBPtr expand(const Shape& s) const;
  LBPtr pad(const std::vector<std::pair<int64_t, int64_t>>& arg) const;
  LBPtr shrink(const std::vector<std::pair<int64_t, int64_t>>& arg) const;
  LBPtr flip(const std::vector<bool>& axes) const;
  // This buffer's base seen through `st` (the base itself when st is the whole base, contiguous).
  LBPtr view(ShapeTracker st) const;
  // A data-dependent load (an INDEX op): out[..., j, ...] = this[..., idx[..., j, ...], ...] along `axis`.
  // idx is int32 or int64 and has the output's shape, which is this shape except along `axis`. Negative entries
  // count from the end; entries still out of range read 0. The work is proportional to the output.
  LBPtr gather(const LBPtr& idx, int axis) const;

  const Shape& shape() const { return st.shape(); }
  bool is_view() const { return base_ != nullptr; }
  LazyBuffer* base() { return base_ ? base_.get() : this; }
  const LazyBuffer* base() const { return base_ ? base_.get() : this; }
  LBPtr base_ptr() const { return base_ ? base_ : std::const_pointer_cast<LazyBuffer>(shared_from_this()); }
  bool realized() const { return !base_ && buffer && buffer->is_allocated() && srcs.empty(); }
  bool is_unrealized_const() const { return base()->op == Ops::CONST; }  // CONSTs are never realized
  // The same constant in every element: an unrealized CONST seen through views without padding.
  bool is_unpadded_const() const;
  // Called by the scheduler once this buffer's kernel has run: drop the graph behind it.
  void mark_realized() { srcs.clear(); }

  const std::string device;
  const DType dtype;
  const ShapeTracker st;
  // concrete only
  Ops op = Ops::SINK;
  Arg arg;
  std::vector<LBPtr> srcs;
  std::shared_ptr<Buffer> buffer;
  // A scheduling hint set by contiguous(), not a value change; atomic: set while building a graph, which
  // another thread may be scheduling.
  mutable std::atomic<bool> forced_realize{false};

  LazyBuffer(std::string device, ShapeTracker st, DType dtype, LBPtr base);
  ~LazyBuffer();  // iterative: a graph of any depth is dropped without deep recursion
 private:
  LBPtr base_;  // set for views
  LBPtr reduce_op(Ops op, const std::vector<int>& axes) const;  // one REDUCE_AXIS (r() may split in two)
};

}  // namespace tg
