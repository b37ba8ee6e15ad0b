// The in-memory kernel cache: kernel IR key -> compiled function. A graph
// whose structure was seen before, at any shape, compiles nothing.
#pragma once

#include "jit/kernel_ir.h"

namespace kiln::jit {

KernelFn compiled_kernel(const Kernel& k);

}  // namespace kiln::jit
