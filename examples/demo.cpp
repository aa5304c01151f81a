// A small tour: a fused matmul + relu + sum, and a softmax built from elementwise ops and reductions.
// Run with DEBUG=2 to see one line per kernel, DEBUG=4 to see the generated C.
#include <tg/tg.h>

#include <cstdio>

using tg::Tensor;

int main() {
  Tensor::manual_seed(42);
  tg::GlobalCounters::reset();

  Tensor a = Tensor::rand({256, 256}), b = Tensor::rand({256, 256});
  float s = a.matmul(b).relu().sum().item<float>();
  std::printf("sum(relu(a @ b))  = %.3f  (expected about 256*256*256/4 = %.0f)\n", s, 256.0 * 256 * 256 / 4);

  Tensor x = Tensor::rand({1000});
  Tensor e = (x - x.max()).exp();
  Tensor p = e / e.sum();
  std::printf("sum(softmax(x))   = %.6f  (expected 1)\n", p.sum().item<float>());
  std::printf("max(softmax(x))   = %.6f\n", p.max().item<float>());

  std::printf("kernels run: %lld\n", static_cast<long long>(tg::GlobalCounters::kernel_count));
  return 0;
}
