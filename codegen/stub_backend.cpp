// The CPU backend when kiln is built without LLVM: reports itself
// unavailable and refuses to compile (the runtime then falls back to the
// reference evaluator or reports the missing JIT).
#include "codegen/backend.h"

#include "kiln/error.h"

namespace kiln::codegen {

namespace {

class StubBackend final : public Backend {
 public:
  const char* name() const override { return "none"; }
  bool available() const override { return false; }
  CompiledKernel compile(const jit::Kernel& k, bool, bool) override {
    KILN_FAIL("jit", "kiln was built without LLVM 19, so kernel ", k.name,
              " cannot be compiled (install llvm-19-dev and reconfigure)");
  }
  std::string target_id() const override { return "none"; }
};

}  // namespace

Backend& cpu_backend() {
  static StubBackend backend;
  return backend;
}

}  // namespace kiln::codegen
