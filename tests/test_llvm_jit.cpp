// LLVM in process (runtime/llvm_jit.h), below the renderer: handwritten IR with the CPU kernel ABI,
// compiled, loaded and run; objects that share a function name; LLVM's errors as tg::Error; targets.
// Built only where CMake found LLVM.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "runtime/llvm_jit.h"
#include "test_util.h"
#include "tg/error.h"

using namespace tg;
using testing::HasSubstr;

namespace {

using KernelFn = void (*)(void**, const long long*, long long, long long);

KernelFn fn_of(const LLVMObject& o) {
  KernelFn f;
  void* p = o.address();
  std::memcpy(&f, &p, sizeof f);
  return f;
}

// Handed to the kernels as an extra symbol: an address that only the caller knows.
float host_twice(float x) { return 2.0f * x; }

// For each i in [gstart, gend): out8[8i..8i+8) = a[8i..8i+8) + b[8i..8i+8) (one <8 x float> fadd), and
// out1[i] = sinf(a[8i]) + expf(b[8i]) + host_twice(b[8i]) + vals[0].
const char* kKernel = R"(
declare float @sinf(float)
declare float @expf(float)
declare float @host_twice(float)

define void @k(ptr %bufs, ptr %vals, i64 %gstart, i64 %gend) {
entry:
  %out8 = load ptr, ptr %bufs
  %p1 = getelementptr ptr, ptr %bufs, i64 1
  %out1 = load ptr, ptr %p1
  %p2 = getelementptr ptr, ptr %bufs, i64 2
  %a = load ptr, ptr %p2
  %p3 = getelementptr ptr, ptr %bufs, i64 3
  %b = load ptr, ptr %p3
  %v0 = load i64, ptr %vals
  %v0f = sitofp i64 %v0 to float
  %any = icmp slt i64 %gstart, %gend
  br i1 %any, label %loop, label %exit
loop:
  %i = phi i64 [ %gstart, %entry ], [ %inext, %loop ]
  %base = mul i64 %i, 8
  %ap = getelementptr float, ptr %a, i64 %base
  %bp = getelementptr float, ptr %b, i64 %base
  %av = load <8 x float>, ptr %ap, align 4
  %bv = load <8 x float>, ptr %bp, align 4
  %sum = fadd <8 x float> %av, %bv
  %op = getelementptr float, ptr %out8, i64 %base
  store <8 x float> %sum, ptr %op, align 4
  %a0 = extractelement <8 x float> %av, i32 0
  %b0 = extractelement <8 x float> %bv, i32 0
  %s = call float @sinf(float %a0)
  %e = call float @expf(float %b0)
  %t = call float @host_twice(float %b0)
  %r0 = fadd float %s, %e
  %r1 = fadd float %r0, %t
  %r2 = fadd float %r1, %v0f
  %o1 = getelementptr float, ptr %out1, i64 %i
  store float %r2, ptr %o1, align 4
  %inext = add i64 %i, 1
  %more = icmp slt i64 %inext, %gend
  br i1 %more, label %loop, label %exit
exit:
  ret void
}
)";

const std::vector<std::pair<std::string, void*>> kExtra = {{"host_twice", reinterpret_cast<void*>(&host_twice)}};

// @E_4 stores `value` into out[0..4): the same name with different code in different objects.
std::string store_kernel(const char* value) {
  return std::string(R"(
define void @E_4(ptr %bufs, ptr %vals, i64 %gstart, i64 %gend) {
  %out = load ptr, ptr %bufs
  store <4 x float> <float )") + value + ", float " + value + ", float " + value + ", float " + value + R"(>, ptr %out, align 4
  ret void
}
)";
}

TEST(LLVMJit, RunsAKernelWithLibmVectorsAndExtraSymbols) {
  LLVMTarget target = LLVMTarget::from("native");
  LLVMObject obj(llvm_compile(kKernel, target), "k", kExtra);
  KernelFn k = fn_of(obj);
  ASSERT_NE(k, nullptr);

  const int n = 4;
  std::vector<float> a(8 * n), b(8 * n), out8(8 * n, -1.0f), out1(n, -1.0f);
  for (int j = 0; j < 8 * n; j++) a[j] = 0.25f * static_cast<float>(j) - 3.0f, b[j] = 0.1f * static_cast<float>(j % 7);
  void* bufs[] = {out8.data(), out1.data(), a.data(), b.data()};
  long long vals[] = {5};
  k(bufs, vals, 1, 3);  // a slice of the range, as the thread pool runs it

  for (int i = 0; i < n; i++) {
    bool in = i >= 1 && i < 3;
    for (int l = 0; l < 8; l++) EXPECT_EQ(out8[8 * i + l], in ? a[8 * i + l] + b[8 * i + l] : -1.0f) << i << "," << l;
    float want = std::sin(a[8 * i]) + std::exp(b[8 * i]) + 2.0f * b[8 * i] + 5.0f;
    EXPECT_FLOAT_EQ(out1[i], in ? want : -1.0f) << i;
  }
}

TEST(LLVMJit, BaselineTargetRunsTheSameKernel) {
  LLVMObject obj(llvm_compile(kKernel, LLVMTarget::from("x86-64")), "k", kExtra);
  std::vector<float> a(8, 1.5f), b(8, 0.5f), out8(8), out1(1);
  void* bufs[] = {out8.data(), out1.data(), a.data(), b.data()};
  long long vals[] = {-1};
  fn_of(obj)(bufs, vals, 0, 1);
  for (float x : out8) EXPECT_EQ(x, 2.0f);
  EXPECT_FLOAT_EQ(out1[0], std::sin(1.5f) + std::exp(0.5f) + 1.0f - 1.0f);
}

TEST(LLVMJit, SameFunctionNameInTwoObjects) {
  LLVMTarget target = LLVMTarget::from("native");
  auto one = std::make_unique<LLVMObject>(llvm_compile(store_kernel("1.0"), target), "E_4");
  LLVMObject two(llvm_compile(store_kernel("2.0"), target), "E_4");
  EXPECT_NE(one->address(), two.address());

  std::vector<float> out(4);
  void* bufs[] = {out.data()};
  fn_of(*one)(bufs, nullptr, 0, 1);
  EXPECT_THAT(out, testing::Each(1.0f));
  fn_of(two)(bufs, nullptr, 0, 1);
  EXPECT_THAT(out, testing::Each(2.0f));

  one.reset();  // unloading one leaves the other working
  std::fill(out.begin(), out.end(), 0.0f);
  fn_of(two)(bufs, nullptr, 0, 1);
  EXPECT_THAT(out, testing::Each(2.0f));
  LLVMObject three(llvm_compile(store_kernel("3.0"), target), "E_4");  // and the name can be loaded again
  fn_of(three)(bufs, nullptr, 0, 1);
  EXPECT_THAT(out, testing::Each(3.0f));
}

// An unloaded object gives its memory back for the next one to use. LLVM 16's default JIT memory
// manager kept every object's pages mapped (two mappings each) after unloading, so a process that built
// some 30000 kernels over its life (a long fuzzing run, BEAM searches) hit the kernel's limit on
// mappings (vm.max_map_count) and every later load failed with "Cannot allocate memory".
TEST(LLVMJit, UnloadedObjectsGiveBackTheirMemory) {
  LLVMTarget target = LLVMTarget::from("native");
  std::string code = llvm_compile(store_kernel("1.0"), target);
  LLVMObject keep(llvm_compile(store_kernel("2.0"), target), "E_4");  // stays loaded while others come and go
  auto mappings = [] {
    std::FILE* f = std::fopen("/proc/self/maps", "r");
    if (!f) return -1;
    int n = 0;
    for (int c; (c = std::fgetc(f)) != EOF;) n += c == '\n';
    std::fclose(f);
    return n;
  };
  std::vector<float> out(4);
  void* bufs[] = {out.data()};
  int before = 0;
  for (int i = 0; i < 1000; i++) {
    LLVMObject obj(code, "E_4");
    std::fill(out.begin(), out.end(), 0.0f);
    fn_of(obj)(bufs, nullptr, 0, 1);
    ASSERT_THAT(out, testing::Each(1.0f)) << "load " << i;
    if (i == 10) before = mappings();
  }
  ASSERT_GT(before, 0);
  EXPECT_LE(mappings(), before + 20) << "1000 loads and unloads";
  fn_of(keep)(bufs, nullptr, 0, 1);
  EXPECT_THAT(out, testing::Each(2.0f));
}

TEST(LLVMJit, SyntaxErrorHasLLVMsMessageAndTheIR) {
  const std::string ir = "define void @k(ptr %bufs) {\n  %x = fadd float 1.0, \n  ret void\n}\n";
  std::string msg = error_of([&] { (void)llvm_compile(ir, LLVMTarget::from("native")); });
  EXPECT_THAT(msg, HasSubstr("kernel.ll:3:"));  // LLVM's line:col
  EXPECT_THAT(msg, HasSubstr("error: expected value token"));
  EXPECT_THAT(msg, HasSubstr("   2 |   %x = fadd float 1.0, "));  // the IR, numbered
}

TEST(LLVMJit, UndefinedValueAndWrongTypeAreErrors) {
  LLVMTarget target = LLVMTarget::from("native");
  std::string undef = "define float @f() {\n  %y = fadd float %x, 1.0\n  ret float %y\n}\n";
  EXPECT_THAT(error_of([&] { (void)llvm_compile(undef, target); }), HasSubstr("use of undefined value '%x'"));
  std::string type = "define float @f(i32 %a) {\n  %y = fadd float %a, 1.0\n  ret float %y\n}\n";
  std::string msg = error_of([&] { (void)llvm_compile(type, target); });
  EXPECT_THAT(msg, HasSubstr("'%a' defined with type 'i32'"));
  EXPECT_THAT(msg, HasSubstr("%y = fadd float %a, 1.0"));
}

TEST(LLVMJit, VerifierErrorHasItsMessageAndTheIR) {
  // Parses, but %x does not dominate its use in %b.
  const std::string ir = R"(define float @f(i1 %c) {
entry:
  br i1 %c, label %a, label %b
a:
  %x = fadd float 1.0, 2.0
  br label %b
b:
  %y = fadd float %x, 1.0
  ret float %y
}
)";
  std::string msg = error_of([&] { (void)llvm_compile(ir, LLVMTarget::from("native")); });
  EXPECT_THAT(msg, HasSubstr("Instruction does not dominate all uses!"));
  EXPECT_THAT(msg, HasSubstr("   8 |   %y = fadd float %x, 1.0"));
}

TEST(LLVMJit, CodeGeneratorFatalErrorIsAnError) {
  // An AVX-512 intrinsic for a CPU without AVX-512: instruction selection calls report_fatal_error,
  // which must not end the process; the next compile for that target still works.
#ifdef TG_SANITIZED
  // The error unwinds through LLVM's frames (built without exceptions), leaking what they own.
  GTEST_SKIP() << "leaks by design: LeakSanitizer would fail it";
#endif
  const std::string ir = R"(declare <16 x float> @llvm.x86.avx512.sqrt.ps.512(<16 x float>, i32)
define void @k(ptr %p) {
  %v = load <16 x float>, ptr %p
  %r = call <16 x float> @llvm.x86.avx512.sqrt.ps.512(<16 x float> %v, i32 11)
  store <16 x float> %r, ptr %p
  ret void
}
)";
  LLVMTarget base = LLVMTarget::from("x86-64");
  std::string msg = error_of([&] { (void)llvm_compile(ir, base); });
  EXPECT_THAT(msg, HasSubstr("LLVM ERROR: "));
  EXPECT_THAT(msg, HasSubstr("   4 |   %r = call <16 x float> @llvm.x86.avx512.sqrt.ps.512"));
  LLVMObject obj(llvm_compile(store_kernel("4.0"), base), "E_4");
  std::vector<float> out(4);
  void* bufs[] = {out.data()};
  fn_of(obj)(bufs, nullptr, 0, 1);
  EXPECT_THAT(out, testing::Each(4.0f));
}

TEST(LLVMJit, LoadErrorsNameTheFunction) {
  LLVMTarget target = LLVMTarget::from("native");
  std::string obj = llvm_compile(store_kernel("1.0"), target);
  EXPECT_THAT(error_of([&] { LLVMObject o(obj, "E_5"); }), HasSubstr("'E_5'"));
  const std::string missing = "declare float @tg_no_such_symbol(float)\ndefine float @f(float %x) {\n"
                              "  %y = call float @tg_no_such_symbol(float %x)\n  ret float %y\n}\n";
  std::string msg = error_of([&] { LLVMObject o(llvm_compile(missing, target), "f"); });
  EXPECT_THAT(msg, HasSubstr("'f'"));
  EXPECT_THAT(msg, HasSubstr("tg_no_such_symbol"));
  EXPECT_THAT(error_of([&] { LLVMObject o("not an object file", "f"); }), HasSubstr("'f'"));
}

TEST(LLVMJit, Targets) {
  LLVMTarget base = LLVMTarget::from("x86-64");
  EXPECT_EQ(base.cpu, "x86-64");
  EXPECT_TRUE(base.has_feature("sse2"));
  EXPECT_FALSE(base.has_feature("avx2"));
  EXPECT_FALSE(base.has_feature("fma"));
  EXPECT_FALSE(base.has_feature("sse4"));  // a whole name, not a prefix of "sse4.1"
  LLVMTarget native = LLVMTarget::from("native");
  EXPECT_FALSE(native.cpu.empty());
  EXPECT_EQ(native.triple, base.triple);
  EXPECT_THAT(error_of([] { (void)LLVMTarget::from("no-such-cpu"); }), HasSubstr("unknown CPU 'no-such-cpu'"));
  EXPECT_THAT(llvm_version(), testing::StartsWith("16."));
  std::printf("native: %s %s\n  %s\n", native.triple.c_str(), native.cpu.c_str(), native.features.c_str());
}

TEST(LLVMJit, CompilesConcurrently) {
  LLVMTarget target = LLVMTarget::from("native");
  std::vector<std::thread> threads;
  std::vector<float> results(8, 0.0f);
  for (int t = 0; t < 8; t++)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 3; rep++) {
        std::string v = std::to_string(t) + ".0";
        LLVMObject obj(llvm_compile(store_kernel(v.c_str()), target), "E_4");
        std::vector<float> out(4);
        void* bufs[] = {out.data()};
        fn_of(obj)(bufs, nullptr, 0, 1);
        results[t] = *std::min_element(out.begin(), out.end()) == *std::max_element(out.begin(), out.end()) ? out[0] : -1.0f;
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; t++) EXPECT_EQ(results[t], static_cast<float>(t));
}

// What llvm_pipeline must keep doing for the kernels (the renderer relies on each): inline the
// alwaysinline exp2 helpers, unroll a short loop wholly (a pool's 2-wide window), vectorize a scalar
// loop (a length with no power-of-two factor, left scalar by the heuristics). Index math is i64, as the
// renderer writes it. The pipeline names the compile cache's entries.
TEST(LLVMJit, PipelineInlinesUnrollsAndVectorizes) {
  const char* ir = R"(
define internal float @twice(float %x0) alwaysinline nounwind {
  %y = fadd float %x0, %x0
  ret float %y
}
define void @k(ptr noalias %bufs, ptr noalias %vals, i64 %gstart, i64 %gend) nounwind {
entry:
  %p0 = getelementptr inbounds ptr, ptr %bufs, i64 0
  %out = load ptr, ptr %p0, align 8
  %p1 = getelementptr inbounds ptr, ptr %bufs, i64 1
  %a = load ptr, ptr %p1, align 8
  %p2 = getelementptr inbounds ptr, ptr %bufs, i64 2
  %sum = load ptr, ptr %p2, align 8
  %acc = alloca float
  store float 0.0, ptr %acc
  br label %r_head
r_head:
  %r = phi i64 [ 0, %entry ], [ %r_next, %r_body ]
  %r_more = icmp slt i64 %r, 3
  br i1 %r_more, label %r_body, label %r_exit
r_body:
  %ra = getelementptr inbounds float, ptr %a, i64 %r
  %rv = load float, ptr %ra, align 4
  %old = load float, ptr %acc
  %new = fadd float %old, %rv
  store float %new, ptr %acc
  %r_next = add i64 %r, 1
  br label %r_head
r_exit:
  %total = load float, ptr %acc
  store float %total, ptr %sum, align 4
  br label %g_head
g_head:
  %g = phi i64 [ %gstart, %r_exit ], [ %g_next, %g_body ]
  %g_more = icmp slt i64 %g, %gend
  br i1 %g_more, label %g_body, label %g_exit
g_body:
  %ga = getelementptr inbounds float, ptr %a, i64 %g
  %gv = load float, ptr %ga, align 4
  %gt = call float @twice(float %gv)
  %go = getelementptr inbounds float, ptr %out, i64 %g
  store float %gt, ptr %go, align 4
  %g_next = add i64 %g, 1
  br label %g_head
g_exit:
  ret void
}
)";
  std::string opt = llvm_optimized_ir(ir, LLVMTarget::from("x86-64-v3"));
  EXPECT_THAT(opt, testing::Not(HasSubstr("call float @twice"))) << opt;  // inlined
  EXPECT_THAT(opt, testing::Not(HasSubstr("%r = phi"))) << opt;           // the 3-step loop unrolled
  EXPECT_THAT(opt, HasSubstr("<8 x float>")) << opt;                        // the scalar loop vectorized for AVX2
  // and it still computes the same: out = 2a over the slice, sum = a[0] + a[1] + a[2]
  LLVMObject obj(llvm_compile(ir, LLVMTarget::from("native")), "k");
  std::vector<float> a(37), out(37, -1.0f), sum(1);
  for (size_t i = 0; i < a.size(); i++) a[i] = 0.5f * static_cast<float>(i) - 4.0f;
  void* bufs[] = {out.data(), a.data(), sum.data()};
  fn_of(obj)(bufs, nullptr, 2, 35);
  for (size_t i = 0; i < a.size(); i++) EXPECT_EQ(out[i], i >= 2 && i < 35 ? 2 * a[i] : -1.0f) << i;
  EXPECT_EQ(sum[0], a[0] + a[1] + a[2]);
  EXPECT_THAT(std::string(llvm_pipeline()), HasSubstr("loop-vectorize"));
}

TEST(LLVMJit, CompileTime) {  // printed, not asserted: machines differ
  LLVMTarget target = LLVMTarget::from("native");
  (void)llvm_compile(kKernel, target);  // the target machine is made once
  std::vector<double> ms;
  for (int i = 0; i < 21; i++) {
    auto t0 = std::chrono::steady_clock::now();
    std::string obj = llvm_compile(kKernel, target);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    EXPECT_FALSE(obj.empty());
  }
  std::sort(ms.begin(), ms.end());
  std::string code = llvm_compile(kKernel, target);
  auto t0 = std::chrono::steady_clock::now();
  LLVMObject obj(code, "k", kExtra);
  double load = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("LLVM compile of a small kernel: median %.2f ms (min %.2f, max %.2f); its load %.2f ms\n", ms[10], ms[0], ms.back(), load);
}

}  // namespace
