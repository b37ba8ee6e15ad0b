// The runtime's one thread pool. Kernels split their top-level loop into
// contiguous chunks, a few per thread; small work runs on the calling thread
// without waking anyone. KILN_NUM_THREADS sets the size at start-up (default:
// all cores); kiln::set_num_threads changes it later.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace kiln::jit {

class ThreadPool {
 public:
  static ThreadPool& instance();
  int num_threads() const { return num_threads_.load(std::memory_order_relaxed); }
  // Replaces the workers by threads - 1 new ones (the caller is the last),
  // after a parallel_for in progress has finished.
  void resize(int threads);
  // Runs fn(begin, end) over [0, n) in at most 2 * num_threads() contiguous
  // chunks and returns when all are done. Called from inside a chunk (or
  // while another caller uses the pool), it runs fn(0, n) inline.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn);
  ~ThreadPool();

 private:
  explicit ThreadPool(int threads);
  void start_workers(int threads);  // with busy held (or in the constructor)
  void stop_workers();
  struct State;
  State* state_;
  std::atomic<int> num_threads_;
};

}  // namespace kiln::jit
