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
  double disk_load_seconds = 0.0; // time spent reading and linking kernels from the disk cache
  int64_t bytes_read = 0;         // bytes loaded by kernels from their input buffers
  int64_t bytes_written = 0;      // bytes stored by kernels
  int64_t writes_in_place = 0;    // in-place writes scattered into their tensor's buffer (no copy)
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

// The size of the thread pool that kernels split their work over, as
// torch::set_num_threads. KILN_NUM_THREADS sets it at start-up (default: all
// cores). Results do not depend on it: every output element is computed by
// one thread in a fixed order, whatever the split. Call it between
// evaluations (it waits for a running parallel kernel to finish).
void set_num_threads(int n);
int get_num_threads();

// The buffer allocator's counters (tensor data kiln allocated itself; not
// graph nodes, not from_blob memory). Thread-safe.
struct MemoryStats {
  int64_t live_bytes = 0;    // held by live buffers now
  int64_t peak_bytes = 0;    // the most live_bytes has been since start or reset_peak_memory()
  int64_t pooled_bytes = 0;  // freed blocks kept for reuse (KILN_POOL_MB caps them)
  int64_t allocations = 0;   // buffers allocated since start (pool reuses included)
};
MemoryStats memory_stats();
void reset_peak_memory();  // peak_bytes = live_bytes
void release_memory_pool();  // frees the pooled blocks

}  // namespace kiln
