// The cost of building lazy graph nodes: every operation records a node and
// returns at once; nothing here evaluates. The per_node counter is CPU time
// per recorded node (an inverted rate: Google Benchmark prints it as e.g. 85ns).
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

#include <cstdint>

namespace {

void report_nodes(benchmark::State& state, int64_t nodes_per_iteration) {
  state.counters["per_node"] = benchmark::Counter(
      static_cast<double>(state.iterations() * nodes_per_iteration),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// y = x * 2 + 1, repeated: two nodes per step, a chain `steps` deep.
void BM_ChainMulAdd(benchmark::State& state) {
  const int64_t steps = state.range(0);
  const kiln::Tensor x = kiln::ones({4, 4});
  for (auto _ : state) {
    kiln::Tensor y = x;
    for (int64_t i = 0; i < steps; ++i) y = y * 2 + 1;
    benchmark::DoNotOptimize(y);
  }
  report_nodes(state, 2 * steps);
}
BENCHMARK(BM_ChainMulAdd)->Arg(1)->Arg(16)->Arg(256);

// Tensor-tensor add with broadcasting: shape inference on every node.
void BM_BroadcastAdd(benchmark::State& state) {
  const kiln::Tensor a = kiln::ones({8, 1});
  const kiln::Tensor b = kiln::ones({1, 8});
  for (auto _ : state) {
    kiln::Tensor y = a + b;
    benchmark::DoNotOptimize(y);
  }
  report_nodes(state, 1);
}
BENCHMARK(BM_BroadcastAdd);

}  // namespace
