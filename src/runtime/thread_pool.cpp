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

// Set on the workers, and on a caller while it runs chunks: a parallel_for from a chunk would wait for
// threads that may be running its caller's chunks, so it runs serially.
static thread_local bool in_job = false;

// One parallel_for (or team): chunks of [0, n), claimed in order by whichever thread comes next. It lives
// on the caller's stack; the caller returns only when no worker can touch it any more (active_).
struct ThreadPool::Job {
  Job(const std::function<void(int64_t, int64_t)>& f, int64_t n, int64_t chunks) : f(f), n(n), chunks(chunks) {}
  const std::function<void(int64_t, int64_t)>& f;
  const int64_t n, chunks;
  std::atomic<int64_t> next{1};  // chunk 0 is the caller's
  std::atomic<int> done{0};      // chunks finished (a 32-bit atomic: wait() is a futex on it)
  std::mutex error_mu;
  std::exception_ptr error;

  int64_t bound(int64_t i) const { return i * (n / chunks) + std::min(i, n % chunks); }  // balanced chunks
  void run(int64_t i) {
    try {
      f(bound(i), bound(i + 1));
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mu);
      if (!error) error = std::current_exception();
    }
    done.fetch_add(1, std::memory_order_acq_rel);
    done.notify_all();  // a caller may sleep on it (cheap when none does)
  }
  void claim_and_run() {
    for (int64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) run(i);
  }
};

ThreadPool::ThreadPool(int nthreads) {
  for (int i = 1; i < nthreads; i++) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  stop_ = true;
  { std::lock_guard<std::mutex> lock(mu_); }  // a worker between its check and its wait is now waiting
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
  in_job = true;
  uint64_t seen = 0;  // the generation when the pool started: a job published before this thread runs is news
  auto news = [&] { return generation_.load() != seen || stop_.load(); };
  for (;;) {
    if (!spin_until(news)) {
      std::unique_lock<std::mutex> lock(mu_);
      sleeping_++;  // before news() is checked again under the lock: a publisher that misses it sees this
      cv_.wait(lock, news);
      sleeping_--;
    }
    if (stop_) return;
    seen = generation_.load();
    // announce before looking: a caller that cleared job_ and then sees active_ == 0 knows no worker holds it
    active_++;
    if (Job* job = job_.load()) job->claim_and_run();
    active_.fetch_sub(1, std::memory_order_release);
  }
}

bool ThreadPool::run(Job& job) {
  std::unique_lock<std::mutex> pool(call_mu_, std::try_to_lock);
  if (in_job || !pool.owns_lock()) return false;
  job_.store(&job);
  generation_++;
  if (sleeping_.load() > 0) {
    { std::lock_guard<std::mutex> lock(mu_); }
    cv_.notify_all();
  }
  in_job = true;
  job.run(0);
  job.claim_and_run();  // chunks no worker has claimed yet
  in_job = false;
  auto finished = [&] { return job.done.load(std::memory_order_acquire) == job.chunks; };
  if (!spin_until(finished))
    for (int d; (d = job.done.load(std::memory_order_acquire)) != job.chunks;) job.done.wait(d);
  job_.store(nullptr);
  // a worker that read job_ before it was cleared may still be in it (finishing its notify, or finding
  // no chunk left): it leaves at once, but may first have to get a core back
  for (int i = 0; active_.load() != 0; i++) {
    if (i < 1000) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      std::this_thread::yield();
    }
  }
  if (job.error) std::rethrow_exception(job.error);
  return true;
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& f) {
  if (n <= 0) return;
  Job job(f, n, std::min<int64_t>(n, size()));
  if (job.chunks <= 1 || !run(job)) f(0, n);
}

void ThreadPool::team(const std::function<void(int, int)>& f) {
  // every member is a chunk; a member waits for the others (its barrier) before it returns, so no thread
  // claims a second one, and the n - 1 workers take one each
  int n = size();
  std::function<void(int64_t, int64_t)> member = [&](int64_t b, int64_t) { f(static_cast<int>(b), n); };
  Job job(member, n, n);
  if (n == 1 || !run(job)) f(0, 1);
}

void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& f) { ThreadPool::global().parallel_for(n, f); }

}  // namespace tg
