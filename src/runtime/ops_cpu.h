// The CPU device's settings, for building a CPU device other than the default one (tests use this to
// run the same kernels with another compiler, target or float16 path in one process).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"

namespace tg {

struct CPUOptions {
  std::vector<std::string> cc;     // the kernel compiler command, e.g. {"ccache", "clang"}
  std::string target = "native";  // -march= of the kernels
  bool portable_half = false;      // true: never use _Float16, even when the compiler supports it
  // env CC (split on spaces; default clang when installed, else cc) and CPU_TARGET (default native).
  static CPUOptions from_env();
};

// A CPU device named `name` that compiles with `opts`. The compiler and the target are part of its
// compile-cache key. Whether the float16 conversions use _Float16 is found out once per compiler and
// flags, by compiling and running a small probe (its verdict is kept in the compile cache).
std::unique_ptr<Compiled> make_cpu_device(const std::string& name, const CPUOptions& opts);

// Whether the device's kernels convert float16 with _Float16 (runs the probe if it has not run yet).
// false for a device that is not a CPU device.
bool cpu_native_half(Compiled& dev);

}  // namespace tg
