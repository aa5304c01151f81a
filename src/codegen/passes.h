// The codegen middle: the passes that take a Kernel's AST to the linear UOps a renderer prints. Each is
// a graph_rewrite over UOps with named rules (the linearizer, by nature a walk, is a function), listed
// in order by passes.cpp:
//   lowerer        the AST over loop indices: RANGE, SPECIAL, UNROLL for the UPCAST/UNROLL dims     lowerer.cpp
//   expander       one copy per index of each UNROLL that is not the vector dim (register tiles)     expander.cpp
//   vectorize      the vector dim's lanes as vector UOps; what the device can't run on vectors,
//                  lane by lane; index math lane by lane, folded per lane; scalar stores at
//                  consecutive addresses (lanes of several tiles) as one vector store, and gathers'
//                  lanes at consecutive addresses as vector loads (a transpose's rows)              vectorizer.cpp
//   reduce_to_acc  each REDUCE an accumulator (DEFINE_ACC) that its loops update (MULACC: fma)       reduce_to_acc.cpp
//   linearize      the graph as a list, in loop order (a walk)                                      linearize.cpp
// Between passes, when SPEC is on (the default in test builds), spec.cpp checks the graph against the
// stage it must be in, and names the pass that broke it.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "uop/rewrite.h"

namespace tg {

class Kernel;
struct Renderer;

UOpPtr expand(const UOpPtr& sink);
UOpPtr vectorize(const UOpPtr& sink, const Renderer& ren);
UOpPtr reduce_to_acc(const UOpPtr& sink, const Renderer& ren);
std::vector<UOpPtr> linearize(const UOpPtr& sink);

// What a graph may contain after each pass (spec.cpp checks it).
enum class Stage : uint8_t { Ast, Lowered, Expanded, Vectorized, Accumulated };
const char* stage_name(Stage s);

// One pass of the list: its name, the stage its result is in, and the pass itself.
struct Pass {
  const char* name;
  Stage after;
  std::function<UOpPtr(const UOpPtr&, const Kernel&)> run;
};
const std::vector<Pass>& codegen_passes();
// Runs `passes` from the kernel's AST (checking each result when SPEC is on), then linearizes.
std::vector<UOpPtr> run_passes(const Kernel& k, const std::vector<Pass>& passes);

// Rules that several passes share: a SINK of SINKs is one SINK (a pass may replace a STORE by several,
// or by none); and gates that are constant: a LOAD that never reads is 0, a STORE that never writes is
// gone, a gate that is always true is dropped.
const PatternMatcher& pm_flatten_sink();
const PatternMatcher& pm_const_gates();
// vals (at least one) combined with the associative `op` in pairs, v[i] op v[i + half], halving until one
// is left: a chain log2(n) deep instead of n (the horizontal end of a vector reduce, a reduce's unrolled
// values), and halves of a vector that a vectorizing compiler pairs as whole-vector ops. `half` is half
// of n rounded up to a power of two (v[i] without a partner passes on): the order of n values padded
// with the op's identity to a vector of that power of two, so a sum gives the same bits whether one
// kernel unrolls its n values and another reduces them as a padded vector's lanes (fuzz seed 222912:
// x - x.min() gave 4.8e-7 for 0, x's sum of 5 recomputed in the two kernels in two orders).
UOpPtr fold_pairwise(Ops op, std::vector<UOpPtr> vals);

}  // namespace tg
