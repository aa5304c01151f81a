// The run that VIZ's end-to-end test (tests/viz/test_viz_page.py) and page-load bench
// (bench/viz_page_load.py) record; run it with VIZ=1.
//   tg_viz_program            an elementwise kernel and a reduce (real kernels, with whatever passes
//                             codegen names), then a kernel of its own, "simplify_index", whose one named
//                             pass folds an index expression, so a pass with rules to show is always there
//   tg_viz_program chain1000  bench/pipeline.cpp's chain of 1000 elementwise ops: one kernel of ~1000 nodes
#include <cstdio>
#include <string>
#include <vector>

#include "tg/tensor.h"
#include "uop/rewrite.h"
#include "viz/session.h"

namespace {
tg::Tensor chain1000() {
  std::vector<float> v(1024);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i) / 1024.f;
  tg::Tensor x(v, {1024});
  for (int i = 0; i < 1000; i++) {
    switch (i % 5) {
      case 0: x = x * 1.0001f; break;
      case 1: x = x + 0.5f; break;
      case 2: x = -x; break;
      case 3: x = x.exp2(); break;
      default: x = x.sqrt(); break;
    }
  }
  return x;
}

void simplify_index() {
  using namespace tg;
  auto range = [](int axis, int64_t n) {
    return UOp::make(Ops::RANGE, dtypes::int32, {UOp::index_const(0), UOp::index_const(n)}, RangeArg{RangeKind::Loop, axis, axis, {}});
  };
  UOpPtr g = range(0, 4), r = range(1, 16);
  UOpPtr idx = g->mul(64)->add(r->mul(4)->add(3)->idiv(4)->mul(1))->add(0)->mod(256);
  viz::KernelScope scope("simplify_index", idx);
  UOpPtr out = graph_rewrite(idx, symbolic(), nullptr, {.name = "simplify"});
  scope.set_source("idx = " + render_expr(idx) + "\n  -> " + render_expr(out) + "\n");
}
}  // namespace

int main(int argc, char** argv) {
  std::string what = argc > 1 ? argv[1] : "";
  if (what == "chain1000") {
    chain1000().realize();
  } else if (what.empty()) {
    tg::Tensor a(std::vector<float>{1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
    tg::Tensor e = (a * 2.5f + 1.f).exp2();
    e.realize();  // its own kernel, then the reduce's
    std::vector<float> s = e.sum({1}).tolist<float>();
    std::printf("sums %g %g\n", s[0], s[1]);
    simplify_index();
  } else {
    std::fprintf(stderr, "usage: tg_viz_program [chain1000]\n");
    return 2;
  }
  return 0;
}
