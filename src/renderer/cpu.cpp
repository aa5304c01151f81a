// The CPU dialect of the C-style renderer: C for the system compiler with the ABI of renderer.h. Its
// rules add what scalar C lacks: the thread pool's slice of the launched dim (SPECIAL is a loop over
// [gstart, gend)), buffer arguments from `bufs`, and vectors as GCC/Clang vector extensions (typedefs,
// masked vector reads, a branch-free exp2 (for scalars too), fma helpers, non-temporal stores for streaming
// outputs).
#include <set>
#include <sstream>

#include "renderer/cstyle.h"
#include "tg/error.h"

namespace tg {

namespace {

using B = const Bindings&;
using Text = std::optional<std::string>;

RenderCtx& ctx(B b) { return b.ctx<RenderCtx>(); }
std::string src(B b, size_t i) { return ctx(b).at(b["root"]->src[i]); }
std::string mask_type(DType d) { return mask_dtype(d).name(); }
std::string storage_type(DType d) { return is_half(d) ? "unsigned short" : d.base().c_name(); }
// A streaming STORE (a large output written once), not gated, of a vector the CPU can stream.
bool streams(DType d) { return d.count > 1 && !is_half(d); }
bool is_streaming(const UOp& u) {
  auto* a = std::get_if<StoreArg>(&u.arg);
  return u.op == Ops::STORE && u.src.size() == 2 && a && a->streaming && streams(u.src[1]->dtype);
}

// The vector ops of GCC/Clang's vector extensions (vector_alu() says which): lanes of the same type.
std::string vector_alu_expr(const UOp& u, RenderCtx& r) {
  auto s = [&](size_t i) { return r.at(u.src[i]); };
  DType dt = u.dtype;
  std::string mask = mask_type(dt);
  switch (u.op) {
    case Ops::ADD: return "(" + s(0) + "+" + s(1) + ")";
    case Ops::MUL: return "(" + s(0) + "*" + s(1) + ")";
    case Ops::FDIV: return "(" + s(0) + "/" + s(1) + ")";
    case Ops::NEG: return "(-(" + s(0) + "))";
    case Ops::XOR: return "(" + s(0) + "^" + s(1) + ")";
    case Ops::OR: return "(" + s(0) + "|" + s(1) + ")";
    case Ops::AND: return "(" + s(0) + "&" + s(1) + ")";
    case Ops::RECIP: return "(" + float_literal(1.0, dt.base()) + "/" + s(0) + ")";
    case Ops::EXP2: return "tg_exp2_" + dt.name() + "(" + s(0) + ")";
    case Ops::MULACC: return dt.is_float() ? "tg_fma_" + dt.name() + "(" + s(0) + "," + s(1) + "," + s(2) + ")" : "(" + s(0) + "*" + s(1) + "+" + s(2) + ")";
    case Ops::MAX: {  // a comparison gives a lane mask of all ones or zeros; NaN wins
      std::string m = dt.is_float() ? "((" + s(0) + ">" + s(1) + ")|(" + s(0) + "!=" + s(0) + "))" : "(" + s(0) + ">" + s(1) + ")";
      return "((" + ctype(dt) + ")((" + m + "&(" + mask + ")" + s(0) + ")|(~" + m + "&(" + mask + ")" + s(1) + ")))";
    }
    default: TG_ASSERT(false, "C renderer: no vector form of ", op_name(u.op), " on ", dt.name());
  }
}


// 2^f on [-1/2, 1/2] but for the last step (p * f + 1): Cephes' exp2f polynomial, in Horner form
constexpr const char* kExp2Coefficients[] = {"1.535336188319500e-4f", "1.339887440266574e-3f", "9.618437357674640e-3f", "5.550332471162809e-2f",
                                              "2.402264791363012e-1f", "6.931472028550421e-1f", "1.0f"};

// 2^f's polynomial in f, p by Horner's rule into `p` (declared by the caller): fmas where the target has
// them, as the x86 fma builtins for 4, 8 and 16 floats (clang 14 has no elementwise fma; a loop of
// scalar fmas over the lanes stays scalar, 6x slower) or one lane at a time for other widths, else
// multiplies and adds (the kernels compile with -ffp-contract=off). Never contracted by a pragma: clang
// contracts at run time but not where it folds a constant argument (fuzz seed 390816), and the LLVM
// renderer's llvm.fma must give the same bits.
std::string exp2_polynomial(const std::string& type, int lanes) {
  auto splat = [&](const char* c) { return lanes > 1 ? "(" + type + "){} + " + c : std::string(c); };
  std::string start = "  p = " + splat(kExp2Coefficients[0]) + ";\n", plain = start, each = start, vector = start;
  std::string builtin = lanes == 16 ? "__builtin_ia32_vfmaddps512_mask" : lanes == 8 ? "__builtin_ia32_vfmaddps256" : "__builtin_ia32_vfmaddps";
  if (lanes > 1) each = "  for (int i = 0; i < " + std::to_string(lanes) + "; i++) {\n    float q = " + kExp2Coefficients[0] + ";\n";
  for (int i = 1; i < 7; i++) {
    const char* c = kExp2Coefficients[i];
    plain += "  p = p * f + " + splat(c) + ";\n";
    each += lanes > 1 ? std::string("    q = __builtin_fmaf(q, f[i], ") + c + ");\n" : std::string("  p = __builtin_fmaf(p, f, ") + c + ");\n";
    vector += "  p = " + builtin + "(p, f, " + splat(c) + (lanes == 16 ? ", (unsigned short)-1, 4" : "") + ");\n";
  }
  if (lanes > 1) each += "    p[i] = q;\n  }\n";
  std::string out;
  if (lanes == 4 || lanes == 8 || lanes == 16)
    out += std::string("#if defined(__x86_64__) && defined(") + (lanes == 16 ? "__AVX512F__" : "__FMA__") + ")\n" + vector + "#elif";
  else
    out += "#if";
  return out + " defined(__FMA__)\n" + each + "#else\n" + plain + "#endif\n";
}

// exp2 on a float32 vector, branch-free so it stays vector code (libm's exp2f is one call per lane):
// x = n + f with n = round(x), f in [-1/2, 1/2]; 2^f by Cephes' exp2f polynomial (about 1 ulp);
// 2^n applied as two exact power-of-two factors, so the result is rounded once, also when it
// overflows to inf or underflows into the subnormals. x is clamped to [-151, 129] (beyond, the
// result is 0 or inf anyway); NaN passes through (its comparisons are false).
std::string exp2_vector(DType d) {
  std::string t = d.name(), m = mask_type(d), w = std::to_string(static_cast<int>(d.count));
  // n = round(x) by adding 1.5 * 2^23: its low mantissa bits are n itself (x is clamped far inside
  // 2^22). A NaN lane gives some n, but p is NaN there and so is the product.
  return "static inline " + t + " tg_exp2_" + t + "(" + t + " x) {\n"
         "  " + m + " lo = x < -151.0f, hi = x > 129.0f;\n"
         "  x = (" + t + ")((lo & (" + m + ")((" + t + "){} + -151.0f)) | (hi & (" + m + ")((" + t + "){} + 129.0f)) | (~(lo | hi) & (" + m + ")x));\n"
         "  " + t + " r = x + 12582912.0f, n = r - 12582912.0f, f = x - n, p;\n" +
         exp2_polynomial(t, static_cast<int>(d.count)) +
         "  " + m + " ni = (" + m + ")r - 0x4B400000;\n"
         "  " + m + " n1 = ni >> 1, n2 = ni - n1;\n"
         "  return p * (" + t + ")((n1 + 127) << 23) * (" + t + ")((n2 + 127) << 23);\n"
         "}\n";
}

// The same exp2 on one float32, operation for operation (the same fmas too): a value computed
// in vector code in one kernel and in scalar code in another has the same bits (x - x.max() is 0 at
// the max). libm's exp2f would round differently.
std::string exp2_scalar() {
  return "static inline float tg_exp2_float32(float x) {\n"
         "  x = x < -151.0f ? -151.0f : x > 129.0f ? 129.0f : x;\n"
         "  float r = x + 12582912.0f, n = r - 12582912.0f, f = x - n, p;\n" +
         exp2_polynomial("float", 1) +
         "  int ni; __builtin_memcpy(&ni, &r, 4); ni -= 0x4B400000;\n"
         "  int n1 = ni >> 1, n2 = ni - n1, e1 = (n1 + 127) << 23, e2 = (n2 + 127) << 23;\n"
         "  float s1, s2; __builtin_memcpy(&s1, &e1, 4); __builtin_memcpy(&s2, &e2, 4);\n"
         "  return p * s1 * s2;\n"
         "}\n";
}

// typedefs of the vector types used (and their lane masks), and fma helpers for them
std::string vector_prelude(const std::vector<UOpPtr>& uops) {
  std::set<std::string> done;
  std::ostringstream os;
  auto def = [&](DType d) {
    if (!done.insert(d.name()).second) return;
    os << "typedef " << d.base().c_name() << " " << d.name() << " __attribute__((vector_size(" << d.count * d.itemsize()
       << "), aligned(" << d.itemsize() << "), may_alias));\n";
  };
  bool fma = false;
  for (auto& u : uops) {
    if (u->op == Ops::MULACC) fma = true;
    if (u->dtype.count > 1) {
      def(u->dtype);
      if (u->op == Ops::MAX || u->op == Ops::EXP2) def(mask_dtype(u->dtype));
    }
  }
  // a masked vector read: one vector load when it stays within the readable part [0, n) of the buffer,
  // else lane by lane (the masked-off lanes may lie outside the buffer)
  std::set<std::string> ldone;
  for (auto& u : uops) {
    if (u->op != Ops::LOAD || u->src.size() < 2 || u->src[1]->dtype.count == 1 || !ldone.insert(u->dtype.name()).second) continue;
    std::string t = u->dtype.name(), m = u->src[1]->dtype.name(), e = u->dtype.base().c_name(), w = std::to_string(u->dtype.count);
    os << "static inline " << t << " tg_load_masked_" << t << "(const " << e << "* b, long long i, long long n, " << m << " m) {\n"
       << "  if (i >= 0 && i + " << w << " <= n) return (" << t << ")((" << m << ")*(const " << t << "*)(b + i) & m);\n"
       << "  " << t << " r; for (int l = 0; l < " << w << "; l++) r[l] = m[l] ? b[i + l] : 0; return r;\n}\n";
  }
  std::set<std::string> edone;
  for (auto& u : uops)
    if (u->op == Ops::EXP2 && u->dtype.scalar == Scalar::Float32 && edone.insert(u->dtype.name()).second)
      os << (u->dtype.count > 1 ? exp2_vector(u->dtype) : exp2_scalar());
  if (fma) {  // fused where the target has fma instructions (never a slow software fma), else multiply-add
    os << "#ifdef __FMA__\n#define tg_fmaf(a, b, c) __builtin_fmaf(a, b, c)\n#define tg_fma(a, b, c) __builtin_fma(a, b, c)\n#else\n"
       << "#define tg_fmaf(a, b, c) ((a) * (b) + (c))\n#define tg_fma(a, b, c) ((a) * (b) + (c))\n#endif\n";
    std::set<std::string> fdone;
    for (auto& u : uops) {
      if (u->op != Ops::MULACC || u->dtype.count == 1 || !u->dtype.is_float() || !fdone.insert(u->dtype.name()).second) continue;
      std::string t = u->dtype.name(), f = u->dtype.scalar == Scalar::Float64 ? "__builtin_fma" : "__builtin_fmaf";
      // clang contracts the vector expression when told to; gcc ignores that pragma but turns the
      // lane loop into one vector fma (clang does not always)
      os << "static inline " << t << " tg_fma_" << t << "(" << t << " a, " << t << " b, " << t << " c) {\n"
         << "#if defined(__FMA__) && defined(__clang__)\n#pragma clang fp contract(fast)\n  return a * b + c;\n"
         << "#elif defined(__FMA__)\n  " << t << " r; for (int i = 0; i < " << static_cast<int>(u->dtype.count) << "; i++) r[i] = " << f
         << "(a[i], b[i], c[i]); return r;\n#else\n  return a * b + c;\n#endif\n}\n";
    }
  }
  return os.str();
}

// Non-temporal stores where the compiler has them (clang's builtin; gcc gets plain stores) and the
// address is aligned to the vector (else a plain store: no instruction streams unaligned data). They
// are weakly ordered, so the kernel fences before it returns and the thread pool reports it done.
std::string streaming_prelude(const std::vector<UOpPtr>& uops) {
  std::set<std::string> done;
  std::ostringstream os;
  for (auto& u : uops) {
    if (!is_streaming(*u) || !done.insert(u->src[1]->dtype.name()).second) continue;
    DType d = u->src[1]->dtype;
    if (done.size() == 1)
      os << "#if defined(__x86_64__) || defined(__i386__)\n#define tg_stream_fence() __builtin_ia32_sfence()\n#else\n"
         << "#define tg_stream_fence() __atomic_thread_fence(__ATOMIC_SEQ_CST)\n#endif\n";
    int64_t n = d.count * d.itemsize();
    std::string t = d.name(), e = d.base().c_name(), bytes = std::to_string(n);
    os << "static inline void tg_stream_" << t << "(" << e << "* p, " << t << " v) {\n#ifdef __clang__\n"
       << "  typedef " << e << " aligned_t __attribute__((vector_size(" << bytes << ")));\n"
       << "  if (((unsigned long long)p & " << n - 1 << "u) == 0) { aligned_t a = v; __builtin_nontemporal_store(a, (aligned_t*)__builtin_assume_aligned(p, " << bytes << ")); return; }\n"
       << "#endif\n  *(" << t << "*)p = v;\n}\n";
  }
  return os.str();
}

std::string vector_literal(DType d, const std::vector<std::string>& lanes) {
  std::string s = "((" + ctype(d) + "){";
  for (size_t i = 0; i < lanes.size(); i++) s += (i ? "," : "") + lanes[i];
  return s + "})";
}

const RenderRules& cpu_rules() {
  static const RenderRules rules = RenderRules({
      {UPat::op(Ops::DEFINE_GLOBAL), [](B b) -> Text {
         const UOp& u = *b["root"];
         std::string i = std::to_string(std::get<int64_t>(u.arg)), t = (ctx(b).stored.count(&u) ? "" : "const ") + storage_type(u.dtype);
         return t + "* restrict data" + i + " = (" + t + "*)bufs[" + i + "];";
       }, "DEFINE_GLOBAL: a buffer from bufs"},
      {UPat::op(Ops::SPECIAL), [](B b) -> Text {  // the thread pool's slice of the first global dim
         auto& c = ctx(b);
         auto& v = std::get<SpecialArg>(b["root"]->arg);
         TG_ASSERT(c.open_specials++ == 0 && v.kind == SpecialKind::GlobalIdx, "CPU renderer: one launched dim only, a global one");
         c.global_size = {v.size};
         std::string n = v.name();
         return "for (" + ctype(b["root"]->dtype) + " " + n + " = gstart; " + n + " < gend; " + n + "++)";
       }, "SPECIAL: the thread's slice"},
      {UPat::op(Ops::VECTORIZE), [](B b) -> Text {
         std::vector<std::string> lanes;
         for (size_t i = 0; i < b["root"]->src.size(); i++) lanes.push_back(src(b, i));
         return vector_literal(b["root"]->dtype, lanes);
       }, "VECTORIZE: a vector literal"},
      {UPat::op(Ops::GEP), [](B b) -> Text { return src(b, 0) + "[" + std::to_string(std::get<int64_t>(b["root"]->arg)) + "]"; }, "GEP: a lane"},
      {UPat::op(Ops::LOAD), [](B b) -> Text {
         const UOp& u = *b["root"];
         DType d = u.dtype;
         if (u.src.size() > 1 && u.src[1]->dtype.count > 1) {  // a vector under a lane mask
           const UOpPtr& index = u.src[0];
           auto& c = ctx(b);
           return "tg_load_masked_" + d.name() + "(" + c.at(index->src[0]) + ", " + c.at(index->src[1]) + ", " +
                  std::to_string(std::get<LoadArg>(u.arg).readable) + "ll, " + src(b, 1) + ")";
         }
         if (d.count == 1) return std::nullopt;
         std::string v = "*(const " + ctype(d) + "*)" + src(b, 0);
         return u.src.size() == 1 ? v : "(" + src(b, 1) + " ? " + v + " : " + zero_literal(d) + ")";
       }, "vector LOAD"},
      {UPat::op(Ops::STORE), [](B b) -> Text {
         const UOp& u = *b["root"];
         DType d = u.src[1]->dtype;
         if (d.count == 1) return std::nullopt;
         if (is_streaming(u)) {
           ctx(b).streamed = true;
           return "tg_stream_" + d.name() + "(" + src(b, 0) + ", " + src(b, 1) + ");";
         }
         std::string st = "*(" + ctype(d) + "*)" + src(b, 0) + " = " + src(b, 1) + ";";
         return u.src.size() > 2 ? "if (" + src(b, 2) + ") " + st : st;
       }, "vector STORE"},
      {UPat::op(Ops::EXP2), [](B b) -> Text {
         const UOp& u = *b["root"];
         if (u.dtype != dtypes::float32) return std::nullopt;
         return "tg_exp2_float32(" + src(b, 0) + ")";
       }, "float32 EXP2: the vectors' exp2, one lane"},
      {UPat::any(), [](B b) -> Text {
         const UOp& u = *b["root"];
         if (u.dtype.count == 1 || !(is_alu(u.op) || u.op == Ops::CAST)) return std::nullopt;
         return vector_alu_expr(u, ctx(b));
       }, "vector ALU"},
  }) + cstyle_rules();
  return rules;
}

class CPURenderer final : public CStyleRenderer {
 public:
  CPURenderer(std::function<bool()> native_half, std::function<VectorUnit()> vector_unit)
      : native_half_(std::move(native_half)), vector_unit_(std::move(vector_unit)) {}
  std::string device() const override { return "CPU"; }
  int global_max_dims() const override { return 1; }
  int max_vector_bytes() const override { return 64; }
  VectorUnit vector_unit() const override { return vector_unit_ ? vector_unit_() : kAVX512; }
  bool vector_alu(Ops op, DType d) const override { return cpu_vector_alu(op, d); }
  int64_t matmul_panel(DType d) const override { return cpu_matmul_panel(d, vector_unit()); }

 private:
  std::function<bool()> native_half_;
  std::function<VectorUnit()> vector_unit_;

  const RenderRules& rules() const override { return cpu_rules(); }
  LineKind line_kind(const UOp& u) const override { return u.op == Ops::SPECIAL ? LineKind::Open : CStyleRenderer::line_kind(u); }
  std::string signature(const std::string& name) const override {
    return "void " + name + "(void** restrict bufs, const long long* restrict vals, long long gstart, long long gend)";
  }
  std::string body_prefix() const override { return "  (void)bufs; (void)vals; (void)gstart; (void)gend;\n"; }
  std::string body_suffix(const RenderCtx& c) const override { return c.streamed ? "  tg_stream_fence();\n" : ""; }
  std::string prelude(const std::vector<UOpPtr>& uops) const override {
    std::string p;
    auto uses_half = [](const UOpPtr& u) {
      return is_half(u->dtype) || std::any_of(u->src.begin(), u->src.end(), [](const UOpPtr& s) { return is_half(s->dtype); });
    };
    if (std::any_of(uops.begin(), uops.end(), uses_half)) p += c_half_conversions(native_half_ && native_half_());
    if (std::any_of(uops.begin(), uops.end(), [](const UOpPtr& u) { return is_float_to_int(*u); })) p += c_float_to_int();
    p += vector_prelude(uops);
    p += streaming_prelude(uops);
    return p;
  }
};

}  // namespace

bool cpu_vector_alu(Ops op, DType d) {
  if (d.is_bool() || d.scalar == Scalar::Float16) return false;
  if (op == Ops::RECIP || op == Ops::FDIV) return d.is_float();
  if (op == Ops::EXP2) return d.scalar == Scalar::Float32;
  if (op == Ops::XOR || op == Ops::OR || op == Ops::AND) return d.is_int();  // threefry's random bits
  return op == Ops::ADD || op == Ops::MUL || op == Ops::NEG || op == Ops::MAX || op == Ops::MULACC;
}

// two vector registers: the width of the heuristics' register tile (B's rows 4 KB apart in the cache sets
// otherwise evict each other: a 1024-wide float32 matmul runs at 2/3 of the speed unpacked)
int64_t cpu_matmul_panel(DType d, VectorUnit unit) {
  return d.is_float() && d.scalar != Scalar::Float16 && unit.bytes > 0 ? 2 * unit.bytes / d.itemsize() : 0;
}

DType mask_dtype(DType d) {
  Scalar m = d.itemsize() == 8 ? Scalar::Int64 : d.itemsize() == 4 ? Scalar::Int32 : d.itemsize() == 2 ? Scalar::Int16 : Scalar::Int8;
  return DType{m, d.count, false};
}

std::shared_ptr<Renderer> make_cpu_renderer(std::function<bool()> native_half, std::function<VectorUnit()> vector_unit) {
  return std::make_shared<CPURenderer>(std::move(native_half), std::move(vector_unit));
}

}  // namespace tg
