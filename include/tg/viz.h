// VIZ, tinygrad's view of what the kernel compiler did.
//
// With VIZ=1 every kernel that a run compiles is recorded: its AST, each pass (named graph_rewrite) that
// built it, drawn before and after with the nodes its rules changed, and the source it was rendered to.
// Each kernel is appended to a trace file as it is finished (VIZ_FILE, default $TMPDIR/tg_viz_<pid>.jsonl,
// told on stderr). When the process exits, if stdout is a terminal, the trace is served as a web page
// at http://127.0.0.1:VIZ_PORT (default 8000) until Ctrl-C; otherwise the file stays for `tg-viz FILE`
// to serve later. BEAM's candidate kernels are not recorded, only the kernels the run uses.
// These calls do the same at any point of a run.
#pragma once
#include <cstddef>
#include <string>

namespace tg::viz {

size_t kernel_count();                 // kernels recorded so far in this process
void save(const std::string& path);    // writes them to a trace file (tg::IOError when it cannot)
// Serves them on 127.0.0.1:port (-1: VIZ_PORT, default 8000; 0: a free port), printing the URL, until
// SIGINT or SIGTERM. tg::Error when the port is in use.
void serve(int port = -1);

}  // namespace tg::viz
