// Controls and statistics of kiln's JIT: what it compiled, launched and
// moved, and the switches that turn fusion (or the JIT) off for comparison.
#pragma once

#include <cstdint>

namespace kiln {

struct JitStats {
  int64_t evaluations = 0;        // graph evaluations run by the JIT
  int64_t schedules = 0;          // graphs scheduled (partitioned and lowered)
  int64_t schedules_reused = 0;   // graphs whose structure was seen before: schedule reused
  int64_t kernels_compiled = 0;   // kernels the backend compiled
  int64_t kernels_launched = 0;   // kernel runs
  int64_t library_calls = 0;      // BLAS / library calls (matmul)
  int64_t cache_hits_memory = 0;  // kernels found compiled in this process
  int64_t cache_hits_disk = 0;    // kernels loaded from the disk cache
  double compile_seconds = 0.0;   // time spent compiling
  int64_t bytes_read = 0;         // bytes loaded by kernels from their input buffers
  int64_t bytes_written = 0;      // bytes stored by kernels
};

// A snapshot of the counters since the start or the last reset_stats().
JitStats stats();
void reset_stats();

// Fusion on (default) or off: off runs one kernel per op (views still fold
// into the kernels that read them); results are the same. KILN_FUSION=0 sets
// it off at start-up.
void set_fusion_enabled(bool enabled);
bool fusion_enabled();

// Which evaluator realizes graphs: the fusing JIT (default where a backend is
// available) or the reference evaluator (plain loops, one node at a time).
// KILN_EVALUATOR=reference selects the latter at start-up.
enum class Evaluator : uint8_t { Jit, Reference };
void set_evaluator(Evaluator e);
Evaluator evaluator();

}  // namespace kiln
