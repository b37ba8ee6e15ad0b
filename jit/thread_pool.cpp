// A minimal fork-join pool: workers take chunk indices from an atomic
// counter and the caller works too. One parallel_for at a time; nested or
// concurrent calls run inline, so kernels never deadlock on the pool.
// A worker that finished a job spins for kSpin before it sleeps on a
// condition variable, and the caller spins as long for the last chunks
// before it sleeps: waking a sleeping thread costs 10-30 us on a VM, more
// than a kernel over 2^16 elements takes (x * 2 + 1 over 2^18 floats: 26 us
// on one thread, 39 us on two, when every launch woke the worker). A job
// has several chunks per thread, so that the caller takes the chunks of a
// worker that wakes late instead of waiting for it.
#include "jit/thread_pool.h"

#include "kiln/jit.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::jit {

namespace {
thread_local bool t_in_pool = false;

constexpr auto kSpin = std::chrono::microseconds(100);
constexpr int64_t kChunksPerThread = 2;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins until done() or kSpin has passed; whether done() became true.
template <class Done> bool spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (uint32_t i = 1;; ++i) {
    if (done()) return true;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return done();
  }
}

int threads_from_env() {
  if (const char* s = std::getenv("KILN_NUM_THREADS")) {
    int n = std::atoi(s);
    if (n >= 1) return std::min(n, 1024);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}
}  // namespace

struct ThreadPool::State {
  std::mutex busy;  // held by the caller of a parallel_for
  std::mutex mu;
  std::condition_variable wake, done;
  std::vector<std::thread> workers;
  std::atomic<uint64_t> generation{0};  // written under mu; read by spinning workers
  bool stop = false;
  // the current job
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0, chunks = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> finished{0};  // written under mu; read by the spinning caller
  // Workers inside run_chunks (guarded by mu). A worker can still be there
  // after its job completed (it finished the last chunk and is about to take
  // an index past the end); the next job must not change fn / n / chunks /
  // next until it has left, or it could run a chunk of the new job twice.
  int active = 0;
  std::exception_ptr error;

  void run_chunks() {
    for (;;) {
      int64_t c = next.fetch_add(1);
      if (c >= chunks) return;
      int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
      try {
        (*fn)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      if (++finished == chunks) done.notify_all();
    }
  }
};

ThreadPool& ThreadPool::instance() {
  static ThreadPool pool(threads_from_env());
  return pool;
}

ThreadPool::ThreadPool(int threads) : state_(new State), num_threads_(1) { start_workers(threads); }

void ThreadPool::start_workers(int threads) {
  num_threads_ = threads;
  const uint64_t now = state_->generation;  // new workers wait for the next job
  for (int i = 1; i < threads; ++i)
    state_->workers.emplace_back([s = state_, now] {
      t_in_pool = true;
      uint64_t seen = now;
      for (;;) {
        spin_until([&] { return s->generation.load(std::memory_order_acquire) != seen; });
        {
          std::unique_lock<std::mutex> lock(s->mu);
          s->wake.wait(lock, [&] { return s->stop || s->generation != seen; });
          if (s->stop) return;
          seen = s->generation;
          ++s->active;
        }
        s->run_chunks();
        std::lock_guard<std::mutex> lock(s->mu);
        if (--s->active == 0) s->done.notify_all();
      }
    });
}

void ThreadPool::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stop = true;
  }
  state_->wake.notify_all();
  for (auto& t : state_->workers) t.join();
  state_->workers.clear();
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->stop = false;
}

void ThreadPool::resize(int threads) {
  threads = std::clamp(threads, 1, 1024);
  // Holding busy: no parallel_for runs meanwhile (concurrent callers run inline).
  std::lock_guard<std::mutex> busy(state_->busy);
  if (threads == num_threads_) return;
  stop_workers();
  start_workers(threads);
}

ThreadPool::~ThreadPool() {
  stop_workers();
  delete state_;
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  std::unique_lock<std::mutex> busy(state_->busy, std::defer_lock);
  if (num_threads() == 1 || n == 1 || t_in_pool || !busy.try_lock()) {
    fn(0, n);
    return;
  }
  State& s = *state_;
  {
    std::unique_lock<std::mutex> lock(s.mu);
    s.done.wait(lock, [&] { return s.active == 0; });  // see State::active
    s.fn = &fn;
    s.n = n;
    s.chunks = std::min<int64_t>(n, kChunksPerThread * num_threads());
    s.finished = 0;
    s.error = nullptr;
    s.next = 0;  // last: a worker that takes a chunk sees the fields above
    ++s.generation;
  }
  s.wake.notify_all();
  t_in_pool = true;
  s.run_chunks();
  t_in_pool = false;
  spin_until([&] { return s.finished.load(std::memory_order_acquire) == s.chunks; });
  std::unique_lock<std::mutex> lock(s.mu);
  s.done.wait(lock, [&] { return s.finished == s.chunks; });
  if (s.error) std::rethrow_exception(s.error);
}

}  // namespace kiln::jit

namespace kiln {
void set_num_threads(int n) { jit::ThreadPool::instance().resize(n); }
int get_num_threads() { return jit::ThreadPool::instance().num_threads(); }
}  // namespace kiln
