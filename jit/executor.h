// The JIT's entry point: schedule a graph, compile (or find) its kernels,
// run them on the thread pool, and hand back the roots' buffers.
#pragma once

#include <cstdint>
#include <vector>

#include "core/node.h"

namespace kiln::jit {

// Whether the JIT can evaluate these roots here (a CPU backend is present and
// every node is on the CPU); if not, the reference evaluator runs.
bool can_evaluate(const std::vector<NodePtr>& roots);

// One buffer per root, like reference::evaluate. `interpret` runs the kernels
// through the IR interpreter instead of compiling them (for tests).
std::vector<BufferPtr> evaluate(const std::vector<NodePtr>& roots, bool interpret = false);

// For tests: a compiled kernel runs on the thread pool from this many scalar
// iterations times their cost (default 2^17, or KILN_PARALLEL_THRESHOLD);
// 1 splits every kernel of more than one outer iteration. Returns the
// threshold before; a value below 1 restores the default.
int64_t set_parallel_threshold(int64_t iterations);

}  // namespace kiln::jit
