#include "viz/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include "tg/error.h"
#include "viz/assets.h"
#include "viz/trace_json.h"

namespace tg::viz {

struct Server::Impl {
  std::shared_ptr<const Trace> trace;
  httplib::Server http;
  std::thread thread;
  std::atomic<bool> done{false};  // listen_after_bind returned
};

namespace {
// With the charset, not exactly "application/json", which cpp-httplib would compress with brotli at its
// slowest level (200 ms for a 1000-node kernel) for a browser on this machine.
constexpr const char* kJson = "application/json; charset=utf-8";

void routes(httplib::Server& http, const std::shared_ptr<const Trace>& trace) {
  http.Get("/api/kernels", [trace](const httplib::Request&, httplib::Response& res) {
    res.set_content(summary_json(*trace), kJson);
  });
  http.Get(R"(/api/kernel/(\d+))", [trace](const httplib::Request& req, httplib::Response& res) {
    size_t i = std::stoul(req.matches[1].str());
    if (i >= trace->kernels.size()) {
      res.status = 404;
      res.set_content("VIZ: no kernel " + std::to_string(i) + " (the trace has " + std::to_string(trace->kernels.size()) + ")",
                      "text/plain");
      return;
    }
    res.set_content(to_json(trace->kernels[i]), kJson);
  });
  http.Get("/trace.json", [trace](const httplib::Request&, httplib::Response& res) { res.set_content(to_json(*trace), kJson); });
  http.Get(R"(/[^/]*)", [](const httplib::Request& req, httplib::Response& res) {
    const Asset* a = find_asset(req.path == "/" ? "/index.html" : req.path);
    if (!a) {
      res.status = 404;
      res.set_content("VIZ: no file " + req.path, "text/plain");
      return;
    }
    res.set_content(a->data.data(), a->data.size(), std::string(a->mime).c_str());
  });
  // every response is computed from the trace: the browser must not keep an older trace's
  http.set_post_routing_handler([](const httplib::Request&, httplib::Response& res) { res.set_header("Cache-Control", "no-store"); });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string msg = "VIZ: internal error";
    try { std::rethrow_exception(ep); } catch (const std::exception& e) { msg += std::string(": ") + e.what(); } catch (...) {}
    res.status = 500;
    res.set_content(msg, "text/plain");
  });
}

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted = true; }
}  // namespace

Server::Server(std::shared_ptr<const Trace> trace) : impl_(std::make_unique<Impl>()) {
  impl_->trace = std::move(trace);
  routes(impl_->http, impl_->trace);
  // httplib's default socket options add SO_REUSEPORT, with which a second server would share a port
  // that is in use instead of being told so.
  impl_->http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  impl_->http.new_task_queue = [] { return new httplib::ThreadPool(8); };  // a browser opens up to 6 connections
  impl_->http.set_keep_alive_timeout(2);
  impl_->http.set_tcp_nodelay(true);  // without it a response's last segment waits for the browser's delayed ACK
}

Server::~Server() { stop(); }

int Server::start(int port) {
  TG_CHECK(!impl_->thread.joinable(), "VIZ: the server is already started");
  TG_CHECK(port >= 0 && port <= 65535, "VIZ: port ", port, " is not a TCP port (0..65535)");
  if (port == 0) {
    port = impl_->http.bind_to_any_port("127.0.0.1");
    TG_CHECK(port > 0, "VIZ: cannot listen on 127.0.0.1: no free port");
  } else {
    TG_CHECK(impl_->http.bind_to_port("127.0.0.1", port), "VIZ: cannot listen on 127.0.0.1:", port,
             " (in use by another program? choose another port with VIZ_PORT or --port)");
  }
  // bound and listening already: connections made from here on queue until the thread accepts them
  impl_->done = false;
  impl_->thread = std::thread([this] {
    impl_->http.listen_after_bind();
    impl_->done = true;
  });
  return port;
}

void Server::stop() {
  if (!impl_->thread.joinable()) return;
  // httplib's stop() does nothing before its loop runs, which would then never end: wait for the loop
  while (!impl_->http.is_running() && !impl_->done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->http.stop();
  impl_->thread.join();
}

void Server::wait_for_interrupt() {
  struct sigaction sa {}, old_int {}, old_term {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  g_interrupted = false;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  // the handler only sets a flag (httplib's stop() is not async-signal-safe): poll it
  while (!g_interrupted && !impl_->done) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  stop();
}

}  // namespace tg::viz
