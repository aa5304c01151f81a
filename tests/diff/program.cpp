#include "program.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

namespace tgdiff {

// ------------------------------------------------------------------------------------------------------
// dtypes: tinygrad's rules, written out here independently of src/helpers/dtype.cpp
// ------------------------------------------------------------------------------------------------------

namespace {
struct DTInfo { DT d; const char* name; };
const DTInfo kDTs[] = {{DT::Bool, "bool"},   {DT::I8, "int8"},     {DT::U8, "uint8"},     {DT::I16, "int16"},
                       {DT::U16, "uint16"},  {DT::I32, "int32"},   {DT::U32, "uint32"},   {DT::I64, "int64"},
                       {DT::U64, "uint64"},  {DT::F16, "float16"}, {DT::F32, "float32"}, {DT::F64, "float64"}};

// tinygrad's promo_lattice (dtype.py), restricted to the dtypes above: each dtype's direct parents.
std::vector<DT> parents(DT d) {
  switch (d) {
    case DT::Bool: return {DT::I8, DT::U8};
    case DT::I8: return {DT::I16};
    case DT::I16: return {DT::I32};
    case DT::I32: return {DT::I64};
    case DT::I64: return {DT::F16};
    case DT::U8: return {DT::I16, DT::U16};
    case DT::U16: return {DT::I32, DT::U32};
    case DT::U32: return {DT::I64, DT::U64};
    case DT::U64: return {DT::F16};
    case DT::F16: return {DT::F32};
    case DT::F32: return {DT::F64};
    case DT::F64: return {};
  }
  return {};
}
std::set<DT> ancestors(DT d) {
  std::set<DT> r{d};
  for (DT p : parents(d))
    for (DT a : ancestors(p)) r.insert(a);
  return r;
}
}  // namespace

const char* name(DT d) { return kDTs[static_cast<int>(d)].name; }
DT dt_from_name(const std::string& n) {
  for (const DTInfo& i : kDTs)
    if (n == i.name) return i.d;
  throw std::runtime_error("unknown dtype " + n);
}
bool is_float(DT d) { return d == DT::F16 || d == DT::F32 || d == DT::F64; }
bool is_int(DT d) { return d != DT::Bool && !is_float(d); }
bool is_unsigned(DT d) { return d == DT::U8 || d == DT::U16 || d == DT::U32 || d == DT::U64; }
// The enum order is tinygrad's priority order: the least common ancestor is the first in it.
DT lub(DT a, DT b) {
  std::set<DT> aa = ancestors(a), bb = ancestors(b);
  for (const DTInfo& i : kDTs)
    if (aa.count(i.d) && bb.count(i.d)) return i.d;
  throw std::runtime_error("no common dtype");
}
DT lub_float(DT d) { return is_float(d) ? d : DT::F32; }
DT sum_acc(DT d) {
  if (is_float(d)) return d == DT::F16 ? DT::F32 : d;
  if (is_unsigned(d)) return lub(d, DT::U32);
  return lub(d, DT::I32);
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

// ------------------------------------------------------------------------------------------------------
// JSON
// ------------------------------------------------------------------------------------------------------

namespace {

nlohmann::json num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
double unnum(const nlohmann::json& j) {
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    return s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY;
  }
  return j.get<double>();
}
nlohmann::json opt(const std::optional<int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
std::optional<int64_t> unopt(const nlohmann::json& j) { return j.is_null() ? std::nullopt : std::optional<int64_t>(j.get<int64_t>()); }

}  // namespace

nlohmann::json to_json(const Program& p) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const Node& n : p.nodes) {
    nlohmann::json j = {{"kind", n.kind}, {"args", n.args}, {"dtype", name(n.dtype)}, {"cdtype", name(n.cdtype)}, {"shape", n.shape}};
    if (n.kind == "input") {
      nlohmann::json data = nlohmann::json::array();
      if (is_float(n.dtype)) for (double v : n.fdata) data.push_back(num(v));
      else for (int64_t v : n.idata) data.push_back(v);
      j["data"] = data;
    }
    j["ints"] = n.ints;
    if (!n.pairs.empty()) j["pairs"] = n.pairs;
    if (!n.slices.empty()) {
      j["slices"] = nlohmann::json::array();
      for (const SliceArg& s : n.slices) j["slices"].push_back({s.is_int, s.idx, opt(s.start), opt(s.stop), opt(s.step)});
    }
    j["value"] = num(n.value);
    j["value2"] = num(n.value2);
    if (!n.sub.empty()) j["sub"] = n.sub;
    j["scalar_int"] = n.scalar_int;
    j["reverse"] = n.reverse;
    j["keepdim"] = n.keepdim;
    j["sched"] = n.sched;
    nodes.push_back(j);
  }
  return {{"seed", p.seed}, {"nodes", nodes}, {"outputs", p.outputs}, {"corealize", p.corealize}};
}

Program from_json(const nlohmann::json& j) {
  Program p;
  p.seed = j.at("seed").get<uint64_t>();
  p.outputs = j.at("outputs").get<std::vector<int>>();
  p.corealize = j.at("corealize").get<bool>();
  for (const nlohmann::json& x : j.at("nodes")) {
    Node n;
    n.kind = x.at("kind").get<std::string>();
    n.args = x.at("args").get<std::vector<int>>();
    n.dtype = dt_from_name(x.at("dtype").get<std::string>());
    n.cdtype = dt_from_name(x.at("cdtype").get<std::string>());
    n.shape = x.at("shape").get<Shape>();
    if (x.contains("data"))
      for (const nlohmann::json& v : x["data"]) {
        if (is_float(n.dtype)) n.fdata.push_back(unnum(v));
        else n.idata.push_back(v.get<int64_t>());
      }
    if (x.contains("ints")) n.ints = x["ints"].get<std::vector<int64_t>>();
    if (x.contains("pairs")) n.pairs = x["pairs"].get<std::vector<std::pair<int64_t, int64_t>>>();
    if (x.contains("slices"))
      for (const nlohmann::json& s : x["slices"])
        n.slices.push_back({s[0].get<bool>(), s[1].get<int64_t>(), unopt(s[2]), unopt(s[3]), unopt(s[4])});
    n.value = unnum(x.at("value"));
    n.value2 = unnum(x.at("value2"));
    if (x.contains("sub")) n.sub = x["sub"].get<std::string>();
    n.scalar_int = x.at("scalar_int").get<bool>();
    n.reverse = x.at("reverse").get<bool>();
    n.keepdim = x.at("keepdim").get<bool>();
    n.sched = x.at("sched").get<int>();
    p.nodes.push_back(std::move(n));
  }
  return p;
}

// ------------------------------------------------------------------------------------------------------
// Printing
// ------------------------------------------------------------------------------------------------------

namespace {

std::string fmt_double(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  std::string s = b;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}
std::string fmt_float(double v) {
  if (std::isnan(v) || std::isinf(v)) return fmt_double(v);
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  std::string s = b;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + "f";
}
std::string fmt_int(int64_t v, DT d) {
  if (d == DT::Bool) return v ? "true" : "false";
  if (v == INT64_MIN) return "INT64_MIN";
  if (v == INT32_MIN && d == DT::I32) return "INT32_MIN";
  return std::to_string(v);
}
template <class T> std::string list(const std::vector<T>& v, const std::function<std::string(const T&)>& f) {
  std::string r;
  for (size_t i = 0; i < v.size(); i++) r += (i ? ", " : "") + f(v[i]);
  return r;
}
std::string ints_str(const std::vector<int64_t>& v) {
  return "{" + list<int64_t>(v, [](const int64_t& x) { return std::to_string(x); }) + "}";
}
std::string pairs_str(const std::vector<std::pair<int64_t, int64_t>>& v) {
  return "{" + list<std::pair<int64_t, int64_t>>(v, [](const auto& x) { return "{" + std::to_string(x.first) + ", " + std::to_string(x.second) + "}"; }) + "}";
}
std::string opt_str(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "std::nullopt"; }
std::string slices_str(const std::vector<SliceArg>& v) {
  return "{" + list<SliceArg>(v, [](const SliceArg& s) {
           return s.is_int ? std::to_string(s.idx) : "Slice(" + opt_str(s.start) + ", " + opt_str(s.stop) + ", " + opt_str(s.step) + ")";
         }) + "}";
}
std::string dt_cpp(DT d) { return d == DT::Bool ? "dtypes::bool_" : std::string("dtypes::") + name(d); }
const char* cpp_op(const std::string& sub) {
  if (sub == "add") return "+";
  if (sub == "sub") return "-";
  if (sub == "mul") return "*";
  if (sub == "div") return "/";
  if (sub == "lt") return "<";
  if (sub == "gt") return ">";
  return "==";
}
std::string v(int id) { return "v" + std::to_string(id); }

// The C++ expression that computes node n (inputs aside).
std::string expr(const Node& n) {
  const std::vector<int>& a = n.args;
  const std::string& k = n.kind;
  if (k == "cast") return v(a[0]) + ".cast(" + dt_cpp(n.dtype) + ")";
  if (k == "clip") return v(a[0]) + ".clip(" + fmt_double(n.value) + ", " + fmt_double(n.value2) + ")";
  if (k == "where") return v(a[0]) + ".where(" + v(a[1]) + ", " + v(a[2]) + ")";
  if (k == "scalar") {
    std::string s = n.scalar_int ? std::to_string(static_cast<int64_t>(n.value)) : fmt_double(n.value);
    return n.reverse ? s + " " + cpp_op(n.sub) + " " + v(a[0]) : v(a[0]) + " " + cpp_op(n.sub) + " " + s;
  }
  if (k == "max_pool2d" || k == "avg_pool2d") {
    auto one = [&](size_t i) { return "{" + std::to_string(n.ints[i]) + "}"; };
    return v(a[0]) + "." + k + "(" + one(0) + ", " + one(1) + ", " + one(2) + ", " + one(3) + ")";
  }
  if (k == "pad2d") return v(a[0]) + ".pad2d(" + ints_str(n.ints) + ", PadMode::" + n.sub + ")";
  if (k == "sum" || k == "max" || k == "min" || k == "mean" || k == "prod" || k == "any" || k == "all")
    return v(a[0]) + "." + k + "(" + ints_str(n.ints) + ", " + (n.keepdim ? "true" : "false") + ")";
  if (k == "argmax" || k == "argmin")
    return v(a[0]) + "." + k + "(" + (n.ints.empty() ? std::string("std::nullopt") : std::to_string(n.ints[0])) + ", " + (n.keepdim ? "true" : "false") + ")";
  if (k == "cumsum" || k == "cummax" || k == "softmax" || k == "log_softmax") return v(a[0]) + "." + k + "(" + std::to_string(n.ints[0]) + ")";
  if (k == "logsumexp") return v(a[0]) + ".logsumexp(" + ints_str(n.ints) + ", " + (n.keepdim ? "true" : "false") + ")";
  if (k == "var" || k == "std")
    return v(a[0]) + "." + k + "(" + ints_str(n.ints) + ", " + (n.keepdim ? "true" : "false") + ", " + fmt_double(n.value) + ")";
  if (k == "reshape" || k == "permute" || k == "expand" || k == "flip") return v(a[0]) + "." + k + "(" + ints_str(n.ints) + ")";
  if (k == "pad") return v(a[0]) + ".pad(" + pairs_str(n.pairs) + ", " + fmt_double(n.value) + ")";
  if (k == "shrink") return v(a[0]) + ".shrink(" + pairs_str(n.pairs) + ")";
  if (k == "index") return v(a[0]) + ".index(" + slices_str(n.slices) + ")";
  if (k == "unsqueeze") return v(a[0]) + ".unsqueeze(" + std::to_string(n.ints[0]) + ")";
  if (k == "cat" || k == "stack")
    return "Tensor::" + k + "({" + list<int>(a, [](const int& x) { return v(x); }) + "}, " + std::to_string(n.ints[0]) + ")";
  if (k == "full") return "Tensor::full(" + ints_str(n.shape) + ", " + fmt_double(n.value) + ", " + dt_cpp(n.dtype) + ")";
  if (a.size() == 2) return v(a[0]) + "." + k + "(" + v(a[1]) + ")";
  return v(a[0]) + "." + k + "()";
}

}  // namespace

std::string describe(const Program& p) {
  std::ostringstream os;
  for (size_t i = 0; i < p.nodes.size(); i++) {
    const Node& n = p.nodes[i];
    os << "  v" << i << " = ";
    if (n.kind == "input") {
      os << "input " << name(n.dtype) << shape_str(n.shape) << " [";
      size_t cnt = is_float(n.dtype) ? n.fdata.size() : n.idata.size();
      for (size_t j = 0; j < cnt; j++)
        os << (j ? ", " : "") << (is_float(n.dtype) ? fmt_double(n.fdata[j]) : fmt_int(n.idata[j], n.dtype));
      os << "]";
    } else {
      os << expr(n) << "   -> " << name(n.dtype) << shape_str(n.shape);
      if (n.sched == 1) os << " [contiguous]";
      if (n.sched == 2) os << " [realize]";
    }
    os << "\n";
  }
  os << "  outputs:";
  for (int o : p.outputs) os << " v" << o;
  os << (p.corealize ? " (corealized)" : " (realized one by one)") << "\n";
  return os.str();
}

std::string to_cpp(const Program& p) {
  std::ostringstream os;
  os << "#include <tg/tg.h>\n#include <cmath>\n#include <cstdint>\n#include <iostream>\nusing namespace tg;\nusing namespace tg::indexing;\n\n"
     << "// tests/diff program, seed " << p.seed << "\nint main() {\n";
  for (size_t i = 0; i < p.nodes.size(); i++) {
    const Node& n = p.nodes[i];
    std::string id = v(static_cast<int>(i)), sh = "Shape" + ints_str(n.shape);
    if (n.kind == "input") {
      std::string vals;
      if (n.dtype == DT::F16) {
        char b[12];
        for (size_t j = 0; j < n.fdata.size(); j++) {
          std::snprintf(b, sizeof b, "0x%04x", half_bits(n.fdata[j]));
          vals += (j ? ", " : "") + std::string(b);
        }
        os << "  std::vector<uint16_t> " << id << "_bits{" << vals << "};  // float16: "
           << list<double>(n.fdata, [](const double& x) { return fmt_double(x); }) << "\n";
        os << "  Tensor " << id << " = Tensor::from_host(" << id << "_bits.data(), " << n.fdata.size() << ", " << sh << ", dtypes::float16);\n";
        continue;
      }
      static const char* ctype[] = {"bool", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "", "float", "double"};
      std::string ct = ctype[static_cast<int>(n.dtype)];
      if (n.dtype == DT::F32) vals = list<double>(n.fdata, [](const double& x) { return fmt_float(x); });
      else if (n.dtype == DT::F64) vals = list<double>(n.fdata, [](const double& x) { return fmt_double(x); });
      else vals = list<int64_t>(n.idata, [&](const int64_t& x) { return fmt_int(x, n.dtype); });
      os << "  Tensor " << id << " = Tensor(std::vector<" << ct << ">{" << vals << "}, " << sh << ");\n";
      continue;
    }
    os << "  Tensor " << id << " = " << expr(n) << ";  // " << name(n.dtype) << shape_str(n.shape) << "\n";
    if (n.sched == 1) os << "  " << id << " = " << id << ".contiguous();\n";
    if (n.sched == 2) os << "  " << id << ".realize();\n";
  }
  if (p.corealize) os << "  Tensor::corealize({" << list<int>(p.outputs, [](const int& x) { return v(x); }) << "});\n";
  for (int o : p.outputs) os << "  std::cout << \"" << v(o) << " = \" << " << v(o) << " << \"\\n\";\n";
  os << "}\n";
  return os.str();
}

uint16_t half_bits(double x) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return 0x7e00;
  if (std::isinf(x)) return sign | 0x7c00;
  double a = std::fabs(x);
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int E = e - 1;
  if (E >= -14) return static_cast<uint16_t>(sign | ((E + 15) << 10) | static_cast<int>(std::ldexp(a, -E) * 1024 - 1024));
  return static_cast<uint16_t>(sign | static_cast<int>(std::ldexp(a, 24)));  // subnormal: a multiple of 2^-24
}

double half_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

Program prune(const Program& p) {
  std::vector<bool> live(p.nodes.size(), false);
  for (int o : p.outputs) live[static_cast<size_t>(o)] = true;
  for (size_t i = p.nodes.size(); i-- > 0;)
    if (live[i])
      for (int a : p.nodes[i].args) live[static_cast<size_t>(a)] = true;
  std::vector<int> remap(p.nodes.size(), -1);
  Program q;
  q.seed = p.seed;
  q.corealize = p.corealize;
  for (size_t i = 0; i < p.nodes.size(); i++) {
    if (!live[i]) continue;
    Node n = p.nodes[i];
    for (int& a : n.args) a = remap[static_cast<size_t>(a)];
    remap[i] = static_cast<int>(q.nodes.size());
    q.nodes.push_back(std::move(n));
  }
  for (int o : p.outputs) q.outputs.push_back(remap[static_cast<size_t>(o)]);
  return q;
}

}  // namespace tgdiff
