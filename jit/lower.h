// Lowering: one materialized graph node (and everything computed inline
// inside it) becomes a Kernel in the kernel IR plus its runtime params.
#pragma once

#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/node.h"
#include "jit/kernel_ir.h"

namespace kiln::jit {

// A param whose value is data, not structure (core/node.h: DataAttr): a
// random node's seed or Philox offset, a floating-point fill value. A
// schedule found in the cache reads these params from the graph being
// evaluated (data_attr_value), so new values need no new schedule and no
// new kernel.
struct DataParam {
  int32_t slot;
  DataAttr source;
  const Node* node;
};

struct Lowered {
  Kernel kernel;
  std::vector<int64_t> params;
  std::vector<DataParam> data;  // which of `params` are data (seeds, offsets, fill values)
  std::vector<const Node*> inputs;  // buffer slots 0..n-1; the outputs follow
  int64_t parallel_extent = 1;
  int64_t work = 0;  // scalar iterations: rows times the reduced extent (0: unknown)
  bool rows = false;  // a row kernel: reductions computed inline (with accumulators or unrolled)
  // The nodes computed inline (lowering asked whether they were stored and
  // they were not): the kernel holds for any stored set without them.
  std::vector<const Node*> inlined;
};

// Thrown when a reduction cannot run inside the kernel being lowered; the
// scheduler then stores that reduction and lowers again.
struct NeedMaterialize {
  const Node* node;
  const char* why;  // a literal: the explain() detail of the resulting cut
};

using NodeSet = std::unordered_set<const Node*>;

// What a reducing node (a Reduce node or an inline matmul) reduces: the
// shape it folds and the dims of it that it folds. A row kernel runs over
// its leading reduction's domain; a reduction over another domain is stored
// (lowering asks for it; fuse-rows, fuse_rows.cpp, foresees it).
struct ReductionDomain {
  Shape full;
  std::vector<int64_t> dims;
  bool operator==(const ReductionDomain&) const = default;
};
ReductionDomain reduction_domain(const Node& n);

// The kernel computing `out` (any op but a Matmul that matmul_inline rejects) whose inline region stops at
// the nodes in `materialized` (and at nodes that already have values).
// Assign: the copy of the base (first half); Cat: the part for input `part`,
// or with part -1 the whole cat in one kernel (cat_in_one_kernel).
Lowered lower_node(const Node& out, const NodeSet& materialized, int part = 0);
// One kernel computing several nodes over one iteration space (horizontal
// fusion): buffer slots are the inputs, then one output per member in order.
Lowered lower_group(const std::vector<const Node*>& group, const NodeSet& materialized);
// Assign's second half: scatters its source into the copied base in place.
Lowered lower_assign_scatter(const Node& assign, const NodeSet& materialized);

}  // namespace kiln::jit
