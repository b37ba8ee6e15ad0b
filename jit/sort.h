// Sort steps: an ArgSort node's positions from its stored input, the rows
// split over the runtime's thread pool (the sorting rule: core/sort_rows.h).
#pragma once

#include "core/buffer.h"
#include "core/node.h"

namespace kiln::jit {

void run_sort(const Node& argsort, const Buffer& in, Buffer& out);

}  // namespace kiln::jit
