// TinyJit (tg/jit.h): warm-up, capture, replay.
//
// The capture runs the function under a CaptureScope (engine/realize.h) and keeps every ExecItem it ran.
// Then each buffer of the plan is classified by who holds it once the call is over:
// - an input's buffer: swapped for the new input's on each replay;
// - a returned tensor's buffer that nothing else holds: a fresh one on each replay (outputs never alias);
// - a buffer something outside holds (a parameter, a dataset, a gradient): kept, written in place;
// - everything else is the plan's own: written before it is read, it shares memory with the others
//   whose lifetimes (first to last item that uses them) do not overlap. What the plan reads before
//   writing it (a constant uploaded during the capture) is kept as it is.
#include "tg/jit.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "engine/realize.h"
#include "runtime/device.h"
#include "lazy/lazybuffer.h"
#include "tensor/capture.h"
#include "tg/helpers.h"

namespace tg {

namespace {

struct CaptureState {
  const std::string* name;
  std::vector<std::function<void()>>* refresh;
};
thread_local CaptureState* g_capture = nullptr;

// A position in the plan: item i's buffer p.
struct Slot {
  size_t item, pos;
};

// What an input must look like on every call.
struct Signature {
  ShapeTracker st;  // the view over its buffer
  DType dtype;
  std::string device;
  size_t buffer_size;
};

Signature signature_of(const Tensor& t) {
  const LBPtr& lb = t.lazydata();
  return {lb->st, lb->dtype, lb->device, lb->base()->buffer->size};
}

// How s differs from the capture's c, in words.
std::string describe(const Signature& s, const Signature& c) {
  std::string v = s.st.shape() == c.st.shape() && !(s.st == c.st) ? " seen through " + s.st.str() : "";
  std::string b = s.buffer_size != c.buffer_size ? detail::cat(" (a view of ", s.buffer_size, " elements)") : "";
  return detail::cat("shape ", s.st.shape(), " ", s.dtype.name(), " on ", s.device, v, b);
}

}  // namespace

namespace detail {
void refuse_host_read_in_capture(const char* op) {
  if (!g_capture) return;
  TG_ERROR_AS(JitError, *g_capture->name, ": ", op, " during the TinyJit capture would bake this call's value into every replay; "
              "return the tensor from the function and read it outside");
}
void on_replay(std::function<void()> refresh) {
  if (g_capture) g_capture->refresh->push_back(std::move(refresh));
}
}  // namespace detail

struct TinyJit::State {
  Function fn;
  std::string name;
  int cnt = 0;
  // the plan
  std::vector<ExecItem> items;
  std::vector<Signature> inputs;
  std::vector<std::vector<Slot>> input_slots;
  struct Output {
    enum Kind { Fresh, Input, Kept } kind;
    ShapeTracker st;  // the view over its base, of shape base_shape
    DType dtype;
    std::string device;
    size_t buffer_size = 0;
    Shape base_shape;
    std::vector<Slot> slots;  // Fresh: where its buffer sits in the plan
    int input = -1;           // Input: which one
    LBPtr kept;               // Kept: the tensor's buffer, as returned
  };
  std::vector<Output> outputs;
  std::vector<std::function<void()>> refresh;
  // The plan in runs: consecutive kernels of a device with a graph executor are one Graph call.
  struct Run {
    size_t first, end;
    std::unique_ptr<Graph> graph;
    int64_t ops = 0, mem = 0;
  };
  std::vector<Run> runs;
  size_t kernels = 0;
  int64_t planned_bytes = 0, unplanned_bytes = 0;

  void check_inputs(const std::vector<Tensor>& in) const;
  std::vector<Tensor> capture(const std::vector<Tensor>& in);
  std::vector<Tensor> replay(const std::vector<Tensor>& in);
  void plan_memory(const std::unordered_set<const Buffer*>& owned);
  void batch();
};

TinyJit::TinyJit(Function fn, std::string name) : s_(std::make_shared<State>()) {
  s_->fn = std::move(fn);
  s_->name = std::move(name);
}

int TinyJit::cnt() const { return s_->cnt; }
size_t TinyJit::captured_kernels() const { return s_->kernels; }
size_t TinyJit::graph_calls() const {
  return static_cast<size_t>(std::count_if(s_->runs.begin(), s_->runs.end(), [](const State::Run& r) { return r.graph != nullptr; }));
}
int64_t TinyJit::planned_bytes() const { return s_->planned_bytes; }
int64_t TinyJit::unplanned_bytes() const { return s_->unplanned_bytes; }

void TinyJit::reset() {
  auto fresh = std::make_shared<State>();
  fresh->fn = s_->fn;
  fresh->name = s_->name;
  s_ = fresh;
}

// Each input a realized tensor with a buffer of its own among the inputs.
static void prepare_inputs(const std::string& name, const std::vector<Tensor>& in) {
  for (size_t i = 0; i < in.size(); i++)
    TG_CHECK_AS(JitError, !in[i].lazydata()->is_unrealized_const(), name, ": argument ", i, " (shape ", in[i].shape(), ", ",
                in[i].dtype().name(), ") is a constant, which has no buffer to replace; pass a realized tensor (t.contiguous().realize())");
  if (std::any_of(in.begin(), in.end(), [](const Tensor& t) { return !t.lazydata()->base()->realized(); })) Tensor::corealize(in);
  for (size_t i = 0; i < in.size(); i++)
    for (size_t j = 0; j < i; j++)
      TG_CHECK_AS(JitError, in[i].lazydata()->base()->buffer != in[j].lazydata()->base()->buffer, name, ": arguments ", j, " and ", i,
                  " are the same buffer (shape ", in[i].shape(), "); a replay would replace it twice. Pass a copy (contiguous) as one of them");
}

std::vector<Tensor> TinyJit::operator()(const std::vector<Tensor>& in) {
  State& s = *s_;
  TG_CHECK_AS(JitError, !g_capture, s.name, ": called during the capture of ", g_capture ? *g_capture->name : std::string(),
              "; a TinyJit inside another TinyJit is not supported (call the inner function directly)");
  prepare_inputs(s.name, in);
  if (!JIT || s.cnt == 0) {  // warm-up (or no JIT): the function as it is
    s.cnt += JIT ? 1 : 0;
    std::vector<Tensor> out = s.fn(in);
    Tensor::corealize(out);
    return out;
  }
  std::vector<Tensor> out = s.cnt == 1 ? s.capture(in) : s.replay(in);
  s.cnt++;
  return out;
}

std::vector<Tensor> TinyJit::State::capture(const std::vector<Tensor>& in) {
  std::vector<ExecItem> captured;
  std::vector<Tensor> out;
  refresh.clear();  // (from a capture that raised)
  {
    CaptureState cs{&name, &refresh};
    g_capture = &cs;
    struct Reset { ~Reset() { g_capture = nullptr; } } reset;
    CaptureScope scope(&captured);
    out = fn(in);
    Tensor::corealize(out);
  }
  TG_CHECK_AS(JitError, std::any_of(captured.begin(), captured.end(), [](const ExecItem& e) { return e.prg->is_kernel; }), name,
              ": the function realized nothing during its capture; a TinyJit needs at least one kernel to replay");
  items = std::move(captured);
  // how many times the plan holds each buffer
  std::unordered_map<const Buffer*, long> plan_refs;
  for (const ExecItem& e : items)
    for (const auto& b : e.bufs) plan_refs[b.get()]++;
  // inputs
  for (const Tensor& t : in) {
    inputs.push_back(signature_of(t));
    const Buffer* b = t.lazydata()->base()->buffer.get();
    input_slots.emplace_back();
    for (size_t i = 0; i < items.size(); i++)
      for (size_t p = 0; p < items[i].bufs.size(); p++)
        if (items[i].bufs[p].get() == b) input_slots.back().push_back({i, p});
  }
  // outputs: a buffer only the plan and the returned tensors hold is the call's own, fresh every replay
  std::unordered_map<const Buffer*, long> out_refs;  // held by the returned tensors' base LazyBuffers
  std::unordered_set<const LazyBuffer*> bases;
  for (const Tensor& t : out)
    if (bases.insert(t.lazydata()->base()).second) out_refs[t.lazydata()->base()->buffer.get()]++;
  auto held_outside = [&](const std::shared_ptr<Buffer>& b) { return b.use_count() > plan_refs[b.get()] + out_refs[b.get()]; };
  std::unordered_set<const Buffer*> fresh;
  for (const Tensor& t : out) {
    const LBPtr& lb = t.lazydata();
    const std::shared_ptr<Buffer>& b = lb->base()->buffer;
    if (!b) {  // a constant: the same every call
      outputs.push_back(Output{Output::Kept, lb->st, lb->dtype, lb->device, 0, {}, {}, -1, lb});
      continue;
    }
    Output o{Output::Kept, lb->st, lb->dtype, lb->device, b->size, lb->base()->shape(), {}, -1, nullptr};
    for (size_t k = 0; k < in.size() && o.kind == Output::Kept; k++)
      if (in[k].lazydata()->base()->buffer == b) { o.kind = Output::Input; o.input = static_cast<int>(k); }
    if (o.kind == Output::Kept && plan_refs.count(b.get()) && !held_outside(b)) {
      o.kind = Output::Fresh;
      fresh.insert(b.get());
      for (size_t i = 0; i < items.size(); i++)
        for (size_t p = 0; p < items[i].bufs.size(); p++)
          if (items[i].bufs[p] == b) o.slots.push_back({i, p});
    }
    if (o.kind == Output::Kept) o.kept = lb;
    outputs.push_back(std::move(o));
  }
  // the plan's own buffers: held by nothing else, not an input or an output
  std::unordered_set<const Buffer*> owned, input_bufs;
  for (const Tensor& t : in) input_bufs.insert(t.lazydata()->base()->buffer.get());
  for (const ExecItem& e : items)
    for (const auto& b : e.bufs)
      if (!input_bufs.count(b.get()) && !fresh.count(b.get()) && !held_outside(b)) owned.insert(b.get());
  plan_memory(owned);
  batch();
  kernels = static_cast<size_t>(std::count_if(items.begin(), items.end(), [](const ExecItem& e) { return e.prg->is_kernel; }));
  if (DEBUG >= 1) {
    size_t copies = items.size() - kernels;
    int fresh_n = 0, kept_n = 0;
    for (const Output& o : outputs) (o.kind == Output::Fresh ? fresh_n : kept_n)++;
    size_t graphs = static_cast<size_t>(std::count_if(runs.begin(), runs.end(), [](const Run& r) { return r.graph != nullptr; }));
    std::printf("%s: captured %zu kernels and %zu copies/commits, %zu inputs, %zu outputs (%d fresh each call), %zu values refreshed per replay; "
                "%zu graph calls; plan memory %.2f MB shared from %.2f MB\n",
                name.c_str(), kernels, copies, inputs.size(), outputs.size(), fresh_n, refresh.size(), graphs, static_cast<double>(planned_bytes) / 1e6,
                static_cast<double>(unplanned_bytes) / 1e6);
    (void)kept_n;
  }
  return out;
}

// Greedy sharing: walking the items in order, a buffer the plan owns takes, at its first use, a free
// buffer of its device and size (else a new one), and frees it after its last use. Only buffers the plan
// writes before reading are shared (the others hold values from the capture).
void TinyJit::State::plan_memory(const std::unordered_set<const Buffer*>& owned) {
  std::unordered_map<const Buffer*, size_t> first, last;
  std::unordered_map<const Buffer*, bool> written_first;
  for (size_t i = 0; i < items.size(); i++) {
    const ExecItem& e = items[i];
    size_t n_out = e.prg->is_kernel || dynamic_cast<BufferCopy*>(e.prg.get()) ? e.prg->n_outputs : 0;  // written: bufs[0, n_outputs)
    for (size_t p = 0; p < e.bufs.size(); p++) {
      const Buffer* b = e.bufs[p].get();
      if (!owned.count(b)) continue;
      if (!first.count(b)) { first[b] = i; written_first[b] = p < n_out; }
      last[b] = i;
    }
  }
  using Kind = std::tuple<std::string, size_t, Scalar>;  // device, size, dtype
  std::map<Kind, std::vector<std::shared_ptr<Buffer>>> free_pool;
  std::unordered_map<const Buffer*, std::shared_ptr<Buffer>> assigned;
  std::vector<std::vector<const Buffer*>> ends(items.size());
  for (auto& [b, l] : last) ends[l].push_back(b);
  for (size_t i = 0; i < items.size(); i++) {
    for (auto& buf : items[i].bufs) {
      const Buffer* b = buf.get();
      if (!owned.count(b)) continue;
      unplanned_bytes += first[b] == i && !assigned.count(b) ? static_cast<int64_t>(b->nbytes()) : 0;
      if (!written_first[b]) continue;  // holds values from the capture: keep it as it is
      if (!assigned.count(b)) {
        auto& pool = free_pool[{b->device, b->size, b->dtype.scalar}];
        if (!pool.empty()) {
          assigned[b] = pool.back();
          pool.pop_back();
        } else {
          assigned[b] = std::make_shared<Buffer>(b->device, b->size, b->dtype);
          assigned[b]->allocate();  // (a graph reads the memory directly)
          planned_bytes += static_cast<int64_t>(b->nbytes());
        }
      }
    }
    for (const Buffer* b : ends[i])
      if (assigned.count(b)) free_pool[{b->device, b->size, b->dtype.scalar}].push_back(assigned[b]);
  }
  for (auto& [b, w] : written_first) planned_bytes += w ? 0 : static_cast<int64_t>(b->nbytes());
  for (ExecItem& e : items)
    for (auto& buf : e.bufs)
      if (auto it = assigned.find(buf.get()); it != assigned.end()) buf = it->second;
}

// Consecutive kernels of one device with a graph executor become one Graph; the rest run one by one.
void TinyJit::State::batch() {
  for (size_t i = 0; i < items.size();) {
    auto* k = items[i].prg->is_kernel ? dynamic_cast<CompiledRunner*>(items[i].prg.get()) : nullptr;
    Run r{i, i + 1, nullptr};
    if (k) {
      std::vector<Graph::Launch> launches;
      size_t j = i;
      for (; j < items.size(); j++) {
        auto* kj = items[j].prg->is_kernel ? dynamic_cast<CompiledRunner*>(items[j].prg.get()) : nullptr;
        if (!kj || kj->device != k->device) break;
        Graph::Launch l{kj->program.get(), {}, kj->kernel.global_size, kj->kernel.local_size};
        for (const auto& b : items[j].bufs) l.bufs.push_back(&b);
        launches.push_back(std::move(l));
        r.ops += kj->op_estimate;
        r.mem += kj->mem_estimate;
      }
      if (j - i > 1) {
        r.graph = Device::get(k->device).graph(std::move(launches));
        if (r.graph) r.end = j;
      }
    }
    i = r.end;
    runs.push_back(std::move(r));
  }
}

void TinyJit::State::check_inputs(const std::vector<Tensor>& in) const {
  TG_CHECK_AS(JitError, in.size() == inputs.size(), name, ": called with ", in.size(), " tensor arguments, captured with ", inputs.size());
  for (size_t i = 0; i < in.size(); i++) {
    Signature s = signature_of(in[i]);
    bool same = s.st == inputs[i].st && s.dtype == inputs[i].dtype && s.device == inputs[i].device && s.buffer_size == inputs[i].buffer_size;
    TG_CHECK_AS(JitError, same, name, ": argument ", i, " is ", describe(s, inputs[i]), ", captured as ", describe(inputs[i], s),
                "; a TinyJit replays one shape, view, dtype and device per argument (reset() it, or use another TinyJit)");
  }
}

std::vector<Tensor> TinyJit::State::replay(const std::vector<Tensor>& in) {
  check_inputs(in);
  for (auto& f : refresh) f();
  for (size_t k = 0; k < in.size(); k++)
    for (const Slot& sl : input_slots[k]) items[sl.item].bufs[sl.pos] = in[k].lazydata()->base()->buffer;
  std::vector<std::shared_ptr<Buffer>> fresh(outputs.size());
  for (size_t k = 0; k < outputs.size(); k++) {
    const Output& o = outputs[k];
    if (o.kind != Output::Fresh) continue;
    fresh[k] = std::make_shared<Buffer>(o.device, o.buffer_size, o.dtype);
    fresh[k]->allocate();
    for (const Slot& sl : o.slots) items[sl.item].bufs[sl.pos] = fresh[k];
  }
  for (const Run& r : runs) {
    if (!r.graph || JIT >= 2 || DEBUG >= 2) {  // JIT=2: no graph (as tinygrad); DEBUG=2 times each kernel
      for (size_t i = r.first; i < r.end; i++) items[i].run();
      continue;
    }
    (*r.graph)();
    GlobalCounters::kernel_count += static_cast<int64_t>(r.end - r.first);
    GlobalCounters::global_ops += r.ops;
    GlobalCounters::global_mem += r.mem;
  }
  std::vector<Tensor> out;
  for (size_t k = 0; k < outputs.size(); k++) {
    const Output& o = outputs[k];
    if (o.kind == Output::Kept) { out.emplace_back(o.kept); continue; }
    LBPtr base = o.kind == Output::Input ? in[static_cast<size_t>(o.input)].lazydata()->base_ptr() : LazyBuffer::from_buffer(fresh[k], o.base_shape);
    out.emplace_back(base->view(o.st));
  }
  return out;
}

}  // namespace tg
