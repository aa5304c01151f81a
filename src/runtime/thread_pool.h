// A small persistent thread pool for splitting a CPU kernel's outer range.
//
// Threads are started once (spawning per kernel costs more than small kernels take) and joined at exit.
// parallel_for splits [0, n) into contiguous chunks, one per thread, and runs them as one job: the caller
// publishes the job and runs chunk 0, and every thread (the caller too, when done with its own) claims
// the next chunk with one atomic increment, so no lock or queue is touched per call. The caller
// returns when all chunks are done; an exception thrown by any chunk is rethrown in it.
// A worker that has nothing to do, and a caller waiting for its chunks, spin for a short while
// (kSpinMicros) before they sleep: waking a sleeping thread costs tens of microseconds, more than a
// small kernel takes, and kernels tend to come back to back. Chunks no worker has claimed are run by the
// caller: on a busy machine a worker may not get a core for milliseconds.
// One job at a time: a call made while another thread's job holds the pool, or from inside a chunk,
// runs its chunks on the calling thread.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
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
  // participants synchronize among themselves (a spin barrier). n is 1 where parallel_for would run
  // serially: inside a chunk, in a one-thread pool, or while another thread's job holds the pool.
  void team(const std::function<void(int tid, int n)>& f);

 private:
  struct Job;
  void worker_loop();
  // Publishes job, runs chunks of it, and returns when no thread is in it (rethrowing a chunk's
  // exception); false, having run nothing, inside a chunk or while another thread's job holds the pool.
  bool run(Job& job);
  std::vector<std::thread> workers_;
  std::mutex call_mu_;                 // held by the caller whose job runs
  std::atomic<Job*> job_{nullptr};     // the running job, if any
  std::atomic<uint64_t> generation_{0};  // counts published jobs: a worker's signal to look at job_
  std::atomic<int> active_{0};         // workers that read job_ and may still touch that job
  std::atomic<int> sleeping_{0};       // workers asleep (or about to be) on cv_
  std::mutex mu_;                      // cv_'s
  std::condition_variable cv_;
  std::atomic<bool> stop_{false};
};

// ThreadPool::global().parallel_for(n, f)
void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& f);

}  // namespace tg
