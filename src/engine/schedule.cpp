#include "engine/schedule.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "tg/error.h"
#include "tg/helpers.h"
#include "uop/rewrite.h"

namespace tg {

namespace {

using LBSet = std::unordered_set<LazyBuffer*>;
// The buffers a schedule realizes, each with why (the fusion decisions DEBUG=2 prints).
using Realizes = std::unordered_map<LazyBuffer*, std::string>;

// The longest row a kernel reads back its reduces over (softmax's row). A longer one would be read from
// memory once per reduce instead of from the cache, and its rows are few: realizing the reduce lets
// a separate kernel spread the work.
constexpr int64_t kMaxFusedRow = 32768;

// Longest chain of ops one kernel may fuse. Deeper graphs (a loop of 100,000 adds) are cut into kernels
// of this depth: a C compiler given one function of a million statements takes minutes, if it finishes.
constexpr int kMaxKernelDepth = 500;

UOpPtr view_uop(const ShapeTracker& st) {
  return UOp::make(Ops::VIEW, dtypes::void_, {}, std::shared_ptr<const ArgObject>(std::make_shared<ShapeTracker>(st)));
}

bool has_mask(const ShapeTracker& st) {
  return std::any_of(st.views.begin(), st.views.end(), [](const View& v) { return v.mask.has_value(); });
}

// Ops for which f(0, ..., 0) is not 0 (or is -0.0). A padded view pushed down through one of them would
// put f(0) in the padding, so the kernel selects 0 there explicitly. All other ops map zeros to zero,
// and the loads and constants under them are already 0 in the padding (a gather's load too: its data
// view carries the padding's mask).
bool unsafe_to_pad(const LazyBuffer& b) {
  switch (b.op) {
    case Ops::EXP2: case Ops::LOG2: case Ops::COS: case Ops::RECIP: case Ops::IDIV: case Ops::MOD: return true;
    case Ops::NEG: return b.dtype.is_float();
    default: return false;
  }
}

// Whether `st` (an index in r's input shape -> r's result) reads the reduce r back over the rows it
// reduced: its result broadcast along the reduced axes and nothing else. Such a reduce runs in its
// reader's kernel (the kernel loops over the row once per reduce, then once to store), unless FUSE=0
// or the row is long. nullptr when it does, else why not.
const char* reads_back(const LazyBuffer& r, const ShapeTracker& st) {
  const char* not_back = "seen through a view that is not its result broadcast back over the rows it reduced";
  const Shape& in = r.srcs[0]->shape();
  if (!FUSE) return "FUSE=0";
  if (st.shape() != in) return not_back;
  ShapeTracker s = st.simplify();
  if (s.views.size() != 1 || s.views[0].mask || s.views[0].offset != 0) return not_back;
  Shape want = strides_for_shape(r.shape());
  int64_t row = 1;
  for (int a : std::get<ReduceArg>(r.arg).axes) {
    want[a] = 0;
    row *= in[a];
  }
  for (size_t i = 0; i < in.size(); i++)
    if (in[i] > 1 && s.views[0].strides[i] != want[i]) return not_back;
  return row <= kMaxFusedRow ? nullptr : "its rows are longer than 32768 elements";
}

// Whether an expanding view `st` of `b` may leave b in its readers' kernels: b is a reduce, or
// elementwise ops over reduces (a mean's scaling, layernorm's rsqrt(var + eps)), and every reduce there
// is read back over its rows (what b computes after the reduces is loop-invariant in the row: the
// kernel computes it once per row); or b is one element, or is computed from constants and ramps
// alone. nullptr when it may, else why not.
const char* reads_back_region(LazyBuffer* b, const ShapeTracker& st, const Realizes& realizes) {
  constexpr int kMaxNodes = 64;  // a region is a few ops; a big one is realized, as before
  std::vector<std::pair<const LazyBuffer*, ShapeTracker>> todo{{b, st}};
  int reduces = 0, nodes = 0, loads = 0;
  while (!todo.empty()) {
    auto [lb, s] = std::move(todo.back());
    todo.pop_back();
    if (lb->is_view()) { s = lb->st + s; lb = lb->base(); }
    if (lb->op == Ops::CONST || lb->op == Ops::ARANGE) continue;
    if (lb->realized() || (lb != b && realizes.count(const_cast<LazyBuffer*>(lb)))) {
      loads++;
      continue;
    }
    if (++nodes > kMaxNodes) return "expanded, and more than 64 ops";
    if (lb->op == Ops::REDUCE_AXIS) {
      if (const char* why = reads_back(*lb, s)) return why;
      reduces++;
      continue;
    }
    if (!is_alu(lb->op) && op_group(lb->op) != OpGroup::Cast) return "expanded, over a buffer op";
    for (auto& src : lb->srcs) todo.emplace_back(src.get(), s);
  }
  // a one-element value without reduces (an optimizer's 1 - b1^t) does not vary in the loops: the kernel
  // computes it once, outside them; a value computed from constants and ramps alone (argmax's scores)
  // reads no memory: each kernel recomputes it
  if (reduces == 0 && ((prod(b->shape()) != 1 && loads > 0) || !FUSE)) return "expanded (seed 002), and no reduce under it";
  return nullptr;
}

struct LazyGraph {
  Realizes realizes;
  std::vector<LazyBuffer*> order;  // the unrealized concrete buffers, sources before their users
};

// The realize rules that depend on one buffer alone (seed 002): loads, copies and their sources, a
// gather's data (read by a loaded address), forced realizes.
void buffer_rules(LazyBuffer* b, LazyGraph& g) {
  if (b->forced_realize) g.realizes.emplace(b, "realized by request");
  if (b->op == Ops::EMPTY || b->op == Ops::COPY || b->op == Ops::CONTIGUOUS || b->op == Ops::ASSIGN) g.realizes.emplace(b, op_name(b->op));
  if (b->op == Ops::COPY) g.realizes.emplace(b->srcs[0]->base(), "a copy's source");
  if (b->op == Ops::INDEX) g.realizes.emplace(b->srcs[0]->base(), "a gather's data");
}

// Walks the unrealized graph behind `outs` (iteratively: graphs may be a million ops deep), applies the
// realize rules and records the buffers in topological order.
void walk(const std::vector<LBPtr>& outs, LazyGraph& g) {
  LBSet seen, seen_views;
  // the concrete buffer behind an edge to `x`, when it has not been visited yet
  auto enter = [&](const LBPtr& x) -> LazyBuffer* {
    LazyBuffer* base = x->base();
    if (base->realized()) return nullptr;
    if (x->is_view() && seen_views.insert(x.get()).second && prod(base->shape()) < prod(x->shape()) && base->op != Ops::CONST &&
        base->op != Ops::ARANGE) {
      // a view bigger than its base expands it: realize the base, unless the view is a simple pad
      const View& v = x->st.views.back();
      bool simple_pad = false;
      if (x->st.views.size() == 1 && v.mask) {
        int64_t masked = 1;
        for (auto [b, e] : *v.mask) masked *= e - b;
        simple_pad = prod(base->shape()) >= masked;
      }
      if (!simple_pad)
        if (const char* why = reads_back_region(base, x->st, g.realizes)) g.realizes.emplace(base, why);
    }
    if (!seen.insert(base).second) return nullptr;
    buffer_rules(base, g);
    return base;
  };
  std::vector<std::pair<LazyBuffer*, size_t>> stack;
  for (auto& o : outs) {
    if (!o->base()->realized()) g.realizes.emplace(o->base(), "an output");
    if (LazyBuffer* b = enter(o)) stack.emplace_back(b, 0);
    while (!stack.empty()) {
      auto [b, i] = stack.back();
      if (i == b->srcs.size() || prod(b->shape()) == 0) {  // nothing is computed for an empty buffer
        g.order.push_back(b);
        stack.pop_back();
        continue;
      }
      stack.back().second++;
      if (LazyBuffer* c = enter(b->srcs[i])) stack.emplace_back(c, 0);
    }
  }
  // cut chains deeper than a kernel may be
  std::unordered_map<LazyBuffer*, int> depth;
  depth.reserve(g.order.size());
  for (LazyBuffer* b : g.order) {
    int d = 0;
    for (auto& s : b->srcs)
      if (auto it = depth.find(s->base()); it != depth.end()) d = std::max(d, it->second);
    if (++d >= kMaxKernelDepth) g.realizes.emplace(b, "a chain of 500 ops is cut");
    depth[b] = g.realizes.count(b) ? 0 : d;
  }
}

// Builds the AST of one kernel, iteratively. When a reduce turns out not to fuse, `unfusable` names it
// and build() returns nullptr.
class AstBuilder {
 public:
  explicit AstBuilder(const Realizes& realizes) : realizes_(realizes) {}
  std::vector<LazyBuffer*> inputs;  // DEFINE_GLOBAL 1, 2, ... in first-use order
  LazyBuffer* unfusable = nullptr;
  std::string why_unfusable;
  LBSet reduces;                    // the reduces the kernel computes
  std::vector<std::string> fused;   // them, for DEBUG=2: "MAX (64,512)->(64,1) read back"

  UOpPtr build(LazyBuffer* out, const ShapeTracker& out_st) {
    root_ = out;
    std::vector<Frame> stack;
    UOpPtr result;
    auto enter = [&](const LazyBuffer* lb, ShapeTracker st) -> bool {  // false when the value is known
      if (lb->is_view()) { st = lb->st + st; lb = lb->base(); }
      Frame f{const_cast<LazyBuffer*>(lb), std::move(st), nullptr, {}, {}};
      f.view = view_uop(f.st);
      keep_.push_back(f.view);
      if (auto it = cache_.find({f.buf, f.view.get()}); it != cache_.end()) { result = it->second; return false; }
      if ((result = leaf(f))) { cache_[{f.buf, f.view.get()}] = result; return false; }
      f.children = children(f);
      if (unfusable) return false;
      stack.push_back(std::move(f));
      return true;
    };
    if (!enter(out, out_st)) return unfusable ? nullptr : result;
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.srcs.size() < f.children.size()) {
        auto [lb, st] = f.children[f.srcs.size()];
        if (enter(lb, st)) continue;
        if (unfusable) return nullptr;
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
  LazyBuffer* root_ = nullptr;
  LazyBuffer* reduce_ = nullptr;  // the kernel's first reduce: the others reduce the same rows

  static bool same_rows(const LazyBuffer& a, const LazyBuffer& b) {
    return std::get<ReduceArg>(a.arg).axes == std::get<ReduceArg>(b.arg).axes && a.srcs[0]->shape() == b.srcs[0]->shape();
  }
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
  // coordinates. Detects a reduce that cannot fuse.
  std::vector<std::pair<const LazyBuffer*, ShapeTracker>> children(const Frame& f) {
    const LazyBuffer* b = f.buf;
    switch (b->op) {
      case Ops::INDEX: return {{b->srcs[1].get(), f.st}, {b->srcs[2].get(), f.st}};  // offset, valid
      case Ops::ASSIGN: return {{b->srcs[0].get(), f.st}};  // the value (srcs[1] names the target)
      case Ops::REDUCE_AXIS: {
        // fuse when the kernel reads the reduce's result elementwise or reads it back over its rows,
        // and every reduce of the kernel reduces the same rows
        ShapeTracker s = f.st.simplify();
        bool elementwise = s.contiguous() && s.size() == prod(b->shape());
        const char* back = elementwise ? nullptr : reads_back(*b, f.st);
        if (back || (reduce_ && !same_rows(*reduce_, *b))) {
          unfusable = f.buf;
          why_unfusable = back ? back : "its reader's kernel reduces other rows";
          return {};
        }
        if (!reduce_) reduce_ = f.buf;
        if (reduces.insert(f.buf).second)
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
      UOpPtr dview = view_uop(data->st.shrink(pin).expand(b->shape()) + f.st);
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

// ---- multi-output kernels ------------------------------------------------------------------------

// Kernels over the same loop nest on one device become one kernel with several STOREs: elementwise
// kernels of one shape (an optimizer step's parameter, moments and step counts; a value and what is
// computed from it), and reduce kernels over the same rows (mean and var asked for together). A kernel
// joins a group when it reads the group's outputs only at its own index or, in a reduce kernel, back
// over its rows (it then uses their values, not loads), when nothing between them would make a cycle,
// and while the group stays small.
constexpr size_t kMaxOutputs = 8;
constexpr int64_t kMaxMergedOps = 400;

const ShapeTracker& st_of(const UOpPtr& view) { return static_cast<const ShapeTracker&>(*std::get<std::shared_ptr<const ArgObject>>(view->arg)); }

// The loop nest of a one-output kernel: its device, the output's shape, the loops' sizes and the axes
// its reduces reduce (all the same, as the scheduler fuses them). nullopt: not mergeable.
struct Nest {
  std::string device;
  Shape out, full;
  std::vector<int> axes;
  auto operator<=>(const Nest&) const = default;
};
std::optional<Nest> nest_of(const ScheduleItem& si) {
  if (!si.is_kernel() || si.n_outputs != 1) return std::nullopt;
  Nest n{si.outputs[0]->device, st_of(si.ast->src[0]->src[1]).shape(), {}, {}};
  n.full = n.out;
  bool reduce = false;
  for (auto& u : si.ast->toposort()) {
    if (u->op == Ops::VIEW)
      for (size_t i = 0; i < n.full.size(); i++) n.full[i] = std::max(n.full[i], st_of(u).shape()[i]);
    if (u->op != Ops::REDUCE_AXIS) continue;
    const std::vector<int>& axes = std::get<ReduceArg>(u->arg).axes;
    if (reduce && axes != n.axes) return std::nullopt;
    n.axes = axes;
    reduce = true;
  }
  if (prod(n.full) == 0) return std::nullopt;
  return n;
}

struct Merger {
  std::unordered_map<LazyBuffer*, ScheduleItem>& items;
  std::unordered_map<LazyBuffer*, std::vector<LazyBuffer*>>& deps;
  std::unordered_map<LazyBuffer*, size_t> group_of;
  std::vector<std::vector<LazyBuffer*>> groups;  // members, dependencies first
  std::vector<int64_t> group_ops;

  static int64_t alu_ops(const ScheduleItem& si) {
    int64_t n = 0;
    for (auto& u : si.ast->toposort()) n += is_alu(u->op);
    return n;
  }

  // x (of loop nest n) reads the output buffer `b` of a member only at x's own index, or back over the
  // rows its reduces reduce (the member's result broadcast along them); no gather
  static bool reads_in_nest(const ScheduleItem& x, const Nest& n, const Buffer* b) {
    UOpPtr own = x.ast->src[0]->src[1];
    Shape back = strides_for_shape(n.out);
    for (int a : n.axes) back[static_cast<size_t>(a)] = 0;
    for (auto& u : x.ast->toposort()) {
      if (u->op != Ops::LOAD || x.bufs[static_cast<size_t>(std::get<int64_t>(u->src[0]->arg))].get() != b) continue;
      if (u->src.size() != 2) return false;
      if (u->src[1] == own) continue;
      ShapeTracker st = st_of(u->src[1]).simplify();
      if (n.axes.empty() || st.shape() != n.full || st.views.size() != 1 || st.views[0].mask || st.views[0].offset != 0) return false;
      for (size_t i = 0; i < n.full.size(); i++)
        if (n.full[i] > 1 && st.views[0].strides[i] != back[i]) return false;
    }
    return true;
  }
  // whether group `target` is reachable from x's dependencies outside it (x joining it would make a
  // cycle); a search past its budget answers yes
  bool reaches(LazyBuffer* x, size_t target) {
    std::vector<size_t> todo;
    std::unordered_set<size_t> seen;
    for (LazyBuffer* d : deps[x])
      if (group_of.count(d) && group_of[d] != target) todo.push_back(group_of[d]);
    while (!todo.empty()) {
      size_t gi = todo.back();
      todo.pop_back();
      if (!seen.insert(gi).second) continue;
      if (seen.size() > 4096) return true;
      for (LazyBuffer* m : groups[gi])
        for (LazyBuffer* d : deps[m]) {
          if (!group_of.count(d)) continue;
          if (group_of[d] == target) return true;
          todo.push_back(group_of[d]);
        }
    }
    return false;
  }

  void run(const std::vector<LazyBuffer*>& order) {
    std::map<Nest, std::vector<size_t>> open;  // the groups of each loop nest
    for (LazyBuffer* b : order) {
      auto it = items.find(b);
      if (it == items.end()) continue;
      const ScheduleItem& x = it->second;
      int64_t ops = alu_ops(x);
      if (std::optional<Nest> n = nest_of(x)) {
        std::vector<size_t>& same = open[*n];
        for (size_t gi : same) {
          if (groups[gi].size() >= kMaxOutputs || group_ops[gi] + ops > kMaxMergedOps) continue;
          bool ok = true;
          for (LazyBuffer* m : groups[gi]) ok = ok && reads_in_nest(x, *n, items.at(m).bufs[0].get());
          if (!ok || reaches(b, gi)) continue;
          groups[gi].push_back(b);
          group_of[b] = gi;
          group_ops[gi] += ops;
          break;
        }
        if (group_of.count(b)) continue;
        same.push_back(groups.size());
      }
      group_of[b] = groups.size();
      groups.push_back({b});
      group_ops.push_back(ops);
    }
  }

  // the group's item: STOREs in member order; a member's output read by a later one is its value. The
  // buffers are numbered from kTemp first, so that no replacement contains a node it replaces.
  ScheduleItem merged(const std::vector<LazyBuffer*>& members) {
    constexpr int64_t kTemp = int64_t{1} << 40;
    if (members.size() == 1) return std::move(items.at(members[0]));
    ScheduleItem out;
    for (LazyBuffer* m : members) {
      out.outputs.push_back(items.at(m).outputs[0]);
      out.bufs.push_back(items.at(m).bufs[0]);
    }
    out.n_outputs = members.size();
    std::unordered_map<const Buffer*, int64_t> index;
    for (size_t j = 0; j < out.bufs.size(); j++) index[out.bufs[j].get()] = static_cast<int64_t>(j);
    std::unordered_map<const Buffer*, UOpPtr> value;
    std::vector<UOpPtr> stores;
    for (LazyBuffer* m : members) {
      const ScheduleItem& si = items.at(m);
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
};

}  // namespace

std::vector<ScheduleItem> create_schedule(const std::vector<LBPtr>& outs) {
  GlobalCounters::schedules++;
  double t0 = now_s();
  LazyGraph g;
  walk(outs, g);
  LBSet out_bases;
  for (auto& o : outs) out_bases.insert(o->base());
  std::unordered_map<LazyBuffer*, ScheduleItem> items;
  std::unordered_map<LazyBuffer*, std::vector<LazyBuffer*>> deps;
  std::unordered_map<LazyBuffer*, LBSet> computes;  // kernel -> the reduces it computes
  // A reduce found unfusable, or computed by several kernels, is realized; the kernels that computed it
  // are built again (each of the others reads the same buffers as before: a kernel's AST changes only
  // where it reaches a newly realized buffer, and what it reaches of those are its reduces).
  auto realize_reduce = [&](LazyBuffer* r, std::string why) {
    g.realizes.emplace(r, std::move(why));
    for (auto it = computes.begin(); it != computes.end();) {
      if (!it->second.count(r)) { ++it; continue; }
      items.erase(it->first);
      deps.erase(it->first);
      it = computes.erase(it);
    }
  };
  for (bool changed = true; changed;) {
    changed = false;
    // in the graph's order, so that which unfusable reduce is found first (and so the kernels) is the
    // same on every run
    std::vector<LazyBuffer*> todo;
    for (LazyBuffer* b : g.order)
      if (g.realizes.count(b) && !items.count(b)) todo.push_back(b);
    for (LazyBuffer* out : todo) {
      const std::string why = g.realizes.at(out);
      if (out->realized() || out->op == Ops::CONST) continue;
      // an empty buffer is read by no kernel (they see a constant): it needs an item only as an output
      if (prod(out->shape()) == 0 && !out_bases.count(out)) continue;
      ScheduleItem si;
      si.outputs = {out->shared_from_this()};
      si.bufs = {out->buffer};
      if (prod(out->shape()) == 0) {  // nothing to compute: the buffer only needs to exist
        si.ast = UOp::make(Ops::EMPTY, out->dtype, {}, {});
      } else if (out->op == Ops::COPY || out->op == Ops::EMPTY) {
        si.ast = UOp::make(out->op, out->dtype, {}, out->arg);
        for (auto& s : out->srcs) {
          si.bufs.push_back(s->base()->buffer);
          deps[out].push_back(s->base());
        }
      } else {
        // the kernel's output shape is its reduce's, when a reduce feeds the output elementwise
        const LazyBuffer* r = nullptr;
        std::unordered_set<const LazyBuffer*> seen;
        for (std::vector<const LazyBuffer*> todo{out}; !todo.empty() && !r;) {
          const LazyBuffer* b = todo.back()->base();
          todo.pop_back();
          if (!seen.insert(b).second || b->realized() || (b != out && g.realizes.count(const_cast<LazyBuffer*>(b)))) continue;
          if (b->op == Ops::REDUCE_AXIS) r = b;
          for (auto& s : b->srcs) todo.push_back(s.get());
        }
        Shape out_shape = (r && prod(r->shape()) == prod(out->shape())) ? r->shape() : out->shape();
        AstBuilder b(g.realizes);
        ShapeTracker out_st = ShapeTracker::from_shape(out_shape);
        UOpPtr value = b.build(out, out_st);
        if (!value) {  // a reduce that cannot fuse: realize it and cut the graph again
          TG_ASSERT(b.unfusable && !g.realizes.count(b.unfusable));
          realize_reduce(b.unfusable, b.why_unfusable);
          changed = true;
          break;
        }
        UOpPtr store = UOp::make(Ops::STORE, dtypes::void_,
                                 {UOp::make(Ops::DEFINE_GLOBAL, out->dtype.pointer(), {}, int64_t{0}), view_uop(out_st), value});
        si.ast = UOp::make(Ops::SINK, dtypes::void_, {store});
        int64_t alu = 0;
        for (auto& u : si.ast->toposort()) alu += is_alu(u->op);
        si.fusion = shape_str(out_shape) + " " + out->dtype.name() + ": ";
        for (auto& r : b.fused) si.fusion += r + ", ";
        si.fusion += std::to_string(alu) + " elementwise ops, " + std::to_string(b.inputs.size()) + " inputs; a kernel of its own: " + why;
        for (LazyBuffer* in : b.inputs) {
          si.bufs.push_back(in->buffer);
          if (!in->realized()) deps[out].push_back(in);
        }
        computes[out] = std::move(b.reduces);
      }
      items.emplace(out, std::move(si));
    }
    // a reduce that several kernels would compute is computed once, in a kernel of its own
    if (changed) continue;
    std::unordered_map<LazyBuffer*, int> kernels_with;  // reduce -> the kernels that compute it
    for (auto& [k, rs] : computes)
      for (LazyBuffer* r : rs) kernels_with[r]++;
    std::vector<LazyBuffer*> shared;
    for (LazyBuffer* b : g.order)
      if (auto it = kernels_with.find(b); it != kernels_with.end() && it->second > 1) shared.push_back(b);
    for (LazyBuffer* r : shared) realize_reduce(r, "computed by " + std::to_string(kernels_with[r]) + " kernels otherwise");
    changed = !shared.empty();
  }
  // multi-output kernels: each group of items becomes one, named by its first member
  Merger merger{items, deps, {}, {}, {}};
  if (FUSE) merger.run(g.order);
  std::unordered_map<LazyBuffer*, LazyBuffer*> leader;
  std::unordered_map<LazyBuffer*, ScheduleItem> grouped;
  std::unordered_map<LazyBuffer*, std::vector<LazyBuffer*>> group_deps;
  for (auto& [b, si] : items) leader[b] = b;
  for (auto& members : merger.groups)
    for (LazyBuffer* m : members) leader[m] = members[0];
  for (auto& members : merger.groups) {
    for (LazyBuffer* m : members)
      for (LazyBuffer* d : deps[m])
        if (leader.count(d) && leader[d] != members[0]) group_deps[members[0]].push_back(leader[d]);
    grouped.emplace(members[0], merger.merged(members));
  }
  for (auto& [b, si] : items)  // items the merger never saw (not in g.order)
    if (!merger.group_of.count(b)) {
      for (LazyBuffer* d : deps[b])
        if (leader.count(d)) group_deps[b].push_back(leader[d]);
      grouped.emplace(b, std::move(si));
    }
  // dependencies first: post-order from the outputs, in the order they were given
  std::vector<ScheduleItem> schedule;
  LBSet done;
  std::vector<std::pair<LazyBuffer*, size_t>> stack;
  for (auto& o : outs) {
    LazyBuffer* ob = leader.count(o->base()) ? leader[o->base()] : nullptr;
    if (ob && done.insert(ob).second) stack.emplace_back(ob, 0);
    while (!stack.empty()) {
      auto [b, i] = stack.back();
      const std::vector<LazyBuffer*>& d = group_deps[b];
      if (i == d.size()) {
        schedule.push_back(std::move(grouped.at(b)));
        stack.pop_back();
        continue;
      }
      stack.back().second++;
      if (done.insert(d[i]).second) stack.emplace_back(d[i], 0);
    }
  }
  for (auto& [b, si] : grouped) TG_ASSERT(done.count(b), "scheduled item not reachable from outputs");
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
  if (DEBUG >= 1) {
    size_t kernels = 0;
    for (const ScheduleItem& si : schedule) kernels += si.is_kernel();
    std::printf("schedule: %zu kernels, %zu items in %.2f ms\n", kernels, schedule.size(), (now_s() - t0) * 1e3);
    if (DEBUG >= 2)
      for (const ScheduleItem& si : schedule)
        if (si.is_kernel()) std::printf("  fused %s\n", si.fusion.c_str());
  }
  return schedule;
}

}  // namespace tg
