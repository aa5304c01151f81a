// Traces as JSON (nlohmann_json), for trace files and for the page.
//
// A trace file is JSON Lines: a header line {"tg_viz": 1} and then one line per kernel, so a run
// appends each kernel as it is finished (a crash loses at most the kernel being built) and a file
// whose last line was cut off still loads. A kernel is
//   {"name": "E_4", "ast": 3, "src": "...", "error": "",
//    "nodes": [[op, dtype, arg, [src ids]], ...],
//    "passes": [{"name": "simplify", "before": 3, "after": 5, "changes": [[from, to, rule], ...]}, ...]}
// Ids are checked when read (sources before users, roots and changes within the table), so the page
// never sees a dangling id: a bad file is a tg::Error that says where it is wrong.
#pragma once
#include <string>

#include "viz/trace.h"

namespace tg::viz {

std::string header_line();                          // the first line of a trace file (no newline)
std::string to_json(const KernelTrace& k);          // one line (no newline)
KernelTrace kernel_from_json(const std::string& s);  // tg::Error when `s` is not a valid kernel

// {"kernels": [{"name", "passes": [names], "nodes": count, "has_src", "error"}, ...]}: the kernel
// list the page shows first, small even when the kernels are large.
std::string summary_json(const Trace& t);
std::string to_json(const Trace& t);                // {"kernels": [kernel, ...]}: the whole trace

void save(const Trace& t, const std::string& path);  // tg::IOError when it cannot be written
// tg::IOError when `path` cannot be read, tg::Error when it is not a trace. A last line cut off
// (the run died while writing it) is skipped; `skipped`, when given, counts it.
Trace load(const std::string& path, int* skipped = nullptr);

}  // namespace tg::viz
