// Hand-built kernel ASTs over raw float32 buffers, run under a list of opts: for the kernel optimizer's
// tests (test_kernel_opts.cpp, test_multi_reduce.cpp).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "engine/realize.h"
#include "renderer/renderer.h"
#include "runtime/device.h"
#include "shape/shapetracker.h"

// The renderer `base` with another target's vector registers: the heuristics then tile as they would for
// that target, on any machine (the kernels still render and run as `base`'s). Keep it alive as long as
// the Kernels made with it.
inline std::shared_ptr<tg::Renderer> with_vector_unit(const tg::Renderer& base, tg::VectorUnit unit) {
  struct Renderer final : tg::Renderer {
    const tg::Renderer& base;
    tg::VectorUnit unit;
    Renderer(const tg::Renderer& b, tg::VectorUnit u) : base(b), unit(u) {}
    std::string device() const override { return base.device(); }
    bool has_local() const override { return base.has_local(); }
    bool has_shared() const override { return base.has_shared(); }
    int global_max_dims() const override { return base.global_max_dims(); }
    bool supports(tg::DType d) const override { return base.supports(d); }
    int max_vector_bytes() const override { return base.max_vector_bytes(); }
    tg::DType index_dtype() const override { return base.index_dtype(); }
    tg::VectorUnit vector_unit() const override { return unit; }
    bool vector_alu(tg::Ops op, tg::DType d) const override { return base.vector_alu(op, d); }
    int64_t matmul_panel(tg::DType d) const override { return tg::cpu_matmul_panel(d, unit); }
    tg::RenderedKernel render(const std::string& name, const std::vector<tg::UOpPtr>& uops) const override { return base.render(name, uops); }
  };
  return std::make_shared<Renderer>(base, unit);
}
// The CPU device's renderer with AVX-512's registers, for tests of the heuristics' exact choices.
inline std::shared_ptr<tg::Renderer> avx512_renderer() { return with_vector_unit(tg::Device::get("CPU").renderer(), tg::kAVX512); }

// A VIEW of `shape` (contiguous, or with `strides`).
inline tg::UOpPtr view(const tg::Shape& shape, const std::optional<tg::Shape>& strides = std::nullopt) {
  using namespace tg;
  return UOp::make(Ops::VIEW, dtypes::void_, {}, std::shared_ptr<const ArgObject>(std::make_shared<ShapeTracker>(Views{View::create(shape, strides)})));
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
