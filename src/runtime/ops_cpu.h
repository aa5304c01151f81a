// The CPU device's settings, for building a CPU device other than the default one (tests use this to
// run the same kernels with another compiler, target or float16 path in one process).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"

namespace tg {

// Who turns a kernel into machine code: a C compiler process (the C renderer), or LLVM in process (the
// LLVM IR renderer; only in builds with LLVM).
enum class KernelCompiler : uint8_t { Clang, LLVM };

// Whether this build has the in-process LLVM compiler.
bool cpu_has_llvm();

struct CPUOptions {
  KernelCompiler compiler = cpu_has_llvm() ? KernelCompiler::LLVM : KernelCompiler::Clang;
  std::vector<std::string> cc;     // the C compiler command (KernelCompiler::Clang), e.g. {"ccache", "clang"}
  std::string target = "native";  // the CPU the kernels are for: C's -march=, LLVM's target CPU
  bool portable_half = false;      // true: never convert float16 with the CPU's instructions (C: _Float16, LLVM: F16C)
  // env CPU_COMPILER=clang|llvm (or tinygrad's LLVM=1; default llvm where built with it), CC (split on
  // spaces; default clang when installed, else cc) and CPU_TARGET (default native).
  static CPUOptions from_env();
};

// A CPU device named `name` that compiles with `opts`. The compiler and the target are part of its
// compile-cache key. Throws tg::RuntimeError for KernelCompiler::LLVM in a build without LLVM. Whether
// the C's float16 conversions use _Float16 is found out once per compiler and flags, by compiling and
// running a small probe (its verdict is kept in the compile cache).
std::unique_ptr<Compiled> make_cpu_device(const std::string& name, const CPUOptions& opts);

// Whether the device's kernels convert float16 with the CPU's own instructions (C: _Float16, which runs
// the probe if it has not run yet; LLVM: the target has F16C).
// false for a device that is not a CPU device.
bool cpu_native_half(Compiled& dev);

}  // namespace tg
