// kiln's own loader of kernel objects: the relocatable x86-64 ELF file that
// emit_code writes for one kernel (its function, constant pools, calls of the
// lane functions' twins and of libm), placed in pages of its own, relocated
// and made read-only and executable. ORC's JITLink does the same for any
// object, at 0.15 ms a kernel with warm caches and up to 1 ms after the
// data of a large evaluation has evicted its code (the disk cache's
// per-kernel load, bench/README.md); this loader handles only what kernel
// objects hold and takes microseconds. An object holding anything else
// (a relocation or section kind it does not know, a symbol it cannot
// resolve) is refused, and the backend links it with ORC instead.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace kiln::codegen::llvmcg {

// The address of external symbol `name`, or nullptr when unknown.
using SymbolResolver = std::function<void*(std::string_view name)>;

// Loads `object` and returns the address of its global function `symbol`,
// or nullptr with the reason in *why (nothing is left mapped then).
// Loaded code stays mapped for the life of the process (kernels are never
// unloaded).
void* load_kernel_object(std::string_view object, std::string_view symbol, const SymbolResolver& resolve,
                         std::string* why);

// The size in bytes of global function `symbol` in `object` (its ELF
// symbol's size), or 0 when the object has no such function.
uint64_t object_function_size(std::string_view object, std::string_view symbol);

}  // namespace kiln::codegen::llvmcg
