// Kernels on small tensors split over the thread pool when the parallel
// threshold is 1 (jit::set_parallel_threshold, KILN_PARALLEL_THRESHOLD: the
// differential test's soak runs that way, README "Reliability"). The
// oracle: the reference evaluator, on the same graphs.
#include <doctest/doctest.h>

#include <vector>

#include "codegen/backend.h"
#include "jit/executor.h"
#include "jit/stats.h"
#include "kiln/jit.h"
#include "kiln/kiln.h"

using namespace kiln;

namespace {

// Sets the threshold and the pool's size for a scope.
struct SplitAll {
  int64_t threshold;
  int threads;
  explicit SplitAll(int n) : threshold(jit::set_parallel_threshold(1)), threads(get_num_threads()) {
    set_num_threads(n);
  }
  ~SplitAll() {
    jit::set_parallel_threshold(threshold);
    set_num_threads(threads);
  }
};

std::vector<Tensor> programs() {
  const Tensor x = arange(60, kFloat32).reshape({5, 12}).mul(0.37).sin();
  const Tensor i = arange(60, kInt32).reshape({5, 12});
  return {
      (x * 2 + 1).softmax(1),                 // a row kernel: 5 rows in parts
      x.sum(0),                               // a column reduction
      x.t().contiguous() + 1,                 // a tiled transpose
      x.cumsum(1),                            // a scan along rows
      (i * 3 + 1).remainder(7).to(kFloat32),  // integer arithmetic
      cat({x, x * 2}, 0).log_softmax(0),      // a cat part and a column softmax
  };
}

}  // namespace

TEST_CASE("parallel threshold 1: small kernels split over the pool and compute the reference's values") {
  if (!codegen::cpu_backend().available()) {
    MESSAGE("kiln was built without LLVM: test skipped");
    return;
  }
  set_evaluator(Evaluator::Reference);
  std::vector<std::vector<float>> want;
  for (const Tensor& t : programs()) want.push_back(t.contiguous().to_vector<float>());
  set_evaluator(Evaluator::Jit);
  for (int threads : {2, 3}) {
    CAPTURE(threads);
    SplitAll split(threads);
    const int64_t before = jit::counters().parallel_launches.load();
    const std::vector<Tensor> got = programs();
    for (size_t k = 0; k < got.size(); ++k) {
      CAPTURE(k);
      const std::vector<float> g = got[k].contiguous().to_vector<float>();
      REQUIRE(g.size() == want[k].size());
      for (size_t e = 0; e < g.size(); ++e) CHECK(g[e] == doctest::Approx(want[k][e]).epsilon(1e-5));
    }
    // every one of them ran at least one kernel in parts
    CHECK(jit::counters().parallel_launches.load() - before >= static_cast<int64_t>(got.size()));
  }
  // the default again: the same small kernels run on the caller
  const int64_t before = jit::counters().parallel_launches.load();
  for (const Tensor& t : programs()) (void)t.contiguous().to_vector<float>();
  CHECK(jit::counters().parallel_launches.load() == before);
}
