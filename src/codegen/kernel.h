// Kernel: one ScheduleItem's AST as a loop nest over typed axes, and the optimizations applied to it.
//
// The Kernel holds one ShapeTracker per VIEW of the AST, all in the same kernel dims, and a type per
// dim. Dims stay in the order of their types: GLOBAL, LOCAL, BLOCK, GROUP_REDUCE, REDUCE, then the
// UNROLL and UPCAST dims in the order they were made. An Opt reshapes dims (shift_to splits one and moves the new
// part) and retypes them; apply_opt validates it first and throws tg::Error instead of producing wrong
// code. Lowering turns axis types into UOps: SPECIAL for the dims the device launches, RANGE loops for
// the other GLOBAL dims and (fresh for each REDUCE_AXIS) for the reduce dims, a RANGE around the
// output loops for a BLOCK dim (the kernel adds each block's partial sum to its output), an UNROLL for
// each UPCAST/UNROLL dim (a register tile: the expander makes one copy per index). One UPCAST/UNROLL
// dim may become vector lanes (vector_dim): vectorize lifts whatever depends on it into vector UOps.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "renderer/renderer.h"
#include "shape/shapetracker.h"
#include "uop/uop.h"

namespace tg {

// seed 001's optimizations. axis counts within a class of dims: UPCAST, LOCAL and PADTO among the
// GLOBAL/LOCAL dims, UNROLL among the REDUCE dims, GROUP/GROUPTOP among the REDUCE dims; amount 0
// means the whole dim. NOLOCALS forbids LOCAL afterwards. SWAP(axis, other) exchanges two GLOBAL dims
// (the first GLOBAL dim is the one the device splits over threads). BLOCK(axis, amount) is our own:
// it runs a REDUCE dim in cache blocks of `amount`, the block loop outside the output loops, the
// threads' slices included (a matmul then reuses one block of B from the cache for every row); each
// block adds its partial sum to the output, so it applies to a kernel that stores one sum directly.
// PADTO pads a dim to a multiple: every load reads 0 in the padding and the STORE skips it; along a
// reduce dim of a sum whose source does not map 0 to 0 (a reciprocal), the sum also skips it (a guard).
enum class OptOps : uint8_t { UPCAST, UNROLL, LOCAL, GROUP, GROUPTOP, PADTO, NOLOCALS, SWAP, BLOCK };
struct Opt {
  OptOps op;
  int axis = 0;
  int64_t amount = 0;
  bool operator==(const Opt&) const = default;
  std::string str() const;  // "UPCAST(1, 4)"
};
const char* optops_name(OptOps op);

// BLOCK: the outer (block) part of a reduce dim split by BLOCK; not a GPU thread block.
enum class AxisType : uint8_t { GLOBAL, LOCAL, BLOCK, GROUP_REDUCE, REDUCE, UNROLL, UPCAST };

class Kernel {
 public:
  Kernel(UOpPtr ast, const Renderer& ren);

  Shape full_shape() const;                 // the loop sizes, one per dim
  Shape output_shape() const;               // the output's sizes (1 on reduce dims)
  const std::vector<AxisType>& axis_types() const { return types_; }
  int shape_len() const { return static_cast<int>(types_.size()); }
  const std::vector<Opt>& applied_opts() const { return applied_; }
  const UOpPtr& ast() const { return ast_; }
  const Renderer& renderer() const { return *ren_; }
  std::string name() const;                 // "r_4", "E_4_4": kind, then the loop sizes before any opt
  std::string colored_shape() const;        // the dims coloured by type, as tinygrad's DEBUG=3 line

  void apply_opt(const Opt& opt);           // tg::Error when the opt is not valid for this kernel/device
  void hand_coded_optimizations();          // the default heuristics (heuristic.cpp)

  // The dims of one axis type, and the dim that becomes vector lanes (-1: none).
  std::vector<int> dims_of(AxisType t) const;
  // dim d's position among the dims of type t (an Opt's axis); their count when d is not of type t
  int axis_in(AxisType t, int d) const;
  int vector_dim() const;
  // The stride of dim `d` in buffer view `i` when it is affine (nullopt when not, or masked).
  std::optional<int64_t> stride(size_t i, int d) const;
  size_t output_view() const { return 0; }  // views_[0] is the STORE's
  size_t num_views() const { return views_.size(); }
  DType view_dtype(size_t i) const;          // the element type of the buffer behind view i (void: a CONST)
  bool is_load_view(size_t i) const { return loaded_.at(i); }  // a LOAD reads through view i (the output's too, in softmax)

  UOpPtr lower() const;                     // the lowerer pass: SINK of STOREs over RANGE/SPECIAL/UNROLL (lowerer.cpp)
  std::vector<UOpPtr> linearize() const;    // every pass of codegen/passes.h, then ordered for rendering
  DType index_dtype() const;                // int32, or int64 when some index can reach 2^31
  struct LoweringCtx;                       // the lowerer pass's context (lowerer.cpp)
  int64_t estimate_ops() const;             // ALU ops executed, for GFLOP/s and the thread-pool hint
  int64_t estimate_mem() const;             // bytes read and written

 private:
  UOpPtr ast_;
  const Renderer* ren_;  // a pointer, so that Kernels are values (BEAM keeps and copies them)
  std::vector<UOpPtr> views_;               // the AST's VIEW nodes; views_[0] belongs to the (first) STORE
  std::vector<DType> view_dtypes_;          // the element type of the buffer behind each view (void: a CONST)
  std::vector<bool> loaded_;                // a LOAD reads through the view
  std::vector<ShapeTracker> sts_;           // views_ in kernel dims
  // where a padded reduce dim is real, in kernel dims: set once PADTO pads a reduce dim of a sum that
  // the padding's zeros would change; each sum then adds only where it holds (lower_reduce_axis)
  std::optional<ShapeTracker> reduce_guard_;
  std::vector<AxisType> types_;
  std::vector<std::vector<int>> origin_;    // the AST axes each dim comes from (which reduces reduce it)
  std::vector<Opt> applied_;
  Shape base_shape_;                        // the loop sizes before any opt (for the name)
  bool dont_use_locals_ = false;

  std::vector<ShapeTracker*> trackers();  // sts_ and the reduce guard: what every reshape of the dims reshapes
  void shift_to(int dim, int64_t amount, AxisType type, bool top, int insert_before);
  void swap_dims(int a, int b);
  void cache_block(int row, int col, int red);  // heuristic steps (heuristic.cpp)
  bool channel_tile(int64_t lanes, bool lanes_along_output);
  bool dot_tile(int64_t lanes, int col, int red);
  bool window_tile(int64_t lanes, int red);
  void reuse_inside(size_t vector_load);
  bool masked_along(int d) const;  // a load's valid region (its padding) depends on dim d
  void pad_to(int dim, int64_t amount, bool guard = false);
  int insert_point(AxisType t) const;       // where a new dim of this type goes
};

}  // namespace tg
