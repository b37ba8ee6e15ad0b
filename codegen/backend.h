// The codegen backend interface: turns a jit::Kernel (jit/kernel_ir.h) into
// a callable jit::KernelFn. The CPU backend is LLVM (codegen/llvm/*); when kiln
// is built without LLVM, cpu_backend() is a stub whose available() is false
// and whose compile() throws kiln::Error. No LLVM type appears here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jit/kernel_ir.h"

namespace kiln::codegen {

// A kind of generated code a backend can show (KILN_DUMP, tools/kiln-dump):
// the LLVM backend has "llvm" and "asm"; a CUDA backend adds "cuda" and
// "ptx". The tools list every backend's kinds (all_backends()), so a new
// backend's dumps need no change to them.
struct CodeKind {
  const char* name;         // as KILN_DUMP and kiln-dump --code spell it: "llvm"
  const char* extension;    // of its dump files: "ll"
  const char* description;  // for --help: "optimized LLVM IR"
};

struct CompiledKernel {
  jit::KernelFn fn = nullptr;
  std::string llvm_ir;   // the optimized LLVM IR, when compile() was asked for it
  std::string assembly;  // the host assembly, when compile() was asked for it
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;  // "llvm"
  virtual bool available() const = 0;    // false for the stub
  // Compiles k; the returned function pointer stays valid for the backend's
  // lifetime. Thread-safe. Errors (malformed IR, LLVM failures) throw kiln::Error.
  virtual CompiledKernel compile(const jit::Kernel& k, bool want_ir = false,
                                 bool want_asm = false) = 0;
  // Identifies compiler + target for cache keys, e.g.
  // "llvm-19.1.7/skylake-avx512/+avx512f,+avx2,...".
  virtual std::string target_id() const = 0;

  // Object-code entry points for the disk kernel cache (jit/kernel_cache.cpp).
  // compile_object compiles k like compile(), naming its function `symbol`,
  // emits the optimized module as a relocatable object, loads that object
  // (so the code that runs is exactly what gets cached) and returns it in
  // *object; a backend without object support leaves *object empty (nothing
  // is cached). load_object loads an object that compile_object produced for
  // the same target_id() and returns its function `symbol`, or nullptr when
  // the object cannot be loaded. Every object gets its own symbol namespace,
  // so one symbol may be loaded any number of times. Thread-safe.
  virtual jit::KernelFn compile_object(const jit::Kernel& k, const std::string& symbol,
                                       std::string* object) {
    object->clear();
    return compile(k).fn;
  }
  // `k` (optional) is the kernel the object was compiled from, for tools
  // that name loaded code (the perf map: codegen/llvm/perf_map.h).
  virtual jit::KernelFn load_object(const std::string& object, const std::string& symbol,
                                    const jit::Kernel* k = nullptr) {
    return nullptr;
  }
  // How many objects the backend linked with a general-purpose linker (the
  // LLVM backend: ORC's JITLink) because its own loader refused them.
  virtual int64_t generic_links() const { return 0; }

  // The kinds of generated code this backend can show, and that code for
  // one kernel (kind: an index into code_kinds()). Rendering runs nothing and
  // needs no device; the same kernel renders to the same text. Thread-safe.
  virtual std::vector<CodeKind> code_kinds() const { return {}; }
  virtual std::string render_code(const jit::Kernel& k, size_t kind) { return ""; }
};

// Every backend built in (the CPU backend first), for the dump tools.
std::vector<Backend*> all_backends();

// Every code kind of every built-in backend, with the backend that renders it.
struct CodeSource {
  Backend* backend;
  size_t kind;  // index into backend->code_kinds()
  CodeKind info;
};
std::vector<CodeSource> all_code_kinds();

// The process-wide CPU backend: LLVM, or the stub when built without it.
Backend& cpu_backend();

}  // namespace kiln::codegen
