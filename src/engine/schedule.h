// create_schedule: decides which LazyBuffers are realized and cuts the graph into ScheduleItems. The
// decisions are made in one pass over the whole graph (engine/grouping.h: group()), then each kernel's
// AST is built as decided.
//
// The realize rules are seed 002's: the outputs; COPY sources; loads (EMPTY, COPY, CONTIGUOUS); the
// base of a view that expands it (unless it is a simple pad, or reads a reduce back: below); forced
// realizes. Beyond those, a reduce is realized when it cannot fuse into its consumer's kernel (the
// kernel already reduces other rows, or it is seen through a view that neither reads it elementwise
// nor reads it back) or when several kernels would compute it, and a chain of fused ops is cut every
// few hundred ops so that no kernel is too big to compile. A reduce is decided once, when every kernel
// that reads it is known (a kernel's reduce met first from the outputs sets the rows it reduces). Every
// other op fuses into the kernel of the realized buffer that uses it: elementwise ops before, into and
// after reduces. Kernels over one loop nest then join in multi-output kernels (grouping.h, step 3).
// Reduce-then-broadcast fusion: a reduce (or elementwise ops over reduces: a mean, rsqrt(var + eps))
// expanded back over the rows it reduced stays in its readers' kernel when every reduce of the kernel
// reduces the same rows: var, softmax, layernorm are one kernel that loops over a row once per reduce,
// then once to store. Not when the row is longer than 32768 elements (it would no longer be read
// from the cache; its reduce is split in two stages instead), nor with FUSE=0 (tinygrad's kernels).
// A gather (INDEX) realizes its data's base, which it reads by a loaded address; the gather itself
// fuses like an elementwise op: LOAD(DEFINE_GLOBAL, VIEW, offset, valid) in the AST.
// Padding pushed down through an op with f(0) != 0 (exp, log, reciprocal, division, negation) is
// made explicit in the AST: WHERE(valid, op(...), 0), so the padded area holds 0, as a pad means.
// A buffer with no elements gets an EMPTY item (allocated, nothing computed).
// An ASSIGN (an in-place update, lazy/lazybuffer.h) is a kernel into a buffer of its own, then, at the end
// of the schedule, a commit item: ast ASSIGN, bufs {target's Buffer, the new values' Buffer}, outputs
// {the ASSIGN, the target}. The two Buffers trade memory, so the target's Buffer object (what tensors,
// optimizers and TinyJit plans hold) has the new values; the old values stay with the target LazyBuffer
// if anything still reads it.
// A graph of the same structure as one scheduled before takes that schedule from the schedule cache
// (engine/schedule_cache.h), over its own LazyBuffers and Buffers.
// DEBUG=1 prints each schedule's kernel count and time (", from the cache" on a hit); DEBUG=2 each
// kernel's fusion decisions (ScheduleItem::fusion).
// Everything here is iterative: graphs may be millions of ops deep.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "lazy/lazybuffer.h"
#include "uop/uop.h"

namespace tg {

struct ScheduleItem {
  // A kernel: SINK(STORE(DEFINE_GLOBAL 0, VIEW, value)) over LOAD/CONST/ALU/REDUCE_AXIS. Or a
  // single COPY / EMPTY / ASSIGN (an assign's commit) node for buffer operations.
  UOpPtr ast;
  std::vector<std::shared_ptr<Buffer>> bufs;  // outputs first, then inputs in DEFINE_GLOBAL order
  size_t n_outputs = 1;
  std::vector<LBPtr> outputs;                 // the LazyBuffers this item realizes
  std::string fusion;                         // a kernel's fusion decisions, for DEBUG=2: its reduces, ops, and why it is a kernel
  bool is_kernel() const { return ast->op == Ops::SINK; }
};

// Schedule everything needed to realize `outs`, dependencies first. Already realized buffers are skipped.
std::vector<ScheduleItem> create_schedule(const std::vector<LBPtr>& outs);

}  // namespace tg
