// Devices, buffers, allocators, compilers and programs: everything that touches hardware.
//
// The registry maps canonical device names ("CPU", "EXT", "CL", "CUDA:1") to a Compiled device, opened
// on first use. A compiled device bundles an Allocator (with an LRU cache of freed buffers), a Compiler
// (with a persistent on-disk cache keyed by a hash of source and flags) and a Program factory. "EXT" is
// the host device where data given by the user lives before it is copied to a compute device.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tg/dtype.h"

namespace tg {

struct Renderer;  // renderer/renderer.h: UOps -> source for this device

// Raw device memory with an LRU cache of freed allocations, keyed by size (freed buffers are reused
// before new memory is asked for, which saves page faults on large outputs).
// A derived allocator calls free_cache() in its destructor: the base cannot reach raw_free by then.
class Allocator {
 public:
  virtual ~Allocator() = default;
  void* alloc(size_t nbytes);            // from the cache when a freed buffer of this size is there
  void free(void* ptr, size_t nbytes);   // into the cache (bounded); really freed on free_cache()
  void free_cache();
  virtual void copyin(void* dst, const void* src, size_t nbytes) = 0;   // host -> device
  virtual void copyout(void* dst, const void* src, size_t nbytes) = 0;  // device -> host
  // A host pointer to the memory when the device shares host memory (CPU, EXT), else nullptr.
  virtual void* host_ptr(void* ptr) { (void)ptr; return nullptr; }
 protected:
  virtual void* raw_alloc(size_t nbytes) = 0;
  virtual void raw_free(void* ptr, size_t nbytes) = 0;
 private:
  std::mutex mu_;
  std::list<std::pair<size_t, void*>> lru_;                                // freed buffers, oldest first
  std::multimap<size_t, std::list<std::pair<size_t, void*>>::iterator> cache_;  // size -> entry in lru_
  size_t cached_bytes_ = 0;
};

// Source -> loadable binary. compile_cached() consults the on-disk cache (CACHELEVEL>0).
class Compiler {
 public:
  explicit Compiler(std::string cachekey) : cachekey_(std::move(cachekey)) {}
  virtual ~Compiler() = default;
  // Throws tg::Error with the source and the compiler's own message when compilation fails.
  virtual std::string compile(const std::string& src) = 0;
  std::string compile_cached(const std::string& src);
  // make() under the on-disk cache, keyed by (cachekey, key): for other facts about this compiler that
  // are costly to find out (e.g. a feature probe). Not cached when CACHELEVEL=0.
  std::string cached(const std::string& key, const std::function<std::string()>& make);
  const std::string& cachekey() const { return cachekey_; }
 private:
  std::string cachekey_;  // names the compiler and its flags; part of the cache key
};

// A loaded kernel. bufs: device pointers in kernel-argument order; vals: values of the symbolic variables.
// global_size/local_size as rendered. Returns seconds when `wait`, else 0.
class Program {
 public:
  virtual ~Program() = default;
  virtual double operator()(const std::vector<void*>& bufs, const std::vector<int64_t>& vals,
                            const std::vector<int64_t>& global_size, const std::vector<int64_t>& local_size,
                            bool wait) = 0;
  // Estimated operations of one launch (0 = unknown); lets the CPU skip its thread pool for tiny kernels.
  void set_work_hint(int64_t est_ops) { est_ops_ = est_ops; }
  int64_t work_hint() const { return est_ops_; }
 protected:
  int64_t est_ops_ = 0;
};

class Buffer;
// A batch of one device's kernels run as one call (TinyJit's replay, tg/jit.h), without per-kernel
// lookups, allocations or locks. Each launch names its buffers by the slots that hold them: a call reads
// the memory each Buffer has then (a replay puts new inputs and outputs in the slots, and an assign's
// commit trades memory between Buffers).
class Graph {
 public:
  struct Launch {
    Program* program;
    std::vector<const std::shared_ptr<Buffer>*> bufs;
    std::vector<int64_t> global_size, local_size;
  };
  virtual ~Graph() = default;
  virtual void operator()() = 0;
};

class Compiled {
 public:
  Compiled(std::string name, std::unique_ptr<Allocator> allocator, std::unique_ptr<Compiler> compiler,
           std::shared_ptr<Renderer> renderer,
           std::function<std::unique_ptr<Program>(const std::string& fn_name, const std::string& lib)> program);
  virtual ~Compiled() = default;
  const std::string name;
  Allocator& allocator() { return *allocator_; }
  bool has_compiler() const { return compiler_ != nullptr; }
  bool has_renderer() const { return renderer_ != nullptr; }
  Compiler& compiler();
  const Renderer& renderer() const;
  std::unique_ptr<Program> program(const std::string& fn_name, const std::string& lib) const { return program_(fn_name, lib); }
  virtual void synchronize() {}
  // The device's graph executor for these launches (its programs), or nullptr when it has none.
  using GraphFactory = std::function<std::unique_ptr<Graph>(std::vector<Graph::Launch>)>;
  std::unique_ptr<Graph> graph(std::vector<Graph::Launch> launches) const { return graph_ ? graph_(std::move(launches)) : nullptr; }
  void set_graph(GraphFactory f) { graph_ = std::move(f); }
 private:
  std::unique_ptr<Allocator> allocator_;
  std::unique_ptr<Compiler> compiler_;
  std::shared_ptr<Renderer> renderer_;
  std::function<std::unique_ptr<Program>(const std::string&, const std::string&)> program_;
  GraphFactory graph_;
};

// The device registry.
struct Device {
  // "cpu" -> "CPU", "cuda:0" -> "CUDA"; throws tg::Error naming the known devices for an unknown one.
  static std::string canonicalize(const std::string& name);
  static Compiled& get(const std::string& name);  // opens on first use (DEBUG>=1 prints it)
  static std::string DEFAULT();                    // from DEVICE=..., or CPU=1 / CL=1 / CUDA=1, else "CPU"
  using Factory = std::function<std::unique_ptr<Compiled>(const std::string& name)>;
  static void register_backend(const std::string& prefix, Factory f);  // one line per backend
  static std::vector<std::string> backends();
};

// A typed, sized allocation on a device. Allocated lazily; freed (into the allocator cache) on destruction.
class Buffer {
 public:
  Buffer(std::string device, size_t size, DType dtype);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer& allocate();
  bool is_allocated() const { return ptr_ != nullptr; }
  void* ptr() const { return ptr_; }
  void copyin(const void* host);  // nbytes() from host memory
  void copyout(void* host) const; // nbytes() into host memory
  // Trades memory with another allocated buffer of the same device, size and dtype (an assign's commit).
  void swap_memory(Buffer& other);
  size_t nbytes() const { return size * static_cast<size_t>(dtype.itemsize()); }
  const std::string device;
  const size_t size;
  const DType dtype;
 private:
  void* ptr_ = nullptr;
  Allocator* allocator_ = nullptr;  // the device's, kept so the destructor needs no registry lookup
};

}  // namespace tg
