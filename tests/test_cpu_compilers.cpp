// The CPU's two kernel compilers: C through a compiler process, and LLVM IR through LLVM in process
// (runtime/llvm_jit.h). They render the same UOps with the same semantics, so every op must give the
// very same bits on both, for the native target and the baseline x86-64 one; and a kernel LLVM cannot
// compile is a tg::Error with LLVM's message and the IR.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <regex>
#include <set>

#include "codegen/kernel.h"
#include "engine/realize.h"
#include "engine/schedule.h"
#include "kernel_ast.h"
#include "runtime/device.h"
#include "runtime/ops_cpu.h"
#include "test_util.h"
#include "tg/tg.h"

using namespace tg;
using testing::HasSubstr;

namespace {

// A CPU device per (compiler, target), registered once.
std::string cpu_device(KernelCompiler c, const std::string& target) {
  static std::vector<std::string> targets;  // a device per target: "CPULLVMT0", ...
  auto it = std::find(targets.begin(), targets.end(), target);
  if (it == targets.end()) it = targets.insert(targets.end(), target);
  std::string name = std::string("CPU") + (c == KernelCompiler::LLVM ? "LLVM" : "CLANG") +
                     (target == "native" ? "NATIVE" : "T" + std::to_string(it - targets.begin()));
  static std::set<std::string> made;
  if (made.insert(name).second)
    Device::register_backend(name, [c, target](const std::string& n) {
      CPUOptions o = CPUOptions::from_env();
      o.compiler = c;
      o.target = target;
      if (c == KernelCompiler::Clang) o.cc = {"clang"};
      return make_cpu_device(n, o);
    });
  return name;
}

// The devices of these (compiler, target) pairs that this build can run, with their targets: the x86
// baselines only on x86, LLVM only when built with it.
std::vector<std::pair<std::string, std::string>> cpu_devices(std::initializer_list<std::pair<KernelCompiler, const char*>> pairs) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto [compiler, target] : pairs) {
#if !defined(__x86_64__)
    if (std::string(target) != "native") continue;
#endif
    if (compiler == KernelCompiler::LLVM && !cpu_has_llvm()) continue;
    out.emplace_back(cpu_device(compiler, target), target);
  }
  return out;
}

std::vector<float> special_floats() {
  std::vector<float> v = {0.f, -0.f, 1.f, -1.f, 0.5f, -2.5f, 3.75f, 1e-8f, -1e-30f, 65504.f, 65520.f, 1e10f, -3e9f, 2.1e9f, 4.3e9f,
                          9.3e18f, -9.3e18f, 1.9e19f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN, -NAN, 1e-45f, 127.5f, -128.5f, 255.5f};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-40.f, 40.f);
  while (v.size() % 64) v.push_back(u(rng));
  for (int i = 0; i < 192; i++) v.push_back(u(rng));
  return v;
}

// A NaN's sign and payload depend on the order of an instruction's operands, which each compiler
// chooses (x86 keeps the first operand's NaN): every NaN becomes the one quiet NaN.
std::vector<uint8_t> nan_as_one(DType d, std::vector<uint8_t> bytes) {
  auto canon = [&](auto nan, auto is_nan) {
    using T = decltype(nan);
    for (size_t i = 0; i + sizeof(T) <= bytes.size(); i += sizeof(T)) {
      T v;
      std::memcpy(&v, bytes.data() + i, sizeof v);
      if (is_nan(v)) std::memcpy(bytes.data() + i, &nan, sizeof nan);
    }
  };
  if (d == dtypes::float16) canon(uint16_t{0x7e00}, [](uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu); });
  if (d == dtypes::float32) canon(std::numeric_limits<float>::quiet_NaN(), [](float f) { return std::isnan(f); });
  if (d == dtypes::float64) canon(std::numeric_limits<double>::quiet_NaN(), [](double f) { return std::isnan(f); });
  return bytes;
}

// The bytes of every result of a battery of ops, computed on `dev` (NaNs made one).
std::vector<std::vector<uint8_t>> battery(const std::string& dev) {
  std::vector<float> xf = special_floats(), yf(xf.rbegin(), xf.rend());
  int64_t n = static_cast<int64_t>(xf.size());
  Tensor x(xf, {n}, dev), y(yf, {n}, dev);
  std::vector<int32_t> xi, yi;
  for (int64_t i = 0; i < n; i++) {
    xi.push_back(i % 5 == 0 ? std::numeric_limits<int32_t>::min() : static_cast<int32_t>(i * 7919 - 3000));
    yi.push_back(i % 4 == 0 ? 0 : i % 4 == 1 ? -1 : static_cast<int32_t>(i % 13) - 6);
  }
  Tensor a(xi, {n}, dev), b(yi, {n}, dev);
  std::vector<float> mf(48 * 40), wf(40 * 72);
  for (size_t i = 0; i < mf.size(); i++) mf[i] = xf[i % xf.size()] == xf[i % xf.size()] ? std::fmod(static_cast<float>(i) * 0.37f, 3.f) - 1.f : 0.f;
  for (size_t i = 0; i < wf.size(); i++) wf[i] = std::fmod(static_cast<float>(i) * 0.71f, 2.f) - 0.5f;
  Tensor m(mf, {48, 40}, dev), w(wf, {40, 72}, dev);
  std::vector<Tensor> outs = {
      x + y, x * y, x / y, x.maximum(y), x.exp(), x.log(), x.sin(), x.cos(), x.tan(), x.sqrt(), x.exp2(), -x, x.reciprocal(),
      x.lt(y), x.ne(y), x.lt(y).where(x, y), x.sigmoid(), x.relu(),
      x.cast(dtypes::int8), x.cast(dtypes::uint8), x.cast(dtypes::int16), x.cast(dtypes::int32), x.cast(dtypes::uint32),
      x.cast(dtypes::int64), x.cast(dtypes::uint64), x.cast(dtypes::bool_), x.cast(dtypes::float64).sqrt(),
      x.cast(dtypes::float16), x.cast(dtypes::float16) * y.cast(dtypes::float16), x.cast(dtypes::float16).exp(),
      x.bitcast(dtypes::int32), a.bitcast(dtypes::float32),
      a.idiv(b), a - a.idiv(b) * b, a.cast(dtypes::int8).idiv(b.cast(dtypes::int8)), a.cast(dtypes::uint32).idiv(b.cast(dtypes::uint32) + 1),
      a.bitwise_xor(b), a.bitwise_and(b), a.bitwise_or(b), a << 3, a >> 2, a.cast(dtypes::uint16) >> 3, a.cast(dtypes::float32),
      a.cast(dtypes::bool_).logical_xor(b.cast(dtypes::bool_)), a.cast(dtypes::bool_).logical_not(), a.cast(dtypes::float16),
      x.reshape({4, n / 4}).sum({1}), x.reshape({4, n / 4}).max({0}), x.reshape({4, n / 4}).softmax(1), a.reshape({4, n / 4}).sum({1}),
      x.reshape({4, n / 4}).argmax(1), x.reshape({4, n / 4}).cumsum(1), x.pad({{3, 5}}, 1.5), x.reshape({4, n / 4}).pad({{0, 0}, {1, 2}}) * 2,
      m.matmul(w), m.cast(dtypes::float16).matmul(w.cast(dtypes::float16)), m.cast(dtypes::float64).matmul(w.cast(dtypes::float64)),
      m.cast(dtypes::int32).matmul(w.cast(dtypes::int32) + 3),
  };
  std::vector<std::vector<uint8_t>> r;
  for (Tensor& t : outs) r.push_back(nan_as_one(t.dtype(), t.bytes()));
  return r;
}

}  // namespace

TEST(LLVMKernels, SameBitsAsTheCCompiler) {
  if (!cpu_has_llvm()) GTEST_SKIP() << "built without LLVM";
  for (const char* target : {"native", "x86-64"}) {
    auto want = battery(cpu_device(KernelCompiler::Clang, target)), got = battery(cpu_device(KernelCompiler::LLVM, target));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) {
      ASSERT_EQ(got[i].size(), want[i].size()) << "result " << i << ", target " << target;
      size_t bad = 0;
      while (bad < got[i].size() && got[i][bad] == want[i][bad]) bad++;
      EXPECT_EQ(bad, got[i].size()) << "result " << i << ", target " << target << ": first differing byte " << bad;
    }
  }
}

// exp2's polynomial is llvm.fma (the C's __builtin_fmaf) where the target has fma, not `contract`ed
// multiplies and adds: LLVM contracts those at run time but folds a constant argument without, and exp of a pad value then had
// other bits where the kernel folded it than where it computed it (fuzz seed 390816: x - max(x) of the
// pad value was an ulp off 0, its exp 1.0000019).
TEST(LLVMKernels, ExpOfAFoldedConstantHasTheRunTimeBits) {
  for (auto& [dev, target] : cpu_devices({{KernelCompiler::LLVM, "native"}, {KernelCompiler::LLVM, "x86-64-v3"}, {KernelCompiler::LLVM, "x86-64"},
                                          {KernelCompiler::Clang, "native"}, {KernelCompiler::Clang, "x86-64"}})) {
    Tensor v0 = Tensor(std::vector<int64_t>{-7, 4, -5, 9, -3, -5, 3, -5, 6, 8}, Shape{5, 2}).to(dev);
    Tensor v3 = v0.pad({{0, 2}, {0, 1}}, 3.0).cast(dtypes::float32).exp();  // exp(3) in every row's last column
    Tensor v4 = v3.max({-1}, true);
    v4.realize();
    std::vector<float> v6 = (v3 - v4).exp().tolist<float>();
    EXPECT_EQ(v6[2 * 3 + 2], 1.0f) << target;  // row 2 is (-3, -5, 3): its max is the pad's exp(3)
    for (int row = 5; row < 7; row++) EXPECT_EQ(v6[row * 3], 1.0f) << target;
  }
}

// A division is correctly rounded, as C's, torch's and NumPy's: x / x is 1 and x / 3 is the float
// nearest to x/3, not x times a rounded 1/y (fuzz seed 406581: x / x was 0.99999994). Vector and scalar
// lanes (n is not a multiple of the vector), both compilers, native and baseline targets; the reference
// divides in double, which rounds to the same float (double carries more than 2*24+2 bits).
TEST(CpuKernels, DivisionIsCorrectlyRounded) {
  std::vector<float> xs = special_floats(), ys(xs.rbegin(), xs.rend());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.5f, 2.f);
  for (int i = 0; i < 61; i++) xs.push_back(u(rng)), ys.push_back(i % 2 ? 3.f : 0.1f);
  int64_t n = static_cast<int64_t>(xs.size());
  for (auto& [dev, target] : cpu_devices({{KernelCompiler::LLVM, "native"}, {KernelCompiler::LLVM, "x86-64"},
                                          {KernelCompiler::Clang, "native"}, {KernelCompiler::Clang, "x86-64"}})) {
    Tensor x(xs, {n}, dev), y(ys, {n}, dev);
    std::vector<float> q = (x / y).tolist<float>(), self = (x / x).tolist<float>(), third = (x / 3.0).tolist<float>();
    for (int64_t i = 0; i < n; i++) {
      float want = static_cast<float>(static_cast<double>(xs[i]) / ys[i]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(q[i])) << target << ": " << xs[i] << " / " << ys[i];
      } else {
        EXPECT_EQ(q[i], want) << target << ": " << xs[i] << " / " << ys[i];
      }
      if (std::isfinite(xs[i]) && xs[i] != 0) {
        EXPECT_EQ(self[i], 1.0f) << target << ": " << xs[i] << " / itself";
      }
      if (std::isfinite(xs[i])) {
        EXPECT_EQ(third[i], static_cast<float>(static_cast<double>(xs[i]) / 3.0)) << target << ": " << xs[i] << " / 3";
      }
    }
  }
}

TEST(LLVMKernels, RendersLLVMIR) {
  if (!cpu_has_llvm()) GTEST_SKIP() << "built without LLVM";
  std::string dev = cpu_device(KernelCompiler::LLVM, "native");
  Tensor x = Tensor::rand({64, 64}, dtypes::float32, dev);
  x.realize();
  ScheduleItem si = create_schedule({((x * 3).exp().sum({1})).lazydata()}).back();
  auto ren = with_vector_unit(Device::get(dev).renderer(), kAVX512);  // 16-float vectors on any machine
  Kernel k(si.ast, *ren);
  k.hand_coded_optimizations();
  std::string src = compile_kernel(k, dev)->kernel.src;
  EXPECT_THAT(src, HasSubstr("define void @r_"));
  EXPECT_THAT(src, HasSubstr("(ptr noalias %bufs, ptr noalias %vals, i64 %gstart, i64 %gend)"));
  EXPECT_THAT(src, HasSubstr("call <16 x float> @tg_exp2_v16f32("));  // the vector exp2, as the C has it
  // index math at pointer width (llvm_pipeline has no IndVarSimplify to widen 32-bit counters)
  EXPECT_THAT(src, HasSubstr("phi i64"));
  EXPECT_THAT(src, testing::Not(HasSubstr("trunc i64 %gstart")));
  EXPECT_THAT(Device::get(dev).compiler().cachekey(), HasSubstr("loop-vectorize"));  // the pass pipeline: other passes, other entries
  // for an AVX-512 target it scales by 2^n with vscalefps, elsewhere by two exact factors (the same
  // bits: SameBitsAsTheCCompiler runs both on an AVX-512 host); with AVX-512DQ it splits x by vreduceps
  // (not on Knights Landing: AVX-512F without DQ); rendered and compiled, not run
  for (const char* target : {"skylake-avx512", "knl", "x86-64-v3"}) {
#if !defined(__x86_64__)
    break;
#endif
    std::string tdev = cpu_device(KernelCompiler::LLVM, target);
    auto tren = with_vector_unit(Device::get(tdev).renderer(), kAVX512);
    Kernel tk(si.ast, *tren);
    tk.hand_coded_optimizations();
    std::string tsrc = compile_kernel(tk, tdev)->kernel.src;
    EXPECT_THAT(tsrc, HasSubstr("call <16 x float> @tg_exp2_v16f32(")) << target;
    EXPECT_EQ(tsrc.find("@llvm.x86.avx512.mask.scalef.ps.512") != std::string::npos, std::string(target) != "x86-64-v3") << target;
    EXPECT_EQ(tsrc.find("@llvm.x86.avx512.mask.reduce.ps.512") != std::string::npos, std::string(target) == "skylake-avx512") << target;
  }
}

// A reduce over a vector's own lanes (softmax's row max and sum) ends in a horizontal fold: lane i with lane
// i + w/2, halving, as vector ops on the halves (16 -> 8 -> 4 -> 2 lanes, then one scalar op), not 15
// scalar ops on extracted lanes. The order is the same, so the bits are (SameBitsAsTheCCompiler).
TEST(LLVMKernels, HorizontalFoldOnHalves) {
  if (!cpu_has_llvm()) GTEST_SKIP() << "built without LLVM";
  std::string dev = cpu_device(KernelCompiler::LLVM, "native");
  Tensor x = Tensor::rand({64, 512}, dtypes::float32, dev);
  x.realize();
  ScheduleItem si = create_schedule({x.softmax(1).lazydata()}).back();
  auto ren = with_vector_unit(Device::get(dev).renderer(), kAVX512);
  Kernel k(si.ast, *ren);
  k.hand_coded_optimizations();
  std::string src = compile_kernel(k, dev)->kernel.src;
  for (const char* w : {"8", "4", "2"}) {
    EXPECT_THAT(src, HasSubstr("x float> poison, <" + std::string(w) + " x i32> <i32 0")) << w;  // the low half: a shuffle
    EXPECT_THAT(src, HasSubstr("fadd <" + std::string(w) + " x float>")) << w;                    // the sum's step
    EXPECT_THAT(src, HasSubstr("fcmp ogt <" + std::string(w) + " x float>")) << w;                // the max's step
  }
  std::vector<float> xs = x.tolist<float>(), got = x.softmax(1).tolist<float>();
  for (int r = 0; r < 64; r++) {
    double m = -INFINITY, sum = 0;
    for (int c = 0; c < 512; c++) m = std::max(m, static_cast<double>(xs[r * 512 + c]));
    for (int c = 0; c < 512; c++) sum += std::exp(xs[r * 512 + c] - m);
    for (int c = 0; c < 512; c += 37) EXPECT_NEAR(got[r * 512 + c], std::exp(xs[r * 512 + c] - m) / sum, 1e-7) << r << "," << c;
  }
}

// The heuristics tile for the target's vector registers. Each compiler says what they are for a CPU_TARGET:
// the C compiler by its predefined macros (a probe that is compiled, never run, so a newer target than
// this CPU is safe), LLVM by the target's features (a named CPU's own and those they imply: x86-64-v3
// names avx2, which implies avx).
TEST(CPUTargets, VectorUnitOfTheTarget) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "x86-64 targets";
#endif
  // (x86-64, SSE2 only, gets AVX-512's tiles: ops_cpu.cpp's kSSETiles)
  const std::vector<std::pair<std::string, VectorUnit>> targets = {{"x86-64", {64, 32}}, {"x86-64-v3", {32, 16}}, {"skylake-avx512", {64, 32}}};
  std::vector<CPUOptions> compilers;
  for (const char* cc : {"clang", "gcc"})
    if (std::system((std::string("command -v ") + cc + " >/dev/null 2>&1").c_str()) == 0) {
      CPUOptions o;
      o.compiler = KernelCompiler::Clang;
      o.cc = {cc};
      compilers.push_back(o);
    }
  if (cpu_has_llvm()) {
    CPUOptions o;
    o.compiler = KernelCompiler::LLVM;
    compilers.push_back(o);
  }
  for (CPUOptions o : compilers)
    for (auto& [target, want] : targets) {
      o.target = target;
      auto dev = make_cpu_device("CPUUNIT", o);
      VectorUnit got = dev->renderer().vector_unit();
      std::string who = (o.compiler == KernelCompiler::LLVM ? std::string("llvm") : o.cc[0]) + " -march=" + target;
      EXPECT_EQ(got.bytes, want.bytes) << who;
      EXPECT_EQ(got.registers, want.registers) << who;
      EXPECT_EQ(dev->renderer().matmul_panel(dtypes::float32), 2 * want.bytes / 4) << who;
    }
}

TEST(LLVMKernels, CompileErrorIsATgError) {
  if (!cpu_has_llvm()) GTEST_SKIP() << "built without LLVM";
  Compiled& dev = Device::get(cpu_device(KernelCompiler::LLVM, "native"));
  std::string bad = "define void @k(ptr %bufs, ptr %vals, i64 %gstart, i64 %gend) {\nentry:\n  %x = fadd float %nope, 1.0\n  ret void\n}\n";
  std::string msg = error_of([&] { (void)dev.compiler().compile(bad); });
  EXPECT_THAT(msg, HasSubstr("%nope"));         // LLVM's message names the undefined value
  EXPECT_THAT(msg, HasSubstr("fadd float"));    // and the IR is shown
  EXPECT_THAT(error_of([&] { (void)dev.compiler().compile("this is not IR"); }), HasSubstr("this is not IR"));
}

TEST(LLVMKernels, CompilerChoiceFromTheEnvironment) {
  {
    ScopedEnv e("CPU_COMPILER", "clang");
    EXPECT_EQ(CPUOptions::from_env().compiler, KernelCompiler::Clang);
  }
  {
    ScopedEnv e("CPU_COMPILER", "llvm");
    EXPECT_EQ(CPUOptions::from_env().compiler, KernelCompiler::LLVM);
  }
  {
    ScopedEnv e("CPU_COMPILER", "");
    ScopedEnv l("LLVM", "1");
    EXPECT_EQ(CPUOptions::from_env().compiler, KernelCompiler::LLVM);
  }
  {
    ScopedEnv e("CPU_COMPILER", "tcc");
    EXPECT_THAT(error_of([] { (void)CPUOptions::from_env(); }), HasSubstr("CPU_COMPILER=tcc"));
  }
  CPUOptions o;
  o.compiler = KernelCompiler::LLVM;
  if (!cpu_has_llvm()) {
    EXPECT_THAT(error_of([&] { (void)make_cpu_device("CPUX", o); }), HasSubstr("no LLVM"));
  }
}

TEST(LLVMKernels, Debug2ShowsEachNewKernelsCompileTime) {
  std::string printed;
  {
    Context ctx{{"DEBUG", 2}};
    testing::internal::CaptureStdout();
    (void)(Tensor({1.f, 2.f}) * 7.0703125f).tolist<float>();  // a constant no other test uses: a new kernel
    printed = testing::internal::GetCapturedStdout();
  }
  EXPECT_TRUE(std::regex_search(printed, std::regex(R"(  compile    E_2 +[0-9]+\.[0-9]+ ms)"))) << printed;
}
