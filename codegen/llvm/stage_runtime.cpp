// The Stage functions a kernel calls (stage_runtime.h): AVX-512's where the
// CPU has it, else stage_block.h compiled for the baseline instruction set
// (8 x 8 blocks).
#include "codegen/llvm/stage_runtime.h"

#include "codegen/llvm/stage_block.h"
#include "kiln/error.h"

namespace kiln::codegen::llvmcg {

StageFns stage_fns_baseline() {
  return {{&StageBlock<uint8_t, 8, NoMaskedLoads>::stage, &StageBlock<uint16_t, 8, NoMaskedLoads>::stage,
           &StageBlock<uint32_t, 8, NoMaskedLoads>::stage, &StageBlock<uint64_t, 8, NoMaskedLoads>::stage}};
}

bool stage_fns_host_avx512() {
#if defined(KILN_STAGE_AVX512) && defined(__x86_64__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

StageFns stage_fns_host() {
#if defined(KILN_STAGE_AVX512) && defined(__x86_64__)
  if (stage_fns_host_avx512()) return stage_fns_avx512();
#endif
  return stage_fns_baseline();
}

namespace {

constexpr const char* kSymbols[4] = {"kiln_stage_tile_1", "kiln_stage_tile_2", "kiln_stage_tile_4",
                                     "kiln_stage_tile_8"};

}  // namespace

const char* stage_symbol(int64_t bytes) {
  switch (bytes) {
    case 1: return kSymbols[0];
    case 2: return kSymbols[1];
    case 4: return kSymbols[2];
    case 8: return kSymbols[3];
  }
  KILN_INTERNAL_ASSERT(false, "stage_symbol: no Stage function for elements of ", bytes, " bytes");
  return nullptr;
}

std::vector<std::pair<const char*, void*>> stage_symbols() {
  static const StageFns fns = stage_fns_host();
  std::vector<std::pair<const char*, void*>> out;
  for (int i = 0; i < 4; ++i) out.emplace_back(kSymbols[i], reinterpret_cast<void*>(fns.by_size[i]));
  return out;
}

}  // namespace kiln::codegen::llvmcg
