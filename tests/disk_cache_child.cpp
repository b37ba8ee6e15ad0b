// Helper for tests/test_disk_cache.cpp: evaluates a fixed graph with the JIT
// and prints what it compiled and loaded from the disk cache (KILN_CACHE_DIR
// is set by the caller), e.g. "compiled=1 disk=0 ok=1" (tests never time:
// bench/fusion and bench/compile measure the disk cache's load time).
#include <cmath>
#include <cstdio>
#include <vector>

#include "kiln/kiln.h"

int main() {
  using namespace kiln;
  std::vector<double> v(64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.25 * static_cast<double>(i);
  Tensor x = tensor(v, kFloat64).reshape({8, 8});
  std::vector<double> got = ((x * 3 + 1).sqrt().sum(1) - x.exp().mean(1).log()).to_vector<double>();
  bool ok = got.size() == 8;
  for (size_t r = 0; ok && r < 8; ++r) {
    double s = 0, m = 0;
    for (size_t c = 0; c < 8; ++c) {
      s += std::sqrt(v[r * 8 + c] * 3 + 1);
      m += std::exp(v[r * 8 + c]);
    }
    ok = std::fabs(got[r] - (s - std::log(m / 8))) <= 1e-9 * (1 + std::fabs(got[r]));
  }
  JitStats st = stats();
  std::printf("compiled=%lld disk=%lld ok=%d\n", static_cast<long long>(st.kernels_compiled),
              static_cast<long long>(st.cache_hits_disk), ok ? 1 : 0);
  return ok ? 0 : 1;
}
