// LLVM in process: LLVM IR text -> object code -> a function of this process, with no compiler process
// and no file (built only where CMake found LLVM 16, which defines TG_HAVE_LLVM).
//
// llvm_compile runs a pass pipeline of our own (llvm_pipeline: the cleanup, hoisting, unrolling and
// vectorizing our kernels need, not clang -O2's whole module pipeline, which compiles 2.4x slower for
// kernels as fast) and the code generator for a target, with C's -ffp-contract=off semantics: a multiply
// and an add fuse only where the IR says so (an fma call, or both ops carrying `contract`); no fast-math.
// A TargetMachine is made once per target and reused, so a small kernel compiles in milliseconds.
//
// LLVMObject loads that object code with ORC: one process-wide LLJIT, one JITDylib per object, so two
// objects may define the same function name (kernel names repeat across devices and targets).
//
// Nothing here aborts: bad IR, a verifier failure or an LLVM fatal error in the code generator is a
// tg::RuntimeError with LLVM's own message, then the IR with line numbers. Everything is thread-safe.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace tg {

// The machine kernels are compiled for. "native" is the host CPU (its name and features from LLVM's host
// detection); any other value is an -march= name such as "x86-64" or "skylake-avx512" (that CPU's
// features, nothing from the host). Throws tg::RuntimeError for a CPU name LLVM does not know.
struct LLVMTarget {
  std::string triple, cpu, features;  // features: "+avx2,+fma,-avx512f,..." (sorted: a stable cache key)
  static LLVMTarget from(const std::string& target);
  bool has_feature(const std::string& f) const;  // LLVM's name: "fma", "f16c", "avx512f"
};

// The LLVM library this process runs, e.g. "16.0.6" (object code is cached per LLVM version).
std::string llvm_version();

// Text LLVM IR -> object code (an ELF relocatable), optimized for `target`.
std::string llvm_compile(const std::string& ir, const LLVMTarget& target);
// The same IR after the optimizer, as text: what llvm_compile hands to the code generator.
std::string llvm_optimized_ir(const std::string& ir, const LLVMTarget& target);
// The optimizer's pass pipeline in LLVM's textual form (part of the compile cache's key: it changes the code).
const char* llvm_pipeline();

// Object code loaded into this process. Its undefined symbols resolve to `extra` (names -> absolute
// addresses, e.g. helpers of the host) first, then to the process's symbols and libm's (sinf, expf, ...).
// Throws tg::RuntimeError naming `fn` when the object cannot be loaded or does not define `fn`.
class LLVMObject {
 public:
  LLVMObject(const std::string& object, const std::string& fn, const std::vector<std::pair<std::string, void*>>& extra = {});
  ~LLVMObject();  // unloads the object: `address()` dangles afterwards
  LLVMObject(const LLVMObject&) = delete;
  LLVMObject& operator=(const LLVMObject&) = delete;
  void* address() const { return addr_; }  // of `fn`

 private:
  void* dylib_ = nullptr;  // its llvm::orc::JITDylib
  void* addr_ = nullptr;
};

}  // namespace tg
