// make_recycled<T>(args...): std::make_shared, with the block recycled by the calling thread.
//
// Every eager op makes and drops a few LazyBuffers, Buffers and TensorImpls. glibc's per-thread cache
// keeps only 7 free blocks of a size, so dropping a graph of a few dozen nodes sends the rest through
// its slow path (binning, coalescing) and building the next one takes them back out: a quarter of a
// small graph's eager overhead was malloc and free. Here each thread keeps up to kMaxFree blocks of each
// size on a free list: allocation pops one, release pushes it. A block may be released by another
// thread than the one that took it; it then joins that thread's list. A thread's list is freed when the
// thread ends; a block released after that (a static destroyed at exit) goes back to operator delete.
// Under AddressSanitizer blocks are not recycled, so that a use after free is still caught.
#pragma once
#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace tg {

namespace recycle {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kRecycle = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kRecycle = false;
#else
inline constexpr bool kRecycle = true;
#endif
#else
inline constexpr bool kRecycle = true;
#endif

inline constexpr size_t kMaxFree = 4096;  // blocks kept per size and thread

template <size_t Size>
class FreeList {
 public:
  static void* take() {
    if (kRecycle && !gone_) {
      FreeList& l = mine();
      if (Node* n = l.head_) {
        l.head_ = n->next;
        l.count_--;
        return n;
      }
    }
    return ::operator new(Size);
  }
  static void give(void* p) noexcept {
    if (kRecycle && !gone_) {
      FreeList& l = mine();
      if (l.count_ < kMaxFree) {
        l.head_ = new (p) Node{l.head_};
        l.count_++;
        return;
      }
    }
    ::operator delete(p);
  }

 private:
  struct Node { Node* next; };
  static_assert(Size >= sizeof(Node));
  static FreeList& mine() {
    thread_local FreeList l;
    return l;
  }
  ~FreeList() {
    gone_ = true;
    while (head_) ::operator delete(std::exchange(head_, head_->next));
  }
  Node* head_ = nullptr;
  size_t count_ = 0;
  static thread_local bool gone_;  // trivially destructible: still readable while the thread ends
};
template <size_t Size>
thread_local bool FreeList<Size>::gone_ = false;

// The allocator std::allocate_shared rebinds to its control block (which holds the object).
template <class T>
struct Allocator {
  using value_type = T;
  Allocator() = default;
  template <class U>
  Allocator(const Allocator<U>&) noexcept {}  // NOLINT: rebinding, as allocators do
  static constexpr size_t kSize = (sizeof(T) + 15) / 16 * 16;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  T* allocate(size_t n) { return static_cast<T*>(n == 1 ? FreeList<kSize>::take() : ::operator new(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { n == 1 ? FreeList<kSize>::give(p) : ::operator delete(p); }
  template <class U>
  bool operator==(const Allocator<U>&) const noexcept { return true; }
};

}  // namespace recycle

template <class T, class... Args>
std::shared_ptr<T> make_recycled(Args&&... args) {
  return std::allocate_shared<T>(recycle::Allocator<T>{}, std::forward<Args>(args)...);
}

}  // namespace tg
