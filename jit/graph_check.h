// Checks a node read from a saved graph the way the front end builds one
// (arity, dtypes, shapes, attributes, view bounds), so the scheduler and
// the backends only ever see graphs kiln itself could have made.
#pragma once

#include "core/node.h"

namespace kiln::jit {

// Limits for loaded graphs: nodes, rank, elements per node, graph depth.
inline constexpr size_t kMaxLoadedNodes = size_t{1} << 14;
inline constexpr size_t kMaxLoadedRank = 16;
inline constexpr int64_t kMaxLoadedNumel = int64_t{1} << 48;
inline constexpr uint32_t kMaxLoadedDepth = 2048;
inline constexpr size_t kMaxLoadedAttrs = 64;

// Raises kiln::Error "[load_graph] node <id> (<op>): what is wrong" unless
// the node is one kiln could have built.
void check_loaded_node(int64_t id, Op op, DType dtype, const Shape& shape, const NodeList& inputs,
                       const Attrs& attrs);

}  // namespace kiln::jit
