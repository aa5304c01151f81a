#include "engine/schedule.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "tg/error.h"
#include "tg/helpers.h"

namespace tg {

namespace {

using LBSet = std::unordered_set<LazyBuffer*>;

UOpPtr view_uop(const ShapeTracker& st) {
  return UOp::make(Ops::VIEW, dtypes::void_, {}, std::shared_ptr<const ArgObject>(std::make_shared<ShapeTracker>(st)));
}

struct Graph {
  LBSet realizes, allbufs;
  std::unordered_map<LazyBuffer*, LBSet> children;
  std::unordered_map<LazyBuffer*, LBPtr> owner;  // keeps raw pointers meaningful
};

// Walks the unrealized graph behind `outs` and applies seed 002's realize rules.
void walk(const std::vector<LBPtr>& outs, Graph& g) {
  std::vector<LBPtr> stack;
  for (auto& o : outs)
    if (!o->base()->realized()) { g.realizes.insert(o->base()); stack.push_back(o->base_ptr()); }
  LBSet seen_views;
  while (!stack.empty()) {
    LBPtr buf = stack.back();
    stack.pop_back();
    if (buf->base()->realized()) continue;
    if (buf->is_view()) {
      if (!seen_views.insert(buf.get()).second) continue;
      LazyBuffer* base = buf->base();
      // a view that is bigger than its base expands it: realize the base, unless it is a simple pad
      if (prod(base->shape()) < prod(buf->shape()) && base->op != Ops::CONST) {
        const View& v = buf->st.views.back();
        bool simple_pad = false;
        if (buf->st.views.size() == 1 && v.mask) {
          int64_t masked = 1;
          for (auto [b, e] : *v.mask) masked *= e - b;
          simple_pad = prod(base->shape()) >= masked;
        }
        if (!simple_pad) g.realizes.insert(base);
      }
      stack.push_back(buf->base_ptr());
      continue;
    }
    if (!g.allbufs.insert(buf.get()).second) continue;
    g.owner[buf.get()] = buf;
    if (buf->forced_realize) g.realizes.insert(buf.get());
    if (buf->op == Ops::EMPTY || buf->op == Ops::COPY || buf->op == Ops::CONTIGUOUS) g.realizes.insert(buf.get());
    if (buf->op == Ops::COPY) g.realizes.insert(buf->srcs[0]->base());
    if (buf->op == Ops::INDEX) g.realizes.insert(buf->srcs[0]->base());  // a gather loads its data by address
    for (auto& s : buf->srcs) {
      g.children[s->base()].insert(buf.get());
      stack.push_back(s);
    }
  }
  // a reduce with several consumers is computed once, not once per consumer
  for (LazyBuffer* b : g.allbufs)
    if (b->op == Ops::REDUCE_AXIS && g.children[b].size() > 1) g.realizes.insert(b);
}

// Builds the AST of one kernel. When a reduce turns out not to fuse, `unfusable` names it.
struct AstBuilder {
  const LBSet& realizes;
  std::vector<LazyBuffer*> inputs;
  std::map<std::pair<LazyBuffer*, const UOp*>, UOpPtr> cache;
  std::vector<UOpPtr> keep;  // keeps the VIEW keys of the cache alive
  LazyBuffer* reduce = nullptr;
  LazyBuffer* unfusable = nullptr;

  // The kernel's DEFINE_GLOBAL for an input buffer (1, 2, ... in first-use order).
  UOpPtr define_global(LazyBuffer* buf) {
    auto it = std::find(inputs.begin(), inputs.end(), buf);
    int64_t idx = 1 + (it - inputs.begin());
    if (it == inputs.end()) inputs.push_back(buf);
    return UOp::make(Ops::DEFINE_GLOBAL, buf->dtype.pointer(), {}, idx);
  }

  UOpPtr build(const LazyBuffer* lb, ShapeTracker st, bool first = false) {
    if (lb->is_view()) { st = lb->st + st; lb = lb->base(); }
    LazyBuffer* buf = const_cast<LazyBuffer*>(lb);
    UOpPtr view = view_uop(st);
    auto key = std::make_pair(buf, view.get());
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    keep.push_back(view);
    UOpPtr ret;
    if (buf->op == Ops::CONST && !buf->realized()) {
      ret = UOp::make(Ops::CONST, buf->dtype, {view}, buf->arg);
    } else if (buf->realized() || (realizes.count(buf) && !first)) {
      ret = UOp::make(Ops::LOAD, buf->dtype, {define_global(buf), view});
    } else if (buf->op == Ops::INDEX) {
      // a gather (LazyBuffer::gather): LOAD(data, data's view with the axis pinned to 0, offset, valid);
      // the kernel adds the loaded offset to the view's index and gates the load with valid
      const LazyBuffer* data = buf->srcs[0].get();
      std::vector<std::pair<int64_t, int64_t>> pin;
      for (int64_t d : data->shape()) pin.emplace_back(0, d);
      pin[std::get<int64_t>(buf->arg)] = {0, 1};
      ShapeTracker dst = data->st.shrink(pin).expand(buf->shape()) + st;
      UOpPtr offset = build(buf->srcs[1].get(), st), valid = build(buf->srcs[2].get(), st);
      if (!offset || !valid) return nullptr;
      ret = UOp::make(Ops::LOAD, buf->dtype, {define_global(const_cast<LazyBuffer*>(data->base())), view_uop(dst), offset, valid});
    } else if (buf->op == Ops::CONTIGUOUS) {
      ret = build(buf->srcs[0].get(), st);
    } else if (buf->op == Ops::REDUCE_AXIS) {
      ShapeTracker s = st.simplify();
      // fuse only when the kernel reads the reduce's result elementwise, and it is the kernel's one reduce
      if (reduce || !s.contiguous() || s.size() != prod(buf->shape())) { unfusable = buf; return nullptr; }
      reduce = buf;
      UOpPtr src = build(buf->srcs[0].get(), ShapeTracker::from_shape(buf->srcs[0]->shape()));
      if (!src) return nullptr;
      ret = UOp::make(Ops::REDUCE_AXIS, buf->dtype, {src}, buf->arg);
    } else {
      std::vector<UOpPtr> srcs;
      for (auto& s : buf->srcs) {
        srcs.push_back(build(s.get(), st));
        if (!srcs.back()) return nullptr;
      }
      ret = UOp::make(buf->op, buf->dtype, std::move(srcs), buf->arg);
    }
    cache[key] = ret;
    return ret;
  }
};

// The reduce (if any) the kernel of `out` will contain: its output shape sets the kernel's output shape.
const LazyBuffer* find_reduce(const LazyBuffer* out, const LBSet& realizes) {
  std::vector<const LazyBuffer*> stack{out};
  LBSet seen;
  while (!stack.empty()) {
    const LazyBuffer* b = stack.back()->base();
    stack.pop_back();
    if (!seen.insert(const_cast<LazyBuffer*>(b)).second || b->realized()) continue;
    if (b != out && realizes.count(const_cast<LazyBuffer*>(b))) continue;
    if (b->op == Ops::REDUCE_AXIS) return b;
    for (auto& s : b->srcs) stack.push_back(s.get());
  }
  return nullptr;
}

}  // namespace

std::vector<ScheduleItem> create_schedule(const std::vector<LBPtr>& outs) {
  Graph g;
  walk(outs, g);
  std::vector<LazyBuffer*> order;  // realized bases, dependencies first
  std::unordered_map<LazyBuffer*, ScheduleItem> items;
  std::unordered_map<LazyBuffer*, std::vector<LazyBuffer*>> deps;
  for (bool changed = true; changed;) {
    changed = false;
    items.clear();
    deps.clear();
    for (LazyBuffer* out : g.realizes) {
      if (out->realized() || out->op == Ops::CONST) continue;
      ScheduleItem si;
      si.outputs = {g.owner.at(out)};
      si.bufs = {out->buffer};
      if (out->op == Ops::COPY || out->op == Ops::EMPTY) {
        si.ast = UOp::make(out->op, out->dtype, {}, out->arg);
        for (auto& s : out->srcs) {
          si.bufs.push_back(s->base()->buffer);
          deps[out].push_back(s->base());
        }
      } else {
        const LazyBuffer* r = find_reduce(out, g.realizes);
        Shape out_shape = (r && prod(r->shape()) == prod(out->shape())) ? r->shape() : out->shape();
        AstBuilder b{g.realizes, {}, {}, {}, nullptr, nullptr};
        ShapeTracker out_st = ShapeTracker::from_shape(out_shape);
        UOpPtr value = b.build(out, out_st, true);
        if (!value) {  // a reduce that cannot fuse: realize it and cut the graph again
          TG_ASSERT(b.unfusable && !g.realizes.count(b.unfusable));
          g.realizes.insert(b.unfusable);
          changed = true;
          break;
        }
        UOpPtr store = UOp::make(Ops::STORE, dtypes::void_,
                                 {UOp::make(Ops::DEFINE_GLOBAL, out->dtype.pointer(), {}, int64_t{0}), view_uop(out_st), value});
        si.ast = UOp::make(Ops::SINK, dtypes::void_, {store});
        for (LazyBuffer* in : b.inputs) {
          si.bufs.push_back(in->buffer);
          if (!in->realized()) deps[out].push_back(in);
        }
      }
      items.emplace(out, std::move(si));
    }
  }
  // dependencies first (post-order DFS from the outputs, in the order they were given)
  std::vector<ScheduleItem> schedule;
  LBSet done;
  std::function<void(LazyBuffer*)> visit = [&](LazyBuffer* b) {
    if (!items.count(b) || !done.insert(b).second) return;
    for (LazyBuffer* d : deps[b]) visit(d);
    schedule.push_back(std::move(items.at(b)));
  };
  for (auto& o : outs) visit(o->base());
  for (auto& [b, si] : items) TG_ASSERT(done.count(b), "scheduled item not reachable from outputs");
  return schedule;
}

}  // namespace tg
