// Renderer: linear UOps -> source text for one device family.
//
// The C-style base (cstyle.cpp) renders one SSA statement per UOp (never one giant nested expression:
// compilers refuse deep nesting); dialects (CPU C, OpenCL C, CUDA C) differ in their prefixes,
// function signature, special indices and type names.
//
// CPU kernels share one C ABI so the runtime can call any of them through one function type:
//   void name(void** bufs, const long long* vals, long long gstart, long long gend)
// bufs are the buffer arguments in DEFINE_GLOBAL order, vals the DEFINE_VAR values in order, and the
// kernel runs the slice [gstart, gend) of its first global dimension (so a thread pool can split it).
// Loop variables (RANGE, SPECIAL) have their UOp's dtype: int, or long long where sizes need it.
//
// The C it emits relies on the compiler flag -fwrapv (integer arithmetic wraps) and renders integer
// division, modulo and shifts with the README's semantics (no trap, no undefined behaviour), and
// float16 as 16-bit storage with arithmetic in float, rounded to half after every op (bit-identical
// IEEE half results whatever the CPU). A STORE with arg 1 (streaming: a large output the kernel writes
// once) may be a non-temporal store; a kernel that makes one fences before it returns.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tg/dtype.h"
#include "uop/ops.h"

namespace tg {

struct UOp;
using UOpPtr = std::shared_ptr<const UOp>;

struct RenderedKernel {
  std::string name;                  // function name, e.g. "r_2" or "E_4_4"
  std::string src;                   // the whole translation unit
  std::vector<int64_t> global_size;  // launch dims (CPU: {n} split over threads; {1} when not split)
  std::vector<int64_t> local_size;   // empty on CPU
};

// The target's vector registers: how wide one is and how many there are. The heuristics size their tiles
// by them (vector lanes of one register; accumulators that stay in registers), so that a tile made for
// AVX-512's 32 registers of 64 bytes does not spill on AVX2's 16 of 32. bytes 0: no vector registers.
// (The CPU devices give x86 without AVX AVX-512's: runtime/ops_cpu.cpp says why.)
struct VectorUnit {
  int bytes = 0, registers = 0;
  bool operator==(const VectorUnit&) const = default;
};

struct Renderer {
  virtual ~Renderer() = default;
  virtual std::string device() const = 0;  // "CPU", "CL", "CUDA"
  virtual bool has_local() const { return false; }
  virtual bool has_shared() const { return false; }
  virtual int global_max_dims() const { return 1; }  // dims mapped to SPECIAL gidx; the rest become loops
  virtual bool supports(DType d) const { (void)d; return true; }
  virtual int max_vector_bytes() const { return 0; }  // the widest vector value (0: no vector types)
  // The type of index math when every index fits it (an index that can reach 2^31 is int64 anyway).
  virtual DType index_dtype() const { return dtypes::int32; }
  virtual VectorUnit vector_unit() const { return {}; }  // the target's registers (what the heuristics tile for)
  // Whether `op` on vectors of `scalar` renders as one vector operation (otherwise lanes are split); for a
  // comparison, `scalar` is its operands' type.
  virtual bool vector_alu(Ops op, DType scalar) const { (void)op; (void)scalar; return false; }
  // Whether a CAST of vectors of `from` to vectors of `to` renders as one vector operation.
  virtual bool vector_cast(DType from, DType to) const { (void)from; (void)to; return false; }
  // The width (in elements) of the column panels that a large matmul's right operand is copied into
  // first, so that the kernel streams each panel from contiguous memory (0: no packing).
  virtual int64_t matmul_panel(DType d) const { (void)d; return 0; }
  virtual RenderedKernel render(const std::string& name, const std::vector<UOpPtr>& uops) const = 0;
};

// The signed integer type with the lanes and element width of `d`: what a vector comparison of two `d`
// gives, and the lane mask of a masked vector load (all ones: read the lane, 0: the lane reads 0).
DType mask_dtype(DType d);

// C for the system compiler, the ABI above. native_half (asked once a kernel uses float16) says whether
// the compiler supports _Float16 for its target, for the float<->half conversions; when it is empty or
// says no, the conversions are portable C (same bits, slower). vector_unit (asked by the heuristics,
// for every kernel: keep it cheap) is the target's; when it is empty, AVX-512's.
std::shared_ptr<Renderer> make_cpu_renderer(std::function<bool()> native_half = {}, std::function<VectorUnit()> vector_unit = {});

// What the CPU dialects (C and LLVM IR) share: which ops have a vector form, the matmul panel width (two
// of the target's vector registers: the register tile's width), and the vector unit of AVX-512.
bool cpu_vector_alu(Ops op, DType scalar);
int64_t cpu_matmul_panel(DType d, VectorUnit unit);
inline constexpr VectorUnit kAVX512{64, 32};

// LLVM IR for the in-process compiler (llvmir.cpp): the CPU ABI above and the C's semantics, bit for bit.
// The target's features that change the code: fma (MULACC fuses, as the C does under __FMA__), f16c
// (float16 conversions are instructions; else calls of the host's tg_h2f, tg_f2h and tg_rh) and its
// vector registers (the heuristics' tiles).
struct LLVMFeatures {
  bool fma = false, f16c = false;
  bool avx512f = false;   // exp2 of 16 floats scales by 2^n in one instruction (vscalefps)
  bool avx512dq = false;  // and splits x into n + f in one (vreduceps), with no clamp
  VectorUnit vector = kAVX512;
};
std::shared_ptr<Renderer> make_llvm_renderer(LLVMFeatures f);

// The C the CPU renderer puts before a kernel that uses float16: tg_h2f (bits -> float), tg_f2h
// (float -> bits, round to nearest even) and tg_rh (round a float to the nearest half), with
// _Float16 or in portable C. Both give the same bits as tg::float_to_half / half_to_float.
const char* c_half_conversions(bool native);

}  // namespace tg
