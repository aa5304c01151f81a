// VIZ's trace: what each kernel of a run looked like through the passes that built it.
//
// One KernelTrace per kernel the run compiled: its name, the AST it was built from, every pass (named
// graph_rewrite) that ran while it was built, and the source it was rendered to. UOps are hash-consed,
// so a kernel's passes share most of their nodes: each distinct node is stored once per kernel, in a
// node table whose index is the node's id (a node's sources always have smaller ids), and a pass stores
// only its roots and the nodes its rules changed. A pass's graph is what its root reaches in the table.
// Plain values with no UOps inside, so a trace outlives the graphs it shows and travels as JSON
// (viz/trace_json.h).
#pragma once
#include <string>
#include <vector>

namespace tg::viz {

struct Node {
  std::string op, dtype, arg;  // op_name, DType::name (e.g. "float32"), arg_str ("" when none)
  std::vector<int> src;        // ids of the sources, in order
};

// One rule application: the node the rule matched, the node it returned, and the rule's name or the
// file:line it was written at.
struct Change {
  int from = -1, to = -1;
  std::string rule;
};

struct Pass {
  std::string name;
  int before = -1, after = -1;   // the root's id before and after the pass
  std::vector<Change> changes;   // in the order the rules were applied
};

struct KernelTrace {
  std::string name;              // the kernel's name, as DEBUG prints it ("r_4", "E_1024")
  std::vector<Node> nodes;       // the node table shared by the AST and all passes
  int ast = -1;                  // the AST's root id
  std::vector<Pass> passes;      // in the order they ran
  std::string src;               // the rendered source ("" when the kernel did not get that far)
  std::string error;             // why it did not finish ("" when it did)
};

struct Trace {
  std::vector<KernelTrace> kernels;  // in the order they were finished
};

}  // namespace tg::viz
