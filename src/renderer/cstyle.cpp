// The C-style renderer: one SSA statement per UOp, so no expression nests deeper than one op.
// The CPU dialect (below) is C for the system compiler with the ABI described in renderer.h.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "renderer/renderer.h"
#include "tg/error.h"
#include "uop/uop.h"

namespace tg {

namespace {

std::string float_literal(double v, DType dt) {
  const char* suffix = dt.scalar == Scalar::Float64 ? "" : "f";
  std::string body;
  if (std::isnan(v)) body = dt.scalar == Scalar::Float64 ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")";
  else if (std::isinf(v)) body = std::string(v < 0 ? "-" : "") + (dt.scalar == Scalar::Float64 ? "__builtin_inf()" : "__builtin_inff()");
  else {
    char buf[64];
    std::snprintf(buf, sizeof buf, dt.scalar == Scalar::Float64 ? "%.17g" : "%.9g", v);
    body = buf;
    if (body.find_first_of(".e") == std::string::npos) body += ".0";
    body += suffix;
  }
  return dt.scalar == Scalar::Float16 ? "((_Float16)" + body + ")" : body;
}

std::string const_literal(const UOp& u) {
  DType dt = u.dtype;
  if (dt.is_float()) return float_literal(u.const_value(), dt);
  int64_t v = u.const_int();
  if (dt.is_bool()) return v ? "1" : "0";
  if (dt.scalar == Scalar::Int64) return v == INT64_MIN ? "(-9223372036854775807ll-1)" : std::to_string(v) + "ll";
  if (dt.scalar == Scalar::UInt64) return std::to_string(static_cast<uint64_t>(v)) + "ull";
  if (dt.scalar == Scalar::UInt32) return std::to_string(static_cast<uint32_t>(v)) + "u";
  if (dt.scalar == Scalar::Int32) return v == INT32_MIN ? "(-2147483647-1)" : std::to_string(v);
  return "((" + dt.c_name() + ")" + std::to_string(v) + ")";
}

// UOp -> its C name; constants are their literal wherever they appear.
struct Names : std::unordered_map<const UOp*, std::string> {
  std::string at(const UOpPtr& u) const {
    if (u->op == Ops::CONST) return const_literal(*u);
    auto it = find(u.get());
    TG_ASSERT(it != end(), "renderer: ", op_name(u->op), " used before it was rendered");
    return it->second;
  }
};

class CPURenderer final : public Renderer {
 public:
  std::string device() const override { return "CPU"; }
  int global_max_dims() const override { return 1; }

  RenderedKernel render(const std::string& name, const std::vector<UOpPtr>& uops) const override {
    Names r;  // the C name or literal of each UOp's value
    std::ostringstream body;
    std::string ind = "  ";
    int counter = 0;
    bool gidx_loop = false;
    std::vector<int64_t> global_size{1};
    auto fresh = [&](const char* prefix) { return prefix + std::to_string(counter++); };
    auto decl = [&](const UOpPtr& u, const char* prefix, const std::string& expr) {
      std::string n = fresh(prefix);
      body << ind << u->dtype.c_name() << " " << n << " = " << expr << ";\n";
      r[u.get()] = n;
    };
    for (auto& u : uops) {
      auto s = [&](size_t i) { return r.at(u->src[i]); };
      switch (u->op) {
        case Ops::DEFINE_GLOBAL: {
          int64_t i = std::get<int64_t>(u->arg);
          std::string n = "data" + std::to_string(i), t = u->dtype.base().c_name();
          body << ind << (i == 0 ? "" : "const ") << t << "* restrict " << n << " = (" << (i == 0 ? "" : "const ") << t
               << "*)bufs[" << i << "];\n";
          r[u.get()] = n;
          break;
        }
        case Ops::CONST: break;  // constants are printed where they are used
        case Ops::SPECIAL: {
          auto& v = std::get<VarArg>(u->arg);
          body << ind << "for (int " << v.name << " = gstart; " << v.name << " < gend; " << v.name << "++) {\n";
          ind += "  ";
          r[u.get()] = v.name;
          gidx_loop = true;
          global_size = {v.max + 1};
          break;
        }
        case Ops::RANGE: {
          std::string n = "ridx" + std::to_string(std::get<int64_t>(u->arg));
          body << ind << "for (int " << n << " = " << s(0) << "; " << n << " < " << s(1) << "; " << n << "++) {\n";
          ind += "  ";
          r[u.get()] = n;
          break;
        }
        case Ops::ENDRANGE:
          ind.resize(ind.size() - 2);
          body << ind << "}\n";
          break;
        case Ops::DEFINE_ACC: decl(u, "acc", s(0)); break;
        case Ops::ASSIGN: body << ind << s(0) << " = " << alu_expr(*u->src[1], r) << ";\n"; break;
        case Ops::REDUCE: r[u.get()] = r.at(uops_acc(uops)); break;
        case Ops::INDEX: r[u.get()] = s(0) + "[" + s(1) + "]"; break;
        case Ops::LOAD:
          if (u->src.size() == 1) decl(u, "val", s(0));
          else decl(u, "val", "(" + s(1) + " ? " + s(0) + " : " + const_literal(*UOp::cnst(u->dtype, 0)) + ")");
          break;
        case Ops::STORE: body << ind << s(0) << " = " << s(1) << ";\n"; break;
        case Ops::BITCAST: {
          std::string n = fresh("cast");
          body << ind << u->dtype.c_name() << " " << n << "; __builtin_memcpy(&" << n << ", &" << s(0) << ", sizeof(" << n << "));\n";
          r[u.get()] = n;
          break;
        }
        default:
          TG_ASSERT(is_alu(u->op) || u->op == Ops::CAST, "CPU renderer: cannot render ", op_name(u->op));
          decl(u, "alu", alu_expr(*u, r));
      }
    }
    if (gidx_loop) {
      ind.resize(ind.size() - 2);
      body << ind << "}\n";
    }
    std::ostringstream src;
    src << "// " << name << "\n";
    src << "void " << name << "(void** restrict bufs, const long long* restrict vals, int gstart, int gend) {\n";
    src << "  (void)bufs; (void)vals; (void)gstart; (void)gend;\n";
    src << body.str() << "}\n";
    return {name, src.str(), global_size, {}};
  }

 private:
  static UOpPtr uops_acc(const std::vector<UOpPtr>& uops) {
    for (auto& u : uops)
      if (u->op == Ops::DEFINE_ACC) return u;
    TG_ASSERT(false, "REDUCE without DEFINE_ACC");
  }

  // A float math function for the dtype; half goes through float.
  static std::string math(const char* fn, const std::string& a, DType dt) {
    if (dt.scalar == Scalar::Float64) return std::string("__builtin_") + fn + "(" + a + ")";
    std::string f = std::string("__builtin_") + fn + "f((float)" + a + ")";
    return dt.scalar == Scalar::Float16 ? "((_Float16)" + f + ")" : f;
  }

  static std::string alu_expr(const UOp& u, const Names& r) {
    auto s = [&](size_t i) { return r.at(u.src[i]); };
    DType dt = u.dtype;
    switch (u.op) {
      case Ops::ADD: return "(" + s(0) + "+" + s(1) + ")";
      case Ops::MUL: return "(" + s(0) + "*" + s(1) + ")";
      case Ops::IDIV: return "(" + s(0) + "/" + s(1) + ")";
      case Ops::MOD: return "(" + s(0) + "%" + s(1) + ")";
      case Ops::MAX:  // NaN wins, as in torch (and exec_alu)
        if (dt.is_float()) return "(((" + s(0) + ">" + s(1) + ")|(" + s(0) + "!=" + s(0) + "))?" + s(0) + ":" + s(1) + ")";
        return "((" + s(0) + ">" + s(1) + ")?" + s(0) + ":" + s(1) + ")";
      case Ops::CMPLT: return "(" + s(0) + "<" + s(1) + ")";
      case Ops::CMPNE: return "(" + s(0) + "!=" + s(1) + ")";
      case Ops::XOR: return "(" + s(0) + "^" + s(1) + ")";
      case Ops::OR: return "(" + s(0) + "|" + s(1) + ")";
      case Ops::AND: return "(" + s(0) + "&" + s(1) + ")";
      case Ops::SHL: return "(" + s(0) + "<<" + s(1) + ")";
      case Ops::SHR: return "(" + s(0) + ">>" + s(1) + ")";
      case Ops::NEG: return dt.is_bool() ? "(!" + s(0) + ")" : "(-" + s(0) + ")";
      case Ops::RECIP: return "(" + float_literal(1.0, dt) + "/" + s(0) + ")";
      case Ops::EXP2: return math("exp2", s(0), dt);
      case Ops::LOG2: return math("log2", s(0), dt);
      case Ops::SIN: return math("sin", s(0), dt);
      case Ops::SQRT: return math("sqrt", s(0), dt);
      case Ops::WHERE: return "(" + s(0) + "?" + s(1) + ":" + s(2) + ")";
      case Ops::CAST: return "((" + dt.c_name() + ")" + s(0) + ")";
      default: TG_ASSERT(false, "CPU renderer: not an ALU op: ", op_name(u.op));
    }
  }
};

}  // namespace

std::shared_ptr<Renderer> make_cpu_renderer() { return std::make_shared<CPURenderer>(); }

}  // namespace tg
