// stage_block.h compiled for AVX-512 (F, BW, VL, DQ: this file's flags, set
// in CMakeLists.txt on x86-64): 16 x 16 blocks, one vpermt2 a shuffle (8 x 8
// of 8-byte elements: a block in 8 registers, not 32). Only called where the
// CPU has those (stage_runtime.cpp checks).
#include "codegen/llvm/stage_runtime.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
#include <immintrin.h>

#include "codegen/llvm/stage_block.h"

namespace kiln::codegen::llvmcg {

namespace {

// The first n elements of p in a vector, zeros after them (nothing past
// them is read: a masked load).
struct MaskedLoads {
  static constexpr bool kMasked = true;
  template <class V>
  static V load_first(const void* p, int64_t n) {
    V v;
    if constexpr (sizeof(V) == 16) {  // 16 x 1 byte
      const __m128i x = _mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << n) - 1), p);
      std::memcpy(&v, &x, sizeof v);
    } else if constexpr (sizeof(V) == 32) {  // 16 x 2 bytes
      const __m256i x = _mm256_maskz_loadu_epi16(static_cast<__mmask16>((1u << n) - 1), p);
      std::memcpy(&v, &x, sizeof v);
    } else if constexpr (sizeof(V) == 64 && sizeof(v[0]) == 4) {  // 16 x 4 bytes
      const __m512i x = _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << n) - 1), p);
      std::memcpy(&v, &x, sizeof v);
    } else {  // 8 x 8 bytes
      static_assert(sizeof(V) == 64 && sizeof(v[0]) == 8);
      const __m512i x = _mm512_maskz_loadu_epi64(static_cast<__mmask8>((1u << n) - 1), p);
      std::memcpy(&v, &x, sizeof v);
    }
    return v;
  }
};

}  // namespace

StageFns stage_fns_avx512() {
  return {{&StageBlock<uint8_t, 16, MaskedLoads>::stage, &StageBlock<uint16_t, 16, MaskedLoads>::stage,
           &StageBlock<uint32_t, 16, MaskedLoads>::stage, &StageBlock<uint64_t, 8, MaskedLoads>::stage}};
}

}  // namespace kiln::codegen::llvmcg
#endif
