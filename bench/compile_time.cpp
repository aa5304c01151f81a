// Cold compile time per kernel, C compiler process vs LLVM in process, over the kernels of the
// beautiful_mnist training step (examples/beautiful_mnist.cpp's model, Adam, batch 512): each kernel is
// optimized by the heuristics, rendered by each compiler's renderer and compiled without the disk cache.
// Prints one line per kernel (with DEBUG=1) and the median, mean, 90th percentile and total of each.
//
//   bench_compile_time [--kernels N]   (N: only the first N kernels, for a quick look)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../examples/beautiful_mnist_model.h"
#include "codegen/kernel.h"
#include "engine/realize.h"
#include "engine/schedule.h"
#include "runtime/device.h"
#include "runtime/ops_cpu.h"
#include "tg/tg.h"

using tg::Tensor;
namespace nn = tg::nn;

namespace {

// The ASTs of one training step's kernels.
std::vector<tg::UOpPtr> train_step_kernels() {
  BeautifulMnistModel model;
  auto params = nn::state::get_parameters(model);
  nn::optim::Adam opt(params, 1e-3);
  Tensor x = Tensor::rand({512, 1, 28, 28}), y = Tensor::randint({512}, 0, 10);
  std::vector<Tensor> init = params;
  init.push_back(x), init.push_back(y);
  Tensor::corealize(init);
  tg::TrainingGuard training;
  opt.zero_grad();
  Tensor loss = model(x).sparse_categorical_crossentropy(y);
  loss.backward();
  std::vector<Tensor> all = opt.schedule_step();
  all.push_back(loss);
  std::vector<tg::LBPtr> outs;
  for (auto& t : all) outs.push_back(t.lazydata());
  std::vector<tg::UOpPtr> asts;
  for (auto& si : tg::create_schedule(outs))
    if (si.is_kernel()) asts.push_back(si.ast);
  return asts;
}

struct Stats {
  double median, mean, p90, total;
};
Stats stats(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  double total = 0;
  for (double m : ms) total += m;
  size_t n = ms.size();
  return {n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2, total / static_cast<double>(n), ms[std::min(n - 1, n * 9 / 10)], total};
}

}  // namespace

int main(int argc, char** argv) {
  size_t limit = SIZE_MAX;
  for (int i = 1; i + 1 < argc; i++)
    if (std::string(argv[i]) == "--kernels") limit = static_cast<size_t>(std::atol(argv[i + 1]));
  if (!tg::cpu_has_llvm()) {
    std::fprintf(stderr, "bench_compile_time: this build has no LLVM\n");
    return 1;
  }
  std::vector<tg::UOpPtr> asts = train_step_kernels();
  if (asts.size() > limit) asts.resize(limit);
  struct Compiler {
    const char* name;
    tg::KernelCompiler kind;
  };
  std::vector<Compiler> compilers = {{"clang", tg::KernelCompiler::Clang}, {"llvm", tg::KernelCompiler::LLVM}};
  std::vector<std::vector<double>> times(compilers.size());
  for (size_t c = 0; c < compilers.size(); c++) {
    std::string name = std::string("CPUBENCH") + compilers[c].name;
    tg::Device::register_backend(name, [kind = compilers[c].kind](const std::string& n) {
      tg::CPUOptions o = tg::CPUOptions::from_env();
      o.compiler = kind;
      return tg::make_cpu_device(n, o);
    });
    tg::Compiled& dev = tg::Device::get(name);
    for (size_t i = 0; i < asts.size(); i++) {
      tg::Kernel k(asts[i], dev.renderer());
      k.hand_coded_optimizations();
      std::string src = dev.renderer().render(k.name(), k.linearize()).src;
      double t0 = tg::now_s();
      std::string lib = dev.compiler().compile(src);  // no disk cache: a cold compile
      double ms = (tg::now_s() - t0) * 1e3;
      times[c].push_back(ms);
      if (tg::DEBUG >= 1) std::printf("%-6s %-40s %8.2f ms\n", compilers[c].name, k.name().c_str(), ms);
    }
  }
  std::printf("beautiful_mnist training step (batch 512): %zu kernels, cold compile per kernel\n\n", asts.size());
  std::printf("| compiler | median ms | mean ms | p90 ms | total s |\n|---|---:|---:|---:|---:|\n");
  for (size_t c = 0; c < compilers.size(); c++) {
    Stats s = stats(times[c]);
    std::printf("| %s | %.1f | %.1f | %.1f | %.2f |\n", compilers[c].name, s.median, s.mean, s.p90, s.total / 1e3);
  }
  return 0;
}
