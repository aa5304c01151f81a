// Dtype semantics of compiled kernels: float16 (storage, conversions, arithmetic) against NumPy and the
// same on every kernel compiler and target; integer division, modulo and shifts (the README's
// "Semantics") against a 128-bit reference, in kernels and in constant folding; float -> int casts;
// 64-bit loop variables.
//
// Every suite here has "Dtype" in its name: scripts/test.sh runs them again with kernels compiled for
// CPU_TARGET=x86-64 by CC=gcc and by CC=clang, so a newer CPU cannot hide a dtype bug.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "codegen/kernel.h"
#include "engine/realize.h"
#include "engine/schedule.h"
#include "lazy/lazybuffer.h"
#include "renderer/renderer.h"
#include "runtime/device.h"
#include "runtime/ops_cpu.h"
#include "test_util.h"
#include "tg/tensor.h"
#include "uop/exec_alu.h"
#include "uop/uop.h"

namespace fs = std::filesystem;
using namespace tg;

namespace {

// ---- NumPy as the reference ------------------------------------------------------------------------

template <class T> std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// Runs `code` under Debian's python3 with numpy as np and the inputs as ins[0], ins[1]... (bytes); the
// code sets `out`, a numpy array whose raw bytes are returned as Out values.
template <class Out> std::vector<Out> numpy(const std::string& code, const std::vector<std::string>& inputs) {
  std::string tmpl = (fs::temp_directory_path() / "tg_numpy_XXXXXX").string();
  fs::path dir = ::mkdtemp(tmpl.data());
  for (size_t i = 0; i < inputs.size(); i++) std::ofstream(dir / ("in" + std::to_string(i)), std::ios::binary) << inputs[i];
  std::ofstream(dir / "run.py") << "import numpy as np, sys\n"
                                << "d = sys.argv[1]\n"
                                << "ins = [open(f'{d}/in{i}', 'rb').read() for i in range(" << inputs.size() << ")]\n"
                                << "with np.errstate(all='ignore'):\n"
                                << "  " << code << "\n"
                                << "open(f'{d}/out', 'wb').write(np.ascontiguousarray(out).tobytes())\n";
  std::string cmd = "/usr/bin/python3 '" + (dir / "run.py").string() + "' '" + dir.string() + "'";
  int rc = std::system(cmd.c_str());
  std::vector<Out> out;
  if (rc == 0) {
    std::ifstream f(dir / "out", std::ios::binary);
    std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    out.resize(s.size() / sizeof(Out));
    std::memcpy(out.data(), s.data(), out.size() * sizeof(Out));
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  EXPECT_EQ(rc, 0) << "numpy reference failed: " << code;
  return out;
}

bool half_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu); }
bool float_is_nan(uint32_t b) { return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu); }

// ---- devices with each float16 path --------------------------------------------------------------

// A CPU device that never uses _Float16 (portable C conversions), with the default compiler and target.
const std::string& portable_device() {
  static const std::string name = [] {
    Device::register_backend("CPUPORTABLEHALF", [](const std::string& n) {
      CPUOptions o = CPUOptions::from_env();
      o.portable_half = true;
      return make_cpu_device(n, o);
    });
    return std::string("CPUPORTABLEHALF");
  }();
  return name;
}

// CPU devices for gcc, clang and LLVM, each for the native and the baseline x86-64 target (those that exist).
std::vector<std::string> compiler_devices() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const char* cc : {"gcc", "clang"})
      for (const char* target : {"native", "x86-64"}) {
        if (std::system((std::string("command -v ") + cc + " >/dev/null 2>&1").c_str()) != 0) continue;
        std::string name = std::string("CPUHALF") + (cc[0] == 'g' ? "GCC" : "CLANG") + (target[0] == 'n' ? "NATIVE" : "BASE");
        Device::register_backend(name, [cc, target](const std::string& n) {
          CPUOptions o;
          o.compiler = KernelCompiler::Clang;
          o.cc = {cc};
          o.target = target;
          return make_cpu_device(n, o);
        });
        out.push_back(name);
      }
    if (cpu_has_llvm())  // LLVM in process: F16C instructions where the target has them, else the host's conversions
      for (const char* target : {"native", "x86-64"}) {
        std::string name = std::string("CPUHALFLLVM") + (target[0] == 'n' ? "NATIVE" : "BASE");
        Device::register_backend(name, [target](const std::string& n) {
          CPUOptions o;
          o.compiler = KernelCompiler::LLVM;
          o.target = target;
          return make_cpu_device(n, o);
        });
        out.push_back(name);
      }
    return out;
  }();
  return names;
}

std::vector<uint16_t> all_halves() {
  std::vector<uint16_t> h(65536);
  for (size_t i = 0; i < h.size(); i++) h[i] = static_cast<uint16_t>(i);
  return h;
}

// Float bit patterns: a stride through all 2^32; every pattern near the float16 boundaries (the largest
// finite half, the subnormal range, the underflow to zero); and for every exponent that rounds to a
// half, exact rounding ties and their neighbours, both signs.
std::vector<uint32_t> float_samples() {
  std::vector<uint32_t> v;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 40961) v.push_back(static_cast<uint32_t>(b));
  std::mt19937 rng(99);
  for (uint32_t e = 95; e <= 145; e++) {
    uint32_t sh = e >= 113 ? 13 : std::min<uint32_t>(126 - e, 24);  // mantissa bits below the half's last bit
    for (int k = 0; k < 64; k++) {
      uint32_t m = static_cast<uint32_t>(rng()) & 0x7fffffu;
      uint32_t tie = sh >= 24 ? 0 : (m & ~((1u << sh) - 1)) | (1u << (sh - 1));
      for (uint32_t sign : {0u, 0x80000000u})
        for (uint32_t t : {tie - 1, tie, tie + 1}) v.push_back(sign | (e << 23) | (t & 0x7fffffu));
    }
  }
  for (uint32_t center : {0x477fe000u, 0x477ff000u, 0x38800000u, 0x33000000u, 0x33800000u, 0x3f801000u, 0x3f803000u, 0x387fc000u, 0x7f800000u})
    for (uint32_t d = 0; d < 4096; d++)
      for (uint32_t sign : {0u, 0x80000000u}) {
        v.push_back(sign | (center + d));
        v.push_back(sign | (center - d));
      }
  return v;
}

// float32 bits -> float16 bits, computed on `device`
std::vector<uint16_t> to_half_on(const std::string& device, const std::vector<uint32_t>& bits) {
  Tensor t = Tensor(bits, {static_cast<int64_t>(bits.size())}, device).bitcast(dtypes::float32).cast(dtypes::float16);
  std::vector<uint8_t> raw = t.bytes();
  std::vector<uint16_t> out(bits.size());
  std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

// float16 bits -> float32 bits, computed on `device`
std::vector<uint32_t> to_float_on(const std::string& device, const std::vector<uint16_t>& halves) {
  Tensor t = Tensor(halves, {static_cast<int64_t>(halves.size())}, device).bitcast(dtypes::float16).cast(dtypes::float32);
  std::vector<uint8_t> raw = t.bytes();
  std::vector<uint32_t> out(halves.size());
  std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

// Random half pairs: every class of value (zeros, subnormals, normals, inf, NaN) appears.
void half_pairs(std::vector<uint16_t>& a, std::vector<uint16_t>& b, size_t n) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> any(0, 65535);
  std::vector<uint16_t> special = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x3800, 0x0200};
  for (size_t i = 0; i < n; i++) {
    a.push_back(i < special.size() * special.size() ? special[i / special.size()] : static_cast<uint16_t>(any(rng)));
    b.push_back(i < special.size() * special.size() ? special[i % special.size()] : static_cast<uint16_t>(any(rng)));
  }
}

// The half ops under test, computed on `device` as bit patterns (outputs concatenated).
std::vector<uint16_t> half_ops_on(const std::string& device, const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  int64_t n = static_cast<int64_t>(a.size());
  Tensor x = Tensor(a, {n}, device).bitcast(dtypes::float16), y = Tensor(b, {n}, device).bitcast(dtypes::float16);
  std::vector<Tensor> results = {x + y, x - y, x * y, x / y, (x * x).sqrt(), -x, x.lt(y).where(x, y), x.reciprocal()};
  std::vector<uint16_t> out;
  for (Tensor& r : results) {
    EXPECT_EQ(r.dtype(), dtypes::float16);
    std::vector<uint8_t> raw = r.bytes();
    size_t at = out.size();
    out.resize(at + static_cast<size_t>(n));
    std::memcpy(out.data() + at, raw.data(), raw.size());
  }
  return out;
}

const char* kHalfOpsNumpy =
    "x = np.frombuffer(ins[0], np.float16); y = np.frombuffer(ins[1], np.float16); one = np.float16(1)\n"
    "  out = np.concatenate([x + y, x - y, x * y, x / y, np.sqrt(x * x), -x, np.where(x < y, x, y), one / x]).view(np.uint16)";

}  // namespace

// ---- float16 ---------------------------------------------------------------------------------------

TEST(DtypeHalf, EveryHalfToFloatAsNumpy) {
  std::vector<uint16_t> h = all_halves();
  std::vector<uint32_t> want = numpy<uint32_t>("out = np.frombuffer(ins[0], np.float16).astype(np.float32).view(np.uint32)", {bytes_of(h)});
  ASSERT_EQ(want.size(), h.size());
  for (const std::string& dev : {std::string("CPU"), portable_device()}) {
    std::vector<uint32_t> got = to_float_on(dev, h);
    for (size_t i = 0; i < h.size(); i++) {
      if (half_is_nan(h[i])) {  // NaN: NumPy keeps a signalling NaN signalling; kernels quiet it, keeping sign and payload
        uint32_t quiet = (static_cast<uint32_t>(h[i] & 0x8000u) << 16) | 0x7fc00000u | (static_cast<uint32_t>(h[i] & 0x3ffu) << 13);
        ASSERT_EQ(got[i], quiet) << dev << " half 0x" << std::hex << h[i];
      } else {
        ASSERT_EQ(got[i], want[i]) << dev << " half 0x" << std::hex << h[i];
      }
    }
  }
}

TEST(DtypeHalf, FloatToHalfRoundsAsNumpy) {
  std::vector<uint32_t> f = float_samples();
  std::vector<uint16_t> want = numpy<uint16_t>("out = np.frombuffer(ins[0], np.float32).astype(np.float16).view(np.uint16)", {bytes_of(f)});
  ASSERT_EQ(want.size(), f.size());
  for (const std::string& dev : {std::string("CPU"), portable_device()}) {
    std::vector<uint16_t> got = to_half_on(dev, f);
    for (size_t i = 0; i < f.size(); i++) {
      if (float_is_nan(f[i])) {  // NaN: quieted, sign and the payload's top bits kept
        uint16_t quiet = static_cast<uint16_t>(((f[i] >> 16) & 0x8000u) | 0x7e00u | ((f[i] >> 13) & 0x3ffu));
        ASSERT_EQ(got[i], quiet) << dev << " float 0x" << std::hex << f[i];
      } else {
        ASSERT_EQ(got[i], want[i]) << dev << " float 0x" << std::hex << f[i];
      }
    }
  }
}

TEST(DtypeHalf, ArithmeticIsIeeeHalfAsNumpy) {
  // + - * / sqrt are IEEE binary16 operations: one rounding each, as NumPy's (and torch's).
  std::vector<uint16_t> a, b;
  half_pairs(a, b, 20000);
  std::vector<uint16_t> want = numpy<uint16_t>(kHalfOpsNumpy, {bytes_of(a), bytes_of(b)});
  for (const std::string& dev : {std::string("CPU"), portable_device()}) {
    std::vector<uint16_t> got = half_ops_on(dev, a, b);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) {
      size_t k = i % a.size();
      if (half_is_nan(want[i])) ASSERT_TRUE(half_is_nan(got[i])) << dev << " op " << i / a.size() << " of 0x" << std::hex << a[k] << ", 0x" << b[k];
      else ASSERT_EQ(got[i], want[i]) << dev << " op " << i / a.size() << " of 0x" << std::hex << a[k] << ", 0x" << b[k];
    }
  }
}

TEST(DtypeHalf, SameBitsOnEveryCompilerTargetAndPath) {
  // gcc and clang, native and baseline x86-64, _Float16 where the probe allows it and portable C: the
  // very same bits, NaN payloads included.
  std::vector<uint16_t> a, b;
  half_pairs(a, b, 4000);
  std::vector<uint32_t> f = float_samples();
  std::vector<uint16_t> h = all_halves();
  // which NaN an op on two NaNs returns depends on the operand order the compiler picked: one NaN here
  auto nan_as_one = [](std::vector<uint16_t> v) {
    for (uint16_t& x : v)
      if (half_is_nan(x)) x = 0x7e00;
    return v;
  };
  std::vector<uint16_t> ops = nan_as_one(half_ops_on("CPU", a, b)), halves = to_half_on("CPU", f);
  std::vector<uint32_t> floats = to_float_on("CPU", h);
  std::vector<std::string> devs = compiler_devices();
  devs.push_back(portable_device());
  int native = cpu_native_half(Device::get("CPU")), portable = !native;
  for (const std::string& dev : devs) {
    bool n = cpu_native_half(Device::get(dev));
    native += n;
    portable += !n;
    EXPECT_EQ(nan_as_one(half_ops_on(dev, a, b)), ops) << dev << (n ? " (_Float16)" : " (portable)");
    EXPECT_EQ(to_half_on(dev, f), halves) << dev;
    EXPECT_EQ(to_float_on(dev, h), floats) << dev;
  }
  EXPECT_GE(portable, 1);  // the forced-portable device at least
  std::printf("float16 paths compared: %d with _Float16, %d portable\n", native, portable);
}

TEST(DtypeHalf, HalfKernelsRunWithEveryCompilerAndTarget) {
  // whatever the probe finds (clang 14 rejects _Float16 on baseline x86-64, gcc 12 accepts it), half
  // kernels compile and compute; forcing the portable path is always possible
  EXPECT_FALSE(cpu_native_half(Device::get(portable_device())));
  for (const std::string& dev : compiler_devices()) {
    Tensor t = Tensor({1.5f, 2.25f, 65504.f}, dev).cast(dtypes::float16) * 3;
    EXPECT_EQ(t.cast(dtypes::float32).tolist<float>(), (std::vector<float>{4.5f, 6.75f, INFINITY})) << dev;
  }
}

TEST(DtypeHalf, LoadStoreAndReduce) {
  // half buffers are read and written as 16-bit storage; a sum of halves is rounded to half at the end
  Tensor h = Tensor({1.f, 2049.f, 65504.f, -0.5f}).cast(dtypes::float16).contiguous();
  h.realize();
  EXPECT_EQ(h.tolist<float>(), (std::vector<float>{1.f, 2048.f, 65504.f, -0.5f}));  // 2049 ties to even
  EXPECT_EQ((h * 2).tolist<float>(), (std::vector<float>{2.f, 4096.f, INFINITY, -1.f}));
  EXPECT_EQ(Tensor({1.f, 1.f / 1024, 1.f / 1024}).cast(dtypes::float16).sum().item<float>(), 1.f + 2.f / 1024);
  EXPECT_EQ(h.bitcast(dtypes::int16).tolist<int16_t>(), (std::vector<int16_t>{0x3c00, 0x6800, 0x7bff, static_cast<int16_t>(0xb800)}));
}

// ---- integer division, modulo, shifts ----------------------------------------------------------------

namespace {

// The README's semantics, computed in 128 bits: a wrong answer here cannot come from the same C.
template <class T> T spec(Ops op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  constexpr int bits = sizeof(T) * 8;
  __int128 x = a, y = b;
  auto wrap = [](__int128 v) { return static_cast<T>(static_cast<U>(static_cast<unsigned __int128>(v))); };
  bool count_in_range = y >= 0 && y < bits;
  switch (op) {
    case Ops::IDIV: return y == 0 ? T(0) : wrap(x / y);  // __int128 division truncates
    case Ops::MOD: return y == 0 ? T(0) : wrap(x % y);
    case Ops::SHL: return count_in_range ? wrap(static_cast<__int128>(static_cast<unsigned __int128>(static_cast<U>(a)) << static_cast<int>(y))) : T(0);
    case Ops::SHR: {
      if (!count_in_range) return x < 0 ? T(-1) : T(0);
      __int128 d = static_cast<__int128>(1) << static_cast<int>(y), q = x / d;
      if (x % d != 0 && x < 0) q -= 1;  // an arithmetic shift is floor division
      return wrap(q);
    }
    default: ADD_FAILURE() << "spec: " << op_name(op); return 0;
  }
}

template <class T> std::vector<T> edge_values() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {0, 1, 2, 3, 7, L::max(), static_cast<T>(L::max() - 1), static_cast<T>(L::max() / 2 + 1)};
  if (std::is_signed_v<T>) for (T x : {T(-1), T(-2), T(-3), T(-7), L::min(), static_cast<T>(L::min() + 1)}) v.push_back(x);
  T bits = static_cast<T>(sizeof(T) * 8);
  for (T x : {bits, static_cast<T>(bits - 1), static_cast<T>(bits + 1)}) v.push_back(x);
  return v;
}

// One kernel of hand-built UOps, rendered by the CPU renderer, compiled and run: output k is
// out_k[i] = a[i] OP_k b[i], or a[i] OP_k c_k when case k has a constant c_k. `src` receives the C.
template <class T> struct Case { Ops op; std::optional<T> c; };
template <class T> std::vector<std::vector<T>> run_kernel(const std::vector<Case<T>>& cases, const std::vector<T>& a, const std::vector<T>& b,
                                                          std::string* src = nullptr) {
  DType dt = dtype_of<T>();
  int64_t n = static_cast<int64_t>(a.size()), k = static_cast<int64_t>(cases.size());
  std::vector<UOpPtr> uops;
  for (int64_t i = 0; i < k + 2; i++) uops.push_back(UOp::make(Ops::DEFINE_GLOBAL, dt.pointer(), {}, i));
  UOpPtr gidx = UOp::make(Ops::SPECIAL, dtypes::int32, {}, SpecialArg{SpecialKind::GlobalIdx, 0, n});
  uops.push_back(gidx);
  auto load = [&](const UOpPtr& g) {
    UOpPtr idx = UOp::make(Ops::INDEX, g->dtype, {g, gidx}), ld = UOp::make(Ops::LOAD, dt, {idx});
    uops.insert(uops.end(), {idx, ld});
    return ld;
  };
  UOpPtr la = load(uops[static_cast<size_t>(k)]), lb = load(uops[static_cast<size_t>(k + 1)]);
  for (int64_t i = 0; i < k; i++) {
    const Case<T>& cs = cases[static_cast<size_t>(i)];
    UOpPtr alu = UOp::make(cs.op, dt, {la, cs.c ? UOp::cnst_int(dt, static_cast<int64_t>(*cs.c)) : lb});
    UOpPtr out = UOp::make(Ops::INDEX, uops[static_cast<size_t>(i)]->dtype, {uops[static_cast<size_t>(i)], gidx});
    uops.insert(uops.end(), {alu, out, UOp::make(Ops::STORE, dtypes::void_, {out, alu})});
  }
  Compiled& cpu = Device::get("CPU");
  RenderedKernel kern = cpu.renderer().render("binop", uops);
  if (src) *src = kern.src;
  auto prg = cpu.program(kern.name, cpu.compiler().compile_cached(kern.src));
  std::vector<std::vector<T>> outs(cases.size(), std::vector<T>(a.size()));
  std::vector<void*> bufs;
  for (auto& o : outs) bufs.push_back(o.data());
  bufs.push_back(const_cast<T*>(a.data()));
  bufs.push_back(const_cast<T*>(b.data()));
  (*prg)(bufs, {}, kern.global_size, {}, true);
  return outs;
}

// Constant folding's answer (exec_alu, what the symbolic rules fold constants with).
template <class T> T folded(Ops op, T a, T b) {
  DType dt = dtype_of<T>();
  Value r = exec_alu(op, dt, {const_to_value(*UOp::cnst_int(dt, static_cast<int64_t>(a))), const_to_value(*UOp::cnst_int(dt, static_cast<int64_t>(b)))}, dt);
  return static_cast<T>(r.i);
}

template <class T> void check_int_semantics() {
  std::vector<T> vals = edge_values<T>(), a, b;
  for (T x : vals)
    for (T y : vals) { a.push_back(x); b.push_back(y); }
  // every op with the divisor / count loaded (bounds unknown: guarded) and as each constant (guards
  // depend on its value)
  std::vector<Case<T>> cases;
  for (Ops op : {Ops::IDIV, Ops::MOD, Ops::SHL, Ops::SHR}) {
    cases.push_back({op, std::nullopt});
    for (T y : vals) cases.push_back({op, y});
  }
  std::vector<std::vector<T>> got = run_kernel<T>(cases, a, b);
  for (size_t k = 0; k < cases.size(); k++) {
    auto [op, c] = cases[k];
    for (size_t i = 0; i < a.size(); i++) {
      T y = c ? *c : b[i];
      T want = spec(op, a[i], y);
      ASSERT_EQ(+got[k][i], +want) << dtype_of<T>().name() << " kernel: " << +a[i] << " " << op_name(op) << (c ? " const " : " ") << +y;
      ASSERT_EQ(+folded(op, a[i], y), +want) << dtype_of<T>().name() << " folding: " << +a[i] << " " << op_name(op) << " " << +y;
    }
  }
}

}  // namespace

TEST(DtypeIntSemantics, DivModShiftsEveryIntDtypeKernelAndFolding) {
  check_int_semantics<int8_t>();
  check_int_semantics<uint8_t>();
  check_int_semantics<int16_t>();
  check_int_semantics<uint16_t>();
  check_int_semantics<int32_t>();
  check_int_semantics<uint32_t>();
  check_int_semantics<int64_t>();
  check_int_semantics<uint64_t>();
}

namespace {

// Shifts by loaded counts (in range or not) and bitwise ops over every pair of edge values, through
// the scheduler and the heuristics: an elementwise kernel of whole vectors, whose shifts and bitwise
// ops are vector ops where the renderer has them (LLVM IR: all five; C: the bitwise ones). The vector
// forms must keep the scalar semantics, lane by lane.
template <class T> void check_vector_int_ops() {
  std::vector<T> vals = edge_values<T>(), a, b;
  for (T x : vals)
    for (T y : vals) { a.push_back(x); b.push_back(y); }
  for (size_t i = 0; a.size() % 64 != 0; i++) a.push_back(a[i]), b.push_back(b[i]);  // whole vectors
  Tensor ta = Tensor(a, {static_cast<int64_t>(a.size())}).realize(), tb = Tensor(b, {static_cast<int64_t>(b.size())}).realize();
  for (Ops op : {Ops::SHL, Ops::SHR, Ops::XOR, Ops::OR, Ops::AND}) {
    Tensor r(ta.lazydata()->e(op, {tb.lazydata()}));
    std::string src;
    for (const ScheduleItem& si : create_schedule({r.lazydata()}))
      if (si.is_kernel()) src = get_runner("CPU", si.ast)->kernel.src;
    std::vector<T> got = r.tolist<T>();
    for (size_t i = 0; i < a.size(); i++) {
      T want = op == Ops::XOR ? T(a[i] ^ b[i]) : op == Ops::OR ? T(a[i] | b[i]) : op == Ops::AND ? T(a[i] & b[i]) : spec(op, a[i], b[i]);
      ASSERT_EQ(+got[i], +want) << dtype_of<T>().name() << " " << +a[i] << " " << op_name(op) << " " << +b[i] << "\n" << src;
    }
    if (is_llvm_ir(src)) {
      std::string ir = op == Ops::SHL ? "shl" : op == Ops::SHR ? (std::is_signed_v<T> ? "ashr" : "lshr") : op == Ops::XOR ? "xor" : op == Ops::OR ? "or" : "and";
      EXPECT_TRUE(std::regex_search(src, std::regex(ir + " <[0-9]+ x i" + std::to_string(sizeof(T) * 8) + ">"))) << src;
    }
  }
}

}  // namespace

TEST(DtypeIntSemantics, VectorShiftsAndBitwiseOpsKeepTheScalarSemantics) {
  check_vector_int_ops<int32_t>();
  check_vector_int_ops<uint32_t>();
  check_vector_int_ops<int64_t>();
}

TEST(DtypeIntSemantics, DivisionByAPositiveConstantIsPlain) {
  // index math divides by positive constants: no guard there, a plain / and %
  std::string src;
  std::vector<int32_t> a = {-7, 7, 100};
  auto got = run_kernel<int32_t>({{Ops::IDIV, 4}, {Ops::MOD, 4}, {Ops::SHL, 3}}, a, a, &src);
  EXPECT_EQ(got[0], (std::vector<int32_t>{-1, 1, 25}));
  EXPECT_EQ(got[1], (std::vector<int32_t>{-3, 3, 0}));
  EXPECT_EQ(got[2], (std::vector<int32_t>{-56, 56, 800}));
  if (is_llvm_ir(src)) {
    EXPECT_TRUE(std::regex_search(src, std::regex(R"(sdiv i32 %v[0-9]+, 4\n)"))) << src;
    EXPECT_TRUE(std::regex_search(src, std::regex(R"(srem i32 %v[0-9]+, 4\n)"))) << src;
    EXPECT_EQ(src.find("icmp eq"), std::string::npos) << src;
    EXPECT_EQ(src.find("select"), std::string::npos) << src;  // a count known to be in range needs no check either
  } else {
    EXPECT_NE(src.find("(val0/4)"), std::string::npos) << src;
    EXPECT_NE(src.find("(val0%4)"), std::string::npos) << src;
    EXPECT_EQ(src.find("=="), std::string::npos) << src;
    EXPECT_EQ(src.find("?"), std::string::npos) << src;  // a count known to be in range needs no check either
  }
}

TEST(DtypeIntSemantics, TensorIdivByZeroAndMinByMinusOne) {
  // the issue's repro killed the process with SIGFPE
  EXPECT_EQ(Tensor({1, 2, 3}).idiv(Tensor({0, 1, 0})).tolist<int>(), (std::vector<int>{0, 2, 0}));
  const int mn = std::numeric_limits<int>::min();
  EXPECT_EQ(Tensor({mn, -7, 7, -7}).idiv(Tensor({-1, 2, -2, -1})).tolist<int>(), (std::vector<int>{mn, -3, -3, 7}));
  const int64_t mn64 = std::numeric_limits<int64_t>::min();
  Tensor a64 = Tensor(std::vector<int64_t>{mn64, 5, -9}, {3}), b64 = Tensor(std::vector<int64_t>{-1, 0, 4}, {3});
  EXPECT_EQ(a64.idiv(b64).tolist<int64_t>(), (std::vector<int64_t>{mn64, 0, -2}));
  // the same with constants on both sides, folded before any kernel runs: the same answers
  EXPECT_EQ(Tensor::full({2}, 5, dtypes::int32).idiv(Tensor::full({2}, 0, dtypes::int32)).tolist<int>(), (std::vector<int>{0, 0}));
  EXPECT_EQ(Tensor::full({2}, mn, dtypes::int32).idiv(Tensor::full({2}, -1, dtypes::int32)).tolist<int>(), (std::vector<int>{mn, mn}));
  EXPECT_EQ(Tensor::full({1}, -7, dtypes::int8).idiv(Tensor::full({1}, 2, dtypes::int8)).tolist<int8_t>(), (std::vector<int8_t>{-3}));
  EXPECT_EQ(Tensor(std::vector<uint8_t>{200, 7}, {2}).idiv(Tensor(std::vector<uint8_t>{0, 2}, {2})).tolist<uint8_t>(), (std::vector<uint8_t>{0, 3}));
}

TEST(DtypeIntSemantics, IntegerArithmeticWraps) {
  // -fwrapv: signed overflow wraps in kernels as in constant folding
  const int mx = std::numeric_limits<int>::max(), mn = std::numeric_limits<int>::min();
  EXPECT_EQ((Tensor({mx, mn}) + Tensor({1, -1})).tolist<int>(), (std::vector<int>{mn, mx}));
  EXPECT_EQ((Tensor({mx}) * Tensor({2})).tolist<int>(), (std::vector<int>{-2}));
  EXPECT_EQ((Tensor::full({1}, mx, dtypes::int32) + Tensor::full({1}, 1, dtypes::int32)).tolist<int>(), (std::vector<int>{mn}));
  EXPECT_EQ((-Tensor({mn})).tolist<int>(), (std::vector<int>{mn}));
  // uint16 * uint16 is an int multiplication in C, which overflows int: wraps to the low 16 bits
  EXPECT_EQ((Tensor(std::vector<uint16_t>{65535}, {1}) * Tensor(std::vector<uint16_t>{65535}, {1})).tolist<uint16_t>(), (std::vector<uint16_t>{1}));
}

// A sum that wraps around is not its terms' sum: the simplifier's comparison and division rules (which
// move constants across) must not apply to it (differential fuzz seed 1181653: uint8 4 + x < 3 was
// rewritten to x < 255). Expected values: C's uint8/int8 arithmetic, written out per element.
TEST(DtypeIntSemantics, WrappingSumsInComparisonsAndDivisions) {
  std::vector<uint8_t> u = {6, 9, 251, 252, 253, 254, 255, 0};
  std::vector<int8_t> s = {-128, -125, -1, 0, 100, 123, 124, 127};
  Tensor tu(u, {8}), ts(s, {8});
  std::vector<bool> lt, mul_lt, slt;
  std::vector<uint8_t> div;
  for (uint8_t x : u) {
    uint8_t sum = static_cast<uint8_t>(x + 4);
    lt.push_back(sum < 3);
    div.push_back(sum / 2);
    mul_lt.push_back(static_cast<uint8_t>(x * 2) < 10);
  }
  for (int8_t x : s) slt.push_back(static_cast<int8_t>(x + 4) < -120);
  EXPECT_EQ(((tu + 4) < 3).tolist<bool>(), lt);
  EXPECT_EQ((tu + 4).idiv(Tensor::full({8}, 2, dtypes::uint8)).tolist<uint8_t>(), div);
  EXPECT_EQ(((tu * 2) < 10).tolist<bool>(), mul_lt);
  EXPECT_EQ(((ts + 4) < -120).tolist<bool>(), slt);
}

// uint64 constants at or above 2^63 (held as negative int64 in the IR) and divisors whose product
// leaves a narrow dtype: the simplifier's bounds must not read them as small or negative numbers
// (uint64 x < 2^64 - 2048 was folded to false: the constant's bounds were -2048). Expected values: C's
// uint64/uint8 arithmetic, per element.
TEST(DtypeIntSemantics, HugeUnsignedConstantsAndNarrowDivisorProducts) {
  const uint64_t big = 18446744073709549568ull;  // 2^64 - 2048, exact in a double
  std::vector<uint64_t> u = {0, 5, (uint64_t{1} << 63) + 3, big - 1, big, ~uint64_t{0}};
  Tensor t(u, {6});
  std::vector<bool> lt, ne, gt;
  std::vector<uint64_t> mx, dv;
  for (uint64_t x : u) {
    lt.push_back(x < big);
    ne.push_back(x != big);
    gt.push_back(x > (uint64_t{1} << 63));
    mx.push_back(std::max(x, big));
    dv.push_back(x / big);
  }
  Tensor c = Tensor::full({6}, static_cast<double>(big), dtypes::uint64), h = Tensor::full({6}, 9223372036854775808.0, dtypes::uint64);
  EXPECT_EQ((t < c).tolist<bool>(), lt);
  EXPECT_EQ((t != c).tolist<bool>(), ne);
  EXPECT_EQ((t > h).tolist<bool>(), gt);
  EXPECT_EQ(t.maximum(c).tolist<uint64_t>(), mx);
  EXPECT_EQ(t.idiv(c).tolist<uint64_t>(), dv);
  // (x // 16) // 32 in uint8: 16 * 32 does not fit, and is not 512 % 256 = 0
  std::vector<uint8_t> b = {255, 17, 200, 0};
  Tensor tb(b, {4});
  std::vector<uint8_t> want;
  for (uint8_t x : b) want.push_back(static_cast<uint8_t>(x / 16 / 32));
  Tensor c16 = Tensor::full({4}, 16, dtypes::uint8), c32 = Tensor::full({4}, 32, dtypes::uint8);
  EXPECT_EQ(tb.idiv(c16).idiv(c32).tolist<uint8_t>(), want);
  std::vector<uint8_t> want3;
  for (uint8_t x : b) want3.push_back(static_cast<uint8_t>(x / 3 / 100));
  EXPECT_EQ(tb.idiv(Tensor::full({4}, 3, dtypes::uint8)).idiv(Tensor::full({4}, 100, dtypes::uint8)).tolist<uint8_t>(), want3);
  // uint64 divisors whose product passes 2^63: x // 2^32 // 2^31 is 1 for x >= 2^63
  std::vector<uint64_t> want64;
  for (uint64_t x : u) want64.push_back(x / (uint64_t{1} << 32) / (uint64_t{1} << 31));
  EXPECT_EQ(t.idiv(Tensor::full({6}, 4294967296.0, dtypes::uint64)).idiv(Tensor::full({6}, 2147483648.0, dtypes::uint64)).tolist<uint64_t>(), want64);
  // a product with such a constant wraps: it is not an exact sum to take a quotient from term by term
  std::vector<uint64_t> wrapped;
  for (uint64_t x : u) wrapped.push_back(x * big / 2048);
  EXPECT_EQ((t * c).idiv(Tensor::full({6}, 2048, dtypes::uint64)).tolist<uint64_t>(), wrapped);
  // a uint64 from 2^63 up cast to int64 is negative
  std::vector<bool> neg;
  for (uint64_t x : u) neg.push_back(static_cast<int64_t>(x) < 0);
  EXPECT_EQ((t.cast(dtypes::int64) < Tensor::full({6}, 0, dtypes::int64)).tolist<bool>(), neg);
}

// ---- casts ------------------------------------------------------------------------------------------

namespace {

// Float -> integer as exec_alu defines it: truncate, NaN -> 0, saturate to int64 (uint64: to its own
// range), then wrap to the width. Written out here independently.
template <class T> T float_to_int_spec(double x) {
  if (std::isnan(x)) return 0;
  double t = std::trunc(x);
  if (std::is_same_v<T, uint64_t>) return static_cast<T>(t <= 0 ? 0 : t >= 18446744073709549568.0 ? 18446744073709549568ull : static_cast<uint64_t>(t));
  int64_t i = t <= -9223372036854775808.0 ? std::numeric_limits<int64_t>::min() : t >= 9223372036854774784.0 ? 9223372036854774784ll : static_cast<int64_t>(t);
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<uint64_t>(i)));
}

template <class T> void check_float_to_int() {
  const std::vector<float> xs = {3.9f, -3.9f, 1e10f, -1e10f, NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 300.5f, -1.f, 2147483520.f, 2147483648.f, 0.f};
  std::vector<T> kernel = Tensor(xs, {static_cast<int64_t>(xs.size())}).cast(dtype_of<T>()).template tolist<T>();
  for (size_t i = 0; i < xs.size(); i++) {
    T want = float_to_int_spec<T>(xs[i]);
    EXPECT_EQ(+kernel[i], +want) << dtype_of<T>().name() << " kernel: " << xs[i];
    T fold = Tensor::full({1}, xs[i], dtypes::float32).cast(dtype_of<T>()).template item<T>();
    EXPECT_EQ(+fold, +want) << dtype_of<T>().name() << " folded: " << xs[i];
  }
}

}  // namespace

TEST(DtypeCast, FloatToIntOutOfRangeAndNanAsFolding) {
  // kernels used to leave this to C (undefined; x86 gives INT_MIN) while folding saturated
  check_float_to_int<int8_t>();
  check_float_to_int<uint8_t>();
  check_float_to_int<int16_t>();
  check_float_to_int<uint16_t>();
  check_float_to_int<int32_t>();
  check_float_to_int<uint32_t>();
  check_float_to_int<int64_t>();
  check_float_to_int<uint64_t>();
  // by hand, for int32: wrap of the int64 value
  EXPECT_EQ(Tensor({1e10f, -1e10f, NAN, 3.9f, -3.9f}).cast(dtypes::int32).tolist<int>(), (std::vector<int>{1410065408, -1410065408, 0, 3, -3}));
  EXPECT_EQ(Tensor({-1.f, 300.5f}).cast(dtypes::uint8).tolist<uint8_t>(), (std::vector<uint8_t>{255, 44}));
}

TEST(DtypeCast, Int64ToFloatRoundsOnce) {
  // 2^60 + 2^36 + 1 is above the midpoint between two floats: C's (float)x rounds up. Through double
  // (2^60 + 2^36 exactly, a tie) it would round to even, down.
  const int64_t x = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  const float want = 1152921642293837824.f;  // 2^60 + 2^37
  EXPECT_EQ(Tensor(std::vector<int64_t>{x}, {1}).cast(dtypes::float32).item<float>(), want);
  Tensor folded = Tensor::full({1}, static_cast<double>(int64_t{1} << 60), dtypes::int64) + Tensor::full({1}, static_cast<double>((int64_t{1} << 36) + 1), dtypes::int64);
  EXPECT_EQ(folded.cast(dtypes::float32).item<float>(), want);
}

// ---- 64-bit loop variables ---------------------------------------------------------------------------

TEST(DtypeLoopVars, Int64RangesAndSpecialsRenderAsLongLong) {
  // out[r] = r * 2^33 + g for r in [0, 3), one gidx g: index math in int64 throughout
  UOpPtr g0 = UOp::make(Ops::DEFINE_GLOBAL, dtypes::int64.pointer(), {}, int64_t{0});
  UOpPtr g = UOp::make(Ops::SPECIAL, dtypes::int64, {}, SpecialArg{SpecialKind::GlobalIdx, 0, 2});
  UOpPtr r = UOp::make(Ops::RANGE, dtypes::int64, {UOp::cnst_int(dtypes::int64, 0), UOp::cnst_int(dtypes::int64, 3)}, RangeArg{RangeKind::Loop, 1, 1, {}});
  UOpPtr v = r->mul(UOp::cnst_int(dtypes::int64, int64_t{1} << 33))->add(g);
  UOpPtr idx = r->mul(UOp::cnst_int(dtypes::int64, 2))->add(g);
  UOpPtr i0 = UOp::make(Ops::INDEX, g0->dtype, {g0, idx});
  std::vector<UOpPtr> uops = {g0, g, r, v->src[0], v, idx->src[0], idx, i0, UOp::make(Ops::STORE, dtypes::void_, {i0, v}),
                              UOp::make(Ops::ENDRANGE, dtypes::void_, {r})};
  Compiled& cpu = Device::get("CPU");
  RenderedKernel k = cpu.renderer().render("wide", uops);
  bool ir = is_llvm_ir(k.src);
  EXPECT_NE(k.src.find(ir ? "%gidx0 = phi i64 [ %gstart," : "for (long long gidx0 = gstart;"), std::string::npos) << k.src;
  EXPECT_NE(k.src.find(ir ? "%ridx1 = phi i64 [ 0," : "for (long long ridx1 = 0ll;"), std::string::npos) << k.src;
  EXPECT_NE(k.src.find(ir ? "i64 %gstart, i64 %gend" : "long long gstart, long long gend"), std::string::npos) << k.src;
  auto prg = cpu.program(k.name, cpu.compiler().compile_cached(k.src));
  std::vector<int64_t> out(6, -1);
  (*prg)({out.data()}, {}, k.global_size, {}, true);
  const int64_t s = int64_t{1} << 33;
  EXPECT_EQ(out, (std::vector<int64_t>{0, 1, s, s + 1, 2 * s, 2 * s + 1}));
}

// A bool is 0 or 1 after every op that makes one: a bitcast of any other byte reads as true (as torch's
// view(torch.bool)) and is stored as 1, so `where`, `!`, `&` and the rest see a true bool.
TEST(DtypeBool, EveryOpThatMakesABoolGivesZeroOrOne) {
  Tensor bytes(std::vector<uint8_t>{0, 1, 2, 255}, {4});
  Tensor b = bytes.bitcast(dtypes::bool_);
  auto raw = [](const Tensor& t) {
    EXPECT_EQ(t.dtype(), dtypes::bool_);
    return t.bytes();
  };
  EXPECT_EQ(raw(b), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(b.where(1.f, 0.f).tolist<float>(), (std::vector<float>{0, 1, 1, 1}));
  EXPECT_EQ(raw(b.logical_not()), (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(raw(b.bitwise_and(Tensor({true, true, true, false}))), (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(raw(b.bitwise_xor(Tensor({true, true, false, false}))), (std::vector<uint8_t>{1, 0, 1, 1}));
  EXPECT_EQ(raw(b.bitwise_not()), (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(b.cast(dtypes::int32).tolist<int>(), (std::vector<int>{0, 1, 1, 1}));
  EXPECT_EQ(b.sum().item<int>(), 3);
  EXPECT_EQ(raw(Tensor(std::vector<int8_t>{-1, 0, 64}, {3}).bitcast(dtypes::bool_)), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(raw(bytes.cast(dtypes::bool_)), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(raw(Tensor({0.5f, -0.f, NAN}).cast(dtypes::bool_)), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(raw(b.max()), (std::vector<uint8_t>{1}));
  // the data given as bools is normalized on the way in, any nonzero byte true
  uint8_t host[3] = {0, 7, 1};
  EXPECT_EQ(raw(Tensor::from_host(host, 3, {3}, dtypes::bool_)), (std::vector<uint8_t>{0, 1, 1}));
}
