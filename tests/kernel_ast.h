// Hand-built kernel ASTs over raw float32 buffers, run under a list of opts: for the kernel optimizer's
// tests (test_kernel_opts.cpp, test_multi_reduce.cpp).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "engine/realize.h"
#include "runtime/device.h"
#include "shape/shapetracker.h"

// A VIEW of `shape` (contiguous, or with `strides`).
inline tg::UOpPtr view(const tg::Shape& shape, const std::optional<tg::Shape>& strides = std::nullopt) {
  using namespace tg;
  return UOp::make(Ops::VIEW, dtypes::void_, {}, std::shared_ptr<const ArgObject>(std::make_shared<ShapeTracker>(std::vector<View>{View::create(shape, strides)})));
}
// float32 buffer i of the kernel (0: the output)
inline tg::UOpPtr glob(int i) { return tg::UOp::make(tg::Ops::DEFINE_GLOBAL, tg::dtypes::float32.pointer(), {}, int64_t{i}); }
// the float32 constant v, broadcast over `s`
inline tg::UOpPtr cnst(double v, const tg::Shape& s) { return tg::UOp::make(tg::Ops::CONST, tg::dtypes::float32, {view(s, tg::Shape(s.size(), 0))}, v); }

// "UPCAST(1, 16) UNROLL(0, 4) ": a list of opts, for failure messages.
inline std::string opts_str(const std::vector<tg::Opt>& opts) {
  std::string s;
  for (auto& o : opts) s += o.str() + " ";
  return s;
}

// Runs `ast` (output buffer 0, input buffer 1 = x) on the CPU with `opts` applied; nout outputs.
inline std::vector<float> run_ast(const tg::UOpPtr& ast, const std::vector<float>& x, size_t nout, const std::vector<tg::Opt>& opts) {
  using namespace tg;
  Kernel k(ast, Device::get("CPU").renderer());
  for (auto& o : opts) k.apply_opt(o);
  auto runner = compile_kernel(k, "CPU");
  Buffer out("CPU", nout, dtypes::float32), in("CPU", x.size(), dtypes::float32);
  out.allocate();
  in.allocate();
  in.copyin(x.data());
  runner->exec({&out, &in}, {}, true);
  std::vector<float> r(nout);
  out.copyout(r.data());
  return r;
}
