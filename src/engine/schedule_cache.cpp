#include "engine/schedule_cache.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tg {

namespace {

// Graphs bigger than this are scheduled without the cache: their keys would hold a copy of the graph.
// (A sort of 1000 float64 entries, a network of 55 steps, is about 5000 nodes.)
constexpr size_t kMaxKeyNodes = 16384;
// At most this many schedules, and key nodes in all (a few hundred bytes each); then it starts over.
constexpr size_t kCapacity = 1024, kMaxTotalNodes = size_t{1} << 17;

// The walk's numbering of LazyBuffers and Buffers: pointer -> number, open addressing. One per thread,
// kept between walks, so that a walk allocates nothing once the table has grown to its graphs.
class PointerNumbers {
 public:
  void clear() {
    for (size_t i : used_) slots_[i].first = nullptr;
    used_.clear();
  }
  size_t size() const { return used_.size(); }
  // The number of p, if it has one.
  const int64_t* find(const void* p) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = slot(p);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].first == p) return &slots_[i].second;
      if (!slots_[i].first) return nullptr;
    }
  }
  // p's number, given it (v) if it has none yet.
  int64_t emplace(const void* p, int64_t v) {
    if (2 * (used_.size() + 1) > slots_.size()) grow();
    size_t i = slot(p);
    for (; slots_[i].first; i = (i + 1) & (slots_.size() - 1))
      if (slots_[i].first == p) return slots_[i].second;
    slots_[i] = {p, v};
    used_.push_back(i);
    return v;
  }

 private:
  size_t slot(const void* p) const { return (reinterpret_cast<uintptr_t>(p) * 0x9e3779b97f4a7c15ull >> 20) & (slots_.size() - 1); }
  void grow() {
    std::vector<std::pair<const void*, int64_t>> old;
    for (size_t i : used_) old.push_back(slots_[i]);
    slots_.assign(std::max<size_t>(64, 2 * slots_.size()), {nullptr, 0});
    used_.clear();
    for (auto& [p, v] : old) emplace(p, v);
  }
  std::vector<std::pair<const void*, int64_t>> slots_;  // a power of two, at most half full
  std::vector<size_t> used_;
};

// A schedule with its LazyBuffers and Buffers as positions in the key's walk.
struct CachedItem {
  UOpPtr ast;
  size_t n_outputs;
  std::string fusion;
  std::vector<size_t> outputs, bufs;
};
// A key's records, owned, and its schedule.
struct Entry {
  std::vector<uint64_t> words;
  std::vector<Arg> args;
  std::vector<CachedItem> items;
};
struct Cache {
  std::mutex mu;
  std::unordered_multimap<uint64_t, Entry> entries;  // by the key's hash
  size_t nodes = 0;  // key nodes of all entries
};
Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: a schedule may run during static destruction
  return *c;
}

bool matches(const Entry& e, const ScheduleKey& k) {
  if (e.words != k.words || e.args.size() != k.args.size()) return false;
  for (size_t i = 0; i < e.args.size(); i++)
    if (!arg_equal(e.args[i], *k.args[i])) return false;
  return true;
}

const Entry* find(const Cache& c, const ScheduleKey& k) {
  auto [b, e] = c.entries.equal_range(k.hash);
  for (auto it = b; it != e; ++it)
    if (matches(it->second, k)) return &it->second;
  return nullptr;
}

// One LazyBuffer's record. The first word packs the flags and counts: a word per fact would only make
// the key longer.
void write_record(ScheduleKey& k, const LazyBuffer& x, bool forced, int64_t buffer, size_t n_sources, const std::string*& last_device) {
  bool has_arg = !std::holds_alternative<std::monostate>(x.arg), new_device = !last_device || *last_device != x.device;
  k.words.push_back(static_cast<uint64_t>(x.op) | uint64_t{x.is_view()} << 8 | uint64_t{x.realized()} << 9 |
                    uint64_t{forced} << 10 | uint64_t{has_arg} << 11 | uint64_t{new_device} << 12 |
                    static_cast<uint64_t>(x.dtype.scalar) << 16 | uint64_t{x.dtype.count} << 24 | uint64_t{x.dtype.ptr} << 32 |
                    static_cast<uint64_t>(n_sources) << 40);
  k.words.push_back(static_cast<uint64_t>(buffer));
  if (new_device) {  // the device's name, 8 characters a word, when it is not the previous record's
    last_device = &x.device;
    k.words.push_back(x.device.size());
    for (size_t i = 0; i < x.device.size(); i += 8) {
      uint64_t w = 0;
      std::memcpy(&w, x.device.data() + i, std::min<size_t>(8, x.device.size() - i));
      k.words.push_back(w);
    }
  }
  if (has_arg) k.args.push_back(&x.arg);
  k.words.push_back(x.st.views.size());
  for (const View& v : x.st.views) {
    k.words.push_back(v.shape.size() | uint64_t{v.mask.has_value()} << 32);
    for (int64_t d : v.shape) k.words.push_back(static_cast<uint64_t>(d));
    for (int64_t d : v.strides) k.words.push_back(static_cast<uint64_t>(d));
    k.words.push_back(static_cast<uint64_t>(v.offset));
    if (v.mask)
      for (auto [b, e] : *v.mask) k.words.push_back(static_cast<uint64_t>(b)), k.words.push_back(static_cast<uint64_t>(e));
  }
}

// The vectors of this thread's last dropped key, cleared, for the next one. A key bigger than these
// bounds frees its own: one big graph must not make every later key hold as much.
constexpr size_t kMaxSpareWords = 4096, kMaxSpareNodes = 512;
struct Spare {
  std::vector<uint64_t> words;
  std::vector<const Arg*> args;
  std::vector<LazyBuffer*> nodes;
  ~Spare() { gone = true; }
  static thread_local bool gone;  // trivially destructible: readable to the thread's very end
};
thread_local bool Spare::gone = false;
Spare& spare() {
  thread_local Spare s;
  return s;
}

}  // namespace

ScheduleKey::~ScheduleKey() {
  if (Spare::gone || words.capacity() > kMaxSpareWords || nodes.capacity() > kMaxSpareNodes) return;
  Spare& s = spare();
  if (words.capacity() > s.words.capacity()) s.words.swap(words), s.words.clear();
  if (args.capacity() > s.args.capacity()) s.args.swap(args), s.args.clear();
  if (nodes.capacity() > s.nodes.capacity()) s.nodes.swap(nodes), s.nodes.clear();
}

ScheduleKey schedule_key(const std::vector<LBPtr>& outs) {
  ScheduleKey k;
  if (!Spare::gone) {  // (empty and cleared: a key's words start from nothing)
    Spare& s = spare();
    k.words.swap(s.words), k.args.swap(s.args), k.nodes.swap(s.nodes);
  }
  thread_local PointerNumbers index, buffers;  // LazyBuffer -> position in the walk; Buffer -> number
  index.clear();
  buffers.clear();
  // a LazyBuffer's sources in the key: a view's base, an unrealized buffer's srcs
  auto n_sources = [](const LazyBuffer* x) { return x->is_view() ? 1 : x->realized() ? 0 : x->srcs.size(); };
  auto source = [](LazyBuffer* x, size_t i) { return x->is_view() ? x->base() : x->srcs[i].get(); };
  thread_local std::vector<std::pair<LazyBuffer*, size_t>> stack;  // iterative post-order: sources before users
  stack.clear();
  const std::string* last_device = nullptr;
  for (const LBPtr& o : outs) {
    if (!index.find(o.get())) stack.emplace_back(o.get(), 0);
    while (!stack.empty()) {
      auto [x, i] = stack.back();
      size_t n = n_sources(x);
      if (i < n) {
        stack.back().second++;
        if (LazyBuffer* next = source(x, i); !index.find(next)) stack.emplace_back(next, 0);
        continue;
      }
      if (k.nodes.size() == kMaxKeyNodes) return {};
      int64_t buf = -1;
      if (!x->is_view() && x->buffer) buf = buffers.emplace(x->buffer.get(), static_cast<int64_t>(buffers.size()));
      bool forced = x->forced_realize;  // read once: another thread may set it meanwhile
      write_record(k, *x, forced, buf, n, last_device);
      k.forced += forced;
      for (size_t j = 0; j < n; j++) k.words.push_back(static_cast<uint64_t>(*index.find(source(x, j))));
      index.emplace(x, static_cast<int64_t>(k.nodes.size()));
      k.nodes.push_back(x);
      stack.pop_back();
    }
    k.words.push_back(~uint64_t{0});  // then the output's position (no record's first word is all ones)
    k.words.push_back(static_cast<uint64_t>(*index.find(o.get())));
  }
  k.words.push_back(static_cast<uint64_t>(FUSE.value));
  uint64_t h = k.words.size();
  for (uint64_t w : k.words) h = hash_combine(h, w);
  for (const Arg* a : k.args) h = hash_combine(h, arg_hash(*a));
  k.hash = h;
  return k;
}

bool key_is_current(const ScheduleKey& k) {
  size_t forced = 0;
  for (const LazyBuffer* x : k.nodes) forced += x->forced_realize;
  return forced == k.forced;
}

std::optional<std::vector<ScheduleItem>> cached_schedule(const ScheduleKey& k) {
  if (k.words.empty()) return std::nullopt;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  const Entry* e = find(c, k);
  if (!e) return std::nullopt;
  std::vector<ScheduleItem> schedule;
  schedule.reserve(e->items.size());
  for (const CachedItem& ci : e->items) {
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
  if (k.words.empty()) return;
  std::unordered_map<const LazyBuffer*, size_t> node_at;
  std::unordered_map<const Buffer*, size_t> buffer_at;
  for (size_t i = 0; i < k.nodes.size(); i++) {
    node_at.emplace(k.nodes[i], i);
    if (!k.nodes[i]->is_view() && k.nodes[i]->buffer) buffer_at.emplace(k.nodes[i]->buffer.get(), i);
  }
  Entry entry{k.words, {}, {}};
  for (const Arg* a : k.args) entry.args.push_back(*a);
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
    entry.items.push_back(std::move(ci));
  }
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  if (find(c, k)) return;  // another thread cached it first
  if (c.entries.size() >= kCapacity || c.nodes + k.nodes.size() > kMaxTotalNodes) c.entries.clear(), c.nodes = 0;
  c.nodes += k.nodes.size();
  c.entries.emplace(k.hash, std::move(entry));
}

size_t schedule_cache_size() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.entries.size();
}

}  // namespace tg
