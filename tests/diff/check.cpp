#include "check.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tgdiff {

namespace {

using nlohmann::json;

double val(const json& j) {
  if (j.is_null()) return NAN;
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    return s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY;
  }
  return j.get<double>();
}

// Margins beyond the NumPy envelope: a couple of units of roundoff and one subnormal step.
double rtol_of(DT d) { return d == DT::F16 ? 0x1p-10 : d == DT::F32 ? 0x1p-22 : 0x1p-51; }
double atol_of(DT d) { return d == DT::F16 ? 0x1p-24 : d == DT::F32 ? 0x1p-149 : 0x1p-1074; }

bool float_ok(double got, double lo, double hi, int nan_runs, DT d) {
  if (std::isnan(got)) return nan_runs > 0;
  if (std::isnan(lo)) return false;  // every run gave NaN
  // NaN in some runs only: roundoff alone moves this element across an overflow (inf - inf) or 0 * inf.
  // Such an element is ill-conditioned past what a few runs can bound (a float32 mean of +-2^31 and small
  // ints, squared, then exp: every summation order gives another finite value), so any value passes.
  if (nan_runs > 0) return true;
  if (std::isinf(got)) return got > 0 ? hi == INFINITY : lo == -INFINITY;
  double m = atol_of(d) + rtol_of(d) * std::max(std::fabs(lo), std::fabs(hi)) + (hi - lo);
  return got >= lo - m && got <= hi + m;
}

std::string fmt(const json& j) {
  if (j.is_null()) return "nan";
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number_float()) {
    char b[40];
    std::snprintf(b, sizeof b, "%.9g", j.get<double>());
    return b;
  }
  return j.dump();
}
std::string values(const json& arr, size_t limit = 48) {
  std::string r = "[";
  for (size_t i = 0; i < arr.size() && i < limit; i++) r += (i ? ", " : "") + fmt(arr[i]);
  if (arr.size() > limit) r += ", ... (" + std::to_string(arr.size()) + " in all)";
  return r + "]";
}

}  // namespace

Verdict compare(const Program& p, const json& ref, const json& got) {
  std::ostringstream detail;
  Verdict v;
  for (size_t j = 0; j < p.outputs.size(); j++) {
    const Node& n = p.nodes[static_cast<size_t>(p.outputs[j])];
    const json &r = ref["outputs"][j], &g = got["outputs"][j];
    std::string what = "v" + std::to_string(p.outputs[j]) + " (" + name(n.dtype) + shape_str(n.shape) + ")";
    std::ostringstream bad;
    size_t nbad = 0, shown = 0;
    if (g["dtype"].get<std::string>() != name(n.dtype) || g["shape"].get<Shape>() != n.shape) {
      bad << "  tg gives " << g["dtype"].get<std::string>() << shape_str(g["shape"].get<Shape>()) << ", expected " << name(n.dtype)
          << shape_str(n.shape) << "\n";
      nbad = 1;
    } else {
      const json &ex = r["exact"], &lo = r["lo"], &hi = r["hi"], &nan = r["nan"], &gd = g["data"];
      for (size_t i = 0; i < gd.size(); i++) {
        bool ok;
        if (is_float(n.dtype)) ok = float_ok(val(gd[i]), val(lo[i]), val(hi[i]), nan[i].get<int>(), n.dtype);
        else ok = gd[i].get<int64_t>() >= lo[i].get<int64_t>() && gd[i].get<int64_t>() <= hi[i].get<int64_t>();
        if (ok) continue;
        if (nbad++ < 6 && shown++ < 6) {
          bad << "  [" << i << "] got " << fmt(gd[i]) << ", expected " << fmt(ex[i]);
          if (lo[i] != hi[i] || nan[i].get<int>() > 0) bad << " (NumPy envelope [" << fmt(lo[i]) << ", " << fmt(hi[i]) << "], NaN in " << nan[i].get<int>() << " runs)";
          bad << "\n";
        }
      }
    }
    detail << "output " << what << ":\n  expected " << values(r["exact"]) << "\n  got      " << values(g["data"]) << "\n" << bad.str();
    if (nbad && v.kind == Verdict::Pass) {
      v.kind = Verdict::Mismatch;
      v.summary = "mismatch in output " + what + ": " + std::to_string(nbad) + " of " + std::to_string(g["data"].size()) + " elements differ";
      if (g["dtype"].get<std::string>() != name(n.dtype) || g["shape"].get<Shape>() != n.shape)
        v.summary = "mismatch in output " + what + ": tg gives " + g["dtype"].get<std::string>() + shape_str(g["shape"].get<Shape>());
    }
  }
  v.detail = detail.str();
  return v;
}

const char* kind_name(Verdict::Kind k) {
  switch (k) {
    case Verdict::Pass: return "pass";
    case Verdict::Mismatch: return "mismatch";
    case Verdict::Error: return "error";
    case Verdict::Crash: return "crash";
    case Verdict::Timeout: return "timeout";
    case Verdict::RefError: return "reference error";
  }
  return "?";
}

Verdict Checker::check(const Program& p) {
  json ref_reply = ref.call({{"program", to_json(p)}, {"runs", runs}});
  if (!ref_reply["ok"].get<bool>()) return {Verdict::RefError, "NumPy: " + ref_reply["error"].get<std::string>(), ""};
  json got = sandbox.run(p);
  if (got.contains("crash")) return {Verdict::Crash, "tg crashed: " + got["crash"].get<std::string>(), ""};
  if (got.contains("timeout")) return {Verdict::Timeout, "tg hung: " + got["timeout"].get<std::string>(), ""};
  if (!got["ok"].get<bool>()) return {Verdict::Error, "tg threw: " + got["error"].get<std::string>(), ""};
  return compare(p, ref_reply, got);
}

Program Checker::shrink(const Program& start, Verdict::Kind kind, int budget) {
  Program p = prune(start);
  auto fails = [&](const Program& q) {
    if (budget-- <= 0) return false;
    return check(q).kind == kind;
  };
  // NumPy's exact value of node `id` as an input node (the same numbers tg would read there)
  auto materialize = [&](const Program& q, int id) -> std::optional<Node> {
    Program one = q;
    one.outputs = {id};
    one = prune(one);
    json r = ref.call({{"program", to_json(one)}, {"runs", 0}});
    if (!r["ok"].get<bool>()) return std::nullopt;
    const Node& src = q.nodes[static_cast<size_t>(id)];
    Node in;
    in.kind = "input";
    in.dtype = in.cdtype = src.dtype;
    in.shape = src.shape;
    for (const json& x : r["outputs"][0]["exact"]) {
      if (is_float(src.dtype)) in.fdata.push_back(val(x));
      else in.idata.push_back(x.get<int64_t>());
    }
    return in;
  };
  for (bool progress = true; progress && budget > 0;) {
    progress = false;
    // one output, then the earliest value that still fails as the output
    for (size_t j = 0; j < p.outputs.size() && !progress && p.outputs.size() > 1; j++) {
      Program q = p;
      q.outputs = {p.outputs[j]};
      if (fails(prune(q))) { p = prune(q); progress = true; }
    }
    for (int id = 0; id < p.outputs[0] && !progress && p.outputs.size() == 1; id++) {
      if (p.nodes[static_cast<size_t>(id)].kind == "input") continue;
      Program q = p;
      q.outputs = {id};
      if (fails(prune(q))) { p = prune(q); progress = true; }
    }
    // bypass a node whose argument has its shape and dtype; replace a computed value by an input
    for (size_t id = 0; id < p.nodes.size() && !progress; id++) {
      const Node& n = p.nodes[id];
      if (n.kind == "input") continue;
      for (int a : n.args) {
        const Node& an = p.nodes[static_cast<size_t>(a)];
        if (an.shape != n.shape || an.dtype != n.dtype) continue;
        Program q = p;
        for (Node& m : q.nodes)
          for (int& x : m.args) if (x == static_cast<int>(id)) x = a;
        for (int& o : q.outputs) if (o == static_cast<int>(id)) o = a;
        if (fails(prune(q))) { p = prune(q); progress = true; break; }
      }
    }
    for (size_t id = 0; id < p.nodes.size() && !progress; id++) {
      const Node& n = p.nodes[id];
      if (n.kind == "input" || n.args.empty()) continue;
      if (std::find(p.outputs.begin(), p.outputs.end(), static_cast<int>(id)) != p.outputs.end()) continue;
      std::optional<Node> in = materialize(p, static_cast<int>(id));
      if (!in) continue;
      Program q = p;
      q.nodes[id] = *in;
      if (fails(prune(q))) { p = prune(q); progress = true; }
    }
    // the schedule: drop forced realizations
    for (size_t id = 0; id < p.nodes.size() && !progress; id++) {
      if (p.nodes[id].sched == 0) continue;
      Program q = p;
      q.nodes[id].sched = 0;
      if (fails(q)) { p = q; progress = true; }
    }
    if (!progress && p.corealize) {
      Program q = p;
      q.corealize = false;
      if (fails(q)) { p = q; progress = true; }
    }
  }
  // a failure that depends on chance (undefined behaviour in tg, uninitialized memory) may not show
  // again in the shrunk program: then the whole program is the repro
  if (check(p).kind != kind) return prune(start);
  return p;
}

std::string report(const Program& p, const Verdict& v) {
  std::ostringstream os;
  os << "seed " << p.seed << ": " << v.summary << "\nprogram:\n" << describe(p);
  if (!v.detail.empty()) os << v.detail;
  return os.str();
}

}  // namespace tgdiff
