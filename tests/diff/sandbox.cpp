#include "sandbox.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "run_tg.h"

namespace tgdiff {

namespace {

// Messages are "<length>\n<bytes>".
bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}
bool send_msg(int fd, const std::string& s) { return write_all(fd, std::to_string(s.size()) + "\n" + s); }

// Reads one message; false on EOF/error or when `deadline` (if set) passes first (then *timed_out).
bool recv_msg(int fd, std::string& out, const std::chrono::steady_clock::time_point* deadline, bool* timed_out) {
  std::string buf;
  size_t want = std::string::npos, header = 0;
  char tmp[65536];
  for (;;) {
    if (want != std::string::npos && buf.size() >= header + want) {
      out = buf.substr(header, want);
      return true;
    }
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) { *timed_out = true; return false; }
      pollfd pf{fd, POLLIN, 0};
      int r = ::poll(&pf, 1, static_cast<int>(left));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) { *timed_out = true; return false; }
    }
    ssize_t n = ::read(fd, tmp, sizeof tmp);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buf.append(tmp, static_cast<size_t>(n));
    if (want == std::string::npos) {
      size_t nl = buf.find('\n');
      if (nl != std::string::npos) { want = std::stoull(buf.substr(0, nl)); header = nl + 1; }
    }
  }
}

[[noreturn]] void child_main(int in, int out) {
  for (;;) {
    std::string req;
    if (!recv_msg(in, req, nullptr, nullptr)) _exit(0);
    nlohmann::json rep;
    try {
      rep = run_on_tg(from_json(nlohmann::json::parse(req)));
    } catch (const std::exception& e) {
      rep = {{"ok", false}, {"error", e.what()}};
    }
    if (!send_msg(out, rep.dump())) _exit(0);
  }
}

}  // namespace

Sandbox::Sandbox(int timeout_s, std::vector<int> close_in_child, bool reuse)
    : timeout_s_(timeout_s), reuse_(reuse), close_in_child_(std::move(close_in_child)) {
  signal(SIGPIPE, SIG_IGN);  // a dead child shows as a failed write, not as our death
}
Sandbox::~Sandbox() { stop(); }

void Sandbox::start() {
  int a[2], b[2];
  if (pipe(a) != 0 || pipe(b) != 0) throw std::runtime_error("sandbox: pipe failed");
  fflush(nullptr);  // no buffered output duplicated into the child
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("sandbox: fork failed");
  if (pid == 0) {
    close(a[1]);
    close(b[0]);
    for (int fd : close_in_child_) close(fd);
    child_main(a[0], b[1]);
  }
  close(a[0]);
  close(b[1]);
  pid_ = pid;
  to_ = a[1];
  from_ = b[0];
}

void Sandbox::stop() {
  if (pid_ <= 0) return;
  close(to_);
  close(from_);
  kill(pid_, SIGKILL);
  int st;
  waitpid(pid_, &st, 0);
  pid_ = -1;
}

nlohmann::json Sandbox::run(const Program& p) {
  if (pid_ <= 0) start();
  std::string rep;
  bool timed_out = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s_);
  if (send_msg(to_, to_json(p).dump()) && recv_msg(from_, rep, &deadline, &timed_out)) {
    if (!reuse_) stop();
    return nlohmann::json::parse(rep);
  }
  if (timed_out) {
    stop();
    return {{"ok", false}, {"timeout", "no answer within " + std::to_string(timeout_s_) + " s"}};
  }
  // the child died: collect how
  close(to_);
  close(from_);
  int st = 0;
  waitpid(pid_, &st, 0);
  pid_ = -1;
  std::string how = WIFSIGNALED(st) ? "killed by signal " + std::to_string(WTERMSIG(st)) + " (" + strsignal(WTERMSIG(st)) + ")"
                                    : "exited with status " + std::to_string(WEXITSTATUS(st));
  return {{"ok", false}, {"crash", how}};
}

}  // namespace tgdiff
