// KernelRecorder: builds one kernel's trace from the named graph_rewrites it sees.
//
// Installed as the thread's RewriteTracer (uop/rewrite.h) while a kernel is built, it adds each pass
// (name, roots before and after, every rule application) to a KernelTrace, storing each distinct UOp
// once in the kernel's node table. It keeps the UOps it has stored alive while it lives, so a node's
// address never stands for two nodes. Not thread-safe: one recorder per kernel, on the kernel's thread.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "uop/rewrite.h"
#include "viz/trace.h"

namespace tg::viz {

class KernelRecorder final : public RewriteTracer {
 public:
  KernelRecorder(std::string name, const UOpPtr& ast);
  void on_rewrite(const std::string& pass, const UOpPtr& before, const UOpPtr& after, const std::vector<RewriteStep>& steps) override;
  int intern(const UOpPtr& u);  // the node's id, storing it (and its sources) first when new
  KernelTrace& trace() { return k_; }
 private:
  KernelTrace k_;
  std::unordered_map<const UOp*, int> ids_;
  std::vector<UOpPtr> keep_;
};

}  // namespace tg::viz
