// The process's VIZ recording: KernelScope, which the engine opens around building each kernel, and
// the kernels recorded so far (the public side is tg/viz.h).
//
// With VIZ=0 a KernelScope holds nothing and costs one check of an int; graph_rewrite then sees no
// tracer (one pointer check). With VIZ>=1 it installs a KernelRecorder on its thread for its lifetime,
// and when it ends (also through an exception, which the kernel's `error` notes) it adds the kernel to
// the process's trace and appends it to the trace file. Scopes on several threads (kernels compiled in
// parallel) record independently; kernels are added in the order they end.
#pragma once
#include <memory>
#include <string>

#include "uop/uop.h"
#include "viz/trace.h"

namespace tg::viz {

class KernelScope {
 public:
  KernelScope(std::string name, const UOpPtr& ast);
  ~KernelScope();
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;
  void set_source(const std::string& src);  // the rendered kernel
  bool recording() const { return active_ != nullptr; }
 private:
  struct Active;
  std::unique_ptr<Active> active_;
};

Trace snapshot();        // a copy of the kernels recorded so far
std::string trace_path();  // the file they are appended to ("" before the first kernel)
// Forgets the kernels and deletes the trace file, as if nothing had been recorded (tests; a run that
// records nothing more then neither serves nor writes anything at exit).
void reset();

}  // namespace tg::viz
