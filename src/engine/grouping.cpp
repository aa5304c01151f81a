#include "engine/grouping.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

#include "tg/error.h"
#include "tg/helpers.h"

namespace tg {

namespace {

using LBSet = std::unordered_set<LazyBuffer*>;

// The longest row a kernel reads back its reduces over (softmax's row). A longer one would be read from
// memory once per reduce instead of from the cache, and its rows are few: realizing the reduce lets
// a separate kernel spread the work.
constexpr int64_t kMaxFusedRow = 32768;

// Longest chain of ops one kernel may fuse. Deeper graphs (a loop of 100,000 adds) are cut into kernels
// of this depth: a C compiler given one function of a million statements takes minutes, if it finishes.
constexpr int kMaxKernelDepth = 500;

// Multi-output kernels stay small: at most this many outputs and ALU ops.
constexpr size_t kMaxOutputs = 8;
constexpr int64_t kMaxMergedOps = 400;

// Kernels of this many loop iterations or more join only when they read a buffer in common: the
// multi-output kernel then loads it once. Independent ones (beautiful_mnist's 8 Winograd points' pad
// copies, or their channel-packing transposes, 6.5 MB each) ran 1.7-1.9x slower as one kernel than as
// 8 (Zen 5): 8 read and 8 write streams at once, and nothing shared. Smaller ones still join, saving a
// launch each.
constexpr int64_t kMinStreamed = int64_t{1} << 20;

// The most ops of an elementwise value that several kernels each compute again rather than read (a
// random init's ~240 threefry ops, read by a parameter's kernel and by a conv's weight packing, would
// be run, and compiled, in each).
constexpr int kMaxRecomputedOps = 64;

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

// Whether `st` reads a buffer of `n` elements at the kernel's own index (the identity, in any shape).
bool reads_elementwise(const ShapeTracker& st, int64_t n) {
  ShapeTracker s = st.simplify();
  return s.contiguous() && s.size() == n;
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

// Whether b is a stack of a few buffers realized anyway (a reduce read through a view is):
// Tensor::cat's form, a chain of WHEREs each selecting one piece where a padded constant mask is true
// (autograd joins the gradients of disjoint slices so too). Each element is one load, so a kernel that
// reads b expanded loads what it would load from b's realized copy, and the copy is saved: the 8
// Winograd points' input gradients, stacked into one 63 MB tensor for the output transform (4 ms of
// beautiful_mnist's step), are read by the transform from where the products wrote them.
bool is_concat(const LazyBuffer* b, const Realizes& realizes) {
  constexpr int kMaxPieces = 16;
  auto loaded = [&](const LBPtr& x) {
    const LazyBuffer* s = x->base();
    return s->realized() || realizes.count(const_cast<LazyBuffer*>(s)) || s->op == Ops::REDUCE_AXIS;
  };
  // the pieces lie along one short dim (a stack's), so a kernel that loops over it whole
  // resolves which piece each index reads once, not per element (a long cat read by a matmul is realized)
  int along = -1;
  auto slices_one_short_dim = [&](const LBPtr& mask) {
    const View& v = mask->st.views.back();
    if (mask->st.views.size() != 1 || !v.mask) return false;
    for (size_t d = 0; d < v.shape.size(); d++) {
      if ((*v.mask)[d] == std::pair<int64_t, int64_t>{0, v.shape[d]}) continue;
      if ((along >= 0 && along != static_cast<int>(d)) || v.shape[d] > kMaxPieces) return false;
      along = static_cast<int>(d);
    }
    return true;
  };
  for (int pieces = 1; pieces <= kMaxPieces; pieces++) {
    if (b->op != Ops::WHERE) return false;
    const LBPtr& mask = b->srcs[0];
    if (!mask->is_view() || mask->base()->op != Ops::CONST || !slices_one_short_dim(mask) || !loaded(b->srcs[1])) return false;
    const LBPtr& rest = b->srcs[2];
    if (rest->is_view() || rest->base()->realized() || realizes.count(rest->base())) return loaded(rest);
    b = rest.get();
  }
  return false;
}

// The realize rules that depend on one buffer alone (seed 002): loads, copies and their sources, a
// gather's data (read by a loaded address), forced realizes.
void buffer_rules(LazyBuffer* b, Realizes& realizes) {
  if (b->forced_realize) realizes.emplace(b, "realized by request");
  if (b->op == Ops::EMPTY || b->op == Ops::COPY || b->op == Ops::CONTIGUOUS || b->op == Ops::ASSIGN) realizes.emplace(b, op_name(b->op));
  if (b->op == Ops::COPY) realizes.emplace(b->srcs[0]->base(), "a copy's source");
  if (b->op == Ops::INDEX) realizes.emplace(b->srcs[0]->base(), "a gather's data");
}

// Walks the unrealized graph behind `outs` (iteratively: graphs may be a million ops deep), applies the
// realize rules and returns the buffers in topological order (sources before their users).
std::vector<LazyBuffer*> walk(const std::vector<LBPtr>& outs, Realizes& realizes) {
  std::vector<LazyBuffer*> order;
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
      if (!simple_pad && !is_concat(base, realizes))
        if (const char* why = reads_back_region(base, x->st, realizes)) realizes.emplace(base, why);
    }
    if (!seen.insert(base).second) return nullptr;
    buffer_rules(base, realizes);
    return base;
  };
  std::vector<std::pair<LazyBuffer*, size_t>> stack;
  for (auto& o : outs) {
    if (!o->base()->realized()) realizes.emplace(o->base(), "an output");
    if (LazyBuffer* b = enter(o)) stack.emplace_back(b, 0);
    while (!stack.empty()) {
      auto [b, i] = stack.back();
      if (i == b->srcs.size() || prod(b->shape()) == 0) {  // nothing is computed for an empty buffer
        order.push_back(b);
        stack.pop_back();
        continue;
      }
      stack.back().second++;
      if (LazyBuffer* c = enter(b->srcs[i])) stack.emplace_back(c, 0);
    }
  }
  // cut chains deeper than a kernel may be
  std::unordered_map<LazyBuffer*, int> depth;
  depth.reserve(order.size());
  for (LazyBuffer* b : order) {
    int d = 0;
    for (auto& s : b->srcs)
      if (auto it = depth.find(s->base()); it != depth.end()) d = std::max(d, it->second);
    if (++d >= kMaxKernelDepth) realizes.emplace(b, "a chain of 500 ops is cut");
    depth[b] = realizes.count(b) ? 0 : d;
  }
  return order;
}

bool same_rows(const LazyBuffer& a, const LazyBuffer& b) {
  return std::get<ReduceArg>(a.arg).axes == std::get<ReduceArg>(b.arg).axes && a.srcs[0]->shape() == b.srcs[0]->shape();
}

// The loop nest of a kernel: its device, output shape, loops' sizes and the axes its reduces reduce.
struct Nest {
  std::string device;
  Shape out, full;
  std::vector<int> axes;
  auto operator<=>(const Nest&) const = default;
};

// The two sweeps of group() (grouping.h), over the graph walk() ordered. A node is a realized buffer:
// a kernel, or a buffer op (a copy, an empty buffer) that orders the kernels around it.
class Grouper {
 public:
  Grouper(const std::vector<LBPtr>& outs, Grouping& g) : g_(g), order_(walk(outs, g.realizes)) {
    for (auto& o : outs) out_bases_.insert(o->base());
    for (size_t i = 0; i < order_.size(); i++) position_[order_[i]] = i;
  }

  // Step 2: users before sources, so a buffer's readers are all known when it is decided.
  void decide_realizes() {
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      LazyBuffer* b = *it;
      if (!g_.realizes.count(b)) {
        std::string why = b->op == Ops::REDUCE_AXIS ? reduce_unfusable(b) : recomputed(b);
        if (!why.empty()) g_.realizes.emplace(b, std::move(why));
      }
      if (g_.realizes.count(b)) {
        add_node(b);
        continue;
      }
      auto reads = reads_.find(b);
      if (reads == reads_.end() || prod(b->shape()) == 0) continue;  // an empty buffer's readers see a constant
      for (const Read& r : reads->second) {
        Node& k = nodes_[r.node];
        if (b->op != Ops::REDUCE_AXIS) {
          k.alu += is_alu(b->op);
          enter_sources(b, r.view, r.node);
        } else if (std::find(k.reduces.begin(), k.reduces.end(), b) == k.reduces.end()) {
          fuse_reduce(b, r.node);
        }
      }
    }
  }

  // Step 3: kernels over one loop nest join, sources first.
  void group_kernels() {
    std::vector<size_t> forward(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); i++) forward[i] = i;
    std::sort(forward.begin(), forward.end(), [&](size_t a, size_t b) { return position_.at(nodes_[a].out) < position_.at(nodes_[b].out); });
    std::unordered_map<const LazyBuffer*, size_t> node_of;
    for (size_t i = 0; i < nodes_.size(); i++) node_of[nodes_[i].out] = i;
    deps_.assign(nodes_.size(), {});
    for (auto& [b, reads] : reads_)
      if (auto it = node_of.find(b); it != node_of.end())
        for (const Read& r : reads) deps_[r.node].push_back(it->second);
    group_of_.assign(nodes_.size(), kNone);
    std::vector<std::optional<Nest>> nests;
    for (const Node& k : nodes_) nests.push_back(nest_of(k));
    // Whether kernel k is a contraction: two operands broadcast along different kept dims (a matmul's
    // x along its columns, w along its rows; a bias added before a reduce is broadcast along them alone).
    // Asked only of kernels with reduces that could join, and remembered.
    std::vector<int8_t> contracts(nodes_.size(), -1);
    std::vector<std::vector<const UOp*>> views_read(nodes_.size());  // per node, its views of its operands
    for (auto& [b, reads] : reads_)
      for (const Read& r : reads)
        if (r.view) views_read[r.node].push_back(r.view.get());
    for (const Read& r : input_reads_) views_read[r.node].push_back(r.view.get());
    auto contraction = [&](size_t k) {
      if (contracts[k] >= 0 || nodes_[k].reduces.empty() || !nests[k]) return contracts[k] == 1;
      std::vector<std::vector<bool>> operands;
      auto note = [&](const ShapeTracker& st) {
        if (std::vector<bool> b = operand_broadcast(st, *nests[k]); !b.empty()) operands.push_back(std::move(b));
      };
      for (const UOp* view : views_read[k]) note(ShapeTracker::of(*view));
      auto within = [](const std::vector<bool>& a, const std::vector<bool>& b) {
        for (size_t i = 0; i < a.size(); i++)
          if (a[i] && !b[i]) return false;
        return true;
      };
      bool c = false;
      for (size_t i = 0; i < operands.size() && !c; i++)
        for (size_t j = i + 1; j < operands.size() && !c; j++) c = !within(operands[i], operands[j]) && !within(operands[j], operands[i]);
      contracts[k] = c;
      return c;
    };
    std::vector<int64_t> group_ops;
    std::map<Nest, std::vector<size_t>> open;  // the groups of each loop nest
    for (size_t x : forward) {
      const std::optional<Nest>& n = nests[x];
      if (n && FUSE) {
        for (size_t gi : open[*n]) {
          if (groups_[gi].size() >= kMaxOutputs || group_ops[gi] + nodes_[x].alu > kMaxMergedOps) continue;
          bool ok = true;
          for (size_t m : groups_[gi]) ok = ok && reads_in_nest(x, *n, nodes_[m].out) && !(contraction(x) && contraction(m));
          if (!ok || !worth_joining(x, *n, gi) || reaches(x, gi)) continue;
          groups_[gi].push_back(x);
          group_of_[x] = gi;
          group_ops[gi] += nodes_[x].alu;
          break;
        }
        if (group_of_[x] != kNone) continue;
        open[*n].push_back(groups_.size());
      }
      group_of_[x] = groups_.size();
      groups_.push_back({x});
      group_ops.push_back(nodes_[x].alu);
    }
    for (const std::vector<size_t>& members : groups_) {
      if (!nodes_[members[0]].kernel) {
        g_.buffer_ops.push_back(nodes_[members[0]].out);
        continue;
      }
      Grouping::Kernel& k = g_.kernels.emplace_back();
      for (size_t m : members) {
        k.outputs.push_back(nodes_[m].out);
        k.reduces.push_back(nodes_[m].reduces);
      }
      k.shape = kernel_shape(nodes_[members[0]]);
    }
  }

 private:
  static constexpr size_t kNone = ~size_t{0};
  struct Node {
    LazyBuffer* out;
    bool kernel;                       // false: a buffer op
    std::vector<LazyBuffer*> reduces;  // fused into its kernel; the first sets the rows the others reduce
    int64_t alu = 0;
  };
  // A kernel (or buffer op) reads a buffer through a view of its loops (nullptr: by a loaded address,
  // a gather's data or a copy's source).
  struct Read {
    size_t node;
    UOpPtr view;
  };
  struct ReadKey {
    const LazyBuffer* b;
    size_t node;
    const UOp* view;
    bool operator==(const ReadKey&) const = default;
  };
  struct ReadKeyHash {
    size_t operator()(const ReadKey& k) const {
      size_t h = std::hash<const void*>()(k.b);
      h = h * 0x9e3779b97f4a7c15ULL + k.node;
      return h * 0x9e3779b97f4a7c15ULL + std::hash<const void*>()(k.view);
    }
  };

  Grouping& g_;
  std::vector<LazyBuffer*> order_;
  LBSet out_bases_;
  std::unordered_map<const LazyBuffer*, size_t> position_;  // in order_
  std::vector<Node> nodes_;                                 // in the order they are found: users first
  std::vector<LBSet> sources_;                              // per node, the buffers its kernel loads (realized or not)
  std::unordered_map<LazyBuffer*, std::vector<Read>> reads_;
  std::vector<Read> input_reads_;  // the reduce kernels' reads of buffers realized before this schedule
  std::unordered_set<ReadKey, ReadKeyHash> seen_reads_;
  std::vector<std::vector<size_t>> deps_;    // per node, the nodes whose outputs it reads
  std::vector<size_t> group_of_;             // per node, its group (kNone: not grouped yet)
  std::vector<std::vector<size_t>> groups_;  // members, sources first

  void add_read(LazyBuffer* lb, size_t node, UOpPtr view) {
    if (!seen_reads_.insert({lb, node, view.get()}).second) return;
    reads_[lb].push_back({node, std::move(view)});  // the Read keeps the view (seen_reads_'s key) alive
  }
  // node k reads `src` through `view` (an index of the kernel's loops -> the index of what src views)
  void enter(const LBPtr& src, const UOpPtr& view, size_t k) {
    LazyBuffer* lb = src->base();
    if (lb->op == Ops::CONST || lb->op == Ops::ARANGE) return;
    sources_[k].insert(lb);
    // the kernel's loops -> the index of src's base
    UOpPtr of_base = src->is_view() && view ? (src->st + ShapeTracker::of(*view)).to_uop() : view;
    if (lb->realized()) {  // kept only for a reduce kernel's contraction test (group_kernels)
      if (of_base && !nodes_[k].reduces.empty()) input_reads_.push_back({k, std::move(of_base)});
      return;
    }
    add_read(lb, k, std::move(of_base));
  }
  // what kernel k computes first to compute b at `view`
  void enter_sources(const LazyBuffer* b, const UOpPtr& view, size_t k) {
    switch (b->op) {
      case Ops::INDEX:  // the data is read by a loaded address; the offset and valid are computed here
        sources_[k].insert(b->srcs[0]->base());
        if (!b->srcs[0]->base()->realized()) add_read(b->srcs[0]->base(), k, nullptr);
        enter(b->srcs[1], view, k);
        enter(b->srcs[2], view, k);
        return;
      case Ops::ASSIGN: enter(b->srcs[0], view, k); return;  // the value (srcs[1] names the target)
      case Ops::REDUCE_AXIS: enter(b->srcs[0], ShapeTracker::from_shape(b->srcs[0]->shape()).to_uop(), k); return;
      default:
        for (auto& s : b->srcs) enter(s, view, k);
    }
  }
  void fuse_reduce(LazyBuffer* r, size_t k) {
    nodes_[k].reduces.push_back(r);
    enter_sources(r, nullptr, k);
  }

  // A realized buffer: a kernel of its own, a buffer op, or nothing (a constant; an empty buffer that
  // is not an output: its readers see a constant).
  void add_node(LazyBuffer* b) {
    if (b->op == Ops::CONST || (prod(b->shape()) == 0 && !out_bases_.count(b))) return;
    size_t k = nodes_.size();
    bool kernel = prod(b->shape()) != 0 && b->op != Ops::COPY && b->op != Ops::EMPTY;
    nodes_.push_back({b, kernel, {}, kernel && is_alu(b->op)});
    sources_.emplace_back();
    if (!kernel) {  // a copy orders its source's kernel before it (the source is realized: buffer_rules)
      if (b->op == Ops::COPY && prod(b->shape()) != 0 && !b->srcs[0]->base()->realized()) add_read(b->srcs[0]->base(), k, nullptr);
    } else if (b->op == Ops::REDUCE_AXIS) {
      fuse_reduce(b, k);
    } else {
      enter_sources(b, ShapeTracker::from_shape(b->shape()).to_uop(), k);
    }
  }

  // Why the reduce r cannot fuse into the kernel that reads it ("" when it fuses).
  std::string reduce_unfusable(const LazyBuffer* r) {
    auto it = reads_.find(const_cast<LazyBuffer*>(r));
    if (it == reads_.end()) return "";
    std::unordered_set<size_t> kernels;
    for (const Read& rd : it->second) {
      if (!rd.view) return "read by a loaded address";
      kernels.insert(rd.node);
      if (!reads_elementwise(ShapeTracker::of(*rd.view), prod(r->shape())))
        if (const char* why = reads_back(*r, ShapeTracker::of(*rd.view))) return why;
      const std::vector<LazyBuffer*>& fused = nodes_[rd.node].reduces;
      if (!fused.empty() && !same_rows(*fused[0], *r)) return "its reader's kernel reduces other rows";
    }
    if (kernels.size() > 1) return "computed by " + std::to_string(kernels.size()) + " kernels otherwise";
    return "";
  }

  // Why the elementwise value b is computed once rather than in each kernel that reads it ("" when
  // it is not): more than kMaxRecomputedOps ops (b and the unrealized elementwise ops under it), read
  // by several kernels.
  std::string recomputed(LazyBuffer* b) {
    auto it = reads_.find(b);
    if (!FUSE || it == reads_.end()) return "";
    std::unordered_set<size_t> kernels;
    for (const Read& rd : it->second) kernels.insert(rd.node);
    if (kernels.size() < 2) return "";
    int ops = 0;
    LBSet seen{b};
    std::vector<LazyBuffer*> todo{b};
    while (!todo.empty() && ops <= kMaxRecomputedOps) {
      LazyBuffer* x = todo.back();
      todo.pop_back();
      ops += is_alu(x->op);
      if (!is_alu(x->op) && op_group(x->op) != OpGroup::Cast) continue;  // a reduce or buffer op: its own ops are not b's
      for (auto& src : x->srcs) {
        LazyBuffer* s = src->base();
        if (!s->realized() && !g_.realizes.count(s) && s->op != Ops::REDUCE_AXIS && seen.insert(s).second) todo.push_back(s);
      }
    }
    if (ops <= kMaxRecomputedOps) return "";
    return "computed by " + std::to_string(kernels.size()) + " kernels otherwise, more than 64 ops each";
  }

  // The kernel's loops in the output's shape, or a fused reduce's shape when that reduce feeds the
  // output elementwise (a sum with elementwise ops after it, reshaped: its loops are the reduce's).
  static Shape kernel_shape(const Node& k) {
    if (!k.reduces.empty() && prod(k.reduces[0]->shape()) == prod(k.out->shape())) return k.reduces[0]->shape();
    return k.out->shape();
  }
  static std::optional<Nest> nest_of(const Node& k) {
    if (!k.kernel) return std::nullopt;
    Nest n{k.out->device, kernel_shape(k), kernel_shape(k), {}};
    if (!k.reduces.empty()) {
      n.full = k.reduces[0]->srcs[0]->shape();
      n.axes = std::get<ReduceArg>(k.reduces[0]->arg).axes;
    }
    if (n.full.size() != n.out.size()) return std::nullopt;
    return n;
  }

  // The dims a reduce keeps that st, a read by its loops, is broadcast along, when it varies along the
  // rows it reduces and is broadcast along one at least (each value it loads is used for several
  // outputs: a matmul's operands, a conv's); else empty (a batchnorm's mean varies along no row).
  // The kernel's optimizer fills the registers with a tile of a contraction's outputs: two of them in
  // one kernel need twice the registers and share at most one operand's loads (q, k and v projections
  // of one x: 2x slower together than apart). The strides are the last view's: a dim it does not move
  // along is broadcast in the whole index too (real_strides of several views, exact, simplifies their
  // index symbolically: 20x the time of the rest of group_kernels, 5 ms of the MNIST step's schedule).
  static std::vector<bool> operand_broadcast(const ShapeTracker& st, const Nest& n) {
    if (n.axes.empty() || st.shape() != n.full) return {};
    const std::vector<int64_t>& strides = st.views.back().strides;
    std::vector<bool> kept_broadcast(n.full.size(), false);
    bool varies_along_rows = false, any = false;
    for (size_t i = 0; i < n.full.size(); i++) {
      if (n.full[i] < 2) continue;
      bool reduced = std::find(n.axes.begin(), n.axes.end(), static_cast<int>(i)) != n.axes.end();
      bool broadcast = strides[i] == 0;
      varies_along_rows = varies_along_rows || (reduced && !broadcast);
      kept_broadcast[i] = !reduced && broadcast;
      any = any || kept_broadcast[i];
    }
    return varies_along_rows && any ? kept_broadcast : std::vector<bool>{};
  }

  // Kernel x (of loop nest n) reads m's output only at x's own index, or back over the rows its
  // reduces reduce (m's result broadcast along them); no gather.
  bool reads_in_nest(size_t x, const Nest& n, LazyBuffer* m) const {
    auto it = reads_.find(m);
    if (it == reads_.end()) return true;
    Shape back = strides_for_shape(n.out);
    for (int a : n.axes) back[static_cast<size_t>(a)] = 0;
    for (const Read& r : it->second) {
      if (r.node != x) continue;
      if (!r.view) return false;
      const ShapeTracker& st = ShapeTracker::of(*r.view);
      if (reads_elementwise(st, prod(n.out))) continue;  // at x's own index
      ShapeTracker s = st.simplify();
      if (n.axes.empty() || s.shape() != n.full || s.views.size() != 1 || s.views[0].mask || s.views[0].offset != 0) return false;
      for (size_t i = 0; i < n.full.size(); i++)
        if (n.full[i] > 1 && s.views[0].strides[i] != back[i]) return false;
    }
    return true;
  }

  // Whether kernel x (of loop nest n) gains by joining group gi: a small kernel always (one launch
  // less), one of kMinStreamed iterations or more when it loads a buffer a member loads too, or loads
  // nothing (see kMinStreamed).
  bool worth_joining(size_t x, const Nest& n, size_t gi) const {
    if (prod(n.full) < kMinStreamed || sources_[x].empty()) return true;
    for (size_t m : groups_[gi])
      for (LazyBuffer* b : sources_[m])
        if (sources_[x].count(b)) return true;
    return false;
  }

  // Whether group `target` is reachable from x's dependencies outside it (x joining it would make a
  // cycle); a search past its budget answers yes.
  bool reaches(size_t x, size_t target) const {
    std::vector<size_t> todo;
    std::unordered_set<size_t> seen;
    for (size_t d : deps_[x])
      if (group_of_[d] != kNone && group_of_[d] != target) todo.push_back(group_of_[d]);
    while (!todo.empty()) {
      size_t gi = todo.back();
      todo.pop_back();
      if (!seen.insert(gi).second) continue;
      if (seen.size() > 4096) return true;
      for (size_t m : groups_[gi])
        for (size_t d : deps_[m]) {
          if (group_of_[d] == kNone) continue;
          if (group_of_[d] == target) return true;
          todo.push_back(group_of_[d]);
        }
    }
    return false;
  }
};

}  // namespace

Grouping group(const std::vector<LBPtr>& outs) {
  Grouping g;
  Grouper grouper(outs, g);
  grouper.decide_realizes();
  grouper.group_kernels();
  return g;
}

}  // namespace tg
