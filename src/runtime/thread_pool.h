// A small persistent thread pool for splitting a CPU kernel's outer range.
//
// Threads are started once (spawning per kernel costs more than small kernels take) and joined at exit.
// parallel_for splits [0, n) into contiguous chunks, one per thread; the calling thread runs one chunk
// itself and blocks until all are done. An exception thrown by any chunk is rethrown in the caller.
// A worker that runs out of tasks, and a caller waiting for its chunks, spin for a short while
// (kSpinMicros) before they sleep: waking a sleeping thread costs tens of microseconds, more than a
// small kernel takes, and kernels tend to come back to back. A caller done with its own chunk runs its
// chunks that no worker has taken yet: on a busy machine a worker may not get a core for milliseconds.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tg {

class ThreadPool {
 public:
  // nthreads counts the calling thread: nthreads - 1 workers are started.
  explicit ThreadPool(int nthreads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The process-wide pool: std::thread::hardware_concurrency() threads, or env THREADS.
  static ThreadPool& global();

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& f);
  // Runs f(tid, n) on n threads at once (the caller is tid 0) and returns when all have: for work whose
  // participants synchronize among themselves (a spin barrier). n is 1 inside a worker or in a one-thread
  // pool. One team at a time: two would wait on each other's members queued behind them.
  void team(const std::function<void(int tid, int n)>& f);

 private:
  void worker_loop();
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  struct Task {
    const void* owner;  // the parallel_for call that queued it
    std::function<void()> run;
  };
  // The oldest task of `owner` still queued, taken off the queue; an empty one if there is none.
  std::function<void()> take(const void* owner);
  std::deque<Task> tasks_;
  std::atomic<int64_t> queued_{0};  // tasks_.size(), read without the lock by spinning workers
  bool stop_ = false;
  std::mutex team_mu_;
};

// ThreadPool::global().parallel_for(n, f)
void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& f);

}  // namespace tg
