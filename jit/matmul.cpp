// Matmul: one BLAS call per batch entry for float32/float64, a loop otherwise.
#include "jit/matmul.h"

#include "core/reference/kernels.h"
#include "jit/thread_pool.h"

#if defined(KILN_HAVE_BLAS)
#include <cblas.h>
#endif

namespace kiln::jit {

void run_matmul(const Node& n, const Buffer& a, const Buffer& b, Buffer& out) {
  const int64_t r = n.rank();
  const int64_t M = n.shape[r - 2], N = n.shape[r - 1];
  const int64_t K = n.inputs[0]->shape[r - 1];
  int64_t batch = 1;
  for (int64_t d = 0; d < r - 2; ++d) batch *= n.shape[d];
#if defined(KILN_HAVE_BLAS)
  if (n.dtype == DType::Float32 || n.dtype == DType::Float64) {
    for (int64_t i = 0; i < batch; ++i) {
      if (M == 0 || N == 0) break;
      if (n.dtype == DType::Float32) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(M), static_cast<int>(N),
                    static_cast<int>(K), 1.0f, a.as<float>() + i * M * K, static_cast<int>(std::max<int64_t>(K, 1)),
                    b.as<float>() + i * K * N, static_cast<int>(std::max<int64_t>(N, 1)), 0.0f,
                    out.as<float>() + i * M * N, static_cast<int>(std::max<int64_t>(N, 1)));
      } else {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(M), static_cast<int>(N),
                    static_cast<int>(K), 1.0, a.as<double>() + i * M * K, static_cast<int>(std::max<int64_t>(K, 1)),
                    b.as<double>() + i * K * N, static_cast<int>(std::max<int64_t>(N, 1)), 0.0,
                    out.as<double>() + i * M * N, static_cast<int>(std::max<int64_t>(N, 1)));
      }
    }
    return;
  }
#endif
  reference::visit_dtype(n.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = reference::accum_t<T>;
    const T* pa = a.as<T>();
    const T* pb = b.as<T>();
    T* po = out.as<T>();
    ThreadPool::instance().parallel_for(batch * M, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t i = row / std::max<int64_t>(M, 1), m = row % std::max<int64_t>(M, 1);
        for (int64_t c = 0; c < N; ++c) {
          A acc = 0;
          for (int64_t k = 0; k < K; ++k)
            acc += static_cast<A>(reference::cast_value<A>(pa[(i * M + m) * K + k])) *
                   static_cast<A>(reference::cast_value<A>(pb[(i * K + k) * N + c]));
          po[(i * M + m) * N + c] = reference::cast_value<T>(acc);
        }
      }
    });
  });
}

}  // namespace kiln::jit
