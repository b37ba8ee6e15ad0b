// The list of built-in backends the dump tools walk (codegen/backend.h): a
// new backend (CUDA) is added here and its code kinds show up in KILN_DUMP
// and tools/kiln-dump with no change to either.
#include "codegen/backend.h"

namespace kiln::codegen {

std::vector<Backend*> all_backends() { return {&cpu_backend()}; }

std::vector<CodeSource> all_code_kinds() {
  std::vector<CodeSource> out;
  for (Backend* be : all_backends()) {
    const std::vector<CodeKind> kinds = be->code_kinds();
    for (size_t k = 0; k < kinds.size(); ++k) out.push_back({be, k, kinds[k]});
  }
  return out;
}

}  // namespace kiln::codegen
