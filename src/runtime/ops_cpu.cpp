// "CPU": kernels rendered to C, compiled by the system C compiler into a shared object, loaded with
// dlopen, and run with their outer range split over the thread pool.
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "renderer/renderer.h"
#include "runtime/device.h"
#include "runtime/register.h"
#include "runtime/thread_pool.h"
#include "tg/error.h"
#include "tg/helpers.h"

extern char** environ;

namespace tg {

namespace {

std::string tmpdir() {
  std::string d = getenv_str("TMPDIR");
  return d.empty() ? "/tmp" : d;
}

// An anonymous, close-on-exec file: memfd when the kernel has it, else an unlinked temp file.
int anon_fd(const char* name) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd >= 0) return fd;
  std::string path = tmpdir() + "/tg_XXXXXX";
  fd = mkostemp(path.data(), O_CLOEXEC);
  TG_CHECK(fd >= 0, "CPU: cannot create a temporary file in ", tmpdir(), ": ", std::strerror(errno));
  ::unlink(path.c_str());
  return fd;
}

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() { if (fd >= 0) ::close(fd); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

void write_all(int fd, const std::string& s, const char* what) {
  for (size_t off = 0; off < s.size();) {
    ssize_t w = ::write(fd, s.data() + off, s.size() - off);
    if (w < 0 && errno == EINTR) continue;
    TG_CHECK(w > 0, "CPU: cannot write ", what, ": ", std::strerror(errno));
    off += static_cast<size_t>(w);
  }
}

std::string read_all(int fd) {
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    out.append(buf, static_cast<size_t>(r));
  }
  return out;
}

std::string numbered(const std::string& src) {
  std::ostringstream os;
  std::istringstream is(src);
  std::string line;
  for (int i = 1; std::getline(is, line); i++) os << (i < 10 ? "   " : i < 100 ? "  " : i < 1000 ? " " : "") << i << " | " << line << '\n';
  return os.str();
}

bool on_path(const std::string& exe) {
  std::string path = getenv_str("PATH");
  std::istringstream is(path);
  for (std::string dir; std::getline(is, dir, ':');)
    if (!dir.empty() && ::access((dir + "/" + exe).c_str(), X_OK) == 0) return true;
  return false;
}

// env CC (split on spaces, so "ccache clang" works), else clang when installed, else cc.
std::vector<std::string> find_cc() {
  std::vector<std::string> cc;
  std::istringstream is(getenv_str("CC"));
  for (std::string w; is >> w;) cc.push_back(w);
  if (cc.empty()) cc.push_back(on_path("clang") ? "clang" : "cc");
  return cc;
}

// -ffp-contract=off: no fused multiply-add, so results match the other backends and the references.
const std::vector<std::string> kFlags = {"-O2", "-march=native", "-ffp-contract=off", "-fno-math-errno",
                                         "-shared", "-fPIC", "-x", "c", "-"};

class CPUCompiler final : public Compiler {
 public:
  explicit CPUCompiler(std::vector<std::string> cc) : Compiler(make_key(cc)), cc_(std::move(cc)) {}

  std::string compile(const std::string& src) override {
    Fd in(anon_fd("tg_src")), err(anon_fd("tg_cc_err"));
    write_all(in.fd, src, "the kernel source");
    ::lseek(in.fd, 0, SEEK_SET);

    std::string out = tmpdir() + "/tg_kernel_XXXXXX.so";
    int ofd = mkostemps(out.data(), 3, O_CLOEXEC);
    TG_CHECK(ofd >= 0, "CPU: cannot create a temporary file in ", tmpdir(), ": ", std::strerror(errno));
    ::close(ofd);
    struct Unlink { const std::string& p; ~Unlink() { ::unlink(p.c_str()); } } unlink_out{out};

    std::vector<std::string> args = cc_;
    args.insert(args.end(), kFlags.begin(), kFlags.end());
    // -lm: kernels may call libm (expf, sinf...); don't rely on the host process having loaded it.
    args.insert(args.end(), {"-o", out, "-lm"});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    // posix_spawn, not fork: safe in a process with threads (the pool) and cheap for a big process.
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in.fd, 0);
    posix_spawn_file_actions_adddup2(&fa, err.fd, 1);
    posix_spawn_file_actions_adddup2(&fa, err.fd, 2);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    TG_CHECK(rc == 0, "CPU: cannot run the C compiler '", cc_[0], "': ", std::strerror(rc),
             " (set CC to a C compiler)");
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
      TG_CHECK(errno == EINTR, "CPU: waitpid for '", cc_[0], "' failed: ", std::strerror(errno));

    ::lseek(err.fd, 0, SEEK_SET);
    std::string msg = read_all(err.fd);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::string how = WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                          : "killed by signal " + std::to_string(WTERMSIG(status));
      TG_ERROR("CPU: compile failed (", cc_[0], ", ", how, "):\n", msg, "\nsource:\n", numbered(src));
    }
    Fd lib(::open(out.c_str(), O_RDONLY | O_CLOEXEC));
    TG_CHECK(lib.fd >= 0, "CPU: cannot read the compiled kernel ", out, ": ", std::strerror(errno));
    std::string bytes = read_all(lib.fd);
    TG_CHECK(!bytes.empty(), "CPU: the C compiler '", cc_[0], "' produced an empty library\n", msg);
    return bytes;
  }

 private:
  static std::string make_key(const std::vector<std::string>& cc) {
    std::string k = "cpu";
    for (auto& a : cc) k += " " + a;
    for (auto& a : kFlags) k += " " + a;
    return k;
  }
  std::vector<std::string> cc_;
};

// The C ABI of every CPU kernel (renderer/renderer.h).
using KernelFn = void (*)(void** bufs, const long long* vals, int gstart, int gend);

// Below this many operations a launch runs on the calling thread: waking workers costs more.
constexpr int64_t kMinParallelOps = int64_t{1} << 17;

class CPUProgram final : public Program {
 public:
  CPUProgram(const std::string& name, const std::string& lib) : name_(name) {
    // dlopen wants a path: an in-memory file avoids touching the disk. The fd (or temp file) is kept
    // open until dlclose, because glibc identifies loaded libraries by path name, and a reused fd
    // number would otherwise hand back the previous kernel's library.
    int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
    std::string path;
    if (fd >= 0) {
      path = "/proc/self/fd/" + std::to_string(fd);
      fd_ = fd;
    } else {
      tmp_ = tmpdir() + "/tg_lib_XXXXXX.so";
      fd = mkostemps(tmp_.data(), 3, O_CLOEXEC);
      TG_CHECK(fd >= 0, "CPU: cannot create a temporary file in ", tmpdir(), ": ", std::strerror(errno));
      fd_ = fd;
      path = tmp_;
    }
    try {
      write_all(fd_, lib, "the kernel library");
    } catch (...) { release(); throw; }
    handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* e = ::dlerror();
      release();
      TG_ERROR("CPU: cannot load the compiled kernel '", name, "': ", e ? e : "unknown dlopen error");
    }
    ::dlerror();
    void* sym = ::dlsym(handle_, name.c_str());
    if (!sym) {
      const char* e = ::dlerror();
      std::string why = e ? e : "symbol is null";
      release();
      TG_ERROR("CPU: kernel function '", name, "' not found in its compiled library: ", why);
    }
    static_assert(sizeof(void*) == sizeof(KernelFn));
    std::memcpy(&fn_, &sym, sizeof fn_);  // object pointer -> function pointer, as POSIX allows
  }
  ~CPUProgram() override { release(); }

  double operator()(const std::vector<void*>& bufs, const std::vector<int64_t>& vals,
                    const std::vector<int64_t>& global_size, const std::vector<int64_t>&, bool wait) override {
    std::vector<void*> b(bufs);
    std::vector<long long> v(vals.begin(), vals.end());
    int64_t n = global_size.empty() ? 1 : global_size[0];
    TG_CHECK(n >= 0 && n <= INT32_MAX, "CPU: kernel '", name_, "' global size ", n, " does not fit the int ABI");
    auto t0 = std::chrono::steady_clock::now();
    KernelFn fn = fn_;
    void** bp = b.data();
    const long long* vp = v.data();
    bool small = est_ops_ > 0 && est_ops_ < kMinParallelOps;
    if (n < 2 || small) {
      fn(bp, vp, 0, static_cast<int>(n));
    } else {
      parallel_for(n, [=](int64_t s, int64_t e) { fn(bp, vp, static_cast<int>(s), static_cast<int>(e)); });
    }
    if (!wait) return 0;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  void release() {
    if (handle_) ::dlclose(handle_);
    handle_ = nullptr;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
  }
  std::string name_;
  void* handle_ = nullptr;
  int fd_ = -1;
  std::string tmp_;
  KernelFn fn_ = nullptr;
};

}  // namespace

void register_cpu_backend() {
  add_builtin_backend("CPU", [](const std::string& name) {
    return std::make_unique<Compiled>(
        name, make_host_allocator(name), std::make_unique<CPUCompiler>(find_cc()), make_cpu_renderer(),
        [](const std::string& fn, const std::string& lib) { return std::make_unique<CPUProgram>(fn, lib); });
  });
}

}  // namespace tg
