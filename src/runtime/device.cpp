// The device registry, the allocator's LRU cache, the compile cache on disk, and Buffer.
#include "runtime/device.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "renderer/renderer.h"
#include "runtime/register.h"
#include "tg/error.h"
#include "tg/helpers.h"

namespace tg {

// ------------------------------------------------------------------------------------------------------
// Allocator
// ------------------------------------------------------------------------------------------------------

// Freed buffers kept for reuse, at most this many bytes in all per allocator.
static constexpr size_t kMaxCachedBytes = size_t{1} << 30;

// mem_used is shared by every device's allocator, each with its own lock.
static void count_mem(int64_t delta) { std::atomic_ref<int64_t>(GlobalCounters::mem_used).fetch_add(delta); }

void* Allocator::alloc(size_t nbytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [lo, hi] = cache_.equal_range(nbytes);
    if (lo != hi) {
      auto it = std::prev(hi);  // the most recently freed: likeliest to be warm in the CPU caches
      void* ptr = it->second->second;
      lru_.erase(it->second);
      cache_.erase(it);
      cached_bytes_ -= nbytes;
      return ptr;
    }
  }
  void* ptr = nullptr;
  try {
    ptr = raw_alloc(nbytes);
  } catch (const Error&) {  // out of memory: what we hold in the cache may be enough, so retry once
    free_cache();
    ptr = raw_alloc(nbytes);
  }
  count_mem(static_cast<int64_t>(nbytes));
  return ptr;
}

void Allocator::free(void* ptr, size_t nbytes) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (nbytes > kMaxCachedBytes) {
    raw_free(ptr, nbytes);
    count_mem(-static_cast<int64_t>(nbytes));
    return;
  }
  lru_.emplace_back(nbytes, ptr);
  cache_.emplace(nbytes, std::prev(lru_.end()));
  cached_bytes_ += nbytes;
  while (cached_bytes_ > kMaxCachedBytes) {  // evict the oldest
    auto [size, old] = lru_.front();
    auto [lo, hi] = cache_.equal_range(size);
    for (auto it = lo; it != hi; ++it)
      if (it->second == lru_.begin()) { cache_.erase(it); break; }
    lru_.pop_front();
    cached_bytes_ -= size;
    raw_free(old, size);
    count_mem(-static_cast<int64_t>(size));
  }
}

void Allocator::free_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [size, ptr] : lru_) {
    raw_free(ptr, size);
    count_mem(-static_cast<int64_t>(size));
  }
  lru_.clear();
  cache_.clear();
  cached_bytes_ = 0;
}

// ------------------------------------------------------------------------------------------------------
// Compiler: the on-disk cache
// ------------------------------------------------------------------------------------------------------

namespace {

std::filesystem::path cache_dir() {
  if (std::string d = getenv_str("CACHEDIR"); !d.empty()) return d;
  if (std::string x = getenv_str("XDG_CACHE_HOME"); !x.empty()) return std::filesystem::path(x) / "tinygrad_cpp";
  if (std::string h = getenv_str("HOME"); !h.empty()) return std::filesystem::path(h) / ".cache" / "tinygrad_cpp";
  return {};
}

std::string hex64(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

// An entry is "TGC1 <check> <size>\n" then the binary. The file name is one hash of (cachekey, src), the
// check a second, independent one, so a hash collision or a truncated or foreign file is detected and
// simply recompiled rather than loaded.
constexpr const char* kMagic = "TGC1";

bool read_entry(const std::filesystem::path& p, const std::string& check, std::string& out) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return false;
  std::string magic, got_check;
  size_t size = 0;
  if (!(f >> magic >> got_check >> size) || magic != kMagic || got_check != check || f.get() != '\n') return false;
  std::string data(size, '\0');
  if (!f.read(data.data(), static_cast<std::streamsize>(size)) || f.peek() != std::char_traits<char>::eof()) return false;
  out = std::move(data);
  return true;
}

void write_entry(const std::filesystem::path& dir, const std::filesystem::path& p, const std::string& check,
                 const std::string& data) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return;  // the cache is an optimization: an unwritable directory just means no caching
  // A name unique to this process and thread, renamed into place: rename() is atomic, so a concurrent
  // reader (another process compiling the same kernel) sees either no entry or a whole one.
  static std::atomic<uint64_t> counter{0};
  std::ostringstream tmpname;
  tmpname << p.filename().string() << ".tmp." << ::getpid() << "." << std::hash<std::thread::id>{}(std::this_thread::get_id())
          << "." << counter.fetch_add(1);
  std::filesystem::path tmp = dir / tmpname.str();
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return;
    f << kMagic << ' ' << check << ' ' << data.size() << '\n';
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!f.flush()) { f.close(); std::filesystem::remove(tmp, ec); return; }
  }
  std::filesystem::rename(tmp, p, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace

std::string Compiler::compile_cached(const std::string& src) {
  return cached(src, [&] { return compile(src); });
}

std::string Compiler::cached(const std::string& key, const std::function<std::string()>& make) {
  if (CACHELEVEL <= 0) return make();
  std::filesystem::path dir = cache_dir();
  if (dir.empty()) return make();
  std::string keyed = cachekey_ + '\0' + key;
  std::filesystem::path p = dir / (hex64(fnv1a(keyed)) + ".so");
  std::string check = hex64(fnv1a(keyed, 0x84222325cbf29ce4ull));
  std::string value;
  if (read_entry(p, check, value)) return value;
  value = make();
  write_entry(dir, p, check, value);
  return value;
}

// ------------------------------------------------------------------------------------------------------
// Compiled
// ------------------------------------------------------------------------------------------------------

Compiled::Compiled(std::string name_, std::unique_ptr<Allocator> allocator, std::unique_ptr<Compiler> compiler,
                   std::shared_ptr<Renderer> renderer,
                   std::function<std::unique_ptr<Program>(const std::string&, const std::string&)> program)
    : name(std::move(name_)), allocator_(std::move(allocator)), compiler_(std::move(compiler)),
      renderer_(std::move(renderer)), program_(std::move(program)) {
  TG_ASSERT(allocator_ != nullptr, "device ", name, " has no allocator");
  if (!program_)
    program_ = [n = name](const std::string&, const std::string&) -> std::unique_ptr<Program> {
      TG_ERROR(n, ": device cannot run programs");
    };
}

Compiler& Compiled::compiler() {
  TG_CHECK(compiler_ != nullptr, name, ": device has no compiler");
  return *compiler_;
}

const Renderer& Compiled::renderer() const {
  TG_CHECK(renderer_ != nullptr, name, ": device has no renderer");
  return *renderer_;
}

// ------------------------------------------------------------------------------------------------------
// Device registry
// ------------------------------------------------------------------------------------------------------

namespace {

struct Registry {
  std::recursive_mutex mu;  // recursive: a backend's factory may itself open another device
  std::map<std::string, Device::Factory> factories;
  std::map<std::string, std::unique_ptr<Compiled>> opened;
};

// Never destroyed, on purpose: Buffers in static objects may be freed after main returns, and must still
// find their allocator. Everything stays reachable, so LeakSanitizer does not report it.
Registry& raw_registry() {
  static Registry* r = new Registry;
  return *r;
}

Registry& registry() {
  static std::once_flag once;
  std::call_once(once, register_builtin_backends);
  return raw_registry();
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string known_list(const Registry& r) {
  std::string s;
  for (auto& [k, f] : r.factories) s += (s.empty() ? "" : ", ") + k;
  return s;
}

}  // namespace

void register_builtin_backends() {
  register_cpu_backend();
  register_ext_backend();
}

void add_builtin_backend(const std::string& prefix, Device::Factory f) {
  Registry& r = raw_registry();
  std::lock_guard<std::recursive_mutex> lock(r.mu);
  r.factories.emplace(upper(prefix), std::move(f));
}

void Device::register_backend(const std::string& prefix, Factory f) {
  TG_CHECK(!prefix.empty() && prefix.find(':') == std::string::npos, "Device: bad backend prefix '", prefix, "'");
  TG_CHECK(f != nullptr, "Device: backend '", prefix, "' registered without a factory");
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.mu);
  r.factories[upper(prefix)] = std::move(f);
}

std::vector<std::string> Device::backends() {
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.mu);
  std::vector<std::string> out;
  for (auto& [k, f] : r.factories) out.push_back(k);
  return out;
}

std::string Device::canonicalize(const std::string& name) {
  // Every op that makes a constant asks again for the same name: the last answer is kept (per thread; a
  // known device stays known, as factories are never removed), in plain arrays: trivially destructible,
  // so still usable from a static's destructor after this thread's objects are gone.
  struct Memo {
    char name[32], canonical[32];
    size_t name_len = 0, canonical_len = 0;
  };
  thread_local Memo last;
  if (last.canonical_len && name.compare(0, std::string::npos, last.name, last.name_len) == 0) return std::string(last.canonical, last.canonical_len);
  std::string n = upper(name);
  if (n.size() > 2 && n.compare(n.size() - 2, 2, ":0") == 0) n.resize(n.size() - 2);
  std::string prefix = n.substr(0, n.find(':'));
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.mu);
  TG_CHECK(r.factories.count(prefix), "Device: unknown device '", name, "' (known: ", known_list(r), ")");
  if (size_t colon = n.find(':'); colon != std::string::npos) {
    std::string idx = n.substr(colon + 1);
    TG_CHECK(!idx.empty() && std::all_of(idx.begin(), idx.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }),
             "Device: bad device index in '", name, "' (expected e.g. ", prefix, ":1)");
  }
  if (name.size() <= sizeof last.name && n.size() <= sizeof last.canonical) {
    std::memcpy(last.name, name.data(), name.size());
    std::memcpy(last.canonical, n.data(), n.size());
    last.name_len = name.size(), last.canonical_len = n.size();
  }
  return n;
}

Compiled& Device::get(const std::string& name) {
  std::string n = canonicalize(name);
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.mu);
  if (auto it = r.opened.find(n); it != r.opened.end()) return *it->second;
  Factory& f = r.factories.at(n.substr(0, n.find(':')));
  std::unique_ptr<Compiled> dev;
  try {
    dev = f(n);
  } catch (const Error& e) {  // typically a driver that is not installed
    TG_ERROR_AS(RuntimeError, "Device: cannot open ", n, ": ", e.what());
  }
  TG_CHECK(dev != nullptr, "Device: backend for ", n, " returned no device");
  if (DEBUG >= 1) std::printf("opened device %s\n", n.c_str());
  return *(r.opened[n] = std::move(dev));
}

std::string Device::DEFAULT() {
  if (std::string d = getenv_str("DEVICE"); !d.empty()) return canonicalize(d);
  for (const char* flag : {"CPU", "CL", "CUDA", "INTERP"})
    if (getenv(flag) == 1) return canonicalize(flag);
  return "CPU";
}

// ------------------------------------------------------------------------------------------------------
// Buffer
// ------------------------------------------------------------------------------------------------------

Buffer::Buffer(std::string device_, size_t size_, DType dtype_)
    : device(std::move(device_)), size(size_), dtype(dtype_) {}

// The bytes Buffers hold, and their peak (GlobalCounters::mem_live, mem_peak).
static void count_live(int64_t delta) {
  int64_t now = std::atomic_ref<int64_t>(GlobalCounters::mem_live).fetch_add(delta) + delta;
  std::atomic_ref<int64_t> peak(GlobalCounters::mem_peak);
  for (int64_t p = peak.load(); now > p && !peak.compare_exchange_weak(p, now);) {}
}

Buffer::~Buffer() {
  if (!ptr_) return;
  allocator_->free(ptr_, nbytes());
  count_live(-static_cast<int64_t>(nbytes()));
}

Buffer& Buffer::allocate() {
  if (ptr_) return *this;
  Allocator& a = Device::get(device).allocator();
  ptr_ = a.alloc(nbytes());
  TG_ASSERT(ptr_ != nullptr, "allocator of ", device, " returned null for ", nbytes(), " bytes");
  allocator_ = &a;
  count_live(static_cast<int64_t>(nbytes()));
  return *this;
}

void Buffer::swap_memory(Buffer& other) {
  TG_ASSERT(device == other.device && size == other.size && dtype == other.dtype && ptr_ && other.ptr_, "swap_memory: ", device, " ",
            size, " x ", dtype.name(), " with ", other.device, " ", other.size, " x ", other.dtype.name());
  std::swap(ptr_, other.ptr_);
  std::swap(allocator_, other.allocator_);
}

void Buffer::copyin(const void* host) {
  allocate();
  allocator_->copyin(ptr_, host, nbytes());
}

void Buffer::copyout(void* host) const {
  TG_CHECK(ptr_ != nullptr, "Buffer: copyout from an unallocated buffer on ", device, " (", size, " x ",
           dtype.name(), ")");
  allocator_->copyout(host, ptr_, nbytes());
}

}  // namespace tg
