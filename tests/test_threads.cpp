// Thread safety: graphs built and evaluated from several threads at once.
//
// The contract (README, "Reliability"): each thread builds and evaluates its
// own tensors; tensors shared between threads must be evaluated before they
// are shared and are then only read. The kernel and schedule caches, the
// buffer pool, the statistics, the thread pool and the random generator are
// shared and locked; the graph-walk scratch maps, the node/tensor free lists
// and autograd's grad mode are per thread. A tensor may be handed to another
// thread (through a join or a lock) and evaluated or freed there.
//
// The stress test runs kThreads threads x kIterations iterations of mixed
// workloads (elementwise chains, reductions, matmul inline and through BLAS,
// views and in-place writes through them, casts to 16-bit and integer dtypes,
// cat/split, an autograd training step), each reading shared inputs, and
// checks every result bit for bit against the same workload run on one
// thread first. Under ThreadSanitizer (./dev test-tsan) it must give no report.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "codegen/backend.h"
#include "jit/jit_log.h"
#include "jit/kernel_cache.h"
#include "jit/schedule.h"
#include "jit/stats.h"
#include "jit/thread_pool.h"
#include "kiln/kiln.h"
#include "linear_step.h"

using namespace kiln;
using namespace kiln::indexing;

namespace {

constexpr int kThreads = 8;
constexpr int kIterations = 100;
constexpr int kKinds = 7;

// Shared, evaluated, read-only inputs.
struct Shared {
  Tensor x;  // [96, 80] float32
  Tensor w;  // [80, 24] float32
  Tensor big_a, big_b;  // [160, 160] float32: BLAS
};

// The bits of a result, so comparisons are exact (NaN and -0 included).
std::vector<uint64_t> bits(const Tensor& t) {
  const std::vector<double> v = t.to(kFloat64).contiguous().to_vector<double>();
  std::vector<uint64_t> out(v.size());
  if (!v.empty()) std::memcpy(out.data(), v.data(), v.size() * sizeof(double));
  return out;
}

// This thread's own data, a function of the iteration.
Tensor own(int64_t rows, int64_t cols, int i) {
  std::vector<double> v(static_cast<size_t>(rows * cols));
  for (size_t k = 0; k < v.size(); ++k) v[k] = std::sin(0.37 * static_cast<double>(k) + i) * 2.0;
  return tensor(v, kFloat32).reshape({rows, cols});
}

std::vector<uint64_t> workload(int kind, int i, const Shared& s) {
  const int64_t r = 8 + i % 13;
  switch (kind) {
    case 0: {  // elementwise chain over a shared input, large enough to use the pool
      Tensor y = ((s.x * (1.5 + i) + own(96, 80, i)).exp().log() - s.x.sigmoid()).relu().tanh();
      return bits(y);
    }
    case 1: {  // row / column / full reductions and a softmax
      Tensor a = own(r, 80, i) + s.x.narrow(0, 0, r);
      std::vector<uint64_t> out = bits(a.sum(1));
      for (const Tensor& t : {a.mean(0), a.var(int64_t{1}), a.softmax(1), std::get<0>(a.max(1)),
                              std::get<1>(a.max(1)).to(kFloat32), a.sum(), a.amax({0})}) {
        std::vector<uint64_t> b = bits(t);
        out.insert(out.end(), b.begin(), b.end());
      }
      return out;
    }
    case 2: {  // matmul: inline (small) and BLAS (large)
      Tensor small = relu(matmul(own(r, 80, i), s.w) + 0.5);
      Tensor large = matmul(s.big_a + static_cast<double>(i), s.big_b).sum(0);
      std::vector<uint64_t> out = bits(small), b = bits(large);
      out.insert(out.end(), b.begin(), b.end());
      return out;
    }
    case 3: {  // views and in-place writes through them
      Tensor y = own(r, 12, i).clone();
      y.index({Slice(None, None, 2)}).mul_(2);
      y.t().narrow(0, 1, 3).add_(s.x.narrow(0, 0, 3).narrow(1, 0, r));
      y.index({0}) = static_cast<double>(i);
      y.select(1, 5).fill_(-1.25);
      return bits(y.permute({1, 0}).contiguous());
    }
    case 4: {  // an autograd training step (linear regression), three times
      Tensor X = s.x.narrow(1, 0, 4), Y = s.x.narrow(1, 4, 1) * 0.5;
      Tensor w = zeros({4, 1}, requires_grad()), b = zeros({1}, requires_grad());
      for (int step = 0; step < 3; ++step) kiln_test::linear_step(X, Y, w, b, 0.05);
      std::vector<uint64_t> out = bits(w), c = bits(b);
      out.insert(out.end(), c.begin(), c.end());
      return out;
    }
    case 5: {  // casts to 16-bit floats and integers
      Tensor a = own(r, 80, i);
      Tensor h = (a.to(kFloat16) * 3).to(kBFloat16).to(kFloat32).sum(0);
      Tensor n = (a * 10).to(kInt64).sum(0);
      return bits(h + n);
    }
    default: {  // cat, stack, split
      Tensor a = own(r, 6, i);
      Tensor c = cat({a, s.x.narrow(0, 0, 2).narrow(1, 0, 6), a * 2}, 0);
      std::vector<Tensor> parts = split(c, 5, 0);
      Tensor st = stack({parts[0].sum(0), parts.back().sum(0)}, 0);
      return bits(st);
    }
  }
}

}  // namespace

namespace {
Shared make_shared_inputs() {
  manual_seed(1234);
  Shared s{randn({96, 80}), randn({80, 24}) * 0.1, randn({160, 160}), randn({160, 160})};
  eval({s.x, s.w, s.big_a, s.big_b});  // shared inputs are evaluated before they are shared
  return s;
}
}  // namespace

TEST_CASE("threads: 8 threads x mixed workloads give the single-threaded results") {
  const Shared s = make_shared_inputs();
  // The oracle: every (kind, iteration) on this thread alone.
  std::vector<std::vector<uint64_t>> want(kKinds * kIterations);
  for (int i = 0; i < kIterations; ++i)
    for (int k = 0; k < kKinds; ++k) want[k * kIterations + i] = workload(k, i, s);

  const JitStats before = stats();
  std::vector<int> mismatches(kThreads, 0), errors(kThreads, 0);
  std::vector<std::vector<Tensor>> handed_over(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int i = 0; i < kIterations; ++i) {
          const int k = (t + i) % kKinds;
          if (workload(k, i, s) != want[k * kIterations + i]) ++mismatches[t];
        }
        // Graphs built here and evaluated (and freed) by the main thread.
        Tensor a = own(5, 7, t);
        handed_over[t] = {(a * 2 + s.x.narrow(0, 0, 5).narrow(1, 0, 7)).sum(1), a.t().contiguous()};
      } catch (const std::exception& e) {
        MESSAGE("thread " << t << " threw: " << e.what());
        ++errors[t];
      }
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    CAPTURE(t);
    CHECK(errors[t] == 0);
    CHECK(mismatches[t] == 0);
    Tensor a = own(5, 7, t);
    CHECK(bits(handed_over[t][0]) == bits((a * 2 + s.x.narrow(0, 0, 5).narrow(1, 0, 7)).sum(1)));
    CHECK(bits(handed_over[t][1]) == bits(a.t()));
  }
  handed_over.clear();  // nodes and tensors built on other threads, freed here
  // The counters are shared atomics: every evaluation was counted.
  CHECK(stats().evaluations - before.evaluations >= kThreads * kIterations);
}

TEST_CASE("threads: tensors freed on another thread than the one that built them") {
  // The free lists are per thread (core/pool_alloc.h): a block freed on
  // another thread joins that thread's list; a thread's list is emptied
  // when the thread exits. Build on workers, free on the main thread and on
  // other workers, then build again everywhere.
  std::vector<Tensor> made(4 * 200);
  std::vector<std::thread> builders;
  for (int t = 0; t < 4; ++t)
    builders.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) made[t * 200 + i] = (arange(6) * (i + t) + 1).reshape({2, 3}).t();
    });
  for (std::thread& th : builders) th.join();
  std::vector<std::thread> freers;
  for (int t = 0; t < 2; ++t)
    freers.emplace_back([&, t] {
      for (int i = t * 200; i < (t + 1) * 200; ++i) made[i] = Tensor();
    });
  for (std::thread& th : freers) th.join();
  for (int i = 400; i < 800; ++i) {
    const int t = i / 200, k = i % 200;
    CHECK(made[i].sum().item<int64_t>() == 15 * (k + t) + 6);
  }
  made.clear();
  CHECK((arange(6) * 2).sum().item<int64_t>() == 30);
}

TEST_CASE("threads: set_num_threads resizes the pool between evaluations") {
  const int old = get_num_threads();
  manual_seed(5);
  Tensor x = randn({300, 300});
  eval(x);
  const std::vector<uint64_t> want = bits(x.exp().sum(1));
  for (int n : {1, 3, 2, old}) {
    set_num_threads(n);
    CHECK(get_num_threads() == n);
    CHECK(bits(x.exp().sum(1)) == want);
  }
  set_num_threads(0);  // clamped to one
  CHECK(get_num_threads() == 1);
  set_num_threads(old);
}

TEST_CASE("threads: a cold evaluation compiles its new kernels side by side on the pool") {
  if (!codegen::cpu_backend().available()) {
    MESSAGE("kiln was built without LLVM: test skipped");
    return;
  }
  const int old_threads = get_num_threads();
  const std::string old_dir = jit::disk_cache_dir();
  jit::set_disk_cache_dir("");  // every kernel a cold compile
  std::vector<float> xs(6 * 5);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  Tensor x = from_blob(xs.data(), {6, 5}, kFloat32);
  // Three kernels: a column sum, a row max, an elementwise map.
  struct Run {
    int64_t compiled, memory_hits;
    std::vector<std::string> ahead;  // the "side by side" log lines
    std::vector<std::vector<uint64_t>> values;
  };
  auto run = [&](int threads, bool clear_kernels) {
    set_num_threads(threads);
    jit::clear_schedule_cache();
    if (clear_kernels) jit::clear_memory_kernel_cache();
    Run out;
    jit::set_jit_log(true, [&](const std::string& l) {
      if (l.find("side by side") != std::string::npos) out.ahead.push_back(l);
    });
    const JitStats s0 = kiln::stats();
    Tensor c = x.sum(0), r = std::get<0>(x.max(1)), e = (x * 2.0f).exp();
    eval(c, r, e);
    const JitStats s1 = kiln::stats();
    jit::set_jit_log(false);
    out.compiled = s1.kernels_compiled - s0.kernels_compiled;
    out.memory_hits = s1.cache_hits_memory - s0.cache_hits_memory;
    out.values = {bits(c), bits(r), bits(e)};
    return out;
  };
  const Run one = run(1, true), two = run(2, true);
  CHECK(one.compiled == 3);
  CHECK(one.memory_hits == 0);
  CHECK(one.ahead.empty());
  CHECK(two.compiled == 3);
  CHECK(two.memory_hits == 0);  // compiled, not reused
  CHECK(two.ahead == std::vector<std::string>{"compiling 3 kernels side by side on 2 threads"});
  CHECK(one.values == two.values);
  // A new schedule whose kernels the memory cache holds: three memory hits,
  // nothing compiled, the pool not asked to compile.
  const Run cached = run(2, false);
  CHECK(cached.compiled == 0);
  CHECK(cached.memory_hits == 3);
  CHECK(cached.ahead.empty());
  CHECK(cached.values == one.values);
  // by hand: column 0 holds x[0], x[5], ... = i % 7 for i = 0, 5, 10, 15, 20, 25
  float col0 = 0;
  for (int i = 0; i < 30; i += 5) col0 += 0.25f * static_cast<float>(i % 7) - 0.5f;
  CHECK(x.sum(0)[0].item<float>() == col0);
  CHECK(std::get<0>(x.max(1))[1].item<float>() == 1.0f);  // row 1: i = 5..9, i % 7 = 6 at i = 6
  set_num_threads(old_threads);
  jit::set_disk_cache_dir(old_dir);
}

TEST_CASE("threads: the pool runs every chunk exactly once, job after job, from several callers") {
  // Regression: a worker that finished a job's last chunk could still be
  // taking a chunk index when the next job reset the pool's fields, and run
  // a chunk of the new job twice (jit/thread_pool.cpp, State::active).
  const int old = get_num_threads();
  set_num_threads(4);
  std::atomic<int> bad{0};
  auto caller = [&] {
    for (int job = 0; job < 2000; ++job) {
      std::vector<std::atomic<int>> runs(8);
      jit::ThreadPool::instance().parallel_for(8, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) runs[static_cast<size_t>(i)].fetch_add(1);
      });
      for (auto& r : runs) bad += r.load() != 1;
    }
  };
  std::thread other(caller);
  caller();
  other.join();
  CHECK(bad.load() == 0);
  set_num_threads(old);
}

TEST_CASE("threads: a kernel goes parallel by its elements times their cost") {
  // jit/executor.cpp, kParallelThreshold; jit::iteration_cost: 2^16 elements
  // of x * 2 + 1 run on the caller (two threads did not beat one there),
  // 2^16 of exp (four times the cost) and 2^17 of x * 2 + 1 over the pool.
  if (!codegen::cpu_backend().available()) {
    MESSAGE("kiln was built without LLVM (kernels are interpreted on the caller): test skipped");
    return;
  }
  const int old = get_num_threads();
  set_num_threads(2);
  Tensor small = rand({1024, 64}), large = rand({2048, 64});
  kiln::eval(small, large);
  auto parallel = [](const Tensor& t) {
    reset_stats();
    t.eval();
    return jit::counters().parallel_launches.load();
  };
  CHECK(parallel(small * 2.0f + 1.0f) == 0);
  CHECK(parallel(small.exp()) == 1);
  CHECK(parallel(large * 2.0f + 1.0f) == 1);
  CHECK(parallel(rand({16, 64}).exp()) == 0);
  // a kernel of many loads an iteration, a quarter of them at least: the
  // first level of a [768, 1024] sum(0) combines 16 stored rows into each
  // of its [48, 1024] values (2^15 x 1.5 iterations, cost 4) over the pool;
  // the next, [3, 1024], and the final sum on the caller
  const Tensor tall = rand({768, 1024}).eval();
  CHECK(parallel(tall.sum(0)) == 1);
  CHECK(parallel(tall.narrow(0, 0, 48) * 2.0f) == 0);  // as many values, one load each
  // the values do not depend on it
  const Tensor y = large * 2.0f + 1.0f;
  y.eval();
  set_num_threads(1);
  const Tensor z = large * 2.0f + 1.0f;
  CHECK(y.to_vector<float>() == z.to_vector<float>());
  set_num_threads(old);
}
