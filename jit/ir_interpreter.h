// A direct interpreter of the kernel IR: the IR's executable specification.
// Tests run lowered kernels through it (and against the reference
// evaluator), and compare compiled backends with it; it is far too slow to
// serve as a backend.
#pragma once

#include "jit/kernel_ir.h"

namespace kiln::jit {

void interpret(const Kernel& k, char* const* buffers, const int64_t* params, int64_t begin,
               int64_t end);

}  // namespace kiln::jit
