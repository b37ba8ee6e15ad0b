// Scheduling a graph never seen before does work in proportion to the
// graph, not to its square: a chain whose lowering finds a store in every
// layer (a kernel reading two reductions over different dims stores one)
// re-lowers only the kernels a store changed (jit/schedule.cpp,
// LoweringMemo) and re-runs fuse-rows only below the nodes stored since
// (jit/fuse_rows.cpp, RowFusion). Work is counted (kernels lowered, nodes
// fuse-rows visited), not timed; the values are checked against the
// reference evaluator.
#include <doctest/doctest.h>

#include "jit/schedule.h"
#include "jit/stats.h"
#include "jit_checks.h"

using namespace kiln;
using namespace kiln_test;

namespace {

// `layers` layers of y - y.mean(0) + y.sum(1) * 0.01 on [8, 8], then .sum().
Tensor centered_chain(int layers) {
  Tensor y = sine_leaf({8, 8});
  for (int i = 0; i < layers; ++i) y = y - y.mean(0, true) + y.sum(1, true) * 0.01f;
  return y.sum();
}

struct Work {
  size_t kernels;
  int64_t lowered, visits;
};

Work schedule_work(const Tensor& t) {
  jit::clear_schedule_cache();
  reset_stats();
  const size_t k = kernels(t);
  return {k, jit::counters().kernels_lowered.load(), jit::counters().fuse_rows_visits.load()};
}

}  // namespace

TEST_CASE("jit schedule: a chain that stores a reduction per layer is scheduled in work linear in its depth") {
  for (int layers : {10, 20, 40}) {
    CAPTURE(layers);
    const Tensor out = centered_chain(layers);
    const Work w = schedule_work(out);
    MESSAGE(layers, " layers: ", w.kernels, " kernels, ", w.lowered, " lowered, ", w.visits, " fuse-rows visits");
    CHECK(w.kernels == static_cast<size_t>(2 * layers + 1));
    CHECK(w.lowered <= static_cast<int64_t>(w.kernels + layers));
    CHECK(w.visits <= 20 * layers + 40);
    check_jit(out);
  }
}
