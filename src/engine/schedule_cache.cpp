#include "engine/schedule_cache.h"

#include <mutex>
#include <string>
#include <unordered_map>

namespace tg {

namespace {

// Graphs bigger than this are scheduled without the cache: their keys would hold a copy of the graph.
constexpr size_t kMaxKeyNodes = 4096;
// At most this many schedules, and key nodes in all (a few hundred bytes each); then it starts over.
constexpr size_t kCapacity = 1024, kMaxTotalNodes = size_t{1} << 17;

// What the scheduler reads of one LazyBuffer, as a key node's arg (key nodes are SINKs over the key
// nodes of the LazyBuffer's sources: its srcs, or a view's base).
struct LazyNode final : ArgObject {
  Ops op;
  Arg arg;
  std::string device;
  ShapeTracker st;
  bool view, realized, forced_realize;
  int64_t buffer;  // the Buffer's number in the walk (first appearance), -1 for none
  LazyNode(const LazyBuffer& lb, int64_t buffer)
      : op(lb.op), arg(lb.arg), device(lb.device), st(lb.st), view(lb.is_view()), realized(lb.realized()),
        forced_realize(lb.forced_realize), buffer(buffer) {}
  uint64_t hash() const override {
    uint64_t h = hash_combine(static_cast<uint64_t>(op), arg_hash(arg));
    h = hash_combine(fnv1a(device, h), st.hash());
    return hash_combine(h, static_cast<uint64_t>(buffer) << 3 | uint64_t{view} << 2 | uint64_t{realized} << 1 | uint64_t{forced_realize});
  }
  bool equals(const ArgObject& o) const override {
    auto* n = dynamic_cast<const LazyNode*>(&o);
    return n && n->op == op && arg_equal(n->arg, arg) && n->device == device && n->st == st && n->view == view &&
           n->realized == realized && n->forced_realize == forced_realize && n->buffer == buffer;
  }
  std::string str() const override {
    return std::string(view ? "view" : op_name(op)) + " " + device + " " + st.str() + (realized ? " realized" : "") +
           (forced_realize ? " forced" : "") + " buffer " + std::to_string(buffer);
  }
};

// A schedule with its LazyBuffers and Buffers as positions in the key's walk.
struct CachedItem {
  UOpPtr ast;
  size_t n_outputs;
  std::string fusion;
  std::vector<size_t> outputs, bufs;
};
struct Cache {
  std::mutex mu;
  std::unordered_map<const UOp*, std::pair<UOpPtr, std::vector<CachedItem>>> entries;  // the key node keeps its address
  size_t nodes = 0;  // key nodes of all entries
};
Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: a schedule may run during static destruction
  return *c;
}

}  // namespace

ScheduleKey schedule_key(const std::vector<LBPtr>& outs) {
  ScheduleKey k;
  std::unordered_map<const LazyBuffer*, size_t> index;
  std::unordered_map<const Buffer*, int64_t> buffers;
  std::vector<UOpPtr> keys;
  // a LazyBuffer's sources in the key: a view's base, an unrealized buffer's srcs
  auto n_sources = [](const LazyBuffer* x) { return x->is_view() ? 1 : x->realized() ? 0 : x->srcs.size(); };
  auto source = [](LazyBuffer* x, size_t i) { return x->is_view() ? x->base() : x->srcs[i].get(); };
  std::vector<std::pair<LazyBuffer*, size_t>> stack;  // iterative post-order: sources before users
  std::vector<UOpPtr> roots;
  for (const LBPtr& o : outs) {
    if (!index.count(o.get())) stack.emplace_back(o.get(), 0);
    while (!stack.empty()) {
      auto [x, i] = stack.back();
      size_t n = n_sources(x);
      if (i < n) {
        stack.back().second++;
        if (LazyBuffer* next = source(x, i); !index.count(next)) stack.emplace_back(next, 0);
        continue;
      }
      if (k.nodes.size() == kMaxKeyNodes) return {};
      int64_t buf = -1;
      if (!x->is_view() && x->buffer) buf = buffers.emplace(x->buffer.get(), static_cast<int64_t>(buffers.size())).first->second;
      std::vector<UOpPtr> src_keys;
      for (size_t j = 0; j < n; j++) src_keys.push_back(keys[index.at(source(x, j))]);
      index.emplace(x, k.nodes.size());
      k.nodes.push_back(x);
      keys.push_back(UOp::make(Ops::SINK, x->dtype, std::move(src_keys), std::shared_ptr<const ArgObject>(std::make_shared<LazyNode>(*x, buf))));
      stack.pop_back();
    }
    roots.push_back(keys[index.at(o.get())]);
  }
  k.key = UOp::make(Ops::SINK, dtypes::void_, std::move(roots), int64_t{FUSE.value});
  return k;
}

std::optional<std::vector<ScheduleItem>> cached_schedule(const ScheduleKey& k) {
  if (!k.key) return std::nullopt;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.entries.find(k.key.get());
  if (it == c.entries.end()) return std::nullopt;
  std::vector<ScheduleItem> schedule;
  for (const CachedItem& ci : it->second.second) {
    ScheduleItem si;
    si.ast = ci.ast;
    si.n_outputs = ci.n_outputs;
    si.fusion = ci.fusion;
    for (size_t i : ci.outputs) si.outputs.push_back(k.nodes[i]->shared_from_this());
    for (size_t i : ci.bufs) si.bufs.push_back(k.nodes[i]->buffer);
    schedule.push_back(std::move(si));
  }
  return schedule;
}

void cache_schedule(const ScheduleKey& k, const std::vector<ScheduleItem>& schedule) {
  if (!k.key) return;
  std::unordered_map<const LazyBuffer*, size_t> node_at;
  std::unordered_map<const Buffer*, size_t> buffer_at;
  for (size_t i = 0; i < k.nodes.size(); i++) {
    node_at.emplace(k.nodes[i], i);
    if (!k.nodes[i]->is_view() && k.nodes[i]->buffer) buffer_at.emplace(k.nodes[i]->buffer.get(), i);
  }
  std::vector<CachedItem> items;
  for (const ScheduleItem& si : schedule) {
    CachedItem ci{si.ast, si.n_outputs, si.fusion, {}, {}};
    for (const LBPtr& o : si.outputs) {
      auto it = node_at.find(o.get());
      if (it == node_at.end()) return;
      ci.outputs.push_back(it->second);
    }
    for (const auto& b : si.bufs) {
      auto it = buffer_at.find(b.get());
      if (it == buffer_at.end()) return;
      ci.bufs.push_back(it->second);
    }
    items.push_back(std::move(ci));
  }
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.entries.size() >= kCapacity || c.nodes + k.nodes.size() > kMaxTotalNodes) c.entries.clear(), c.nodes = 0;
  if (c.entries.emplace(k.key.get(), std::make_pair(k.key, std::move(items))).second) c.nodes += k.nodes.size();
}

size_t schedule_cache_size() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.entries.size();
}

}  // namespace tg
