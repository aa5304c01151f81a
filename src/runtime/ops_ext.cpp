// "EXT": the host device where the user's data lives before it is copied to a compute device. Plain
// aligned host memory; no compiler, no renderer, no programs.
#include <cstdlib>
#include <cstring>

#include "runtime/device.h"
#include "runtime/register.h"
#include "tg/error.h"

namespace tg {

namespace {

// 64 bytes: a cache line, and the widest vector load (AVX-512) rendered kernels may use.
constexpr size_t kAlign = 64;

class HostAllocator final : public Allocator {
 public:
  explicit HostAllocator(std::string device) : device_(std::move(device)) {}
  ~HostAllocator() override { free_cache(); }
  void copyin(void* dst, const void* src, size_t nbytes) override { if (nbytes) std::memcpy(dst, src, nbytes); }
  void copyout(void* dst, const void* src, size_t nbytes) override { if (nbytes) std::memcpy(dst, src, nbytes); }
  void* host_ptr(void* ptr) override { return ptr; }

 protected:
  void* raw_alloc(size_t nbytes) override {
    // aligned_alloc wants a non-zero multiple of the alignment
    size_t rounded = nbytes == 0 ? kAlign : (nbytes + kAlign - 1) / kAlign * kAlign;
    TG_CHECK(rounded >= nbytes, device_, ": cannot allocate ", nbytes, " bytes");
    void* p = std::aligned_alloc(kAlign, rounded);
    TG_CHECK(p != nullptr, device_, ": out of memory allocating ", nbytes, " bytes");
    return p;
  }
  void raw_free(void* ptr, size_t) override { std::free(ptr); }

 private:
  std::string device_;
};

}  // namespace

std::unique_ptr<Allocator> make_host_allocator(const std::string& device) {
  return std::make_unique<HostAllocator>(device);
}

void register_ext_backend() {
  add_builtin_backend("EXT", [](const std::string& name) {
    return std::make_unique<Compiled>(name, make_host_allocator(name), nullptr, nullptr, nullptr);
  });
}

}  // namespace tg
