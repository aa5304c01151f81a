#include "engine/schedule.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "engine/grouping.h"
#include "engine/schedule_cache.h"
#include "tg/error.h"
#include "tg/helpers.h"
#include "uop/rewrite.h"

namespace tg {

namespace {

using LBSet = std::unordered_set<LazyBuffer*>;

bool has_mask(const ShapeTracker& st) {
  return std::any_of(st.views.begin(), st.views.end(), [](const View& v) { return v.mask.has_value(); });
}

// Ops for which f(0, ..., 0) is not 0 (or is -0.0). A padded view pushed down through one of them would
// put f(0) in the padding, so the kernel selects 0 there explicitly. All other ops map zeros to zero,
// and the loads and constants under them are already 0 in the padding (a gather's load too: its data
// view carries the padding's mask).
bool unsafe_to_pad(const LazyBuffer& b) {
  switch (b.op) {
    case Ops::EXP2: case Ops::LOG2: case Ops::COS: case Ops::RECIP: case Ops::FDIV: case Ops::IDIV: case Ops::MOD: return true;
    case Ops::NEG: return b.dtype.is_float();
    default: return false;
  }
}

// Builds the AST of one kernel output, iteratively, as the grouping decided: the buffers it realizes
// are loads, the reduces it fused are computed here.
class AstBuilder {
 public:
  AstBuilder(const Realizes& realizes, const std::vector<LazyBuffer*>& reduces) : realizes_(realizes), reduces_(reduces) {}
  std::vector<LazyBuffer*> inputs;  // DEFINE_GLOBAL 1, 2, ... in first-use order
  std::vector<std::string> fused;   // the reduces, for DEBUG=2: "MAX (64,512)->(64,1) read back"

  UOpPtr build(LazyBuffer* out, const ShapeTracker& out_st) {
    root_ = out;
    std::vector<Frame> stack;
    UOpPtr result;
    auto enter = [&](const LazyBuffer* lb, ShapeTracker st) -> bool {  // false when the value is known
      if (lb->is_view()) { st = lb->st + st; lb = lb->base(); }
      Frame f{const_cast<LazyBuffer*>(lb), std::move(st), nullptr, {}, {}};
      f.view = f.st.to_uop();
      keep_.push_back(f.view);
      if (auto it = cache_.find({f.buf, f.view.get()}); it != cache_.end()) { result = it->second; return false; }
      if ((result = leaf(f))) { cache_[{f.buf, f.view.get()}] = result; return false; }
      f.children = children(f);
      stack.push_back(std::move(f));
      return true;
    };
    if (!enter(out, out_st)) return result;
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.srcs.size() < f.children.size()) {
        auto [lb, st] = f.children[f.srcs.size()];
        if (enter(lb, st)) continue;
        stack.back().srcs.push_back(result);
        continue;
      }
      result = combine(f);
      cache_[{f.buf, f.view.get()}] = result;
      stack.pop_back();
      if (!stack.empty()) stack.back().srcs.push_back(result);
    }
    return result;
  }

 private:
  struct Frame {
    LazyBuffer* buf;
    ShapeTracker st;  // kernel index -> buf's index
    UOpPtr view;
    std::vector<std::pair<const LazyBuffer*, ShapeTracker>> children;
    std::vector<UOpPtr> srcs;  // the children's ASTs, as they are built
  };
  const Realizes& realizes_;
  const std::vector<LazyBuffer*>& reduces_;
  LBSet seen_reduces_;
  LazyBuffer* root_ = nullptr;
  std::map<std::pair<LazyBuffer*, const UOp*>, UOpPtr> cache_;
  std::vector<UOpPtr> keep_;  // keeps the VIEW keys of the cache alive

  UOpPtr define_global(LazyBuffer* buf) {
    auto it = std::find(inputs.begin(), inputs.end(), buf);
    int64_t idx = 1 + (it - inputs.begin());
    if (it == inputs.end()) inputs.push_back(buf);
    return UOp::make(Ops::DEFINE_GLOBAL, buf->dtype.pointer(), {}, idx);
  }

  // The AST of a buffer the kernel does not compute: a constant, or a load of a realized buffer.
  UOpPtr leaf(const Frame& f) {
    if (f.buf->op == Ops::CONST && !f.buf->realized()) return UOp::make(Ops::CONST, f.buf->dtype, {f.view}, f.buf->arg);
    if (f.buf->op == Ops::ARANGE && !f.buf->realized()) return UOp::make(Ops::ARANGE, f.buf->dtype, {f.view});
    // an empty buffer has no values to read: any view of it is padding (0) or has no elements itself
    if (prod(f.buf->shape()) == 0 && f.buf != root_)
      return UOp::make(Ops::CONST, f.buf->dtype, {f.view}, f.buf->dtype.is_float() ? Arg{0.0} : Arg{int64_t{0}});
    if (f.buf->realized() || (realizes_.count(f.buf) && f.buf != root_)) return UOp::make(Ops::LOAD, f.buf->dtype, {define_global(f.buf), f.view});
    return nullptr;
  }

  // What the kernel computes first to compute this buffer: its sources, seen through views in kernel
  // coordinates.
  std::vector<std::pair<const LazyBuffer*, ShapeTracker>> children(const Frame& f) {
    const LazyBuffer* b = f.buf;
    switch (b->op) {
      case Ops::INDEX: return {{b->srcs[1].get(), f.st}, {b->srcs[2].get(), f.st}};  // offset, valid
      case Ops::ASSIGN: return {{b->srcs[0].get(), f.st}};  // the value (srcs[1] names the target)
      case Ops::REDUCE_AXIS: {
        // the grouping fused it: the kernel reads its result elementwise or back over its rows
        TG_ASSERT(std::find(reduces_.begin(), reduces_.end(), f.buf) != reduces_.end(), "a reduce the grouping did not fuse");
        ShapeTracker s = f.st.simplify();
        bool elementwise = s.contiguous() && s.size() == prod(b->shape());
        if (seen_reduces_.insert(f.buf).second)
          fused.push_back(std::string(op_name(std::get<ReduceArg>(b->arg).op)) + " " + shape_str(b->srcs[0]->shape()) + "->" +
                          shape_str(b->shape()) + (elementwise ? "" : " read back"));
        return {{b->srcs[0].get(), ShapeTracker::from_shape(b->srcs[0]->shape())}};
      }
      default: {
        std::vector<std::pair<const LazyBuffer*, ShapeTracker>> out;
        for (auto& s : b->srcs) out.emplace_back(s.get(), f.st);
        return out;
      }
    }
  }

  UOpPtr combine(const Frame& f) {
    const LazyBuffer* b = f.buf;
    UOpPtr ret;
    if (b->op == Ops::INDEX) {
      // a gather (LazyBuffer::gather): LOAD(data, data's view with the axis pinned to 0, offset, valid);
      // the kernel adds the loaded offset to the view's index and gates the load with valid
      const LazyBuffer* data = b->srcs[0].get();
      std::vector<std::pair<int64_t, int64_t>> pin;
      for (int64_t d : data->shape()) pin.emplace_back(0, d);
      pin[std::get<int64_t>(b->arg)] = {0, 1};
      UOpPtr dview = (data->st.shrink(pin).expand(b->shape()) + f.st).to_uop();
      keep_.push_back(dview);
      ret = UOp::make(Ops::LOAD, b->dtype, {define_global(const_cast<LazyBuffer*>(data->base())), dview, f.srcs[0], f.srcs[1]});
    } else if (b->op == Ops::CONTIGUOUS || b->op == Ops::ASSIGN) {
      ret = f.srcs[0];
    } else {
      ret = UOp::make(b->op, b->dtype, f.srcs, b->arg);
    }
    if (!unsafe_to_pad(*b) || !has_mask(f.st)) return ret;
    // in the padding the value is 0, not f(0): select it by the view's validity (a CONST seen through
    // the view is its value where valid, 0 elsewhere)
    UOpPtr valid = UOp::make(Ops::CONST, dtypes::bool_, {f.view}, int64_t{1});
    UOpPtr zero = UOp::make(Ops::CONST, b->dtype, {f.view}, b->dtype.is_float() ? Arg{0.0} : Arg{int64_t{0}});
    return UOp::make(Ops::WHERE, b->dtype, {valid, ret, zero});
  }
};

// One kernel of several outputs from the members' one-output items: STOREs in member order; a member's
// output read by a later one is its value, not a load (the grouping allows only reads at the reader's
// own index or back over its rows, where the value is the same). The buffers are numbered from kTemp
// first, so that no replacement contains a node it replaces.
ScheduleItem merged(std::vector<ScheduleItem> members) {
  constexpr int64_t kTemp = int64_t{1} << 40;
  if (members.size() == 1) return std::move(members[0]);
  ScheduleItem out;
  for (const ScheduleItem& si : members) {
    out.outputs.push_back(si.outputs[0]);
    out.bufs.push_back(si.bufs[0]);
  }
  out.n_outputs = members.size();
  std::unordered_map<const Buffer*, int64_t> index;
  for (size_t j = 0; j < out.bufs.size(); j++) index[out.bufs[j].get()] = static_cast<int64_t>(j);
  std::unordered_map<const Buffer*, UOpPtr> value;
  std::vector<UOpPtr> stores;
  for (const ScheduleItem& si : members) {
    std::unordered_map<const UOp*, UOpPtr> remap;
    for (auto& u : si.ast->toposort()) {
      if (u->op != Ops::DEFINE_GLOBAL && u->op != Ops::LOAD) continue;
      const std::shared_ptr<Buffer>& b = si.bufs[static_cast<size_t>(std::get<int64_t>((u->op == Ops::LOAD ? u->src[0] : u)->arg))];
      if (u->op == Ops::LOAD) {
        if (auto v = value.find(b.get()); v != value.end()) remap[u.get()] = v->second;
        continue;
      }
      if (!index.count(b.get())) {
        index[b.get()] = static_cast<int64_t>(out.bufs.size());
        out.bufs.push_back(b);
      }
      remap[u.get()] = UOp::make(Ops::DEFINE_GLOBAL, u->dtype, {}, kTemp + index[b.get()]);
    }
    UOpPtr store = substitute(si.ast->src[0], remap);
    value[si.bufs[0].get()] = store->src[2];
    stores.push_back(store);
    out.fusion += (out.fusion.empty() ? "" : " + ") + si.fusion;
  }
  UOpPtr sink = UOp::make(Ops::SINK, dtypes::void_, std::move(stores));
  std::unordered_map<const UOp*, UOpPtr> renumber;
  for (auto& u : sink->toposort())
    if (u->op == Ops::DEFINE_GLOBAL) renumber[u.get()] = UOp::make(Ops::DEFINE_GLOBAL, u->dtype, {}, std::get<int64_t>(u->arg) - kTemp);
  out.ast = substitute(sink, renumber);
  return out;
}

// The item of a realized buffer with nothing to compute: a copy, an EMPTY, an output of no elements.
ScheduleItem buffer_item(LazyBuffer* out) {
  ScheduleItem si;
  si.outputs = {out->shared_from_this()};
  si.bufs = {out->buffer};
  if (prod(out->shape()) == 0) {  // the buffer only needs to exist
    si.ast = UOp::make(Ops::EMPTY, out->dtype, {}, {});
    return si;
  }
  si.ast = UOp::make(out->op, out->dtype, {}, out->arg);
  for (auto& s : out->srcs) si.bufs.push_back(s->base()->buffer);
  return si;
}

// The one-output item of `out`, in the kernel's loops `shape`, computing the `reduces` the grouping fused.
ScheduleItem kernel_item(LazyBuffer* out, const Shape& shape, const std::vector<LazyBuffer*>& reduces, const Realizes& realizes) {
  ScheduleItem si;
  si.outputs = {out->shared_from_this()};
  si.bufs = {out->buffer};
  AstBuilder b(realizes, reduces);
  ShapeTracker out_st = ShapeTracker::from_shape(shape);
  UOpPtr value = b.build(out, out_st);
  UOpPtr store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::DEFINE_GLOBAL, out->dtype.pointer(), {}, int64_t{0}), out_st.to_uop(), value});
  si.ast = UOp::make(Ops::SINK, dtypes::void_, {store});
  int64_t alu = 0;
  for (auto& u : si.ast->toposort()) alu += is_alu(u->op);
  si.fusion = shape_str(shape) + " " + out->dtype.name() + ": ";
  for (auto& r : b.fused) si.fusion += r + ", ";
  si.fusion += std::to_string(alu) + " elementwise ops, " + std::to_string(b.inputs.size()) + " inputs; a kernel of its own: " + realizes.at(out);
  for (LazyBuffer* in : b.inputs) si.bufs.push_back(in->buffer);
  return si;
}

// The schedule of `outs` from scratch: grouping, then each item's AST.
std::vector<ScheduleItem> build_schedule(const std::vector<LBPtr>& outs) {
  Grouping g = group(outs);
  // every item, and the items whose outputs it reads (by the LazyBuffer of its first output)
  std::unordered_map<LazyBuffer*, ScheduleItem> items;
  std::unordered_map<const Buffer*, LazyBuffer*> item_of;  // an output's Buffer -> its item
  for (LazyBuffer* b : g.buffer_ops) {
    item_of[b->buffer.get()] = b;
    items.emplace(b, buffer_item(b));
  }
  for (const Grouping::Kernel& k : g.kernels) {
    std::vector<ScheduleItem> members;
    for (size_t i = 0; i < k.outputs.size(); i++) {
      item_of[k.outputs[i]->buffer.get()] = k.outputs[0];
      members.push_back(kernel_item(k.outputs[i], k.shape, k.reduces[i], g.realizes));
    }
    items.emplace(k.outputs[0], merged(std::move(members)));
  }
  std::unordered_map<LazyBuffer*, std::vector<LazyBuffer*>> deps;
  for (auto& [b, si] : items)
    for (size_t i = si.n_outputs; i < si.bufs.size(); i++)
      if (auto it = item_of.find(si.bufs[i].get()); it != item_of.end() && it->second != b) deps[b].push_back(it->second);
  // dependencies first: post-order from the outputs, in the order they were given
  std::vector<ScheduleItem> schedule;
  LBSet done;
  std::vector<std::pair<LazyBuffer*, size_t>> stack;
  for (auto& o : outs) {
    auto first = item_of.find(o->base()->buffer.get());
    if (o->base()->realized() || first == item_of.end() || !done.insert(first->second).second) continue;
    stack.emplace_back(first->second, 0);
    while (!stack.empty()) {
      auto [b, i] = stack.back();
      const std::vector<LazyBuffer*>& d = deps[b];
      if (i == d.size()) {
        schedule.push_back(std::move(items.at(b)));
        stack.pop_back();
        continue;
      }
      stack.back().second++;
      if (done.insert(d[i]).second) stack.emplace_back(d[i], 0);
    }
  }
  TG_ASSERT(done.size() == items.size(), "scheduled item not reachable from outputs");
  // Each ASSIGN's commit, once everything has read what it needs: the target's Buffer takes the new values.
  // A target that is itself assigned earlier in this schedule commits first, into the same Buffer.
  std::vector<ScheduleItem> commits;
  for (const ScheduleItem& si : schedule)
    for (const LBPtr& a : si.outputs) {
      if (a->op != Ops::ASSIGN || si.ast->op == Ops::ASSIGN) continue;
      LazyBuffer* target = a->srcs[1]->base();
      while (!target->realized() && target->op == Ops::ASSIGN) target = target->srcs[1]->base();
      ScheduleItem c;
      c.ast = UOp::make(Ops::ASSIGN, a->dtype, {}, {});
      c.bufs = {target->buffer, a->buffer};
      c.outputs = {a, a->srcs[1]->base_ptr()};
      commits.push_back(std::move(c));
    }
  for (ScheduleItem& c : commits) schedule.push_back(std::move(c));
  return schedule;
}

// SCHEDULE_CACHE=2: a cache hit must be what scheduling from scratch gives.
void check_hit(const std::vector<ScheduleItem>& hit, const std::vector<ScheduleItem>& fresh) {
  TG_ASSERT(hit.size() == fresh.size(), "schedule cache: a hit of ", hit.size(), " items, ", fresh.size(), " from scratch");
  for (size_t i = 0; i < hit.size(); i++) {
    const ScheduleItem &a = hit[i], &b = fresh[i];
    TG_ASSERT(a.ast == b.ast && a.n_outputs == b.n_outputs && a.outputs == b.outputs && a.bufs == b.bufs && a.fusion == b.fusion,
              "schedule cache: item ", i, " of a hit differs from scheduling from scratch (", a.fusion, " / ", b.fusion, ")");
  }
}

}  // namespace

std::vector<ScheduleItem> create_schedule(const std::vector<LBPtr>& outs) {
  GlobalCounters::schedules++;
  double t0 = now_s();
  std::optional<std::vector<ScheduleItem>> hit;
  std::vector<ScheduleItem> schedule;
  for (;;) {
    ScheduleKey key = SCHEDULE_CACHE ? schedule_key(outs) : ScheduleKey{};
    hit = cached_schedule(key);
    std::vector<ScheduleItem> fresh = !hit || SCHEDULE_CACHE >= 2 ? build_schedule(outs) : std::vector<ScheduleItem>{};
    // another thread forced a buffer of this graph to realize after the key was made: the fresh schedule
    // (and the check) may have seen the new hint, so schedule the graph as it is now
    if (!key_is_current(key)) continue;
    if (hit) {
      GlobalCounters::schedule_hits++;
      schedule = std::move(*hit);
      if (SCHEDULE_CACHE >= 2) check_hit(schedule, fresh);
    } else {
      schedule = std::move(fresh);
      cache_schedule(key, schedule);
    }
    break;
  }
  if (DEBUG >= 1) {
    size_t kernels = 0;
    for (const ScheduleItem& si : schedule) kernels += si.is_kernel();
    std::printf("schedule: %zu kernels, %zu items in %.2f ms%s\n", kernels, schedule.size(), (now_s() - t0) * 1e3, hit ? ", from the cache" : "");
    if (DEBUG >= 2)
      for (const ScheduleItem& si : schedule)
        if (si.is_kernel()) std::printf("  fused %s\n", si.fusion.c_str());
  }
  return schedule;
}

}  // namespace tg
