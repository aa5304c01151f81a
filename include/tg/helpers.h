// Settings, counters and small utilities shared by every layer.
//
// ContextVar: an integer setting read once from the environment (DEBUG, BEAM, NOOPT, CACHELEVEL...) and
// overridable for a scope with Context, as in tinygrad:  { tg::Context ctx{{"DEBUG", 4}}; ... }
// GlobalCounters: what has run since the last reset(), tinygrad's names.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace tg {

// The environment variable `name` as an int (or `def` when unset / not a number).
int getenv(const std::string& name, int def = 0);
std::string getenv_str(const std::string& name, const std::string& def = "");

struct ContextVar {
  ContextVar(const char* key, int def);
  const char* key;
  int value;
  operator int() const { return value; }
  static ContextVar* find(const std::string& key);  // nullptr when unknown
};

inline ContextVar DEBUG{"DEBUG", 0}, BEAM{"BEAM", 0}, NOOPT{"NOOPT", 0}, CACHELEVEL{"CACHELEVEL", 2},
    GRAPH{"GRAPH", 0}, JIT{"JIT", 1};
// VIZ=1: record the kernels' passes and show them as a web page (tg/viz.h).
inline ContextVar VIZ{"VIZ", 0};
// FUSE=0: tinygrad's kernels. The scheduler realizes every reduce that is read back over the rows it
// reduced (softmax, layernorm: several kernels) instead of keeping it in its readers' kernel, and makes
// no multi-output kernels (engine/schedule.h).
inline ContextVar FUSE{"FUSE", 1};
// CHECK_INDEX=1: index, gather, scatter, one_hot, Embedding and the losses read their index tensors when
// called and raise a tg::Error for an entry out of range (off by default: see each op's contract).
inline ContextVar CHECK_INDEX{"CHECK_INDEX", 0};
// WINO=0: no Winograd convs. On by default: conv2d runs 5-wide kernels by Winograd's F(4, 5) along the
// rows where that measured faster and its workspace is moderate (tensor/conv.cpp's winograd_applies),
// within fp32 rounding of the direct conv (relative error ~3e-6).
inline ContextVar WINO{"WINO", 1};

// Scoped override of ContextVars; restores the old values when it goes out of scope.
class Context {
 public:
  Context(std::initializer_list<std::pair<const char*, int>> overrides);
  explicit Context(const std::vector<std::pair<std::string, int>>& overrides);  // keys known at run time
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
 private:
  std::vector<std::pair<ContextVar*, int>> saved_;
};

struct GlobalCounters {
  static inline int64_t kernel_count = 0;  // kernels launched
  static inline int64_t global_ops = 0;    // estimated FLOPs executed
  static inline int64_t global_mem = 0;    // estimated bytes moved by kernels
  static inline double time_sum_s = 0;     // kernel time, when measured (DEBUG>=2)
  static inline int64_t mem_used = 0;      // bytes currently allocated on devices (freed buffers kept for reuse too)
  static inline int64_t mem_live = 0;      // bytes of the Buffers that hold memory now
  static inline int64_t mem_peak = 0;      // the most mem_live has been since the last reset
  // the engine's work, for seeing that a TinyJit replay does none of it
  static inline int64_t schedules = 0;     // create_schedule calls
  static inline int64_t schedule_hits = 0; // of those, schedules taken from the schedule cache
  static inline int64_t lowered = 0;       // ScheduleItems lowered to ExecItems
  static inline int64_t compiles = 0;      // kernels rendered and handed to a compiler (a disk-cache hit counts too)
  static void reset() {
    kernel_count = global_ops = global_mem = schedules = schedule_hits = lowered = compiles = 0;
    time_sum_s = 0;
    mem_peak = mem_live;
  }
};

// 64-bit FNV-1a of a string, for cache keys and hash-consing.
uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull);
inline uint64_t hash_combine(uint64_t a, uint64_t b) { return a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2)); }

// Wall-clock seconds since an arbitrary epoch.
double now_s();

// "1.23 M", "45.6 G"... for DEBUG lines.
std::string si(double v, int width = 7);

}  // namespace tg
