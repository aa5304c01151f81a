// group: the scheduler's fusion decisions, made in one pass over the whole lazy graph, before any AST is
// built (engine/schedule.h says what the rules are; this is where they live).
//
//   1. walk: the realize rules of seed 002 (outputs, loads, copies and their sources, a gather's data,
//      forced realizes, an expanded base that is not read back over its rows, chains cut every 500 ops).
//   2. one sweep from the outputs toward the inputs (every buffer after all its readers): each
//      unrealized buffer learns which kernels read it and through which views. A reduce fuses into the
//      one kernel that reads it when every view reads it elementwise or back over the rows it reduced,
//      and the kernel's other reduces reduce the same rows; otherwise it is realized, with why, and is
//      the root of a kernel of its own. A decision never changes once made: no kernel is revisited.
//   3. one sweep over the kernels, sources first: kernels over the same loop nest on one device join
//      in one multi-output kernel when a later one reads the earlier ones' outputs only at its own index
//      or back over its rows, nothing between them would make a cycle, the group stays small, it
//      does not get two contractions (matmuls, convs: each wants the registers for its own tile), and,
//      for big kernels, it loads a buffer a member loads too (independent streams are faster apart).
//
// The result is data: the buffers realized and why, and the kernels, each with its outputs and the
// reduces it computes (DEBUG=2 prints them, ScheduleItem::fusion). Building the ASTs follows it and
// decides nothing.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "lazy/lazybuffer.h"

namespace tg {

// The buffers a schedule realizes, each with why.
using Realizes = std::unordered_map<LazyBuffer*, std::string>;

struct Grouping {
  // A kernel: one or more realized buffers computed over one loop nest.
  struct Kernel {
    std::vector<LazyBuffer*> outputs;  // in the order their STOREs run: a later one may use an earlier one's value
    std::vector<std::vector<LazyBuffer*>> reduces;  // per output, the reduces fused into its computation
    Shape shape;                                    // the loop nest's output shape (a fused reduce's shape when one feeds the output elementwise)
  };
  Realizes realizes;                                      // every buffer the schedule realizes, and why
  std::vector<Kernel> kernels;                            // in the graph's order (sources before users)
  std::vector<LazyBuffer*> buffer_ops;                    // realized buffers with nothing to compute: a COPY, an EMPTY, an output of no elements
};

// The fusion decisions for realizing `outs` (already realized buffers are read, not computed).
Grouping group(const std::vector<LBPtr>& outs);

}  // namespace tg
