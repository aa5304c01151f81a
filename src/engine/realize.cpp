#include "engine/realize.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <future>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "codegen/kernel.h"
#include "engine/search.h"
#include "tg/error.h"
#include "tg/helpers.h"
#include "viz/session.h"

namespace tg {

// ---- runners --------------------------------------------------------------------------------------

static void print_stats(const Runner& r, double et, int64_t count_before, size_t nargs) {
  if (DEBUG < 2) return;
  double t = et > 0 ? et : 1e-9;
  std::printf("*** %-7s %4lld %-34s arg %2zu mem %6.2f GB tm %9.2fus/%9.2fms (%9.2f GFLOPS %6.1f GB/s)\n",
              r.device.c_str(), static_cast<long long>(count_before), r.display_name.c_str(), nargs,
              static_cast<double>(GlobalCounters::mem_used) / 1e9, et * 1e6, GlobalCounters::time_sum_s * 1e3,
              static_cast<double>(r.op_estimate) / t / 1e9, static_cast<double>(r.mem_estimate) / t / 1e9);
}

double CompiledRunner::exec(const std::vector<Buffer*>& bufs, const std::vector<int64_t>& var_vals, bool wait) {
  std::vector<void*> ptrs;
  ptrs.reserve(bufs.size());
  for (Buffer* b : bufs) ptrs.push_back(b->ptr());
  return (*program)(ptrs, var_vals, kernel.global_size, kernel.local_size, wait);
}

double BufferCopy::exec(const std::vector<Buffer*>& bufs, const std::vector<int64_t>&, bool wait) {
  Buffer& dest = *bufs[0];
  Buffer& src = *bufs[1];
  TG_ASSERT(dest.size == src.size && dest.dtype == src.dtype, "buffer copy mismatch");
  double st = now_s();
  Compiled& sd = Device::get(src.device);
  if (void* host = sd.allocator().host_ptr(src.ptr())) dest.copyin(host);
  else {
    std::vector<uint8_t> tmp(src.nbytes());
    src.copyout(tmp.data());
    dest.copyin(tmp.data());
  }
  if (!wait) return 0;
  Device::get(dest.device).synchronize();
  return now_s() - st;
}

double BufferSwap::exec(const std::vector<Buffer*>& bufs, const std::vector<int64_t>&, bool) {
  bufs[0]->swap_memory(*bufs[1]);
  return 0;
}

namespace {
thread_local std::vector<ExecItem>* g_capture = nullptr;
}  // namespace

CaptureScope::CaptureScope(std::vector<ExecItem>* sink) {
  TG_ASSERT(!g_capture, "CaptureScope: scopes do not nest");
  g_capture = sink;
}
CaptureScope::~CaptureScope() { g_capture = nullptr; }
bool capturing() { return g_capture != nullptr; }

double ExecItem::run(bool wait) const {
  std::vector<Buffer*> raw;
  raw.reserve(bufs.size());
  for (const auto& b : bufs) raw.push_back(&b->allocate());
  int64_t count = GlobalCounters::kernel_count;
  double et = prg->exec(raw, var_vals, wait || DEBUG >= 2);
  if (prg->is_kernel) {
    GlobalCounters::kernel_count++;
    GlobalCounters::global_ops += prg->op_estimate;
    GlobalCounters::global_mem += prg->mem_estimate;
    GlobalCounters::time_sum_s += et;
  }
  print_stats(*prg, et, count, raw.size());
  if (g_capture) g_capture->push_back(*this);
  return et;
}

namespace {
// Compiled runners by (device, AST, NOOPT, BEAM), least recently used first out. An evicted runner's program is
// unloaded once no schedule holds the runner any more.
struct MethodCache {
  using Key = std::tuple<std::string, const UOp*, int, int>;
  struct Entry { Key key; UOpPtr ast; std::shared_ptr<CompiledRunner> runner; };  // ast keeps the key's node alive
  std::mutex mu;
  size_t capacity = 1024;
  std::list<Entry> lru;  // most recently used first
  std::map<Key, std::list<Entry>::iterator> index;
  void evict() {
    while (lru.size() > capacity) {
      index.erase(lru.back().key);
      lru.pop_back();
    }
  }
};
MethodCache& method_cache() {
  static MethodCache* c = new MethodCache();  // outlives static destruction: runners hold device programs
  return *c;
}

template <class F> auto timed_stage(const char* stage, const std::string& name, F&& f, int level = 3) {
  double st = now_s();
  auto r = f();
  if (DEBUG >= level) std::printf("  %-10s %-24s %8.2f ms\n", stage, name.c_str(), (now_s() - st) * 1e3);
  return r;
}
}  // namespace

size_t method_cache_size() {
  MethodCache& mc = method_cache();
  std::lock_guard<std::mutex> lock(mc.mu);
  return mc.lru.size();
}

size_t set_method_cache_capacity(size_t n) {
  TG_CHECK(n >= 1, "set_method_cache_capacity: the method cache needs room for at least one kernel");
  MethodCache& mc = method_cache();
  std::lock_guard<std::mutex> lock(mc.mu);
  size_t old = mc.capacity;
  mc.capacity = n;
  mc.evict();
  return old;
}

std::shared_ptr<CompiledRunner> compile_kernel(const Kernel& k, const std::string& device) {
  Compiled& dev = Device::get(device);
  if (DEBUG >= 3) {
    std::string opts;
    for (const Opt& o : k.applied_opts()) opts += (opts.empty() ? "" : ", ") + o.str();
    std::printf("%s: %s  [%s]\n", k.name().c_str(), k.colored_shape().c_str(), opts.c_str());
  }
  // The name comes from the AST alone (not from which kernels came first), so the same AST renders
  // the same source in every process and the compiler's disk cache hits.
  std::string name = k.name();
  std::atomic_ref<int64_t>(GlobalCounters::compiles).fetch_add(1);  // BEAM builds candidates from several threads
  auto uops = timed_stage("linearize", name, [&] { return k.linearize(); });
  if (DEBUG >= 5)
    for (size_t i = 0; i < uops.size(); i++) std::printf("%4zu %-14s %-10s %s\n", i, op_name(uops[i]->op), uops[i]->dtype.name().c_str(), arg_str(uops[i]->arg).c_str());
  auto runner = std::make_shared<CompiledRunner>();
  runner->kernel = timed_stage("render", name, [&] { return k.renderer().render(name, uops); });
  if (DEBUG >= 4) std::printf("%s\n", runner->kernel.src.c_str());
  // DEBUG=2 shows every kernel's compile time (a disk-cache hit is a read)
  std::string lib = timed_stage("compile", name, [&] { return dev.compiler().compile_cached(runner->kernel.src); }, 2);
  runner->program = dev.program(name, lib);
  runner->display_name = name;
  runner->device = device;
  runner->is_kernel = true;
  runner->n_outputs = k.ast()->src.size();
  runner->op_estimate = k.estimate_ops();
  runner->mem_estimate = k.estimate_mem();
  runner->program->set_work_hint(runner->op_estimate);
  return runner;
}

std::shared_ptr<CompiledRunner> get_runner(const std::string& device, const UOpPtr& ast, const std::vector<Buffer*>* bufs, size_t n_outputs) {
  MethodCache& mc = method_cache();
  MethodCache::Key key{device, ast.get(), NOOPT.value, BEAM.value};
  {
    std::lock_guard<std::mutex> lock(mc.mu);
    if (auto it = mc.index.find(key); it != mc.index.end()) {
      mc.lru.splice(mc.lru.begin(), mc.lru, it->second);
      return it->second->runner;
    }
  }
  const Renderer& ren = Device::get(device).renderer();
  if (DEBUG >= 5) std::printf("%s\n", ast->str().c_str());
  Kernel k(ast, ren);
  if (BEAM >= 1 && bufs) {
    for (const Opt& o : timed_stage("search", k.name(), [&] { return beam_search(k, device, *bufs, n_outputs, BEAM); })) k.apply_opt(o);
  } else if (!NOOPT) {
    timed_stage("optimize", k.name(), [&] { k.hand_coded_optimizations(); return 0; });
  }
  // VIZ=1 records the passes that build the kernel the run uses (BEAM's candidates, built above, are not)
  viz::KernelScope viz_scope(k.name(), ast);
  auto runner = compile_kernel(k, device);
  viz_scope.set_source(runner->kernel.src);
  std::lock_guard<std::mutex> lock(mc.mu);
  if (auto it = mc.index.find(key); it != mc.index.end()) return it->second->runner;  // built meanwhile by another caller
  mc.lru.push_front({key, ast, runner});
  mc.index.emplace(key, mc.lru.begin());
  mc.evict();
  return runner;
}

// ---- lowering ---------------------------------------------------------------------------------------

namespace {
std::shared_ptr<Runner> buffer_runner(Runner* r, const std::string& name, const ScheduleItem& si) {
  std::shared_ptr<Runner> p(r);
  p->device = si.bufs[0]->device;
  size_t nb = si.bufs[0]->nbytes();
  p->display_name = name + " " + std::to_string(nb) + ", " + si.bufs[0]->device + " <- " + si.bufs[1]->device;
  p->mem_estimate = static_cast<int64_t>(nb);
  return p;
}

// The kernels of a schedule whose runners are not built yet are built in parallel first (a compiler
// process per core); under BEAM they are built in order, as each search times kernels on the device.
void prebuild(const std::vector<ScheduleItem>& schedule, std::vector<std::vector<Buffer*>>& bufs) {
  if (BEAM >= 1) return;
  std::vector<size_t> todo;
  for (size_t i = 0; i < schedule.size(); i++)
    if (schedule[i].is_kernel()) todo.push_back(i);
  static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());  // a file read: once
  size_t workers = std::min<size_t>(todo.size(), cores);
  if (workers < 2) return;
  std::atomic<size_t> next{0};
  std::vector<std::future<void>> done;
  for (size_t w = 0; w < workers; w++)
    done.push_back(std::async(std::launch::async, [&] {
      for (size_t j; (j = next.fetch_add(1)) < todo.size();) {
        const ScheduleItem& si = schedule[todo[j]];
        get_runner(si.outputs[0]->device, si.ast, &bufs[todo[j]], si.n_outputs);
      }
    }));
  for (auto& f : done) f.get();  // rethrows a compile error
}
}  // namespace

std::vector<ExecItem> lower_schedule(const std::vector<ScheduleItem>& schedule) {
  std::vector<std::vector<Buffer*>> bufs;
  for (const ScheduleItem& si : schedule) {
    bufs.emplace_back();
    for (auto& b : si.bufs) bufs.back().push_back(&b->allocate());
  }
  prebuild(schedule, bufs);
  std::vector<ExecItem> items;
  GlobalCounters::lowered += static_cast<int64_t>(schedule.size());
  for (size_t i = 0; i < schedule.size(); i++) {
    const ScheduleItem& si = schedule[i];
    if (si.ast->op == Ops::EMPTY) continue;  // allocated above: nothing to run
    ExecItem ei;
    ei.bufs = si.bufs;
    if (si.is_kernel()) ei.prg = get_runner(si.outputs[0]->device, si.ast, &bufs[i], si.n_outputs);
    else if (si.ast->op == Ops::COPY) ei.prg = buffer_runner(new BufferCopy(), "copy", si);
    else if (si.ast->op == Ops::ASSIGN) ei.prg = buffer_runner(new BufferSwap(), "assign", si);
    else TG_ASSERT(false, "lower_schedule: cannot lower ", op_name(si.ast->op));
    items.push_back(std::move(ei));
  }
  return items;
}

// ---- the command queue ----------------------------------------------------------------------------

std::vector<QueueItem>& CommandQueue::queue(const std::string& device) {
  for (auto& [d, q] : q_)
    if (d == device) return q;
  return q_.emplace_back(device, std::vector<QueueItem>{}).second;
}

CommandQueue::CommandQueue(std::vector<ExecItem> items) {
  auto add_sync_item = [&](const std::string& device) {
    auto& q = queue(device);
    if (!q.empty())
      if (auto* s = std::get_if<std::shared_ptr<SyncItem>>(&q.back())) return *s;
    auto s = std::make_shared<SyncItem>(SyncItem{device, 0});
    q.emplace_back(s);
    return s;
  };
  auto add_wait_item = [&](const std::string& device, const std::shared_ptr<SyncItem>& sync) {
    auto& q = queue(device);
    // a wait right after another wait on the same device is replaced by the newer one
    if (!q.empty())
      if (auto* w = std::get_if<WaitItem>(&q.back()); w && w->sync->device == sync->device) {
        auto old = w->sync;
        q.pop_back();
        if (--old->waiters == 0) {
          auto& sq = queue(old->device);
          sq.erase(std::find_if(sq.begin(), sq.end(), [&](const QueueItem& it) {
            auto* s = std::get_if<std::shared_ptr<SyncItem>>(&it);
            return s && *s == old;
          }));
        }
      }
    for (auto& it : q)
      if (auto* w = std::get_if<WaitItem>(&it); w && w->sync == sync) return;
    sync->waiters++;
    q.emplace_back(WaitItem{sync});
  };
  for (auto& ei : items) {
    std::string device = ei.bufs[0]->device;
    if (dynamic_cast<BufferCopy*>(ei.prg.get())) add_wait_item(device, add_sync_item(ei.bufs[1]->device));
    queue(device).emplace_back(std::move(ei));
  }
}

void CommandQueue::operator()(std::vector<std::string>* trace) {
  auto log = [&](const std::string& d, const char* kind) { if (trace) trace->push_back(d + ": " + kind); };
  // Round robin over the devices' queues, one item a turn, each queue read through a cursor (nothing is
  // copied: one device's eager realize is its items in order). A SYNC runs only when no other queue can
  // make progress first; a WAIT whose SYNC has not run parks its queue until it has.
  // Each queue's cursor (next), and the queues due a turn (indices into q_, first in first out): a ring,
  // as each queue is in it at most once (a turn takes it out and puts it back at most once; a parked
  // queue is out until its SYNC runs). Both on the stack for the usual few devices.
  const size_t n = q_.size();
  std::array<size_t, 16> few{};
  std::vector<size_t> many(n > few.size() / 2 ? 2 * n : 0);
  size_t* next = many.empty() ? few.data() : many.data();
  size_t* active = next + n;
  size_t head = 0, due = n;
  for (size_t i = 0; i < n; i++) active[i] = i;
  auto front = [&](size_t i) { return next[i] < q_[i].second.size() ? &q_[i].second[next[i]] : nullptr; };
  auto is_sync = [](const QueueItem* it) { return std::holds_alternative<std::shared_ptr<SyncItem>>(*it); };
  auto push = [&](size_t i) {
    TG_ASSERT(due < n, "command queue: queue ", i, " due twice");
    active[(head + due++) % n] = i;
  };
  auto others_only_sync = [&]() {  // every other due queue is drained or at a SYNC
    for (size_t k = 0; k < due; k++)
      if (const QueueItem* f = front(active[(head + k) % n]); f && !is_sync(f)) return false;
    return true;
  };
  std::map<const SyncItem*, std::vector<size_t>> waiting;
  std::unordered_set<const SyncItem*> seen;
  while (due > 0) {
    size_t i = active[head];
    head = (head + 1) % n;
    due--;
    const QueueItem* it = front(i);
    if (!it) continue;
    const std::string& device = q_[i].first;
    if (is_sync(it)) {
      if (others_only_sync()) {
        const SyncItem* s = std::get<std::shared_ptr<SyncItem>>(*it).get();
        next[i]++;
        Device::get(device).synchronize();
        log(device, "SYNC");
        if (auto w = waiting.find(s); w != waiting.end()) {
          for (size_t j : w->second) push(j);
          w->second.clear();
        }
        seen.insert(s);
      }
    } else if (auto* w = std::get_if<WaitItem>(it)) {
      next[i]++;
      log(device, "WAIT");
      if (!seen.count(w->sync.get())) {
        waiting[w->sync.get()].push_back(i);
        continue;
      }
    } else {
      next[i]++;
      const ExecItem& ei = std::get<ExecItem>(*it);
      ei.run();
      log(device, ei.prg->is_kernel ? "KERNEL" : dynamic_cast<BufferCopy*>(ei.prg.get()) ? "COPY" : "ASSIGN");
    }
    push(i);
  }
  for (size_t i = 0; i < q_.size(); i++) TG_ASSERT(!front(i), "command queue for ", q_[i].first, " did not drain");
}

namespace {
// After a schedule ran: its outputs are realized (they drop their sources), and each assign's commit
// settles the LazyBuffers: the ASSIGN now names the target's Buffer (which holds the new values), and the
// target keeps the old values (the memory the commit traded away) if anything still holds it.
void finish(const ScheduleItem& si) {
  if (si.ast->op != Ops::ASSIGN) {
    for (auto& o : si.outputs) o->mark_realized();
    return;
  }
  const LBPtr &a = si.outputs[0], &target = si.outputs[1];
  a->buffer = si.bufs[0];
  if (target.use_count() > 1) target->buffer = si.bufs[1];  // something still reads the old values
}
}  // namespace

void run_schedule(std::vector<ScheduleItem> schedule) {
  CommandQueue queue(lower_schedule(schedule));
  queue();
  for (const ScheduleItem& si : schedule) finish(si);
}

std::recursive_mutex& realize_lock() {
  static std::recursive_mutex* mu = new std::recursive_mutex();  // usable until the very end of the process
  return *mu;
}

void realize_lazy(const std::vector<LBPtr>& outs) {
  std::lock_guard<std::recursive_mutex> lock(realize_lock());
  // all realized already (a parameter, x.realize() again): their schedule is empty, no need to make it
  if (std::all_of(outs.begin(), outs.end(), [](const LBPtr& o) { return o->base()->realized(); })) return;
  run_schedule(create_schedule(outs));
}

}  // namespace tg
