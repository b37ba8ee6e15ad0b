// The scheduler: partitions a pending graph into kernels. Its stages run as
// one named pipeline (see schedule.cpp):
//   collect   the unevaluated nodes below the roots, in topological order
//   partition which nodes are stored to memory ("materialized"); every other
//             node is computed inline inside the kernels that read it
//   fuse-rows reductions whose only reader is one kernel over the same rows
//             run inside that kernel (softmax, var, x - mean: one kernel);
//             values costlier to recompute than to store are stored
//   lower     each materialized node becomes a Step: a Kernel (IR) with its
//             runtime params, or a library call (matmul)
//   merge     outputs the caller asked for together that share an iteration
//             space and do not read each other share one kernel (horizontal)
//
// The fusion rule for shared nodes: an elementwise, view or source node read
// by several kernels is recomputed in each (it is cheap and saves a store and
// a load); a reduction, matmul, cat or write read by several kernels is
// computed once and stored. Elementwise values are stored too where
// recomputing them costs more than a store (fuse_rows' shared-value rule,
// store_broadcast_math's broadcast math).
//
// Matmul is decided by shape (matmul_inline below). A memory-bound matmul is
// computed inline as a sum over K, exactly like a Reduce node: a row kernel
// loops over [batch..., M, N] and folds A[..., m, k] * B[..., k, n] into an
// accumulator per row. Its operands' producers (elementwise, views, casts)
// fuse into that loop, and its readers fuse after it, as for any reduction.
// Memory-bound means:
//   * K <= 16 (outer products, thin layers): K is then a constant of the
//     kernel, so LLVM unrolls the dot product and vectorizes over N; or
//   * M <= 4 or N <= 4 (dot products, matrix-vector, vector-matrix), when
//     both operands are read contiguously along K (the innermost loop): A
//     row-major, B a column (N = 1) or a transposed matrix (x @ W.t()); a
//     row-major B [K, N] would be walked down its columns, many times slower
//     than BLAS; or when the product is tiny (M * N * K <= 4096).
// Every other matmul is a Matmul step (OpenBLAS for float32/float64) whose
// operands are read from memory: in place when each is a stored node seen
// through views BLAS can walk (x.t(), a column slice, a broadcast batch:
// jit/matmul.h), else stored first by a copy kernel. Because the decision
// reads M, N and K, a kernel is shape-generic in every dim except across the
// thresholds (and K <= 16 is specialized): X @ w for X of 100x1 and of 1000x1
// is one kernel.
// An inline matmul may also run nested inside another reduction's loops
// (`(X @ w - y).pow(2).sum()`, `X.t() @ (X @ w - y)`): where a kernel reads it
// at indices that walk every enclosing loop, so that each of its values is
// still computed once (lower_reduce.cpp). One with K = 1 (an outer product: a
// multiply per element) is recomputed by each kernel that reads it, like an
// elementwise node, rather than stored.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/node.h"
#include "jit/kernel_ir.h"
#include "jit/lower.h"

namespace kiln::jit {

enum class StepKind : uint8_t {
  Kernel,  // run `kernel` with `params`
  Matmul,  // BLAS / loop: outputs[0]'s operands, read through their views
           // from the buffers of inputs[0] and inputs[1] (jit/matmul.h)
  Sort,    // outputs[0] (an ArgSort) from the stored buffer of inputs[0],
           // rows sorted on the thread pool (core/sort_rows.h)
};
// A library step (not a generated kernel): Matmul, Sort.
inline bool is_library(StepKind k) { return k != StepKind::Kernel; }

// How costly a kernel's iterations are against a plain copy's, for the
// executor's parallel threshold: 4 where it evaluates transcendental math or
// draws random numbers (exp about 0.25 ns an element on one core here,
// x * 2 + 1 about 0.09 ns), else 1. Any division counts, a tiled kernel's
// tile count too: its staged transposes cost several copies' time an element
// ([362, 362] x.t() + y took 0.035 ms on one thread, 0.024 ms on two).
// A kernel reading many values an iteration costs a quarter of its loads
// at least: a column level's row of output reads 16 rows (the second level
// of a [4096, 4096] sum(0), [12, 4096] of 16 rows each, ran 0.58 ms on one
// thread whatever the pool).
int64_t iteration_cost(const Kernel& k);
// Whether a kernel evaluates such math for each element, not only on values
// fixed for the whole kernel (its params and constants): one that does not is
// bound by memory (lowerer.h's footprint param).
bool element_math(const Kernel& k);

// A kernel's IR and, once compiled, its function: shared by every schedule
// that uses it (a cached schedule hands the same code to each evaluation).
struct KernelCode {
  Kernel ir;
  std::atomic<KernelFn> fn{nullptr};
  int64_t cost;  // iteration_cost(ir)
  explicit KernelCode(Kernel k) : ir(std::move(k)), cost(iteration_cost(ir)) {}
};

// Why a node is stored to memory, i.e. why a kernel boundary is there.
// Recorded by the scheduler where it decides (partition, fuse-rows, lower),
// so explain() and the dumps report the decision rather than a guess.
enum class Cut : uint8_t {
  Output,           // a value the caller asked for
  FusionOff,        // KILN_FUSION=0: one kernel per op
  MatmulLibrary,    // a matmul above the inline size limits: a BLAS call
  MatmulOperand,    // an operand of a BLAS matmul whose views BLAS cannot read
  MatmulReuse,      // an inline matmul's computed operand, reread too often (or random)
  Join,             // a cat: one kernel per part, each writing into the output (or cat_in_one_kernel)
  Write,            // an in-place write: a copy of the base, then a scatter
  WriteSource,      // the value an in-place write stores, read from the written tensor
  SharedReduction,  // a reduction read by several kernels
  ReductionInJoin,  // a reduction read by a cat part or an in-place write
  OtherRows,        // a reduction its reader cannot compute in its own loops
  Merged,           // outputs over one iteration space that share one kernel
  ByDesign,         // Node::store: a blocked reduction's stage, a fold's padded input or partial sum
  SharedValue,      // a value read by several kernels that costs more to recompute than to store
  BroadcastMath,    // costly math a reader broadcasts along an outer dim: computed once, at its own size
  IndexedRead,      // a gather's (scan's) input computed with a reduction: read at positions only its index knows
  Scan,             // a cumsum: its own kernel, a loop carrying the running value
  Sort,             // a sort: a library step sorting the rows of its stored input
  SortInput,        // a computed value a sort reads: stored first
  ScatterIndex,     // a scatter's computed index: its own kernel, not the scatter's serial loop
};
const char* cut_name(Cut c);  // a short id: "output", "shared-reduction", ...
const char* cut_text(Cut c);  // a phrase: "a reduction read by several kernels"

struct Boundary {
  Cut cut = Cut::Output;
  const char* detail = "";  // a literal with more detail (the lowering's reason), or ""
};

struct Step {
  StepKind kind = StepKind::Kernel;
  // The nodes whose values this step produces, in buffer-slot order after the
  // inputs. Several when outputs over one iteration space share a kernel
  // (horizontal fusion). A step whose output already has a buffer writes into
  // it: the later parts of a Cat, the scatter half of an Assign.
  std::vector<const Node*> outputs;
  std::vector<const Node*> inputs;       // materialized nodes read, in buffer-slot order
  std::shared_ptr<KernelCode> code;  // Kernel steps
  std::vector<int64_t> params;
  std::vector<DataParam> data;  // params that are data: seeds, offsets, fill values
  int64_t parallel_extent = 1;
  Boundary why;  // why this kernel boundary exists (explain, dumps)
  // Scalar iterations the kernel runs (its rows times the reduced extent):
  // the executor splits kernels over threads by this, not by the output size.
  int64_t work = 0;
  // The first half of an in-place write (an Assign): the copy of its base.
  // The executor skips it and lets the scatter (the next step) write into
  // the base's own buffer when nothing else can still read the base.
  bool base_copy = false;
  // A row kernel (Lowered::rows): horizontal fusion merges it only with row
  // kernels, whose accumulators an unrolled one (narrow rows) lacks.
  bool rows = false;
};
// A step's name in plans, profiles and errors: its kernel's, or the library call's.
inline std::string step_name(const Step& st) {
  switch (st.kind) {
    case StepKind::Kernel: return st.code->ir.name;
    case StepKind::Matmul: return "matmul";
    case StepKind::Sort: return "sort";
  }
  return "?";
}

struct Schedule {
  std::vector<Step> steps;  // every step's outputs are the stored (materialized) nodes
};

struct ScheduleOptions {
  bool fusion = true;  // false: one kernel per op (views still fold into readers)
};

// Builds the schedule for evaluating `roots`. Nodes already evaluated (Buffer
// nodes, nodes with a `realized` memo) are read from memory. A graph of the
// same structure as one scheduled before (same ops, shapes, attributes,
// sharing and evaluated nodes) reuses that schedule: nothing is lowered again.
Schedule schedule(const std::vector<NodePtr>& roots, const ScheduleOptions& options);
// How many schedules were served from that cache (for tests and stats).
int64_t schedule_cache_hits();
// Forgets every cached schedule (and with them their kernels' functions).
void clear_schedule_cache();

// Matmuls up to these sizes are memory-bound: computed inline (see above).
inline constexpr int64_t kInlineMatmulMaxK = 16;
inline constexpr int64_t kInlineMatmulMaxMN = 4;
inline constexpr int64_t kInlineMatmulTinyWork = 4096;  // M * N * K
// A computed operand of an inline matmul read more often than this per
// element (N times for A, M times for B) is stored first (as are random ones).
inline constexpr int64_t kInlineMatmulMaxReuse = 64;

// Whether the Matmul node n ([..., M, K] x [..., K, N]) is computed inline as
// a reduction over K (true) or as a Matmul step (false). False for other ops.
bool matmul_inline(const Node& n);

// Whether the inline matmul n has K = 1 and is recomputed by each kernel
// reading it instead of stored once.
bool matmul_recomputed(const Node& n);

// Whether a node is computed as a reduction inside a row kernel: a Reduce
// node, or a matmul computed inline.
inline bool reduces(const Node& n) { return is_reduction(n.op) || matmul_inline(n); }

// A cat whose dim and the dims after it hold at most this many elements
// (a stack of columns, [N, 3]; pairs interleaved, [N, 64, 2]; [N, 2]
// pairs stacked along dim 1, [N, 2, 2]; 3 x 3 and 4 x 4 matrices stacked
// from columns, [N, 9] and [N, 16]; a small 1-D cat) is one kernel
// (lower.cpp: lower_cat_whole), not one per part: the parts' narrow
// strided writes ran one element at a time.
inline constexpr int64_t kCatWholeMaxWidth = 16;
// Whether Cat node n is lowered as one kernel over its output (at most
// kCatWholeMaxWidth elements from its dim on, at least two parts that are
// not empty); else a kernel per part writes into the output.
bool cat_in_one_kernel(const Node& n);

// Whether a node already has a value in memory (core/node.h).
using kiln::has_value;

// Transposed reads (`x.t() + y`): a kernel writing n (of rank `rank`) along
// its last dim computes, inline under elementwise ops, a view with a stride
// > 1 along that dim and stride 1 along an earlier one. That earlier dim
// (the innermost such), or -1. `stored` says which nodes the kernel reads
// from memory (the walk stops there); budget bounds the walk. The lowering
// tiles such a kernel and stages its transposed reads (lower_tiles.cpp), so
// math on them runs in vector loops inside the tiles.
int64_t transposed_dim(const Node* n, int64_t rank, int& budget, const std::function<bool(const Node*)>& stored);

}  // namespace kiln::jit
