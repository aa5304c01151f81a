// The LLVM IR dialect of the CPU renderer: the same linear UOps, ABI (renderer.h) and semantics as the
// C that cpu.cpp renders, as a module for the in-process compiler (runtime/llvm_jit.h).
//
// Rendering is a rewrite here too: one rule per op, each appending instructions to the current basic
// block and giving the name of its value. What C gets from the language, the rules spell out:
//  - loops are blocks with a phi for the loop variable; accumulators (DEFINE_ACC/ASSIGN) live in allocas
//    that LLVM's mem2reg turns into registers, so every read of one is a load where it is read;
//  - integer arithmetic wraps (no nsw/nuw: -fwrapv), division, modulo and shifts never trap and give the
//    README's values, float -> int casts saturate as exec_alu does, floats are never contracted: what the
//    C contracts (the exp2 polynomial, MULACC) is an explicit llvm.fma where the target has fma;
//  - bool is i1 in registers and a byte in memory; float16 is a float in registers that every op rounds
//    back to the half grid, 16 bits in memory (with F16C instructions, or the host's conversions);
//  - a gated load is a branch around the load, a vector read under a lane mask is llvm.masked.load
//    (masked-off lanes are never touched), a streaming store is !nontemporal where it is aligned.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <sstream>

#include "renderer/cstyle.h"
#include "tg/error.h"

namespace tg {

namespace {

std::string scalar_type(DType d) {
  switch (d.scalar) {
    case Scalar::Bool: return "i1";
    case Scalar::Int8: case Scalar::UInt8: return "i8";
    case Scalar::Int16: case Scalar::UInt16: return "i16";
    case Scalar::Int32: case Scalar::UInt32: return "i32";
    case Scalar::Int64: case Scalar::UInt64: return "i64";
    case Scalar::Float16: case Scalar::Float32: return "float";
    case Scalar::Float64: return "double";
    default: TG_ASSERT(false, "LLVM renderer: no type for ", d.name());
  }
}
// A value's register type: <N x T> for vectors.
std::string type(DType d) { return d.count > 1 ? "<" + std::to_string(d.count) + " x " + scalar_type(d) + ">" : scalar_type(d); }
// The suffix of an overloaded intrinsic's name: f32, v16f32, i64...
std::string mangle(DType d) {
  std::string s = d.scalar == Scalar::Float64 ? "f64" : d.is_float() ? "f32" : "i" + std::to_string(d.itemsize() * 8);
  return d.count > 1 ? "v" + std::to_string(d.count) + s : s;
}

// A float constant as LLVM spells it exactly: the shortest decimal that reads back as the same double
// (a float's value is a double's too), with the '.' LLVM's lexer wants; inf and NaN as the double's bits.
std::string float_text(double v) {
  if (!std::isfinite(v)) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%016llX", static_cast<unsigned long long>(bits));
    return buf;
  }
  char buf[64];
  std::string s(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
  if (s.find('.') == std::string::npos) s.insert(std::min(s.find('e'), s.size()), ".0");
  return s;
}

std::string const_text(const UOp& u) {
  DType d = u.dtype;
  if (d.is_bool()) return u.const_int() ? "true" : "false";
  if (d.is_float()) {
    double v = u.const_value();
    if (is_half(d)) v = half_to_float(float_to_half(static_cast<float>(v)));
    else if (d.scalar == Scalar::Float32) v = static_cast<float>(v);
    return float_text(v);
  }
  // the value's bit pattern in its width, written signed (LLVM's integers have no sign)
  int64_t v = u.const_int();
  switch (d.itemsize()) {
    case 1: return std::to_string(static_cast<int8_t>(v));
    case 2: return std::to_string(static_cast<int16_t>(v));
    case 4: return std::to_string(static_cast<int32_t>(v));
    default: return std::to_string(v);
  }
}

struct LLVMCtx : RenderCtx {
  LLVMFeatures f;
  std::ostringstream body, allocas;
  std::set<std::string> decls;               // declarations and helper functions the module needs
  std::unordered_map<const UOp*, std::string> slots;  // accumulators' allocas
  std::string block = "entry";
  int counter = 0;
  std::vector<std::string> open;             // the closing text of open loops / ifs, innermost last
  std::set<std::string> loop_vars;

  std::string fresh(const char* prefix = "v") { return "%" + std::string(prefix) + std::to_string(counter++); }
  void line(const std::string& s) { body << "  " << s << "\n"; }
  void label(const std::string& l) { body << l << ":\n"; block = l; }
  // An instruction with a value: "%vN = <text>"; returns %vN.
  std::string emit(const std::string& text, const char* prefix = "v") {
    std::string n = fresh(prefix);
    line(n + " = " + text);
    return n;
  }
  // The value of an earlier UOp: a constant, a register, or (an accumulator) a load of its slot.
  std::string val(const UOpPtr& u) {
    if (u->op == Ops::CONST) return const_text(*u);
    if (auto it = slots.find(u.get()); it != slots.end()) return emit("load " + type(u->dtype) + ", ptr " + it->second);
    auto it = names.find(u.get());
    TG_ASSERT(it != names.end(), "LLVM renderer: ", op_name(u->op), " used before it was rendered");
    return it->second;
  }
  std::string tv(const UOpPtr& u) { return type(u->dtype) + " " + val(u); }
  std::string label_id() { return std::to_string(counter++); }
};

using B = const Bindings&;
using Text = std::optional<std::string>;
LLVMCtx& ctx(B b) { return b.ctx<LLVMCtx>(); }

// A constant of d's type with the value v in every lane.
std::string splat(DType d, const std::string& v) {
  if (d.count == 1) return v;
  std::string s = "<";
  for (int i = 0; i < d.count; i++) s += (i ? ", " : "") + scalar_type(d) + " " + v;
  return s + ">";
}
std::string zero(DType d) { return d.count > 1 ? "zeroinitializer" : d.is_bool() ? "false" : d.is_float() ? "0.0" : "0"; }

// float16: the conversions are instructions with F16C, else calls of the host's (runtime/ops_cpu.cpp).
std::string half_to_float_val(LLVMCtx& c, const std::string& bits16) {
  if (c.f.f16c) return c.emit("fpext half " + c.emit("bitcast i16 " + bits16 + " to half") + " to float");
  c.decls.insert("declare float @tg_h2f(i16 zeroext) nounwind readnone");
  return c.emit("call float @tg_h2f(i16 zeroext " + bits16 + ")");
}
std::string float_to_half_bits(LLVMCtx& c, const std::string& x) {
  if (c.f.f16c) return c.emit("bitcast half " + c.emit("fptrunc float " + x + " to half") + " to i16");
  c.decls.insert("declare zeroext i16 @tg_f2h(float) nounwind readnone");
  return c.emit("call zeroext i16 @tg_f2h(float " + x + ")");
}
std::string round_half(LLVMCtx& c, const std::string& x) {
  if (c.f.f16c) return c.emit("fpext half " + c.emit("fptrunc float " + x + " to half") + " to float");
  c.decls.insert("declare float @tg_rh(float) nounwind readnone");
  return c.emit("call float @tg_rh(float " + x + ")");
}

// Narrow integers compute in i32 where C promotes them and the narrow op could trap (division).
std::string widen(LLVMCtx& c, DType d, const std::string& v) {
  return c.emit(std::string(d.is_unsigned() ? "zext " : "sext ") + type(d) + " " + v + " to i32");
}

// IDIV / MOD with the README's semantics (as the C renderer's divmod_expr): truncation, x/0 == x%0 == 0,
// MIN/-1 == MIN, MIN%-1 == 0; the guards only where the divisor's bounds do not rule the case out.
std::string divmod(LLVMCtx& c, const UOp& u, std::string a, std::string b) {
  const UOp &x = *u.src[0], &d = *u.src[1];
  DType dt = u.dtype;
  bool is_mod = u.op == Ops::MOD, uns = dt.is_unsigned();
  bool maybe_zero = d.vmin <= 0 && d.vmax >= 0;
  bool maybe_minus1 = !uns && d.vmin <= -1 && d.vmax >= -1 && x.vmin <= static_cast<int64_t>(dt.min());
  if (d.op == Ops::CONST && d.const_int() == 0) return "0";  // (its value: a uint64 constant from 2^63 up has no bounds)
  if (d.op == Ops::CONST && d.const_int() == -1 && !uns) return is_mod ? "0" : c.emit("sub " + type(dt) + " 0, " + a);
  std::string t = type(dt), op = std::string(uns ? "u" : "s") + (is_mod ? "rem" : "div");
  bool narrow = dt.itemsize() < 4;
  if (narrow) a = widen(c, dt, a), b = widen(c, dt, b), t = "i32";
  if (!maybe_zero && !(maybe_minus1 && !narrow)) {
    std::string r = c.emit(op + " " + t + " " + a + ", " + b);
    return narrow ? c.emit("trunc i32 " + r + " to " + type(dt)) : r;
  }
  // a divisor that cannot trap (1 in place of 0 and -1), then the defined results in their place
  std::string is0 = c.emit("icmp eq " + t + " " + b + ", 0"), bad = is0, ism1;
  if (!uns) ism1 = c.emit("icmp eq " + t + " " + b + ", -1"), bad = c.emit("or i1 " + is0 + ", " + ism1);
  std::string safe = c.emit("select i1 " + bad + ", " + t + " 1, " + t + " " + b);
  std::string r = c.emit(op + " " + t + " " + a + ", " + safe);
  if (!uns) r = c.emit("select i1 " + ism1 + ", " + t + " " + (is_mod ? "0" : c.emit("sub " + t + " 0, " + a)) + ", " + t + " " + r);
  r = c.emit("select i1 " + is0 + ", " + t + " 0, " + t + " " + r);
  return narrow ? c.emit("trunc i32 " + r + " to " + type(dt)) : r;
}

// Shifts by a count outside [0, bits) give 0 (SHL, SHR of unsigned or non-negative) or -1 (SHR of a
// negative signed value), as exec_alu folds them.
std::string shift(LLVMCtx& c, const UOp& u, const std::string& a, const std::string& b) {
  DType dt = u.dtype;
  std::string t = type(dt), mask_t = dt.count > 1 ? "<" + std::to_string(dt.count) + " x i1>" : "i1";
  int bits = dt.itemsize() * 8;
  const UOp& n = *u.src[1];
  // the count's bounds: a vector's are its lanes' (a rotate's constant counts, broadcast)
  int64_t lo = n.vmin, hi = n.vmax;
  if (n.op == Ops::VECTORIZE) {
    lo = n.src[0]->vmin, hi = n.src[0]->vmax;
    for (auto& l : n.src) lo = std::min(lo, l->vmin), hi = std::max(hi, l->vmax);
  }
  const char* op = u.op == Ops::SHL ? "shl" : dt.is_unsigned() ? "lshr" : "ashr";
  if (lo >= 0 && hi < bits) return c.emit(std::string(op) + " " + t + " " + a + ", " + b);
  std::string beyond = u.op == Ops::SHL || dt.is_unsigned() ? zero(dt) : c.emit("ashr " + t + " " + a + ", " + splat(dt, std::to_string(bits - 1)));
  if (n.op == Ops::CONST) return beyond;
  std::string in_range = c.emit("icmp ult " + t + " " + b + ", " + splat(dt, std::to_string(bits)));
  std::string safe = c.emit("select " + mask_t + " " + in_range + ", " + t + " " + b + ", " + t + " " + zero(dt));
  std::string r = c.emit(std::string(op) + " " + t + " " + a + ", " + safe);
  return c.emit("select " + mask_t + " " + in_range + ", " + t + " " + r + ", " + t + " " + beyond);
}

// A VECTORIZE of lanes of vectors of one type: of one vector (a horizontal fold's half), one shuffle; of
// several (a transposed tile: 16 loaded rows of 4 -> 4 stored columns of 16), the vectors concatenated by a
// tree of shuffles, then one shuffle picks the lanes. LLVM lowers that to a few permutes (vpermt2ps), where
// an insertelement per lane costs a shuffle port each.
std::optional<std::string> lanes_of_vectors(LLVMCtx& c, const UOp& u) {
  constexpr size_t max_concat_lanes = 64;  // past it, the concatenation splits into too many registers
  if (u.src.empty() || u.src[0]->op != Ops::GEP) return std::nullopt;
  DType vec = u.src[0]->src[0]->dtype;
  std::vector<UOpPtr> vectors;
  std::vector<size_t> slot;  // for each lane, its vector's position in vectors
  for (const UOpPtr& s : u.src) {
    if (s->op != Ops::GEP || s->src[0]->dtype != vec) return std::nullopt;
    auto at = std::find(vectors.begin(), vectors.end(), s->src[0]);
    slot.push_back(static_cast<size_t>(at - vectors.begin()));
    if (at == vectors.end()) vectors.push_back(s->src[0]);
  }
  size_t width = static_cast<size_t>(vec.count), n = std::bit_ceil(vectors.size());
  if (n * width > max_concat_lanes) return std::nullopt;
  std::vector<std::string> level;
  for (const UOpPtr& v : vectors) level.push_back(c.val(v));
  level.resize(n, "poison");
  for (size_t lanes = width; level.size() > 1; lanes *= 2) {
    std::string t = "<" + std::to_string(lanes) + " x " + scalar_type(vec) + ">", mask;
    for (size_t i = 0; i < 2 * lanes; i++) mask += (i ? ", i32 " : "i32 ") + std::to_string(i);
    std::vector<std::string> next;
    for (size_t i = 0; i < level.size(); i += 2)
      next.push_back(c.emit("shufflevector " + t + " " + level[i] + ", " + t + " " + level[i + 1] + ", <" + std::to_string(2 * lanes) + " x i32> <" + mask + ">"));
    level = std::move(next);
  }
  std::string all = "<" + std::to_string(n * width) + " x " + scalar_type(vec) + ">", mask;
  for (size_t i = 0; i < u.src.size(); i++)
    mask += (i ? ", i32 " : "i32 ") + std::to_string(slot[i] * width + static_cast<size_t>(std::get<int64_t>(u.src[i]->arg)));
  return c.emit("shufflevector " + all + " " + level[0] + ", " + all + " poison, <" + std::to_string(u.src.size()) + " x i32> <" + mask + ">");
}

// The casts with a vector form: bools to and from numbers, integers to floats (not half: it is rounded lane
// by lane; nor float to integer, which saturates lane by lane).
bool has_vector_cast(DType from, DType to) {
  if (from.scalar == Scalar::Float16 || to.scalar == Scalar::Float16) return false;
  return from.is_bool() || to.is_bool() || (from.is_int() && to.is_float());
}

// float -> integer as exec_alu (and the C's tg_f2i / tg_f2u): in double, truncated, NaN is 0, saturated
// to the int64 range (uint64: its own), then wrapped to the width of the type.
std::string float_to_int(LLVMCtx& c, DType from, DType to, std::string x) {
  if (from.scalar != Scalar::Float64) x = c.emit("fpext float " + x + " to double");
  bool u64 = to.scalar == Scalar::UInt64;
  std::string lo = u64 ? float_text(0.0) : float_text(-9223372036854775808.0), hi = u64 ? float_text(18446744073709549568.0) : float_text(9223372036854774784.0);
  std::string below = c.emit("fcmp " + std::string(u64 ? "ult" : "olt") + " double " + x + ", " + lo);  // u64: NaN goes to 0 here
  std::string v = c.emit("select i1 " + below + ", double " + lo + ", double " + x);
  std::string above = c.emit("fcmp ogt double " + v + ", " + hi);
  v = c.emit("select i1 " + above + ", double " + hi + ", double " + v);
  std::string nan = c.emit("fcmp uno double " + v + ", 0.0");
  v = c.emit("select i1 " + nan + ", double 0.0, double " + v);
  std::string r = c.emit(std::string(u64 ? "fptoui" : "fptosi") + " double " + v + " to i64");
  return to.itemsize() < 8 ? c.emit("trunc i64 " + r + " to " + type(to)) : r;
}

std::string cast(LLVMCtx& c, const UOp& u, const std::string& x) {
  DType from = u.src[0]->dtype, to = u.dtype;
  std::string ft = type(from), tt = type(to);
  if (to.is_bool()) return from.is_float() ? c.emit("fcmp une " + ft + " " + x + ", " + zero(from)) : c.emit("icmp ne " + ft + " " + x + ", " + zero(from));
  if (from.is_bool()) return c.emit(std::string(to.is_float() ? "uitofp " : "zext ") + ft + " " + x + " to " + tt);
  if (from.is_float() && to.is_int()) return float_to_int(c, from, to, x);
  if (from.is_int() && to.is_float()) return c.emit(std::string(from.is_unsigned() ? "uitofp " : "sitofp ") + ft + " " + x + " to " + tt);
  if (from.is_float()) {  // float <-> float: half is a float in registers (C: through float, then rounded)
    if (ft == tt) return x;
    return c.emit(std::string(from.scalar == Scalar::Float64 ? "fptrunc " : "fpext ") + ft + " " + x + " to " + tt);
  }
  int fb = from.itemsize(), tb = to.itemsize();
  if (fb == tb) return x;
  return c.emit(std::string(tb < fb ? "trunc " : from.is_unsigned() ? "zext " : "sext ") + ft + " " + x + " to " + tt);
}

// libm's function of the dtype (float16 computes in float), or an LLVM intrinsic (sqrt).
std::string math_call(LLVMCtx& c, const char* fn, DType dt, const std::string& x) {
  bool dbl = dt.scalar == Scalar::Float64;
  std::string name = std::string(fn) + (dbl ? "" : "f"), t = dbl ? "double" : "float";
  c.decls.insert("declare " + t + " @" + name + "(" + t + ") nounwind readnone");
  return c.emit("call " + t + " @" + name + "(" + t + " " + x + ")");
}

// exp2 of a float32 vector or scalar, branch-free (the C's tg_exp2_<vec>): x = n + f with n = round(x), f in
// [-1/2, 1/2]; 2^f by Cephes' exp2f polynomial (fmas where the target has them); 2^n
// applied as two exact power-of-two factors, or by AVX-512's scalef (one rounding either way: the same
// bits). x clamped to [-151, 129]; NaN passes through. With AVX-512DQ, f is one vreduceps (x - round(x),
// exact; 0 for +-inf) and n = x - f: no clamp, as scalef itself overflows to inf and underflows to 0
// (x = -inf: 2^-inf = 0; NaN stays NaN). The same f and n wherever the clamp does not act, and the same
// 0 or inf where it does: the same bits, 4 vector operations fewer (softmax's exp pass: 13% faster).
std::string exp2_vector(LLVMCtx& c, DType d) {
  std::string t = type(d), w = std::to_string(d.count), name = "@tg_exp2_" + mangle(d);
  std::string it = d.count > 1 ? "<" + w + " x i32>" : "i32", bt = d.count > 1 ? "<" + w + " x i1>" : "i1";
  auto k = [&](double v) { return splat(d, float_text(static_cast<float>(v))); };
  auto ki = [&](int64_t v) { return splat(DType{Scalar::Int32, d.count, false}, std::to_string(v)); };
  std::ostringstream f;
  bool reduce = c.f.avx512f && c.f.avx512dq && d.count == 16;
  f << "define internal " << t << " " << name << "(" << t << " %x0) alwaysinline nounwind {\n";
  if (reduce) {
    c.decls.insert("declare <16 x float> @llvm.x86.avx512.mask.reduce.ps.512(<16 x float>, i32, <16 x float>, i16, i32) nounwind readnone");
    // imm 8: keep 0 fraction bits, round to nearest even, no precision exception
    f << "  %f = call <16 x float> @llvm.x86.avx512.mask.reduce.ps.512(<16 x float> %x0, i32 8, <16 x float> undef, i16 -1, i32 4)\n"
      << "  %n = fsub <16 x float> %x0, %f\n";
  } else {
    f << "  %lo = fcmp olt " << t << " %x0, " << k(-151.0) << "\n"
      << "  %hi = fcmp ogt " << t << " %x0, " << k(129.0) << "\n"
      << "  %x1 = select " << bt << " %lo, " << t << " " << k(-151.0) << ", " << t << " %x0\n"
      << "  %x = select " << bt << " %hi, " << t << " " << k(129.0) << ", " << t << " %x1\n"
      << "  %r = fadd " << t << " %x, " << k(12582912.0) << "\n"
      << "  %n = fsub " << t << " %r, " << k(12582912.0) << "\n"
      << "  %f = fsub " << t << " %x, %n\n";
  }
  const double coef[] = {1.535336188319500e-4, 1.339887440266574e-3, 9.618437357674640e-3, 5.550332471162809e-2,
                         2.402264791363012e-1, 6.931472028550421e-1, 1.0};
  // Horner steps as llvm.fma where the target has fma, else a multiply and an add: never `contract`,
  // which LLVM honours at run time but not when it folds a constant argument (exp of a pad value
  // folded in one kernel and computed in another differed by an ulp: fuzz seed 390816)
  std::string p = k(coef[0]), fma = "@llvm.fma." + mangle(d);
  if (c.f.fma) c.decls.insert("declare " + t + " " + fma + "(" + t + ", " + t + ", " + t + ") nounwind readnone");
  for (int i = 1; i < 7; i++) {
    if (c.f.fma) {
      f << "  %p" << i << " = call " << t << " " << fma << "(" << t << " " << p << ", " << t << " %f, " << t << " " << k(coef[i]) << ")\n";
    } else {
      f << "  %m" << i << " = fmul " << t << " " << p << ", %f\n"
        << "  %p" << i << " = fadd " << t << " %m" << i << ", " << k(coef[i]) << "\n";
    }
    p = "%p" + std::to_string(i);
  }
  if (c.f.avx512f && d.count == 16) {  // p * 2^n in one step: the same single rounding as the two factors
    c.decls.insert("declare <16 x float> @llvm.x86.avx512.mask.scalef.ps.512(<16 x float>, <16 x float>, <16 x float>, i16, i32) nounwind readnone");
    f << "  %y = call <16 x float> @llvm.x86.avx512.mask.scalef.ps.512(<16 x float> " << p << ", <16 x float> %n, <16 x float> undef, i16 -1, i32 4)\n"
      << "  ret " << t << " %y\n}";
    c.decls.insert(f.str());
    return name;
  }
  f << "  %ri = bitcast " << t << " %r to " << it << "\n"
    << "  %ni = sub " << it << " %ri, " << ki(0x4B400000) << "\n"
    << "  %n1 = ashr " << it << " %ni, " << ki(1) << "\n"
    << "  %n2 = sub " << it << " %ni, %n1\n"
    << "  %e1a = add " << it << " %n1, " << ki(127) << "\n  %e1b = shl " << it << " %e1a, " << ki(23) << "\n"
    << "  %e2a = add " << it << " %n2, " << ki(127) << "\n  %e2b = shl " << it << " %e2a, " << ki(23) << "\n"
    << "  %e1 = bitcast " << it << " %e1b to " << t << "\n  %e2 = bitcast " << it << " %e2b to " << t << "\n"
    << "  %y1 = fmul " << t << " " << p << ", %e1\n  %y = fmul " << t << " %y1, %e2\n  ret " << t << " %y\n}";
  c.decls.insert(f.str());
  return name;
}

// The exact value of an ALU op (scalar, or a vector op the CPU has: vector_alu()).
std::string alu_value(LLVMCtx& c, const UOp& u, const std::vector<std::string>& s) {
  DType dt = u.dtype, st = u.src.empty() ? dt : u.src[0]->dtype;
  std::string t = type(dt), sty = type(st);
  bool fl = dt.is_float(), bl = dt.is_bool();
  auto bin = [&](const std::string& op) { return c.emit(op + " " + t + " " + s[0] + ", " + s[1]); };
  switch (u.op) {
    case Ops::ADD: return bin(fl ? "fadd" : bl ? "or" : "add");
    case Ops::MUL: return bin(fl ? "fmul" : bl ? "and" : "mul");
    case Ops::FDIV: return bin("fdiv");
    case Ops::MULACC:
      if (fl && c.f.fma) {
        c.decls.insert("declare " + t + " @llvm.fma." + mangle(dt) + "(" + t + ", " + t + ", " + t + ") nounwind readnone");
        return c.emit("call " + t + " @llvm.fma." + mangle(dt) + "(" + t + " " + s[0] + ", " + t + " " + s[1] + ", " + t + " " + s[2] + ")");
      }
      return c.emit(std::string(fl ? "fadd " : bl ? "or " : "add ") + t + " " + bin(fl ? "fmul" : bl ? "and" : "mul") + ", " + s[2]);
    case Ops::IDIV: case Ops::MOD: return divmod(c, u, s[0], s[1]);
    case Ops::MAX: {  // NaN wins, as in torch (and exec_alu)
      std::string cmp_t = dt.count > 1 ? "<" + std::to_string(dt.count) + " x i1>" : "i1", gt;
      if (fl) gt = c.emit("or " + cmp_t + " " + c.emit("fcmp ogt " + t + " " + s[0] + ", " + s[1]) + ", " + c.emit("fcmp uno " + t + " " + s[0] + ", " + s[0]));
      else gt = c.emit(std::string("icmp ") + (dt.is_unsigned() || bl ? "ugt " : "sgt ") + t + " " + s[0] + ", " + s[1]);
      return c.emit("select " + cmp_t + " " + gt + ", " + t + " " + s[0] + ", " + t + " " + s[1]);
    }
    case Ops::CMPLT:
      return c.emit(st.is_float() ? "fcmp olt " + sty + " " + s[0] + ", " + s[1]
                                  : std::string("icmp ") + (st.is_unsigned() || st.is_bool() ? "ult " : "slt ") + sty + " " + s[0] + ", " + s[1]);
    case Ops::CMPNE: return c.emit((st.is_float() ? "fcmp une " : "icmp ne ") + sty + " " + s[0] + ", " + s[1]);
    case Ops::XOR: return bin("xor");
    case Ops::OR: return bin("or");
    case Ops::AND: return bin("and");
    case Ops::SHL: case Ops::SHR: return shift(c, u, s[0], s[1]);
    case Ops::NEG: return fl ? c.emit("fneg " + t + " " + s[0]) : bl ? c.emit("xor i1 " + s[0] + ", true") : c.emit("sub " + t + " " + zero(dt) + ", " + s[0]);
    case Ops::RECIP: return c.emit("fdiv " + t + " " + splat(dt, float_text(1.0)) + ", " + s[0]);
    case Ops::SQRT:
      c.decls.insert("declare " + t + " @llvm.sqrt." + mangle(dt) + "(" + t + ") nounwind readnone");
      return c.emit("call " + t + " @llvm.sqrt." + mangle(dt) + "(" + t + " " + s[0] + ")");
    case Ops::EXP2:  // float32 scalars too: the same bits as in vector code (the C's tg_exp2_float32)
      if (dt.scalar == Scalar::Float32) return c.emit("call " + t + " " + exp2_vector(c, dt) + "(" + t + " " + s[0] + ")");
      return math_call(c, "exp2", dt, s[0]);
    case Ops::LOG2: return math_call(c, "log2", dt, s[0]);
    case Ops::SIN: return math_call(c, "sin", dt, s[0]);
    case Ops::COS: return math_call(c, "cos", dt, s[0]);
    case Ops::TAN: return math_call(c, "tan", dt, s[0]);
    case Ops::WHERE: return c.emit("select " + type(u.src[0]->dtype) + " " + s[0] + ", " + t + " " + s[1] + ", " + t + " " + s[2]);
    case Ops::CAST: return cast(c, u, s[0]);
    default: TG_ASSERT(false, "LLVM renderer: not an ALU op: ", op_name(u.op));
  }
}

Text alu(B b) {
  auto& c = ctx(b);
  const UOp& u = *b["root"];
  TG_ASSERT(u.dtype.count == 1 || u.op != Ops::CAST || has_vector_cast(u.src[0]->dtype.base(), u.dtype.base()),
            "LLVM renderer: a vector CAST it has no vector form of");
  std::vector<std::string> s;
  for (auto& x : u.src) s.push_back(c.val(x));
  std::string r = alu_value(c, u, s);
  // a half result that may be off the half grid is rounded back to it (the C's tg_rh)
  bool rounds = is_half(u.dtype) && u.op != Ops::MAX && u.op != Ops::NEG && u.op != Ops::WHERE && !(u.op == Ops::CAST && is_half(u.src[0]->dtype));
  return rounds ? round_half(c, r) : r;
}

Text bitcast(B b) {
  auto& c = ctx(b);
  const UOp& u = *b["root"];
  DType from = u.src[0]->dtype, to = u.dtype;
  std::string x = c.val(u.src[0]);
  if (from.is_bool()) x = c.emit("zext i1 " + x + " to i8"), from = dtypes::uint8;
  std::string ft = is_half(from) ? "i16" : type(from);
  if (is_half(from)) x = float_to_half_bits(c, x);
  if (is_half(to)) return half_to_float_val(c, ft == "i16" ? x : c.emit("bitcast " + ft + " " + x + " to i16"));
  return ft == type(to) ? x : c.emit("bitcast " + ft + " " + x + " to " + type(to));
}

// A pointer's memory type: bytes for bools, 16 bits for halves.
std::string memory_type(DType d) {
  if (d.is_bool()) return d.count > 1 ? "<" + std::to_string(d.count) + " x i8>" : "i8";
  if (is_half(d)) return "i16";
  return type(d);
}
std::string align(DType d) { return "align " + std::to_string(d.itemsize()); }

// A plain load of d at p, converted to its register type.
std::string load_value(LLVMCtx& c, DType d, const std::string& p) {
  std::string v = c.emit("load " + memory_type(d) + ", ptr " + p + ", " + align(d));
  if (d.is_bool()) return c.emit("trunc " + memory_type(d) + " " + v + " to " + type(d));
  if (is_half(d)) return half_to_float_val(c, v);
  return v;
}

Text load(B b) {
  auto& c = ctx(b);
  const UOp& u = *b["root"];
  DType d = u.dtype;
  std::string p = c.val(u.src[0]);
  if (u.src.size() == 1) return load_value(c, d, p);
  const UOpPtr& gate = u.src[1];
  if (gate->dtype.count > 1) {  // a vector under a lane mask (0 / all ones lanes)
    std::string m = c.emit("icmp ne " + type(gate->dtype) + " " + c.val(gate) + ", zeroinitializer");
    std::string t = type(d), mt = "<" + std::to_string(d.count) + " x i1>", fn = "@llvm.masked.load." + mangle(d) + ".p0";
    c.decls.insert("declare " + t + " " + fn + "(ptr, i32 immarg, " + mt + ", " + t + ") nounwind readonly");
    return c.emit("call " + t + " " + fn + "(ptr " + p + ", i32 " + std::to_string(d.itemsize()) + ", " + mt + " " + m + ", " + t + " zeroinitializer)");
  }
  // gated: a branch around the load, 0 where the gate is false
  std::string g = c.val(gate), id = c.label_id(), from = c.block;
  c.line("br i1 " + g + ", label %load" + id + ", label %load" + id + "_end");
  c.label("load" + id);
  std::string v = load_value(c, d, p), in = c.block;
  c.line("br label %load" + id + "_end");
  c.label("load" + id + "_end");
  return c.emit("phi " + type(d) + " [ " + v + ", %" + in + " ], [ " + zero(d) + ", %" + from + " ]");
}

void store_value(LLVMCtx& c, DType d, const std::string& p, std::string v, bool nontemporal = false) {
  if (d.is_bool()) v = c.emit("zext " + type(d) + " " + v + " to " + memory_type(d));
  if (is_half(d)) v = float_to_half_bits(c, v);
  std::string a = nontemporal ? "align " + std::to_string(d.count * d.itemsize()) + ", !nontemporal !0" : align(d);
  c.line("store " + memory_type(d) + " " + v + ", ptr " + p + ", " + a);
}

bool streams(const UOp& u) {
  auto* a = std::get_if<StoreArg>(&u.arg);
  DType d = u.src[1]->dtype;
  return u.src.size() == 2 && a && a->streaming && d.count > 1 && !is_half(d);
}

Text store(B b) {
  auto& c = ctx(b);
  const UOp& u = *b["root"];
  DType d = u.src[1]->dtype;
  std::string p = c.val(u.src[0]), v = c.val(u.src[1]), id = c.label_id();
  if (streams(u)) {  // non-temporal where the address is aligned to the vector (no instruction streams unaligned data)
    c.streamed = true;
    std::string low = c.emit("and i64 " + c.emit("ptrtoint ptr " + p + " to i64") + ", " + std::to_string(d.count * d.itemsize() - 1));
    c.line("br i1 " + c.emit("icmp eq i64 " + low + ", 0") + ", label %stream" + id + ", label %store" + id);
    c.label("stream" + id);
    store_value(c, d, p, v, true);
    c.line("br label %store" + id + "_end");
    c.label("store" + id);
    store_value(c, d, p, v);
    c.line("br label %store" + id + "_end");
    c.label("store" + id + "_end");
    return "";
  }
  if (u.src.size() == 2) {
    store_value(c, d, p, v);
    return "";
  }
  c.line("br i1 " + c.val(u.src[2]) + ", label %store" + id + ", label %store" + id + "_end");
  c.label("store" + id);
  store_value(c, d, p, v);
  c.line("br label %store" + id + "_end");
  c.label("store" + id + "_end");
  return "";
}

// A loop over [start, end): the loop variable is a phi of the start and the latch's increment.
std::string open_loop(LLVMCtx& c, std::string var, DType dt, const std::string& start, const std::string& end) {
  if (!c.loop_vars.insert(var).second) var += "_" + c.label_id();  // two loops of the same dim: SSA names are unique
  std::string t = type(dt), l = var.substr(1), from = c.block;
  c.line("br label %" + l + "_head");
  c.label(l + "_head");
  c.line(var + " = phi " + t + " [ " + start + ", %" + from + " ], [ " + var + "_next, %" + l + "_latch ]");
  c.line("br i1 " + c.emit("icmp slt " + t + " " + var + ", " + end) + ", label %" + l + "_body, label %" + l + "_exit");
  c.label(l + "_body");
  c.open.push_back("  br label %" + l + "_latch\n" + l + "_latch:\n  " + var + "_next = add " + t + " " + var + ", 1\n  br label %" + l +
                   "_head\n" + l + "_exit:\n");
  return var;
}

void close(LLVMCtx& c) {
  TG_ASSERT(!c.open.empty(), "LLVM renderer: a close without an open loop or if");
  std::string text = c.open.back();
  c.open.pop_back();
  c.body << text;
  c.block = text.substr(text.rfind('\n', text.size() - 2) + 1);
  c.block.pop_back();  // "<label>:\n" -> "<label>"
  c.block.pop_back();
}

const RenderRules& llvm_rules() {
  static const RenderRules rules({
      {UPat::op(Ops::DEFINE_GLOBAL), [](B b) -> Text {
         auto& c = ctx(b);
         std::string i = std::to_string(std::get<int64_t>(b["root"]->arg));
         std::string slot = c.emit("getelementptr inbounds ptr, ptr %bufs, i64 " + i);
         c.line("%data" + i + " = load ptr, ptr " + slot + ", align 8");
         return "%data" + i;
       }, "DEFINE_GLOBAL: a buffer from bufs"},
      {UPat::op(Ops::SPECIAL), [](B b) -> Text {  // the thread pool's slice of the first global dim
         auto& c = ctx(b);
         const UOp& u = *b["root"];
         auto& v = std::get<SpecialArg>(u.arg);
         TG_ASSERT(c.open_specials++ == 0 && v.kind == SpecialKind::GlobalIdx, "CPU renderer: one launched dim only, a global one");
         c.global_size = {v.size};
         std::string s = "%gstart", e = "%gend";
         if (u.dtype.itemsize() < 8) s = c.emit("trunc i64 %gstart to " + type(u.dtype)), e = c.emit("trunc i64 %gend to " + type(u.dtype));
         return open_loop(c, "%" + v.name(), u.dtype, s, e);
       }, "SPECIAL: a loop over the thread's slice"},
      {UPat::op(Ops::RANGE), [](B b) -> Text {
         auto& c = ctx(b);
         const UOp& u = *b["root"];
         return open_loop(c, "%" + std::get<RangeArg>(u.arg).name(), u.dtype, c.val(u.src[0]), c.val(u.src[1]));
       }, "RANGE: a loop"},
      {UPat::op(Ops::ENDRANGE), [](B b) -> Text { close(ctx(b)); return ""; }, "ENDRANGE"},
      {UPat::op(Ops::IF), [](B b) -> Text {
         auto& c = ctx(b);
         std::string id = c.label_id();
         c.line("br i1 " + c.val(b["root"]->src[0]) + ", label %if" + id + ", label %endif" + id);
         c.label("if" + id);
         c.open.push_back("  br label %endif" + id + "\nendif" + id + ":\n");
         return "";
       }, "IF"},
      {UPat::op(Ops::ENDIF), [](B b) -> Text { close(ctx(b)); return ""; }, "ENDIF"},
      {UPat::op(Ops::DEFINE_ACC), [](B b) -> Text {  // an alloca (a register after mem2reg), set to its identity here
         auto& c = ctx(b);
         const UOp& u = *b["root"];
         std::string slot = c.fresh("acc"), init = c.val(u.src[0]);
         c.allocas << "  " << slot << " = alloca " << type(u.dtype) << "\n";
         c.line("store " + type(u.dtype) + " " + init + ", ptr " + slot);
         c.slots[&u] = slot;
         return slot;
       }, "DEFINE_ACC: an alloca"},
      {UPat::op(Ops::ASSIGN), [](B b) -> Text {
         auto& c = ctx(b);
         const UOp& u = *b["root"];
         std::string slot = c.slots.at(u.src[0].get()), v = c.val(u.src[1]);
         c.line("store " + type(u.dtype) + " " + v + ", ptr " + slot);
         c.slots[&u] = slot;
         return slot;
       }, "ASSIGN: a store to the accumulator"},
      {UPat::op(Ops::INDEX), [](B b) -> Text {
         auto& c = ctx(b);
         const UOp& u = *b["root"];
         const UOpPtr& idx = u.src[1];
         return c.emit("getelementptr inbounds " + memory_type(u.src[0]->dtype.base()) + ", ptr " + c.val(u.src[0]) + ", " + c.tv(idx));
       }, "INDEX: a pointer"},
      {UPat::op(Ops::LOAD), load, "LOAD (gated: a branch; lane mask: llvm.masked.load)"},
      {UPat::op(Ops::STORE), store, "STORE (gated: a branch; streaming: !nontemporal)"},
      {UPat::op(Ops::VECTORIZE), [](B b) -> Text {
         auto& c = ctx(b);
         const UOp& u = *b["root"];
         std::string t = type(u.dtype), st = scalar_type(u.dtype);
         if (std::all_of(u.src.begin(), u.src.end(), [](const UOpPtr& s) { return s->op == Ops::CONST; })) {
           std::string lit = "<";  // a constant vector
           for (size_t i = 0; i < u.src.size(); i++) lit += (i ? ", " : "") + st + " " + c.val(u.src[i]);
           return lit + ">";
         }
         if (std::all_of(u.src.begin(), u.src.end(), [&](const UOpPtr& s) { return s == u.src[0]; })) {  // a broadcast: LLVM's splat
           std::string one = c.emit("insertelement " + t + " poison, " + st + " " + c.val(u.src[0]) + ", i32 0");
           return c.emit("shufflevector " + t + " " + one + ", " + t + " poison, <" + std::to_string(u.src.size()) + " x i32> zeroinitializer");
         }
         if (auto v = lanes_of_vectors(c, u)) return v;
         std::string v = "poison";
         for (size_t i = 0; i < u.src.size(); i++) v = c.emit("insertelement " + t + " " + v + ", " + st + " " + c.val(u.src[i]) + ", i32 " + std::to_string(i));
         return v;
       }, "VECTORIZE: insertelements (a broadcast: a splat; lanes of one or of several vectors: shuffles)"},
      {UPat::op(Ops::GEP), [](B b) -> Text {
         auto& c = ctx(b);
         const UOp& u = *b["root"];
         return c.emit("extractelement " + c.tv(u.src[0]) + ", i32 " + std::to_string(std::get<int64_t>(u.arg)));
       }, "GEP: a lane"},
      {UPat::op(Ops::BITCAST), bitcast, "BITCAST"},
      {UPat::any(), [](B b) -> Text { return is_alu(b["root"]->op) || b["root"]->op == Ops::CAST ? alu(b) : std::nullopt; }, "ALU and CAST"},
  });
  return rules;
}

class LLVMRenderer final : public Renderer {
 public:
  explicit LLVMRenderer(LLVMFeatures f) : f_(f) {}
  std::string device() const override { return "CPU"; }
  int global_max_dims() const override { return 1; }
  int max_vector_bytes() const override { return 64; }
  // index math at pointer width: addresses need no sign extension, and LLVM no widening of the loop
  // counters (IndVarSimplify, left out of llvm_pipeline)
  DType index_dtype() const override { return dtypes::int64; }
  VectorUnit vector_unit() const override { return f_.vector; }
  // the C's vector ops, and shifts (the C's need a cast of each lane's type)
  bool vector_alu(Ops op, DType d) const override {
    // comparisons (of the operands' type d, bools too) give vectors of i1, which select (WHERE of d) and
    // the logical ops take
    bool compares = op == Ops::CMPLT || op == Ops::CMPNE || op == Ops::WHERE;
    bool logical = d.is_bool() && (op == Ops::ADD || op == Ops::MUL || op == Ops::OR || op == Ops::AND || op == Ops::XOR);
    return cpu_vector_alu(op, d) || ((op == Ops::SHL || op == Ops::SHR) && d.is_int()) || (compares && d.scalar != Scalar::Float16) || logical;
  }
  bool vector_cast(DType from, DType to) const override { return has_vector_cast(from, to); }
  int64_t matmul_panel(DType d) const override { return cpu_matmul_panel(d, f_.vector); }

  RenderedKernel render(const std::string& name, const std::vector<UOpPtr>& uops) const override {
    LLVMCtx c;
    c.f = f_;
    c.names.reserve(uops.size());
    for (auto& u : uops) {
      if (u->op == Ops::CONST) continue;
      const RenderRule* rule = nullptr;
      std::optional<std::string> v = llvm_rules().rewrite(u, &c, &rule);
      TG_ASSERT(v.has_value(), "LLVM renderer: no rule renders ", op_name(u->op), " of ", u->dtype.name());
      if (!v->empty()) c.names[u.get()] = *v;
    }
    while (!c.open.empty()) close(c);  // the launch loop (SPECIAL)
    if (c.streamed) {  // non-temporal stores are weakly ordered: fence before the pool reports the kernel done
#if defined(__x86_64__) || defined(__i386__)
      c.decls.insert("declare void @llvm.x86.sse.sfence() nounwind");
      c.line("call void @llvm.x86.sse.sfence()");
#else
      c.line("fence seq_cst");
#endif
    }
    std::ostringstream out;
    out << "; " << name << "\n";
    for (auto& d : c.decls) out << d << "\n";
    out << "define void @" << name << "(ptr noalias %bufs, ptr noalias %vals, i64 %gstart, i64 %gend) nounwind {\nentry:\n"
        << c.allocas.str() << c.body.str() << "  ret void\n}\n";
    if (c.streamed) out << "!0 = !{i32 1}\n";
    return {name, out.str(), c.global_size, c.local_size};
  }

 private:
  LLVMFeatures f_;
};

}  // namespace

std::shared_ptr<Renderer> make_llvm_renderer(LLVMFeatures f) { return std::make_shared<LLVMRenderer>(f); }

}  // namespace tg
