// The forms a primitive reduction takes in the graph
// (core/reduction_forms.cpp).
#pragma once

#include "core/node.h"

namespace kiln {

// The reduction of x over rdims (sorted, keepdim form) into dtype out: one
// Reduce node, or the composition of nodes its shape and layout call for.
NodePtr reduction_in_memory_order(Op op, DType out, const NodePtr& x, const Shape& rdims);

}  // namespace kiln
