// Matmul steps: OpenBLAS sgemm/dgemm for float32/float64, a plain loop for
// the other dtypes (accumulating as the reference does).
#pragma once

#include "core/buffer.h"
#include "core/node.h"

namespace kiln::jit {

// out[..., M, N] = a[..., M, K] x b[..., K, N], all contiguous, equal batch dims.
void run_matmul(const Node& n, const Buffer& a, const Buffer& b, Buffer& out);

}  // namespace kiln::jit
