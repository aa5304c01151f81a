#include "viz/trace_json.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "tg/error.h"

namespace tg::viz {

using nlohmann::json;

namespace {
constexpr int kFormat = 1;  // the "tg_viz" header's value; bump it when the layout changes

json kernel_json(const KernelTrace& k) {
  json nodes = json::array();
  for (const Node& n : k.nodes) nodes.push_back(json::array({n.op, n.dtype, n.arg, n.src}));
  json passes = json::array();
  for (const Pass& p : k.passes) {
    json changes = json::array();
    for (const Change& c : p.changes) changes.push_back(json::array({c.from, c.to, c.rule}));
    passes.push_back({{"name", p.name}, {"before", p.before}, {"after", p.after}, {"changes", std::move(changes)}});
  }
  return {{"name", k.name}, {"ast", k.ast}, {"src", k.src}, {"error", k.error}, {"nodes", std::move(nodes)},
          {"passes", std::move(passes)}};
}

// The JSON of one kernel, checked: every id in range, sources before users.
KernelTrace kernel_of(const json& j) {
  TG_CHECK(j.is_object(), "not a kernel (a JSON object)");
  KernelTrace k;
  k.name = j.at("name").get<std::string>();
  k.src = j.value("src", "");
  k.error = j.value("error", "");
  for (const json& n : j.at("nodes")) {
    TG_CHECK(n.is_array() && n.size() == 4, "kernel ", k.name, ": node ", k.nodes.size(), " is not [op, dtype, arg, [srcs]]");
    Node node{n[0].get<std::string>(), n[1].get<std::string>(), n[2].get<std::string>(), n[3].get<std::vector<int>>()};
    for (int s : node.src)
      TG_CHECK(s >= 0 && s < static_cast<int>(k.nodes.size()), "kernel ", k.name, ": node ", k.nodes.size(), " has source ", s,
               ", which is not an earlier node");
    k.nodes.push_back(std::move(node));
  }
  int n = static_cast<int>(k.nodes.size());
  auto check_id = [&](int id, const std::string& what) {
    TG_CHECK(id >= 0 && id < n, "kernel ", k.name, ": ", what, " is node ", id, ", but there are ", n, " nodes");
  };
  k.ast = j.at("ast").get<int>();
  check_id(k.ast, "the AST");
  for (const json& pj : j.at("passes")) {
    Pass p{pj.at("name").get<std::string>(), pj.at("before").get<int>(), pj.at("after").get<int>(), {}};
    check_id(p.before, "pass " + p.name + "'s root before");
    check_id(p.after, "pass " + p.name + "'s root after");
    for (const json& c : pj.at("changes")) {
      TG_CHECK(c.is_array() && c.size() == 3, "kernel ", k.name, ": a change of pass ", p.name, " is not [from, to, rule]");
      Change ch{c[0].get<int>(), c[1].get<int>(), c[2].get<std::string>()};
      check_id(ch.from, "a change of pass " + p.name);
      check_id(ch.to, "a change of pass " + p.name);
      p.changes.push_back(std::move(ch));
    }
    k.passes.push_back(std::move(p));
  }
  return k;
}
}  // namespace

std::string header_line() { return json{{"tg_viz", kFormat}}.dump(); }

// Node labels hold whatever an arg prints; invalid UTF-8 becomes U+FFFD instead of failing the dump.
std::string to_json(const KernelTrace& k) { return kernel_json(k).dump(-1, ' ', false, json::error_handler_t::replace); }

KernelTrace kernel_from_json(const std::string& s) {
  try {
    return kernel_of(json::parse(s));
  } catch (const json::exception& e) {  // a missing key, a wrong type, not JSON at all
    TG_ERROR("not a VIZ kernel: ", e.what());
  }
}

std::string summary_json(const Trace& t) {
  json ks = json::array();
  for (const KernelTrace& k : t.kernels) {
    json passes = json::array();
    for (const Pass& p : k.passes) passes.push_back(p.name);
    ks.push_back({{"name", k.name}, {"passes", std::move(passes)}, {"nodes", k.nodes.size()}, {"has_src", !k.src.empty()},
                  {"error", k.error}});
  }
  return json{{"kernels", std::move(ks)}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string to_json(const Trace& t) {
  json ks = json::array();
  for (const KernelTrace& k : t.kernels) ks.push_back(kernel_json(k));
  return json{{"kernels", std::move(ks)}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

void save(const Trace& t, const std::string& path) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  TG_CHECK_AS(IOError, f.good(), "VIZ: cannot write the trace file ", path);
  f << header_line() << '\n';
  for (const KernelTrace& k : t.kernels) f << to_json(k) << '\n';
  f.close();
  TG_CHECK_AS(IOError, f.good(), "VIZ: writing the trace file ", path, " failed");
}

Trace load(const std::string& path, int* skipped) {
  std::ifstream f(path, std::ios::binary);
  TG_CHECK_AS(IOError, f.good(), "VIZ: cannot read the trace file ", path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(f, line);)
    if (!line.empty()) lines.push_back(std::move(line));
  TG_CHECK(!lines.empty(), "VIZ: ", path, " is empty, not a trace file");
  json head = json::parse(lines[0], nullptr, false);
  TG_CHECK(!head.is_discarded() && head.is_object() && head.contains("tg_viz"), "VIZ: ", path,
           " is not a trace file (its first line is not {\"tg_viz\": ", kFormat, "})");
  TG_CHECK(head["tg_viz"] == kFormat, "VIZ: ", path, " is a trace of format ", head["tg_viz"].dump(), "; this program reads format ",
           kFormat);
  Trace t;
  if (skipped) *skipped = 0;
  for (size_t i = 1; i < lines.size(); i++) {
    bool last = i + 1 == lines.size();
    if (last && !json::accept(lines[i])) {  // cut off while being written: the kernels before it are whole
      if (skipped) *skipped = 1;
      break;
    }
    try {
      t.kernels.push_back(kernel_from_json(lines[i]));
    } catch (const Error& e) {
      TG_ERROR("VIZ: ", path, " line ", i + 1, ": ", e.what());
    }
  }
  return t;
}

}  // namespace tg::viz
