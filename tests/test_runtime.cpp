// The runtime layer: allocators, buffers, the device registry, the CPU compiler and programs, the compile
// cache and the thread pool.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "runtime/device.h"
#include "runtime/ops_cpu.h"
#include "runtime/thread_pool.h"
#include "tg/error.h"
#include "tg/helpers.h"

namespace fs = std::filesystem;
using namespace tg;

namespace {

// A fresh directory used as CACHEDIR for one test; restores the old CACHEDIR and removes the directory.
struct TempCacheDir {
  fs::path dir;
  std::string old;
  bool had_old = false;
  TempCacheDir() {
    std::string tmpl = (fs::temp_directory_path() / "tg_test_cache_XXXXXX").string();
    dir = ::mkdtemp(tmpl.data());
    if (const char* o = std::getenv("CACHEDIR")) { old = o; had_old = true; }
    ::setenv("CACHEDIR", dir.c_str(), 1);
  }
  ~TempCacheDir() {
    if (had_old) ::setenv("CACHEDIR", old.c_str(), 1);
    else ::unsetenv("CACHEDIR");
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  size_t files() const {
    size_t n = 0;
    for (auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
    return n;
  }
};

// A compiler whose "binary" is the source reversed, counting how often it really runs.
struct CountingCompiler : Compiler {
  CountingCompiler() : Compiler("counting-test-compiler") {}
  int calls = 0;
  std::string compile(const std::string& src) override {
    calls++;
    return std::string(src.rbegin(), src.rend());
  }
};

const char* kAdd = R"(
void add(void** bufs, const long long* vals, long long gstart, long long gend) {
  float* c = (float*)bufs[0]; const float* a = (const float*)bufs[1]; const float* b = (const float*)bufs[2];
  (void)vals;
  for (long long i = gstart; i < gend; i++) c[i] = a[i] + b[i];
}
)";

// Records which slice [gstart, gend) computed each element: out[i] = gstart.
const char* kWhoRan = R"(
void who_ran(void** bufs, const long long* vals, long long gstart, long long gend) {
  (void)vals;
  for (long long i = gstart; i < gend; i++) ((long long*)bufs[0])[i] = gstart;
}
)";

// Open file descriptors of this process.
size_t open_fds() {
  size_t n = 0;
  for (auto& e : fs::directory_iterator("/proc/self/fd")) { (void)e; n++; }
  return n;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Allocator and Buffer
// ---------------------------------------------------------------------------------------------------

TEST(Allocator, ReusesFreedBufferOfSameSize) {
  Allocator& a = Device::get("CPU").allocator();
  a.free_cache();
  void* p = a.alloc(12345);
  a.free(p, 12345);
  void* q = a.alloc(12345);
  EXPECT_EQ(p, q);
  void* r = a.alloc(12345);  // the cache is empty again: new memory
  EXPECT_NE(q, r);
  a.free(q, 12345);
  a.free(r, 12345);
  a.free_cache();
}

TEST(Allocator, AlignedAndHostPtr) {
  Allocator& a = Device::get("EXT").allocator();
  void* p = a.alloc(3);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_EQ(a.host_ptr(p), p);
  a.free(p, 3);
  a.free_cache();
}

TEST(Allocator, MemUsedCountsRealAllocations) {
  Allocator& a = Device::get("CPU").allocator();
  a.free_cache();
  int64_t before = GlobalCounters::mem_used;
  void* p = a.alloc(1000);
  EXPECT_EQ(GlobalCounters::mem_used, before + 1000);
  a.free(p, 1000);  // cached: still held
  EXPECT_EQ(GlobalCounters::mem_used, before + 1000);
  void* q = a.alloc(1000);  // from the cache: no new memory
  EXPECT_EQ(GlobalCounters::mem_used, before + 1000);
  a.free(q, 1000);
  a.free_cache();
  EXPECT_EQ(GlobalCounters::mem_used, before);
}

TEST(Allocator, EvictsOldestBeyondLimit) {
  Allocator& a = Device::get("EXT").allocator();
  a.free_cache();
  int64_t before = GlobalCounters::mem_used;
  const size_t big = size_t{600} << 20;  // two of these exceed the 1 GiB cache bound
  void* p = a.alloc(big);
  void* q = a.alloc(big + 64);
  a.free(p, big);
  a.free(q, big + 64);  // evicts p, the oldest
  EXPECT_EQ(GlobalCounters::mem_used, before + static_cast<int64_t>(big + 64));
  a.free_cache();
  EXPECT_EQ(GlobalCounters::mem_used, before);
}

// A buffer of 1 GiB or more is aligned to 2 MiB and asks for transparent huge pages: where the kernel
// grants them on request (its "madvise" mode), touching it maps some. (Under "always" it gets them
// anyway, under "never" none: the check is skipped.)
TEST(Allocator, BuffersOf1GiBAskForHugePages) {
#ifdef TG_SANITIZED
  GTEST_SKIP() << "1 GiB stress case: runs in the plain build";
#endif
  auto huge_kb = []() -> int64_t {  // the process's anonymous memory on huge pages
    std::ifstream f("/proc/self/smaps_rollup");
    for (std::string line; std::getline(f, line);)
      if (line.rfind("AnonHugePages:", 0) == 0) return std::stoll(line.substr(14));
    return int64_t{-1};
  };
  std::string mode;
  std::getline(std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"), mode);
  Allocator& a = Device::get("CPU").allocator();
  a.free_cache();
  const size_t big = (size_t{1} << 30) + 64;
  auto* p = static_cast<char*>(a.alloc(big));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (size_t{2} << 20), 0u);
  if (mode.find("[madvise]") != std::string::npos && huge_kb() >= 0) {
    int64_t before = huge_kb();
    std::memset(p, 1, big);
    EXPECT_GE(huge_kb() - before, 2048) << "no huge page backs the touched buffer";
  }
  a.free(p, big);
  a.free_cache();
}

TEST(Buffer, CopyRoundTrip) {
  for (const char* dev : {"CPU", "EXT"}) {
    std::vector<float> in(1000), out(1000, -1.f);
    std::iota(in.begin(), in.end(), 0.5f);
    {
      Buffer b(dev, in.size(), dtypes::float32);
      EXPECT_FALSE(b.is_allocated());
      EXPECT_EQ(b.nbytes(), 4000u);
      b.copyin(in.data());
      EXPECT_TRUE(b.is_allocated());
      b.copyout(out.data());
    }
    EXPECT_EQ(in, out) << dev;
  }
}

TEST(Buffer, CopyoutOfUnallocatedThrows) {
  Buffer b("CPU", 4, dtypes::int32);
  int out[4];
  EXPECT_THROW(b.copyout(out), Error);
}

TEST(Buffer, ZeroSized) {
  Buffer b("CPU", 0, dtypes::float32);
  b.allocate();
  EXPECT_TRUE(b.is_allocated());
}

// ---------------------------------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------------------------------

TEST(Device, Canonicalize) {
  EXPECT_EQ(Device::canonicalize("cpu"), "CPU");
  EXPECT_EQ(Device::canonicalize("cpu:0"), "CPU");
  EXPECT_EQ(Device::canonicalize("CPU"), "CPU");
  EXPECT_EQ(Device::canonicalize("Ext"), "EXT");
  EXPECT_EQ(Device::canonicalize("cpu:1"), "CPU:1");
  EXPECT_THROW(Device::canonicalize("cpu:x"), Error);
}

TEST(Device, UnknownDeviceNamesItAndTheKnownOnes) {
  try {
    Device::get("FOO");
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("FOO"), std::string::npos) << m;
    EXPECT_NE(m.find("CPU"), std::string::npos) << m;
    EXPECT_NE(m.find("EXT"), std::string::npos) << m;
  }
}

TEST(Device, GetCachesAndBackendsListed) {
  EXPECT_EQ(&Device::get("cpu"), &Device::get("CPU:0"));
  EXPECT_EQ(Device::get("CPU").name, "CPU");
  auto b = Device::backends();
  EXPECT_NE(std::find(b.begin(), b.end(), "CPU"), b.end());
  EXPECT_NE(std::find(b.begin(), b.end(), "EXT"), b.end());
}

TEST(Device, AbsentDriverErrorPropagates) {
  Device::register_backend("NODRIVERTEST", [](const std::string&) -> std::unique_ptr<Compiled> {
    TG_ERROR("NODRIVERTEST: libfoo.so not found");
  });
  try {
    Device::get("nodrivertest");
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("NODRIVERTEST"), std::string::npos) << m;
    EXPECT_NE(m.find("libfoo.so not found"), std::string::npos) << m;
  }
}

TEST(Device, DefaultIsCpu) {
  if (std::getenv("DEVICE") || std::getenv("CL") || std::getenv("CUDA") || std::getenv("INTERP")) GTEST_SKIP();
  EXPECT_EQ(Device::DEFAULT(), "CPU");
}

TEST(Device, ExtHasNoCompilerOrRenderer) {
  Compiled& ext = Device::get("EXT");
  EXPECT_FALSE(ext.has_compiler());
  EXPECT_THROW(ext.compiler(), Error);
  EXPECT_THROW(ext.renderer(), Error);
  EXPECT_THROW(ext.program("f", ""), Error);
  EXPECT_TRUE(Device::get("CPU").has_compiler());
}

// ---------------------------------------------------------------------------------------------------
// CPU compiler and programs
// ---------------------------------------------------------------------------------------------------

namespace {
// The CPU device with the C compiler process: these tests hand it C kernels (the default CPU device may
// compile LLVM IR instead: tests/test_cpu_compilers.cpp and test_llvm_jit.cpp test that path).
Compiled& c_cpu() {
  static const bool registered = [] {
    Device::register_backend("CPUCTEST", [](const std::string& n) {
      CPUOptions o = CPUOptions::from_env();
      o.compiler = KernelCompiler::Clang;
      return make_cpu_device(n, o);
    });
    return true;
  }();
  (void)registered;
  return Device::get("CPUCTEST");
}
}  // namespace

TEST(CPUProgram, AddSplitOverThreads) {
  Compiled& cpu = c_cpu();
  std::string lib = cpu.compiler().compile(kAdd);
  auto prg = cpu.program("add", lib);
  const size_t n = 1 << 20;
  Buffer a("CPU", n, dtypes::float32), b("CPU", n, dtypes::float32), c("CPU", n, dtypes::float32);
  std::vector<float> ha(n), hb(n), hc(n);
  for (size_t i = 0; i < n; i++) { ha[i] = static_cast<float>(i); hb[i] = 2.0f * static_cast<float>(i) + 1; }
  a.copyin(ha.data());
  b.copyin(hb.data());
  c.allocate();
  // wait=true: the launch's own duration, so more than nothing and at most what the caller saw
  double before = now_s();
  double t = (*prg)({c.ptr(), a.ptr(), b.ptr()}, {}, {static_cast<int64_t>(n)}, {}, true);
  double outside = now_s() - before;
  EXPECT_GT(t, 0.0);
  EXPECT_LE(t, outside);
  c.copyout(hc.data());
  for (size_t i = 0; i < n; i++) ASSERT_EQ(hc[i], ha[i] + hb[i]) << i;
  EXPECT_EQ((*prg)({c.ptr(), a.ptr(), b.ptr()}, {}, {static_cast<int64_t>(n)}, {}, false), 0.0);

  // the launch really is split: one contiguous slice per pool thread, together exactly [0, n)
  auto who = cpu.program("who_ran", cpu.compiler().compile_cached(kWhoRan));
  std::vector<long long> starts(n, -1);
  (*who)({starts.data()}, {}, {static_cast<int64_t>(n)}, {}, true);
  int slices = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || starts[i] != starts[i - 1]) {  // a slice begins here, and must say so
      ASSERT_EQ(starts[i], static_cast<long long>(i));
      slices++;
    }
  EXPECT_EQ(slices, ThreadPool::global().size());
}

TEST(CPUProgram, GlobalSizeBeyondInt32) {
  // The ABI's gstart/gend are 64-bit: a launch of 2^32 + 5 iterations reaches every slice intact. The
  // kernel only adds up the slice lengths and notes the last end, so it costs nothing per iteration.
  const char* src = R"(
void span(void** bufs, const long long* vals, long long gstart, long long gend) {
  long long* out = (long long*)bufs[0];
  __atomic_fetch_add(&out[0], gend - gstart, __ATOMIC_RELAXED);
  if (gend == vals[0]) out[1] = gend;
}
)";
  Compiled& cpu = c_cpu();
  auto prg = cpu.program("span", cpu.compiler().compile_cached(src));
  const int64_t n = (int64_t{1} << 32) + 5;
  std::vector<long long> out{0, 0};
  (*prg)({out.data()}, {n}, {n}, {}, true);
  EXPECT_EQ(out[0], n);
  EXPECT_EQ(out[1], n);
}

TEST(CPUProgram, LoadedKernelsHoldNoFileDescriptor) {
  Compiled& cpu = c_cpu();
  std::string lib = cpu.compiler().compile_cached(kAdd);
  std::vector<std::unique_ptr<Program>> prgs;
  prgs.push_back(cpu.program("add", lib));  // first load: whatever the loader opens once is open now
  size_t before = open_fds();
  for (int k = 0; k < 50; k++) prgs.push_back(cpu.program("add", lib));
  EXPECT_EQ(open_fds(), before);
  std::vector<float> x{1, 2}, y{3, 4}, z(2);
  for (auto& p : prgs) {
    z = {0, 0};
    (*p)({z.data(), x.data(), y.data()}, {}, {2}, {}, false);
    ASSERT_EQ(z, (std::vector<float>{4, 6}));
  }
}

TEST(CPUProgram, SmallWorkHintRunsInline) {
  Compiled& cpu = c_cpu();
  auto prg = cpu.program("add", cpu.compiler().compile_cached(kAdd));
  prg->set_work_hint(10);
  std::vector<float> a{1, 2, 3}, b{10, 20, 30}, c(3);
  (*prg)({c.data(), a.data(), b.data()}, {}, {3}, {}, true);
  EXPECT_EQ(c, (std::vector<float>{11, 22, 33}));
}

TEST(CPUProgram, Vals) {
  const char* src = R"(
void axpb(void** bufs, const long long* vals, long long gstart, long long gend) {
  long long* out = (long long*)bufs[0];
  for (long long i = gstart; i < gend; i++) out[i] = vals[0] * i + vals[1];
}
)";
  Compiled& cpu = c_cpu();
  auto prg = cpu.program("axpb", cpu.compiler().compile(src));
  std::vector<long long> out(100);
  (*prg)({out.data()}, {7, -3}, {100}, {}, false);
  for (int i = 0; i < 100; i++) ASSERT_EQ(out[static_cast<size_t>(i)], 7LL * i - 3);
  (*prg)({out.data()}, {1, 5}, {}, {}, false);  // empty global size: one iteration
  EXPECT_EQ(out[0], 5);
  EXPECT_EQ(out[1], 7 - 3);
}

TEST(CPUProgram, ManyProgramsLoadedAtOnceStayDistinct) {
  // glibc dedups dlopen by path: each library must keep its own.
  Compiled& cpu = c_cpu();
  std::vector<std::unique_ptr<Program>> prgs;
  for (int k = 0; k < 3; k++) {
    std::string src = "void f(void** b, const long long* v, long long s, long long e) { (void)v; for (long long i = s; i < e; i++) ((int*)b[0])[i] = " +
                      std::to_string(k) + "; }\n";
    prgs.push_back(cpu.program("f", cpu.compiler().compile(src)));
  }
  for (int k = 0; k < 3; k++) {
    int x = -1;
    (*prgs[static_cast<size_t>(k)])({&x}, {}, {1}, {}, false);
    EXPECT_EQ(x, k);
  }
}

TEST(CPUProgram, ReloadAfterUnloadGetsTheNewLibrary) {
  Compiled& cpu = c_cpu();
  for (int k = 0; k < 3; k++) {
    std::string src = "void g(void** b, const long long* v, long long s, long long e) { (void)v; (void)s; (void)e; *(int*)b[0] = " +
                      std::to_string(10 + k) + "; }\n";
    auto prg = cpu.program("g", cpu.compiler().compile(src));
    int x = -1;
    (*prg)({&x}, {}, {1}, {}, false);
    EXPECT_EQ(x, 10 + k);
  }
}

TEST(CPUCompiler, FailureShowsCompilerMessageAndSource) {
  const std::string src = "void broken(void** b) { this is not C; }\n";
  try {
    c_cpu().compiler().compile(src);
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("compile failed"), std::string::npos) << m;
    EXPECT_NE(m.find("error"), std::string::npos) << m;  // the compiler's own diagnostic
    EXPECT_NE(m.find("this is not C"), std::string::npos) << m;
  }
}

TEST(CPUProgram, MissingSymbolThrows) {
  Compiled& cpu = c_cpu();
  std::string lib = cpu.compiler().compile(kAdd);
  try {
    cpu.program("no_such_kernel", lib);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_kernel"), std::string::npos) << e.what();
  }
}

TEST(CPUProgram, GarbageLibraryThrows) {
  EXPECT_THROW(c_cpu().program("add", "not an ELF file"), Error);
}

// ---------------------------------------------------------------------------------------------------
// Compile cache
// ---------------------------------------------------------------------------------------------------

TEST(CompileCache, SecondCompileIsAHit) {
  TempCacheDir tmp;
  Context ctx{{"CACHELEVEL", 2}};
  CountingCompiler cc;
  EXPECT_EQ(cc.compile_cached("abc"), "cba");
  EXPECT_EQ(cc.compile_cached("abc"), "cba");
  EXPECT_EQ(cc.calls, 1);
  EXPECT_EQ(tmp.files(), 1u);
  EXPECT_EQ(cc.compile_cached("abcd"), "dcba");
  EXPECT_EQ(cc.calls, 2);
}

TEST(CompileCache, CacheLevelZeroWritesNothing) {
  TempCacheDir tmp;
  Context ctx{{"CACHELEVEL", 0}};
  CountingCompiler cc;
  cc.compile_cached("abc");
  cc.compile_cached("abc");
  EXPECT_EQ(cc.calls, 2);
  EXPECT_EQ(tmp.files(), 0u);
}

TEST(CompileCache, CorruptEntryRecompiles) {
  TempCacheDir tmp;
  Context ctx{{"CACHELEVEL", 1}};
  CountingCompiler cc;
  cc.compile_cached("hello");
  for (auto& e : fs::directory_iterator(tmp.dir)) std::ofstream(e.path(), std::ios::trunc) << "garbage";
  EXPECT_EQ(cc.compile_cached("hello"), "olleh");
  EXPECT_EQ(cc.calls, 2);
  EXPECT_EQ(cc.compile_cached("hello"), "olleh");  // rewritten: a hit again
  EXPECT_EQ(cc.calls, 2);
}

TEST(CompileCache, RealCompilerRoundTrip) {
  TempCacheDir tmp;
  Context ctx{{"CACHELEVEL", 2}};
  Compiled& cpu = c_cpu();
  std::string a = cpu.compiler().compile_cached(kAdd);
  EXPECT_EQ(tmp.files(), 1u);
  std::string b = cpu.compiler().compile_cached(kAdd);
  EXPECT_EQ(a, b);
  auto prg = cpu.program("add", b);
  std::vector<float> x{1, 2}, y{3, 4}, z(2);
  (*prg)({z.data(), x.data(), y.data()}, {}, {2}, {}, false);
  EXPECT_EQ(z, (std::vector<float>{4, 6}));
}

// ---------------------------------------------------------------------------------------------------
// Thread pool
// ---------------------------------------------------------------------------------------------------

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.parallel_for(n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; i++) hits[static_cast<size_t>(i)]++;
      });
      for (int64_t i = 0; i < n; i++) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << threads << " " << n << " " << i;
    }
  }
}

TEST(ThreadPool, PropagatesExceptions) {
  ThreadPool pool(4);
  for (int64_t bad : {0, 99}) {  // from the caller's chunk and from a worker's
    EXPECT_THROW(pool.parallel_for(100, [&](int64_t b, int64_t e) {
      if (b <= bad && bad < e) throw std::runtime_error("boom");
    }), std::runtime_error);
  }
  std::atomic<int64_t> sum{0};  // still usable afterwards
  pool.parallel_for(100, [&](int64_t b, int64_t e) { for (int64_t i = b; i < e; i++) sum += i; });
  EXPECT_EQ(sum.load(), 4950);
}

// Workers spin a while for the next task and a caller for its chunks before they sleep: calls back to
// back (taken by spinning threads), and calls after the threads went to sleep, all cover every index
// once, and each call's join outlives the last chunk that touches it (ASan sees it if not).
TEST(ThreadPool, BackToBackAndAfterIdle) {
  ThreadPool pool(3);
  for (int round = 0; round < 6; round++) {
    for (int call = 0; call < 2000; call++) {
      int64_t n = 1 + call % 17;
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.parallel_for(n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; i++) hits[static_cast<size_t>(i)]++;
      });
      for (int64_t i = 0; i < n; i++) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << round << " " << call << " " << i;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 2 ? 5 : 0));  // long past the spin
  }
}

TEST(ThreadPool, NestedCallsRunSerially) {
  ThreadPool pool(3);
  std::atomic<int> total{0};
  pool.parallel_for(6, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i++)
      parallel_for(10, [&](int64_t bb, int64_t ee) { total += static_cast<int>(ee - bb); });
  });
  EXPECT_EQ(total.load(), 60);
}

// A caller does not wait for a worker that is busy elsewhere: it runs its own chunks that no worker
// took. Here the pool's one worker is held by another call's chunk until this call has returned.
TEST(ThreadPool, CallerRunsChunksNoWorkerTook) {
  ThreadPool pool(2);
  std::atomic<bool> held{false}, release{false}, done{false};
  std::thread holder([&] {
    pool.parallel_for(2, [&](int64_t b, int64_t) {
      if (b == 0) {  // the caller's chunk: wait until the worker runs chunk 1
        while (!held) std::this_thread::yield();
        return;
      }
      held = true;
      while (!release) std::this_thread::yield();
    });
  });
  while (!held) std::this_thread::yield();
  std::vector<int> seen(8, 0);
  std::thread caller([&] {
    pool.parallel_for(8, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) seen[static_cast<size_t>(i)]++;
    });
    done = true;
  });
  for (int i = 0; i < 10000 && !done; i++) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(done) << "the caller waited for the held worker";
  release = true;
  caller.join();
  holder.join();
  EXPECT_EQ(seen, std::vector<int>(8, 1));
}

// team(): all members run at once (each waits here for the others), each tid once, the caller as tid 0;
// back to back, and from inside a chunk (one member there).
TEST(ThreadPool, TeamRunsEveryMemberAtOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (int round = 0; round < 500; round++) {
      std::atomic<int> arrived{0};
      std::vector<std::atomic<int>> seen(static_cast<size_t>(threads));
      std::atomic<bool> caller_is_zero{false}, timed_out{false};
      std::thread::id caller = std::this_thread::get_id();
      pool.team([&](int tid, int n) {
        ASSERT_EQ(n, threads);
        seen[static_cast<size_t>(tid)]++;
        if (tid == 0) caller_is_zero = std::this_thread::get_id() == caller;
        arrived++;
        auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (arrived.load() < n)
          if (std::chrono::steady_clock::now() > until) { timed_out = true; return; }
      });
      ASSERT_FALSE(timed_out) << threads << " threads, round " << round << ": a member never came";
      ASSERT_TRUE(caller_is_zero);
      for (auto& c : seen) ASSERT_EQ(c.load(), 1);
    }
    std::atomic<int> inner_members{0};
    pool.parallel_for(threads, [&](int64_t, int64_t) { pool.team([&](int, int n) { EXPECT_EQ(n, 1); inner_members++; }); });
    EXPECT_EQ(inner_members.load(), threads);
  }
}

TEST(ThreadPool, GlobalPoolSize) {
  // env THREADS when set, else one thread per hardware thread
  int want = getenv("THREADS", static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_EQ(ThreadPool::global().size(), std::max(want, 1));
}
