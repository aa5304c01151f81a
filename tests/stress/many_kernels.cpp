// Acceptance (issue 7): 3000 distinct kernels load in one process under `ulimit -n 1024`, through the
// normal realize path, each giving its own answer. ctest runs it under that limit (CMakeLists.txt).
//
//   tg_many_kernels              all 3000 kernels; exit 0 when every result is right, the open file
//                                descriptors did not grow and the method cache stayed bounded
//   tg_many_kernels PART PARTS   only kernels i with i % PARTS == PART: ctest first fills the compile
//                                cache from two such processes at once (both cores), so the one-process
//                                run that is the test mostly loads
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "engine/realize.h"
#include "tg/tensor.h"

namespace {
size_t open_fds() {
  size_t n = 0;
  for (auto& e : std::filesystem::directory_iterator("/proc/self/fd")) { (void)e; n++; }
  return n;
}
}  // namespace

int main(int argc, char** argv) {
  const int kKernels = 3000;
  int part = argc == 3 ? std::atoi(argv[1]) : 0, parts = argc == 3 ? std::atoi(argv[2]) : 1;
  if (parts < 1 || part < 0 || part >= parts) {
    std::fprintf(stderr, "usage: %s [PART PARTS]\n", argv[0]);
    return 2;
  }
  const std::vector<float> host = {0.5f, 1.5f, 2.5f, 3.5f};
  tg::Tensor x = tg::Tensor(host, {4});
  x.realize();
  (x + 0.25f).tolist<float>();  // whatever the first kernel load opens for good is open from here on
  size_t fds_before = open_fds(), most_cached = 0;
  int wrong = 0, loaded = 0;
  try {
    for (int i = 0; i < kKernels; i++) {
      if (i % parts != part) continue;
      // a distinct constant: a distinct AST, source and library each time
      std::vector<float> got = (x + static_cast<float>(i)).tolist<float>();
      loaded++;
      for (size_t j = 0; j < host.size(); j++)
        if (got[j] != host[j] + static_cast<float>(i)) {
          if (wrong++ < 10) std::fprintf(stderr, "kernel %d: element %zu is %g, expected %g\n", i, j, got[j], host[j] + i);
        }
      most_cached = std::max(most_cached, tg::method_cache_size());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "after %d kernels: %s\n", loaded, e.what());
    return 1;
  }
  size_t fds_after = open_fds();
  std::printf("%d kernels loaded and run, %d wrong; open fds %zu before, %zu after; method cache at most %zu\n", loaded,
              wrong, fds_before, fds_after, most_cached);
  bool ok = wrong == 0 && fds_after <= fds_before + 4 && most_cached <= 1024;
  return ok ? 0 : 1;
}
