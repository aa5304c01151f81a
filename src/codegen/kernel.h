// Kernel: one ScheduleItem's AST as a loop nest, and the optimizations applied to it.
//
// Every VIEW in the AST has the same number of dims. The Kernel puts the reduce dims last, merges
// adjacent dims that are contiguous in every buffer, then lowers the AST to UOps: one index per dim
// (SPECIAL for the dims the device launches, RANGE loops for the rest), LOAD/STORE through
// ShapeTracker index expressions, REDUCE over its ranges; the symbolic rules simplify the result and
// linearize() orders it into a list the renderer prints line by line.
#pragma once
#include <string>
#include <vector>

#include "renderer/renderer.h"
#include "shape/shapetracker.h"
#include "uop/uop.h"

namespace tg {

class Kernel {
 public:
  Kernel(UOpPtr ast, const Renderer& ren);

  const Shape& full_shape() const { return full_shape_; }
  const Shape& output_shape() const { return output_shape_; }
  int first_reduce() const { return first_reduce_; }
  std::string name() const;  // "r_4", "E_4_4": kind, then the loop sizes

  UOpPtr lower() const;                     // the kernel as a UOp graph (SINK of STOREs)
  std::vector<UOpPtr> linearize() const;    // lowered, simplified, ordered for rendering
  int64_t estimate_ops() const;             // ALU ops executed, for GFLOP/s and the thread-pool hint
  int64_t estimate_mem() const;             // bytes read and written

 private:
  UOpPtr ast_;
  const Renderer& ren_;
  Shape full_shape_, output_shape_;
  int first_reduce_ = 0;
  std::vector<int> perm_;          // AST dim order -> kernel dim order
  std::vector<std::vector<int64_t>> merged_;  // kernel dims as groups of AST dims (after perm_)
  ShapeTracker reshape_st(const ShapeTracker& st) const;  // an AST view in kernel dims
  DType index_dtype() const;  // int32, or int64 when some index can reach 2^31
};

// Orders a lowered kernel graph for rendering: loops opened outside-in, accumulators before their
// loops, reduce results after them.
std::vector<UOpPtr> linearize(const UOpPtr& sink);

}  // namespace tg
