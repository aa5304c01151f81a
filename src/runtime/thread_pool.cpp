#include "runtime/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <exception>

#include "tg/helpers.h"

namespace tg {

namespace {
constexpr int64_t kSpinMicros = 200;

// Spins until done() or kSpinMicros have passed; true if done() became true.
template <class Done> bool spin_until(Done done) {
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
  for (int i = 0;; i++) {
    if (done()) return true;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return false;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}
}  // namespace

// A chunk that itself calls parallel_for would wait on tasks queued behind it, with every worker
// possibly doing the same: nested calls run serially instead.
static thread_local bool in_pool_worker = false;

ThreadPool::ThreadPool(int nthreads) {
  for (int i = 1; i < nthreads; i++) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool([] {
    int hw = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, getenv("THREADS", hw > 0 ? hw : 1));
  }());
  return pool;
}

void ThreadPool::worker_loop() {
  in_pool_worker = true;
  for (;;) {
    std::function<void()> task;
    spin_until([this] { return queued_.load(std::memory_order_acquire) > 0; });
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and nothing left to run
      task = std::move(tasks_.front().run);
      tasks_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    task();
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& f) {
  if (n <= 0) return;
  int64_t chunks = std::min<int64_t>(n, size());
  if (chunks <= 1 || in_pool_worker) { f(0, n); return; }

  // Lives on this stack frame: we return only after every task has signalled `done`.
  struct Join {
    std::mutex mu;
    std::condition_variable cv;
    std::atomic<int64_t> remaining{0};  // changed under mu; read without it while the caller spins
    std::exception_ptr error;
  } join;
  join.remaining = chunks - 1;
  auto bounds = [&](int64_t i) { return i * (n / chunks) + std::min(i, n % chunks); };  // balanced chunks

  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int64_t i = 1; i < chunks; i++)
      tasks_.push_back({&join, [&join, &f, b = bounds(i), e = bounds(i + 1)] {
        std::exception_ptr err;
        try { f(b, e); } catch (...) { err = std::current_exception(); }
        std::lock_guard<std::mutex> l(join.mu);
        if (err && !join.error) join.error = err;
        // notify under the lock: once the caller sees remaining == 0 it destroys `join`
        if (--join.remaining == 0) join.cv.notify_one();
      }});
    queued_.fetch_add(chunks - 1, std::memory_order_release);
  }
  cv_.notify_all();

  std::exception_ptr mine;
  try { f(bounds(0), bounds(1)); } catch (...) { mine = std::current_exception(); }
  while (std::function<void()> task = take(&join)) task();  // (a task stores its own exception)
  spin_until([&] { return join.remaining.load(std::memory_order_acquire) == 0; });
  // taking the lock also waits for the last task to leave it: only then may `join` go away
  std::unique_lock<std::mutex> lock(join.mu);
  join.cv.wait(lock, [&] { return join.remaining == 0; });
  if (mine) std::rethrow_exception(mine);
  if (join.error) std::rethrow_exception(join.error);
}

std::function<void()> ThreadPool::take(const void* owner) {
  if (queued_.load(std::memory_order_acquire) == 0) return {};
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = tasks_.begin(); it != tasks_.end(); ++it)
    if (it->owner == owner) {
      std::function<void()> task = std::move(it->run);
      tasks_.erase(it);
      queued_.fetch_sub(1, std::memory_order_relaxed);
      return task;
    }
  return {};
}

void ThreadPool::team(const std::function<void(int, int)>& f) {
  if (size() == 1 || in_pool_worker) { f(0, 1); return; }
  std::lock_guard<std::mutex> lock(team_mu_);
  int n = size();
  // every chunk is one member, and a worker runs one member until it returns: the n - 1 queued members
  // are taken by n - 1 distinct workers
  parallel_for(n, [&](int64_t b, int64_t) { f(static_cast<int>(b), n); });
}

void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& f) { ThreadPool::global().parallel_for(n, f); }

}  // namespace tg
