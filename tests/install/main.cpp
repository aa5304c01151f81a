// Runs the two seed examples against an installed tinygrad.cpp; exits non-zero on any mismatch.
#include <tg/tg.h>

#include <cmath>
#include <cstdio>
#include <exception>

int main() {
  int failures = 0;
  try {
    tg::GlobalCounters::reset();
    tg::Tensor a({1, 2}), b({3, 4});
    int r = a.dot(b).item<int>();
    long long k1 = tg::GlobalCounters::kernel_count;
    std::printf("dot: %d (expected 11), kernels: %lld (expected 1)\n", r, k1);
    if (r != 11 || k1 != 1) ++failures;

    tg::GlobalCounters::reset();
    tg::Tensor x({1.f, 2.f, 3.f, 4.f});
    float v = x.var().item<float>();
    long long k2 = tg::GlobalCounters::kernel_count;
    // one kernel: the mean is read back over the row it reduced (seed 002's two kernels with FUSE=0)
    std::printf("var: %.7f (expected 1.6666667), kernels: %lld (expected 1)\n", v, k2);
    if (std::fabs(v - 1.6666667f) > 1e-5f || k2 != 1) ++failures;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  std::printf(failures ? "install test: FAILED\n" : "install test: OK\n");
  return failures ? 1 : 0;
}
