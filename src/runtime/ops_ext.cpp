// "EXT": the host device where the user's data lives before it is copied to a compute device. Plain
// aligned host memory (the CPU device's too); no compiler, no renderer, no programs.
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "runtime/device.h"
#include "runtime/register.h"
#include "tg/error.h"

namespace tg {

namespace {

// 64 bytes: a cache line, and the widest vector load (AVX-512) rendered kernels may use.
constexpr size_t kAlign = 64;
// A buffer of 1 GiB or more is aligned to 2 MiB and backed by transparent huge pages where the kernel
// allows them (its "madvise" mode; under "always" they come anyway, under "never" not at all): its first
// use faults one page in 512, and on a VM each fault is a trip to the hypervisor (Zen 5 guest: a 2 GiB
// host-to-CPU copy 8.6-9.4 s -> 3.7-3.8 s). Smaller buffers keep 4 KiB pages and 64-byte alignment: they
// are faulted in once and then reused from the cache, and at 2 MiB alignment beautiful_mnist's 32->32
// conv (Winograd: streams of 8 points at equal offsets) ran 1-5% slower, forward and backward.
constexpr size_t kHugePage = size_t{2} << 20, kHugePagesFrom = size_t{1} << 30;

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
    size_t align = nbytes >= kHugePagesFrom ? kHugePage : kAlign;
    size_t rounded = nbytes == 0 ? kAlign : (nbytes + align - 1) / align * align;
    TG_CHECK(rounded >= nbytes, device_, ": cannot allocate ", nbytes, " bytes");
    void* p = std::aligned_alloc(align, rounded);
    TG_CHECK(p != nullptr, device_, ": out of memory allocating ", nbytes, " bytes");
#ifdef MADV_HUGEPAGE
    if (align == kHugePage) madvise(p, rounded, MADV_HUGEPAGE);  // (advice: failing, small pages stay)
#endif
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
