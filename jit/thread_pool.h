// The runtime's one thread pool. Kernels split their top-level loop into
// contiguous chunks, one per thread; small work runs on the calling thread
// without waking anyone. KILN_NUM_THREADS sets the size (default: all cores).
#pragma once

#include <cstdint>
#include <functional>

namespace kiln::jit {

class ThreadPool {
 public:
  static ThreadPool& instance();
  int num_threads() const { return num_threads_; }
  // Runs fn(begin, end) over [0, n) in at most num_threads() contiguous
  // chunks and returns when all are done. Called from inside a chunk (or
  // while another caller uses the pool), it runs fn(0, n) inline.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn);
  ~ThreadPool();

 private:
  explicit ThreadPool(int threads);
  struct State;
  State* state_;
  int num_threads_;
};

}  // namespace kiln::jit
