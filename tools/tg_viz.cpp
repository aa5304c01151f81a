// tg-viz TRACE [--port N]: serves a trace file that a VIZ=1 run wrote (tg/viz.h) as VIZ's web page on
// http://127.0.0.1:N (default VIZ_PORT, else 8000; 0: a free port), printing the URL, until Ctrl-C.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "tg/error.h"
#include "tg/helpers.h"
#include "viz/server.h"
#include "viz/trace_json.h"

namespace {
constexpr const char* kUsage = "usage: tg-viz TRACE [--port N]   (N: 0 picks a free port; default VIZ_PORT, else 8000)\n";

int parse_port(const std::string& s) {
  char* end = nullptr;
  long p = std::strtol(s.c_str(), &end, 10);
  TG_CHECK(!s.empty() && *end == 0 && p >= 0 && p <= 65535, "tg-viz: --port ", s, " is not a port number (0..65535)");
  return static_cast<int>(p);
}
}  // namespace

int main(int argc, char** argv) {
  try {
    std::string path;
    int port = tg::getenv("VIZ_PORT", 8000);
    for (int i = 1; i < argc; i++) {
      std::string a = argv[i];
      if (a == "-h" || a == "--help") {
        std::printf("%s", kUsage);
        return 0;
      }
      if (a == "--port" && i + 1 < argc) port = parse_port(argv[++i]);
      else if (a.rfind("--port=", 0) == 0) port = parse_port(a.substr(7));
      else if (path.empty() && a.rfind("-", 0) != 0) path = a;
      else TG_ERROR("tg-viz: unexpected argument ", a);
    }
    TG_CHECK(!path.empty(), "tg-viz: which trace? (a VIZ=1 run names its file on stderr)");
    int skipped = 0;
    auto trace = std::make_shared<const tg::viz::Trace>(tg::viz::load(path, &skipped));
    if (skipped) std::fprintf(stderr, "tg-viz: the last kernel of %s was cut off (the run died while writing it); showing the others\n", path.c_str());
    tg::viz::Server srv(trace);
    int p = srv.start(port);
    std::printf("VIZ: %zu kernels at http://127.0.0.1:%d (Ctrl-C to stop)\n", trace->kernels.size(), p);
    std::fflush(stdout);
    srv.wait_for_interrupt();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n%s", e.what(), kUsage);
    return 1;
  }
}
