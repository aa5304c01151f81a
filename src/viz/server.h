// The VIZ web server: one trace and the page that shows it, over HTTP on 127.0.0.1 only (cpp-httplib).
//
//   GET /                the page; /viz.js, /viz.css, /layout.js, /dagre.min.js: its files (viz/assets.h)
//   GET /api/kernels     the kernel list: names, pass names, sizes (trace_json.h's summary_json)
//   GET /api/kernel/N    kernel N whole: node table, passes, source (one kernel at a time, so a large
//                        trace does not load at once)
//   GET /trace.json      the whole trace as one JSON document
// Everything it serves is read-only; requests are answered by a small pool of threads.
#pragma once
#include <memory>

#include "viz/trace.h"

namespace tg::viz {

class Server {
 public:
  explicit Server(std::shared_ptr<const Trace> trace);
  ~Server();  // stops
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Listens on 127.0.0.1:port (0: a free port the OS picks) and serves from a background thread; returns
  // the port. tg::Error when the port is in use or cannot be bound.
  int start(int port);
  void stop();  // waits for the serving thread; a no-op when not started
  // Blocks until SIGINT or SIGTERM (Ctrl-C), then stops; the signals' previous handlers are restored.
  void wait_for_interrupt();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tg::viz
