// Seeing what kiln runs, and why: the pending graph, the fusion plan (which
// nodes went into which kernel, why each kernel boundary is there, each
// kernel's traffic and arithmetic) and the graph saved as JSON for
// tools/kiln-dump. Every node carries the user's source line that created it
// (kiln/source_location.h); the dumps name those lines (file name and line,
// without the directory, so output is the same in every checkout).
//
// Environment variables, read at start-up (README, "Seeing what ran"):
//   KILN_DUMP=graph,plan,kernel-ir,llvm,asm  what every JIT evaluation writes
//   KILN_DUMP_DIR=dir                        where (default: kiln-dump/)
//   KILN_LOG=jit                             compiles, cache hits and misses,
//                                            evaluations and their reasons (stderr)
//   KILN_PROFILE=1                           a per-kernel time table at exit (stderr)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

enum class DumpFormat : uint8_t {
  Text,  // readable text
  Dot,   // Graphviz DOT; in explain(), each kernel is a cluster
  Json,  // machine-readable; dump()'s JSON is save_graph()'s
};

struct DumpOptions {
  bool locations = true;  // name each node's source line (file:line)
};

// The pending graph below these tensors (evaluated values appear as leaves).
// Nothing is evaluated.
std::string dump(const std::vector<Tensor>& tensors, DumpFormat format = DumpFormat::Text,
                 const DumpOptions& options = {});

// The fusion plan evaluating these tensors would run now: one entry per
// kernel or library call, with the nodes it computes, why it is a separate
// kernel, the bytes it reads and writes, its arithmetic (scalar operations)
// and the source lines it fused. Nothing is evaluated or compiled.
std::string explain(const std::vector<Tensor>& tensors, DumpFormat format = DumpFormat::Text,
                    const DumpOptions& options = {});

// The pending graph as JSON (format "kiln-graph", version 1): every node's
// op, dtype, device, shape, attributes, inputs and source location, and the
// outputs. Leaf data is not saved: a loaded graph can be dumped, planned and
// compiled (tools/kiln-dump), not evaluated.
std::string save_graph(const std::vector<Tensor>& tensors);
// The same, written to `path`; raises kiln::Error when the file cannot be written.
void save_graph(const std::vector<Tensor>& tensors, const std::string& path);

// KILN_PROFILE's table (per kernel: launches, time, GB/s, share of the
// total) of the launches timed so far; "" when profiling is off.
std::string profile_report();
// Turns profiling on or off (KILN_PROFILE=1 turns it on at start-up) and
// forgets what was measured.
void set_profiling(bool enabled);

}  // namespace kiln
