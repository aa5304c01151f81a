// Lowering ScheduleItems to ExecItems and running them through per-device CommandQueues (seeds 000, 004).
//
// lower_schedule turns each ScheduleItem into an ExecItem: a Runner, its Buffers (allocated) and its
// variable values. A kernel's Runner is a CompiledRunner: Kernel -> linearize -> render -> compile -> load,
// cached by (device, AST) in a bounded method cache, so a kernel is built once per process (and compiled
// once per machine, through the compiler's disk cache); the new kernels of a schedule compile in
// parallel. COPY becomes a BufferCopy, an assign's commit a BufferSwap. run_schedule() lowers, puts the
// ExecItems on per-device queues with SyncItem/WaitItem between devices and runs them round-robin, never
// ahead of a dependency, always in the same order. Realize, BEAM (which times Runners) and TinyJit (which
// captures the ExecItems a function runs and replays them) share this one path.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "engine/schedule.h"
#include "renderer/renderer.h"
#include "runtime/device.h"

namespace tg {

struct Runner {
  virtual ~Runner() = default;
  // Runs on bufs (outputs first) with the values of the kernel's variables; returns seconds when `wait`,
  // else 0.
  virtual double exec(const std::vector<Buffer*>& bufs, const std::vector<int64_t>& var_vals, bool wait) = 0;
  std::string display_name, device;
  int64_t op_estimate = 0, mem_estimate = 0;
  bool is_kernel = false;  // counted in GlobalCounters::kernel_count
  size_t n_outputs = 1;    // a kernel or a copy writes bufs[0, n_outputs) (a multi-output kernel: several)
};

struct CompiledRunner final : Runner {
  RenderedKernel kernel;
  std::unique_ptr<Program> program;
  double exec(const std::vector<Buffer*>& bufs, const std::vector<int64_t>& var_vals, bool wait) override;
};

// bufs {dest, src}: the same size and dtype, any devices.
struct BufferCopy final : Runner {
  double exec(const std::vector<Buffer*>& bufs, const std::vector<int64_t>& var_vals, bool wait) override;
};

// An assign's commit (engine/schedule.h): bufs {target, new values} trade memory, so the target's Buffer
// object holds the new values without a copy.
struct BufferSwap final : Runner {
  double exec(const std::vector<Buffer*>& bufs, const std::vector<int64_t>& var_vals, bool wait) override;
};

// What a ScheduleItem becomes: a runner, its buffers (outputs first) and its variable values.
struct ExecItem {
  std::shared_ptr<Runner> prg;
  std::vector<std::shared_ptr<Buffer>> bufs;
  std::vector<int64_t> var_vals;
  // Runs it (DEBUG>=2 prints a line, timed); counts it in GlobalCounters; hands it to the capture sink.
  double run(bool wait = false) const;
};

// The compiled runner for a kernel AST on `device` (from the method cache when seen before). The
// kernel's name and source depend on the AST only, so the compiler's disk cache hits across processes.
// Opts: none with NOOPT=1; with BEAM=N and the kernel's buffers given, the BEAM search's (engine/search.h);
// else the default heuristics.
std::shared_ptr<CompiledRunner> get_runner(const std::string& device, const UOpPtr& ast, const std::vector<Buffer*>* bufs = nullptr,
                                           size_t n_outputs = 1);
// A runner for a Kernel as it is (its opts already applied), not cached: for BEAM candidates and tests.
class Kernel;
std::shared_ptr<CompiledRunner> compile_kernel(const Kernel& k, const std::string& device);
// The method cache keeps the most recently used runners, at most the capacity (default 1024); the
// least recently used is evicted and its program unloaded. set_ returns the previous capacity.
size_t method_cache_size();
size_t set_method_cache_capacity(size_t n);

// ScheduleItems -> ExecItems, allocating their buffers; the kernels not yet in the method cache are
// built in parallel (one compiler process per core).
std::vector<ExecItem> lower_schedule(const std::vector<ScheduleItem>& schedule);

// What run_schedule puts on the queues.
struct SyncItem { std::string device; int waiters = 0; };
struct WaitItem { std::shared_ptr<SyncItem> sync; };
using QueueItem = std::variant<ExecItem, std::shared_ptr<SyncItem>, WaitItem>;

class CommandQueue {
 public:
  explicit CommandQueue(std::vector<ExecItem> items);
  // The queue of each device, in the order the items were added (for tests and GRAPH).
  const std::vector<std::pair<std::string, std::vector<QueueItem>>>& queues() const { return q_; }
  // Runs everything. `trace`, when given, receives "DEVICE: KIND" per executed item, in order.
  void operator()(std::vector<std::string>* trace = nullptr);
 private:
  std::vector<QueueItem>& queue(const std::string& device);
  std::vector<std::pair<std::string, std::vector<QueueItem>>> q_;
};

// Lowers and runs a schedule, then marks its outputs realized (and settles its assigns' LazyBuffers).
void run_schedule(std::vector<ScheduleItem> schedule);

// The engine's entry point (Tensor::realize and corealize call it): schedules and runs everything
// `outs` need. Safe to call from several threads: one process-wide lock, realize_lock(), covers
// schedule and run, because scheduling reads and rewrites the lazy graph (realized buffers drop their
// sources) that graphs built in other threads may share. Building graphs needs no lock. The lock is
// recursive, so code running under it may realize again.
void realize_lazy(const std::vector<LBPtr>& outs);
std::recursive_mutex& realize_lock();

// TinyJit's capture (engine/jit.h): while a CaptureScope lives on this thread, every ExecItem that runs
// on it is also appended to the sink. Scopes do not nest.
class CaptureScope {
 public:
  explicit CaptureScope(std::vector<ExecItem>* sink);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;
};
bool capturing();  // a CaptureScope is open on this thread

}  // namespace tg
