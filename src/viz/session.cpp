#include "viz/session.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <mutex>

#include "tg/helpers.h"
#include "tg/viz.h"
#include "viz/recorder.h"
#include "viz/server.h"
#include "viz/trace_json.h"

namespace tg::viz {

namespace {
struct Session {
  std::mutex mu;
  Trace trace;
  std::string path;     // the trace file ("" until the first kernel)
  std::ofstream file;
  bool at_exit_set = false;
};
Session& session() {
  static Session* s = new Session();  // never destroyed: the at-exit step and late threads still use it
  return *s;
}

int viz_port() { return getenv("VIZ_PORT", 8000); }

// At exit: serve the trace when a person is watching (stdout is a terminal), else say where it is.
void at_exit() {
  Session& s = session();
  auto t = std::make_shared<Trace>();
  std::string path;
  bool written;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    written = s.file.is_open() && s.file.good();
    if (s.file.is_open()) s.file.close();
    *t = std::move(s.trace);
    s.trace = {};
    path = s.path;
  }
  if (t->kernels.empty()) return;
  if (!isatty(STDOUT_FILENO)) {
    if (written) std::fprintf(stderr, "VIZ: %zu kernels recorded in %s; to see them: tg-viz %s\n", t->kernels.size(), path.c_str(), path.c_str());
    return;
  }
  try {
    Server srv(t);
    int port = srv.start(viz_port());
    std::printf("VIZ: %zu kernels at http://127.0.0.1:%d (Ctrl-C to stop)\n", t->kernels.size(), port);
    std::fflush(stdout);
    srv.wait_for_interrupt();
  } catch (const std::exception& e) {  // never throw out of exit
    std::fprintf(stderr, "%s\n", e.what());
    if (written) std::fprintf(stderr, "VIZ: the trace is in %s; to see it: tg-viz %s --port N\n", path.c_str(), path.c_str());
  }
}

void add(KernelTrace k) {
  Session& s = session();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.path.empty()) {
    s.path = getenv_str("VIZ_FILE", getenv_str("TMPDIR", "/tmp") + "/tg_viz_" + std::to_string(getpid()) + ".jsonl");
    s.file.open(s.path, std::ios::binary | std::ios::trunc);
    if (s.file) {
      s.file << header_line() << '\n';
      std::fprintf(stderr, "VIZ: recording kernels to %s\n", s.path.c_str());
    } else {
      std::fprintf(stderr, "VIZ: cannot write %s (VIZ_FILE); the kernels are kept in memory only\n", s.path.c_str());
    }
    if (!s.at_exit_set) s.at_exit_set = std::atexit(at_exit) == 0;
  }
  if (s.file.is_open()) {
    s.file << to_json(k) << '\n';
    s.file.flush();  // on disk now: a crash later loses nothing of it
  }
  s.trace.kernels.push_back(std::move(k));
}
}  // namespace

struct KernelScope::Active {
  KernelRecorder rec;
  TracerScope scope;
  int exceptions;  // std::uncaught_exceptions() when the scope began
  Active(std::string name, const UOpPtr& ast) : rec(std::move(name), ast), scope(&rec), exceptions(std::uncaught_exceptions()) {}
};

KernelScope::KernelScope(std::string name, const UOpPtr& ast) {
  if (VIZ >= 1) active_ = std::make_unique<Active>(std::move(name), ast);
}

KernelScope::~KernelScope() {
  if (!active_) return;
  KernelTrace& k = active_->rec.trace();
  if (std::uncaught_exceptions() > active_->exceptions) k.error = "an error stopped the kernel's build after its last pass";
  try {
    add(std::move(k));
  } catch (const std::exception& e) {  // a destructor must not throw; losing one kernel's record is the least harm
    std::fprintf(stderr, "VIZ: could not record kernel: %s\n", e.what());
  }
}

void KernelScope::set_source(const std::string& src) {
  if (active_) active_->rec.trace().src = src;
}

Trace snapshot() {
  Session& s = session();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.trace;
}

std::string trace_path() {
  Session& s = session();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.path;
}

void reset() {
  Session& s = session();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.file.is_open()) s.file.close();
  if (!s.path.empty()) std::remove(s.path.c_str());
  s.path.clear();
  s.trace = {};
}

size_t kernel_count() {
  Session& s = session();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.trace.kernels.size();
}

void save(const std::string& path) { viz::save(snapshot(), path); }

void serve(int port) {
  Server srv(std::make_shared<const Trace>(snapshot()));
  int p = srv.start(port < 0 ? viz_port() : port);
  std::printf("VIZ: %zu kernels at http://127.0.0.1:%d (Ctrl-C to stop)\n", kernel_count(), p);
  std::fflush(stdout);
  srv.wait_for_interrupt();
}

}  // namespace tg::viz
