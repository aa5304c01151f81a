// "CPU": kernels rendered to C and compiled by the system C compiler into a shared object loaded with
// dlopen, or (builds with LLVM, the default there) rendered to LLVM IR and compiled and loaded in process
// (runtime/llvm_jit.h); either way run with their outer range split over the thread pool.
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "renderer/renderer.h"
#include "runtime/device.h"
#ifdef TG_HAVE_LLVM
#include "runtime/llvm_jit.h"
#endif
#include "runtime/ops_cpu.h"
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
  TG_CHECK_AS(RuntimeError, fd >= 0, "CPU: cannot create a temporary file in ", tmpdir(), ": ", std::strerror(errno));
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
    TG_CHECK_AS(RuntimeError, w > 0, "CPU: cannot write ", what, ": ", std::strerror(errno));
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

// The file `exe` names: itself when it has a '/', else the first match on PATH; empty when none.
std::string resolve(const std::string& exe) {
  if (exe.find('/') != std::string::npos) return ::access(exe.c_str(), X_OK) == 0 ? exe : "";
  std::istringstream is(getenv_str("PATH"));
  for (std::string dir; std::getline(is, dir, ':');)
    if (!dir.empty() && ::access((dir + "/" + exe).c_str(), X_OK) == 0) return dir + "/" + exe;
  return "";
}

// -ffp-contract=off: no fused multiply-add, so results match the other backends and the references.
// -fwrapv: signed integer arithmetic wraps, as the README's semantics (and constant folding) say.
std::vector<std::string> flags(const std::string& target) {
  return {"-O2", "-march=" + target, "-ffp-contract=off", "-fno-math-errno", "-fwrapv", "-shared", "-fPIC", "-x", "c", "-"};
}

}  // namespace

CPUOptions CPUOptions::from_env() {
  CPUOptions o;
  std::istringstream is(getenv_str("CC"));
  for (std::string w; is >> w;) o.cc.push_back(w);
  if (o.cc.empty()) o.cc.push_back(resolve("clang").empty() ? "cc" : "clang");
  if (std::string t = getenv_str("CPU_TARGET"); !t.empty()) o.target = t;
  std::string c = getenv_str("CPU_COMPILER");
  if (c.empty() && getenv("LLVM", 0) != 0) c = "llvm";  // tinygrad's knob
  if (c == "llvm") o.compiler = KernelCompiler::LLVM;
  else if (c == "clang" || c == "cc") o.compiler = KernelCompiler::Clang;
  else TG_CHECK(c.empty(), "CPU_COMPILER=", c, ": expected clang or llvm");
  return o;
}

namespace {

// The tiles for x86 without AVX (SSE2: 16 registers of 16 bytes) are AVX-512's, spilled: SSE has no
// broadcast load, so a tile of 4-float vectors spends as much on broadcasts as on multiplies, while
// LLVM splits a 16-float vector into 4 registers that share each broadcast. Measured on Zen 4 with
// CPU_TARGET=x86-64, beautiful_mnist's 11 convs: 772 ms with these tiles, 1145 with AVX2's, 1442 with
// tiles sized for SSE's registers.
constexpr VectorUnit kSSETiles = kAVX512;

// The vector registers of a CPU with these features (x86: zmm0-31 or ymm0-15; AArch64: 32 NEON), for
// both kernel compilers: the C compiler's predefined macros and LLVM's target features say which.
VectorUnit vector_unit_of(bool avx512f, bool avx, bool neon) {
  if (avx512f) return kAVX512;
  if (avx) return {32, 16};
  if (neon) return {16, 32};
  return kSSETiles;
}

class CPUCompiler final : public Compiler {
 public:
  explicit CPUCompiler(const CPUOptions& o)
      : Compiler(make_key(o)), cc_(o.cc), flags_(flags(o.target)), portable_half_(o.portable_half) {}

  std::string compile(const std::string& src) override {
    Fd in(anon_fd("tg_src")), err(anon_fd("tg_cc_err"));
    write_all(in.fd, src, "the kernel source");
    ::lseek(in.fd, 0, SEEK_SET);

    std::string out = tmpdir() + "/tg_kernel_XXXXXX.so";
    int ofd = mkostemps(out.data(), 3, O_CLOEXEC);
    TG_CHECK_AS(RuntimeError, ofd >= 0, "CPU: cannot create a temporary file in ", tmpdir(), ": ", std::strerror(errno));
    ::close(ofd);
    struct Unlink { const std::string& p; ~Unlink() { ::unlink(p.c_str()); } } unlink_out{out};

    std::vector<std::string> args = cc_;
    args.insert(args.end(), flags_.begin(), flags_.end());
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
    TG_CHECK_AS(RuntimeError, rc == 0, "CPU: cannot run the C compiler '", cc_[0], "': ", std::strerror(rc),
             " (set CC to a C compiler)");
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
      TG_CHECK_AS(RuntimeError, errno == EINTR, "CPU: waitpid for '", cc_[0], "' failed: ", std::strerror(errno));

    ::lseek(err.fd, 0, SEEK_SET);
    std::string msg = read_all(err.fd);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::string how = WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                          : "killed by signal " + std::to_string(WTERMSIG(status));
      TG_ERROR_AS(RuntimeError, "CPU: compile failed (", cc_[0], ", ", how, "):\n", msg, "\nsource:\n", numbered(src));
    }
    Fd lib(::open(out.c_str(), O_RDONLY | O_CLOEXEC));
    TG_CHECK_AS(RuntimeError, lib.fd >= 0, "CPU: cannot read the compiled kernel ", out, ": ", std::strerror(errno));
    std::string bytes = read_all(lib.fd);
    TG_CHECK_AS(RuntimeError, !bytes.empty(), "CPU: the C compiler '", cc_[0], "' produced an empty library\n", msg);
    return bytes;
  }

  // Whether _Float16 converts correctly for this compiler and target; found out once, by the probe.
  bool native_half() {
    std::call_once(probed_, [&] { native_half_ = !portable_half_ && probe_half(); });
    return native_half_;
  }
  // The target's vector registers; found out once, by the probe.
  VectorUnit vector_unit() {
    std::call_once(unit_probed_, [&] { unit_ = probe_vector_unit(); });
    return unit_;
  }

 private:
  bool probe_half();
  VectorUnit probe_vector_unit();

  // The compiler (and the identity of its executables, so an upgrade is a new key) and the flags.
  static std::string make_key(const CPUOptions& o) {
    std::string k = "cpu";
    for (auto& a : o.cc) {
      k += " " + a;
      struct stat st{};
      if (std::string p = resolve(a); !p.empty() && ::stat(p.c_str(), &st) == 0)
        k += "[" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "]";
    }
    for (auto& a : flags(o.target)) k += " " + a;
    return k;
  }
  std::vector<std::string> cc_, flags_;
  bool portable_half_;
  std::once_flag probed_, unit_probed_;
  bool native_half_ = false;
  VectorUnit unit_;
};

// The C ABI of every CPU kernel (renderer/renderer.h).
using KernelFn = void (*)(void** bufs, const long long* vals, long long gstart, long long gend);

// Below this many operations a launch runs on the calling thread: waking workers costs more.
constexpr int64_t kMinParallelOps = int64_t{1} << 17;

// A dlopen'ed kernel library. dlopen wants a path, and glibc identifies a loaded library by its path
// name, so each library gets a name never used before in this process (pid, counter, random), is
// loaded, and is unlinked and closed at once: a loaded kernel holds no file descriptor (its mapping
// keeps the inode alive).
class SharedLibrary {
 public:
  SharedLibrary(const std::string& name, const std::string& lib) {
    static std::atomic<uint64_t> counter{0};
    std::string path = tmpdir() + "/tg_lib_" + std::to_string(::getpid()) + "_" + std::to_string(counter.fetch_add(1)) + "_XXXXXX.so";
    {
      Fd fd(mkostemps(path.data(), 3, O_CLOEXEC));
      TG_CHECK_AS(RuntimeError, fd.fd >= 0, "CPU: cannot create a temporary file in ", tmpdir(), ": ", std::strerror(errno));
      struct Unlink { const std::string& p; ~Unlink() { ::unlink(p.c_str()); } } unlink_path{path};
      write_all(fd.fd, lib, "the kernel library");
      handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (!handle_) {
      const char* e = ::dlerror();
      TG_ERROR_AS(RuntimeError, "CPU: cannot load the compiled kernel '", name, "' (from a file in TMPDIR=", tmpdir(), "): ",
               e ? e : "unknown dlopen error");
    }
    ::dlerror();
    sym_ = ::dlsym(handle_, name.c_str());
    if (!sym_) {
      const char* e = ::dlerror();
      std::string why = e ? e : "symbol is null";
      ::dlclose(handle_);
      TG_ERROR_AS(RuntimeError, "CPU: kernel function '", name, "' not found in its compiled library: ", why);
    }
  }
  ~SharedLibrary() { ::dlclose(handle_); }
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  void* address() const { return sym_; }
 private:
  void* handle_ = nullptr;
  void* sym_ = nullptr;
};

// A loaded CPU kernel (from a shared library or an LLVM object: `code` keeps it loaded), run with its
// outer range split over the thread pool.
class CPUProgram final : public Program {
 public:
  template <class Code>
  CPUProgram(const std::string& name, std::shared_ptr<Code> code) : name_(name), code_(code) {
    void* sym = code->address();
    static_assert(sizeof(void*) == sizeof(KernelFn));
    std::memcpy(&fn_, &sym, sizeof fn_);  // object pointer -> function pointer, as POSIX allows
  }
  KernelFn fn() const { return fn_; }

  double operator()(const std::vector<void*>& bufs, const std::vector<int64_t>& vals,
                    const std::vector<int64_t>& global_size, const std::vector<int64_t>&, bool wait) override {
    std::vector<long long> v(vals.begin(), vals.end());  // (no allocation for the usual none)
    int64_t n = global_size.empty() ? 1 : global_size[0];
    TG_ASSERT(n >= 0, "CPU: kernel '", name_, "' has a negative global size ", n);
    auto t0 = std::chrono::steady_clock::now();
    // the kernel reads the pointer array and never writes it
    struct Call { KernelFn fn; void** bufs; const long long* vals; } call{fn_, const_cast<void**>(bufs.data()), v.data()};
    bool small = est_ops_ > 0 && est_ops_ < kMinParallelOps;
    if (n < 2 || small) {
      call.fn(call.bufs, call.vals, 0, n);
    } else {
      // captured by reference: the std::function holds one pointer, in place
      parallel_for(n, [&call](int64_t s, int64_t e) { call.fn(call.bufs, call.vals, s, e); });
    }
    if (!wait) return 0;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  std::string name_;
  std::shared_ptr<void> code_;
  KernelFn fn_ = nullptr;
};

// Threads waiting for each other between two kernels of a graph: each arrival counts, the last one starts
// the next generation; the others spin (the wait is as long as one kernel's imbalance).
class SpinBarrier {
 public:
  explicit SpinBarrier(int n) : n_(n) {}
  void wait() {
    int g = gen_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      arrived_.store(0, std::memory_order_relaxed);
      gen_.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
    for (int spins = 0; gen_.load(std::memory_order_acquire) == g; spins++) {
      if (spins > 4096) std::this_thread::yield();
#if defined(__x86_64__) || defined(__i386__)
      else __builtin_ia32_pause();
#endif
    }
  }
 private:
  const int n_;
  std::atomic<int> arrived_{0}, gen_{0};
};

// The CPU's graph executor: the whole batch is one dispatch to the thread pool. Every thread walks the
// kernels in order and runs its share of each (its slice of the outer range; a small kernel runs on
// thread 0 alone), with a barrier where a kernel needs what others wrote. No allocation, lookup or lock
// per kernel.
class CPUGraph final : public Graph {
 public:
  explicit CPUGraph(std::vector<Launch> launches) {
    for (auto& l : launches) {
      auto* p = dynamic_cast<CPUProgram*>(l.program);
      TG_ASSERT(p, "CPU graph: a program of another device");
      int64_t n = l.global_size.empty() ? 1 : l.global_size[0];
      bool serial = n < 2 || (p->work_hint() > 0 && p->work_hint() < kMinParallelOps);
      size_t nbufs = l.bufs.size();
      kernels_.push_back({p->fn(), std::move(l.bufs), std::vector<void*>(nbufs), n, serial});
    }
  }
  void operator()() override {
    for (Kernel& k : kernels_)
      for (size_t j = 0; j < k.slots.size(); j++) k.ptrs[j] = (*k.slots[j])->ptr();
    ThreadPool& pool = ThreadPool::global();
    SpinBarrier barrier(pool.size());
    pool.team([&](int tid, int nt) {
      for (size_t i = 0; i < kernels_.size(); i++) {
        Kernel& k = kernels_[i];
        // a barrier where the threads' work meets: before a parallel kernel, and after one
        if (i > 0 && nt > 1 && (!k.serial || !kernels_[i - 1].serial)) barrier.wait();
        if (k.serial || nt == 1) {
          if (tid == 0) k.fn(k.ptrs.data(), kNoVals, 0, k.n);
        } else {
          int64_t b = k.n * tid / nt, e = k.n * (tid + 1) / nt;
          if (b < e) k.fn(k.ptrs.data(), kNoVals, b, e);
        }
      }
      if (nt > 1) barrier.wait();  // everything written before any thread returns
    });
  }
 private:
  static constexpr long long kNoVals[1] = {0};  // (no kernel has symbolic variables yet)
  struct Kernel {
    KernelFn fn;
    std::vector<const std::shared_ptr<Buffer>*> slots;
    std::vector<void*> ptrs;
    int64_t n;
    bool serial;
  };
  std::vector<Kernel> kernels_;
};

// The probe reads the target's predefined macros (the compiler's answer for -march=): which of the
// features vector_unit_of asks about the compiler may use. It is data, never run, so a target newer than
// this CPU is probed safely. A compiler that cannot build it gets none of them.
VectorUnit CPUCompiler::probe_vector_unit() {
  static const std::string src = R"(
#if defined(__AVX512F__)
#define TG_AVX512F 1
#else
#define TG_AVX512F 0
#endif
#if defined(__AVX__)
#define TG_AVX 1
#else
#define TG_AVX 0
#endif
#if defined(__aarch64__)
#define TG_NEON 1
#else
#define TG_NEON 0
#endif
const long long tg_vector_features[3] = {TG_AVX512F, TG_AVX, TG_NEON};
)";
  std::string verdict = cached("vector unit probe\n" + src, [&]() -> std::string {
    try {
      SharedLibrary lib("tg_vector_features", compile(src));
      const auto* f = static_cast<const long long*>(lib.address());
      return std::to_string(f[0]) + " " + std::to_string(f[1]) + " " + std::to_string(f[2]);
    } catch (const Error&) {
      return "0 0 0";
    }
  });
  int avx512f = 0, avx = 0, neon = 0;
  std::istringstream(verdict) >> avx512f >> avx >> neon;
  VectorUnit u = vector_unit_of(avx512f != 0, avx != 0, neon != 0);
  if (DEBUG >= 2) std::printf("CPU: %d vector registers of %d bytes (%s)\n", u.registers, u.bytes, cachekey().c_str());
  return u;
}

// The probe converts values that cover each case (normal, subnormal, ties, overflow, inf, NaN payloads)
// with _Float16 and compares with the host's conversions; any failure (the compiler rejects _Float16
// for the target, a conversion routine is missing at load, a different bit) means "portable".
bool CPUCompiler::probe_half() {
  static const std::vector<uint16_t> halves = {0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x3c00, 0x3555, 0x7bff,
                                               0x7c00, 0xfc00, 0x7e00, 0x7d01, 0xfe3f, 0x83ff};
  static const std::vector<uint32_t> floats = {
      0x00000000, 0x80000000, 0x3eaaaaab, 0x477fe000, 0x477fefff, 0x477ff000, 0x322bcc77, 0x33000000,
      0x33000001, 0x33800000, 0x387fc000, 0x38800000, 0x3f801000, 0x3f803000, 0x7f800000, 0xff800000,
      0x7fc00000, 0x7f800001, 0xffc12345, 0x501502f9, 0x3f7ff000, 0x00000001};
  std::string src = std::string(c_half_conversions(true)) + R"(
void tg_probe(void** bufs, const long long* vals, long long n, long long m) {
  (void)vals;
  for (long long i = 0; i < n; i++) ((float*)bufs[1])[i] = tg_h2f(((const unsigned short*)bufs[0])[i]);
  for (long long i = 0; i < m; i++) ((unsigned short*)bufs[3])[i] = tg_f2h(((const float*)bufs[2])[i]);
  for (long long i = 0; i < m; i++) ((float*)bufs[4])[i] = tg_rh(((const float*)bufs[2])[i]);
}
)";
  std::string verdict = cached("float16 probe\n" + src, [&]() -> std::string {
    try {
      CPUProgram prg("tg_probe", std::make_shared<SharedLibrary>("tg_probe", compile(src)));
      std::vector<uint32_t> f_out(halves.size()), r_out(floats.size());
      std::vector<uint16_t> h_in(halves), h_out(floats.size());
      std::vector<uint32_t> f_in(floats);
      auto fn = prg.fn();
      void* bufs[] = {h_in.data(), f_out.data(), f_in.data(), h_out.data(), r_out.data()};
      fn(bufs, nullptr, static_cast<long long>(halves.size()), static_cast<long long>(floats.size()));
      for (size_t i = 0; i < halves.size(); i++) {
        float f = half_to_float(halves[i]);
        if (std::memcmp(&f, &f_out[i], 4) != 0) return "0";
      }
      for (size_t i = 0; i < floats.size(); i++) {
        float x, r;
        std::memcpy(&x, &floats[i], 4);
        uint16_t h = float_to_half(x);
        r = half_to_float(h);
        if (h != h_out[i] || std::memcmp(&r, &r_out[i], 4) != 0) return "0";
      }
      return "1";
    } catch (const Error&) {
      return "0";
    }
  });
  if (DEBUG >= 1) std::printf("CPU: float16 conversions %s (%s)\n", verdict == "1" ? "with _Float16" : "in portable C", cachekey().c_str());
  return verdict == "1";
}

}  // namespace

#ifdef TG_HAVE_LLVM
namespace {

// LLVM IR compiled in process (runtime/llvm_jit.h): no compiler process, no file. The cache key names
// LLVM's version, its pass pipeline and the target, so object code cached for another CPU (or made by
// other passes) is never loaded.
class LLVMCompiler final : public Compiler {
 public:
  LLVMCompiler(LLVMTarget t, bool portable_half)
      : Compiler("llvm " + llvm_version() + " " + llvm_pipeline() + " " + t.triple + " " + t.cpu + " " + t.features), target_(std::move(t)),
        features_{target_.has_feature("fma"), target_.has_feature("f16c") && !portable_half, target_.has_feature("avx512f"),
                  target_.has_feature("avx512dq"), vector_unit_of(target_.has_feature("avx512f"), target_.has_feature("avx"), target_.has_feature("neon"))} {}
  std::string compile(const std::string& ir) override { return llvm_compile(ir, target_); }
  const LLVMFeatures& features() const { return features_; }
 private:
  LLVMTarget target_;
  LLVMFeatures features_;
};

// The float16 conversions of kernels on targets without F16C (renderer.h: LLVMFeatures).
float host_h2f(uint16_t h) { return half_to_float(h); }
uint16_t host_f2h(float x) { return float_to_half(x); }
float host_rh(float x) { return half_to_float(float_to_half(x)); }
const std::vector<std::pair<std::string, void*>>& host_symbols() {
  static const std::vector<std::pair<std::string, void*>> syms = {
      {"tg_h2f", reinterpret_cast<void*>(&host_h2f)}, {"tg_f2h", reinterpret_cast<void*>(&host_f2h)}, {"tg_rh", reinterpret_cast<void*>(&host_rh)}};
  return syms;
}

std::unique_ptr<Compiled> make_llvm_device(const std::string& name, const CPUOptions& opts) {
  auto compiler = std::make_unique<LLVMCompiler>(LLVMTarget::from(opts.target), opts.portable_half);
  LLVMFeatures f = compiler->features();
  auto dev = std::make_unique<Compiled>(
      name, make_host_allocator(name), std::move(compiler), make_llvm_renderer(f),
      [](const std::string& fn, const std::string& obj) { return std::make_unique<CPUProgram>(fn, std::make_shared<LLVMObject>(obj, fn, host_symbols())); });
  dev->set_graph([](std::vector<Graph::Launch> launches) { return std::make_unique<CPUGraph>(std::move(launches)); });
  return dev;
}

}  // namespace
#endif

bool cpu_has_llvm() {
#ifdef TG_HAVE_LLVM
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Compiled> make_cpu_device(const std::string& name, const CPUOptions& opts) {
  if (opts.compiler == KernelCompiler::LLVM) {
#ifdef TG_HAVE_LLVM
    return make_llvm_device(name, opts);
#else
    TG_ERROR_AS(RuntimeError, "CPU: CPU_COMPILER=llvm (or LLVM=1), but this build of tinygrad.cpp has no LLVM (install llvm-16-dev and rebuild)");
#endif
  }
  auto compiler = std::make_unique<CPUCompiler>(opts);
  CPUCompiler* cc = compiler.get();  // owned by the device, as the renderer that asks it
  auto dev = std::make_unique<Compiled>(
      name, make_host_allocator(name), std::move(compiler), make_cpu_renderer([cc] { return cc->native_half(); }, [cc] { return cc->vector_unit(); }),
      [](const std::string& fn, const std::string& lib) { return std::make_unique<CPUProgram>(fn, std::make_shared<SharedLibrary>(fn, lib)); });
  dev->set_graph([](std::vector<Graph::Launch> launches) { return std::make_unique<CPUGraph>(std::move(launches)); });
  return dev;
}

bool cpu_native_half(Compiled& dev) {
  if (!dev.has_compiler()) return false;
#ifdef TG_HAVE_LLVM
  if (auto* lc = dynamic_cast<LLVMCompiler*>(&dev.compiler())) return lc->features().f16c;
#endif
  auto* cc = dynamic_cast<CPUCompiler*>(&dev.compiler());
  return cc && cc->native_half();
}

void register_cpu_backend() {
  add_builtin_backend("CPU", [](const std::string& name) { return make_cpu_device(name, CPUOptions::from_env()); });
}

}  // namespace tg
