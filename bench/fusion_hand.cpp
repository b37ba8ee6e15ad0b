// bench/fusion.cpp's hand loops (see fusion_hand.h). This file alone is
// compiled with -ffast-math (bench/CMakeLists.txt) on top of -O3
// -march=native, as the reference loops are: with g++ 12 and glibc,
// `#pragma omp simd` loops over std::exp then call libmvec's vector expf
// (_ZGV*_expf; `objdump -dr build/bench/CMakeFiles/bench_fusion.dir/fusion_hand.cpp.o
// | grep _ZGV` shows it). The program's own checks (fusion.cpp) are not fast-math.
#include "fusion_hand.h"

#include <cblas.h>

#include <algorithm>
#include <functional>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

namespace kiln_bench {

namespace {
int g_threads = 1;

// The sum of one row, vectorized (called inside the rows' parallel loop).
inline float row_sum(const float* xr, int64_t cols) {
  float s = 0.f;
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < cols; ++j) s += xr[j];
  return s;
}
}  // namespace

int hand_set_threads(int n) {
  openblas_set_num_threads(n);
#ifdef _OPENMP
  g_threads = n;
#else
  g_threads = 1;
#endif
  return g_threads;
}

void triad(float* a, const float* b, const float* c, float s, int64_t n) {
#pragma omp parallel for simd num_threads(g_threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

// relu(a*b + row) * exp(-d)
void hand_chain(float* out, const float* a, const float* b, const float* row, const float* d,
                int64_t rows, int64_t cols) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r * cols;
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) {
      const float v = a[o + j] * b[o + j] + row[j];
      out[o + j] = (v > 0.f ? v : 0.f) * std::exp(-d[o + j]);
    }
  }
}

void hand_atan2_tan(float* out, const float* a, const float* b, int64_t n) {
#pragma omp parallel for simd num_threads(g_threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = std::atan2(a[i], b[i]) + std::tan(a[i]);
}

// rotation matrices about z then y from angles a, b: out[i] = [ca cb, -sa,
// ca sb; sa cb, ca, sa sb; -sb, 0, cb], row-major 3 x 3 per angle pair
void hand_rotmat(float* out, const float* a, const float* b, int64_t n) {
  // in blocks: sin / cos vectorized (libmvec) into arrays on the stack,
  // then the rows of nine stored (one loop of both ran sin / cos scalar;
  // sin and cos of one value in one loop become a scalar sincosf call)
  constexpr int64_t B = 256;
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t i0 = 0; i0 < n; i0 += B) {
    const int64_t m = std::min(B, n - i0);
    float ca[B], sa[B], cb[B], sb[B];
#pragma omp simd
    for (int64_t j = 0; j < m; ++j) ca[j] = std::cos(a[i0 + j]), cb[j] = std::cos(b[i0 + j]);
#pragma omp simd
    for (int64_t j = 0; j < m; ++j) sa[j] = std::sin(a[i0 + j]), sb[j] = std::sin(b[i0 + j]);
    for (int64_t j = 0; j < m; ++j) {
      float* r = out + 9 * (i0 + j);
      r[0] = ca[j] * cb[j], r[1] = -sa[j], r[2] = ca[j] * sb[j];
      r[3] = sa[j] * cb[j], r[4] = ca[j], r[5] = sa[j] * sb[j];
      r[6] = -sb[j], r[7] = 0.0f, r[8] = cb[j];
    }
  }
}

// (p - centre) * scale for n rows of 3
void hand_points(float* out, const float* p, const float* centre, const float* scale, int64_t n) {
  const float c0 = centre[0], c1 = centre[1], c2 = centre[2], s0 = scale[0], s1 = scale[1], s2 = scale[2];
#pragma omp parallel for simd num_threads(g_threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    out[3 * i] = (p[3 * i] - c0) * s0;
    out[3 * i + 1] = (p[3 * i + 1] - c1) * s1;
    out[3 * i + 2] = (p[3 * i + 2] - c2) * s2;
  }
}

// x + row[None, :]
void hand_bcast_row(float* out, const float* x, const float* row, int64_t rows, int64_t cols) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r * cols;
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) out[o + j] = x[o + j] + row[j];
  }
}

// x * col[:, None]
void hand_bcast_col(float* out, const float* x, const float* col, int64_t rows, int64_t cols) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r * cols;
    const float s = col[r];
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) out[o + j] = x[o + j] * s;
  }
}

// x.sum(), accumulated in float64 (as kiln keeps float sums)
float hand_sum(const float* x, int64_t n) {
  double s = 0.0;
#pragma omp parallel for simd num_threads(g_threads) schedule(static) reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += x[i];
  return static_cast<float>(s);
}

// (a*b).sum()
float hand_dot(const float* a, const float* b, int64_t n) {
  float s = 0.f;
#pragma omp parallel for simd num_threads(g_threads) schedule(static) reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// x.sum(1)
void hand_rowsum(float* out, const float* x, int64_t rows, int64_t cols) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) out[r] = row_sum(x + r * cols, cols);
}

// x.sum(0): rows added into per-column float64 sums (contiguous rows)
void hand_colsum(float* out, const float* x, int64_t rows, int64_t cols) {
  std::vector<double> acc(static_cast<size_t>(cols), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) acc[j] += xr[j];
  }
  for (int64_t j = 0; j < cols; ++j) out[j] = static_cast<float>(acc[j]);
}

// x.index({idx}): whole rows copied from the positions idx holds
void hand_gather_rows(float* out, const float* x, const int64_t* idx, int64_t rows, int64_t cols) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out + r * cols, x + idx[r] * cols, static_cast<size_t>(cols) * sizeof(float));
}

// x.cumsum(1): one float64 running sum per row
void hand_cumsum_rows(float* out, const float* x, int64_t rows, int64_t cols) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    double acc = 0;
    for (int64_t j = 0; j < cols; ++j) out[r * cols + j] = static_cast<float>(acc += x[r * cols + j]);
  }
}

// std::get<0>(x.sort(1)): each row copied and sorted in place (values only)
void hand_sort_rows(float* out, const float* x, int64_t rows, int64_t cols) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    float* o = out + r * cols;
    std::memcpy(o, x + r * cols, static_cast<size_t>(cols) * sizeof(float));
    std::sort(o, o + cols);
  }
}

// std::get<0>(x.topk(k, 1)): the k largest of each row, largest first
void hand_topk_rows(float* out, const float* x, int64_t rows, int64_t cols, int64_t k) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> row(x + r * cols, x + (r + 1) * cols);
    std::partial_sort(row.begin(), row.begin() + k, row.end(), std::greater<float>());
    std::memcpy(out + r * k, row.data(), static_cast<size_t>(k) * sizeof(float));
  }
}

// x.cumsum(0): a row of float64 running sums advanced row by row
void hand_cumsum_cols(float* out, const float* x, int64_t rows, int64_t cols) {
  std::vector<double> acc(static_cast<size_t>(cols), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* o = out + r * cols;
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) o[j] = static_cast<float>(acc[j] += xr[j]);
  }
}

// softmax over rows
void hand_softmax(float* out, const float* x, int64_t rows, int64_t cols) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = out + r * cols;
    float m = -FLT_MAX;  // not -INFINITY: -ffast-math assumes finite values
#pragma omp simd reduction(max : m)
    for (int64_t j = 0; j < cols; ++j) m = std::max(m, xr[j]);
    float s = 0.f;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < cols; ++j) {
      const float e = std::exp(xr[j] - m);
      yr[j] = e;
      s += e;
    }
    const float inv = 1.f / s;
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) yr[j] *= inv;
  }
}

// x - x.mean(1, keepdim)
void hand_center(float* out, const float* x, int64_t rows, int64_t cols) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = out + r * cols;
    const float m = row_sum(xr, cols) / static_cast<float>(cols);
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) yr[j] = xr[j] - m;
  }
}

// layer norm without affine: xc = x - mean; xc * rsqrt(mean(xc^2) + eps)
void hand_layernorm(float* out, const float* x, int64_t rows, int64_t cols, float eps) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = out + r * cols;
    const float m = row_sum(xr, cols) / static_cast<float>(cols);
    float q = 0.f;
#pragma omp simd reduction(+ : q)
    for (int64_t j = 0; j < cols; ++j) q += (xr[j] - m) * (xr[j] - m);
    const float inv = 1.f / std::sqrt(q / static_cast<float>(cols) + eps);
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - m) * inv;
  }
}

// (x - x.mean(0)) / x.std(0): per thread, float64 sums of x - x[0] and of
// its square over a share of the rows (8 rows at a time in registers),
// combined; then a pass writing (x - mean) * (1 / std)
void hand_standardize(float* out, const float* x, int64_t rows, int64_t cols) {
  const int threads = std::max(1, g_threads);
  std::vector<double> s1(static_cast<size_t>(threads * cols), 0.0), s2(s1.size(), 0.0);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    double* a = s1.data() + t * cols;
    double* q = s2.data() + t * cols;
    const int64_t r0 = rows * t / threads, r1 = rows * (t + 1) / threads;
    for (int64_t r = r0; r < r1; r += 8) {  // 8 rows into the sums at a time
      const int64_t k = std::min<int64_t>(8, r1 - r);
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) {
        double sa = 0, sq = 0;
        for (int64_t i = 0; i < k; ++i) {
          const double d = static_cast<double>(x[(r + i) * cols + j]) - static_cast<double>(x[j]);
          sa += d;
          sq += d * d;
        }
        a[j] += sa;
        q[j] += sq;
      }
    }
  }
  std::vector<float> m(static_cast<size_t>(cols)), inv(static_cast<size_t>(cols));
  const double n = static_cast<double>(rows);
  for (int64_t j = 0; j < cols; ++j) {
    double a = 0, q = 0;
    for (int t = 0; t < threads; ++t) a += s1[t * cols + j], q += s2[t * cols + j];
    m[j] = static_cast<float>(static_cast<double>(x[j]) + a / n);
    inv[j] = 1.f / std::sqrt(static_cast<float>((q - a * a / n) / (n - 1)));
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = out + r * cols;
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - m[j]) * inv[j];
  }
}

// x.t() + y, square n x n, in 32 x 32 tiles
void hand_transpose_add(float* out, const float* x, const float* y, int64_t n) {
  constexpr int64_t T = 32;
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t ib = 0; ib < n; ib += T)
    for (int64_t jb = 0; jb < n; jb += T) {
      const int64_t ie = std::min(n, ib + T), je = std::min(n, jb + T);
      for (int64_t i = ib; i < ie; ++i)
        for (int64_t j = jb; j < je; ++j) out[i * n + j] = x[j * n + i] + y[i * n + j];
    }
}

// a @ b, square n x n: OpenBLAS alone (the matmul's "hand loop")
void hand_conv_block(float* out, const float* x, const float* w, const float* b, int64_t batch) {
  constexpr int C = 16, H = 32, W = 32, OC = 32, K = 3, TAPS = C * K * K;
  std::vector<float> cols(static_cast<size_t>(TAPS) * H * W), y(static_cast<size_t>(OC) * H * W);
  for (int64_t n = 0; n < batch; ++n) {
    const float* xi = x + n * C * H * W;
    for (int c = 0; c < C; ++c)
      for (int kh = 0; kh < K; ++kh)
        for (int kw = 0; kw < K; ++kw) {
          float* row = cols.data() + ((c * K + kh) * K + kw) * H * W;
          for (int h = 0; h < H; ++h) {
            const int ih = h + kh - 1;
            for (int v = 0; v < W; ++v) {
              const int iw = v + kw - 1;
              row[h * W + v] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? xi[(c * H + ih) * W + iw] : 0.f;
            }
          }
        }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, OC, H * W, TAPS, 1.f, w, TAPS, cols.data(), H * W, 0.f,
                y.data(), H * W);
    float* o = out + n * OC * (H / 2) * (W / 2);
    for (int c = 0; c < OC; ++c)
      for (int h = 0; h < H / 2; ++h)
        for (int v = 0; v < W / 2; ++v) {
          const float* p = y.data() + (c * H + 2 * h) * W + 2 * v;
          const float m = std::max(std::max(p[0], p[1]), std::max(p[W], p[W + 1])) + b[c];
          o[(c * (H / 2) + h) * (W / 2) + v] = m > 0.f ? m : 0.f;
        }
  }
}

void hand_matmul(float* out, const float* a, const float* b, int64_t n) {
  const int m = static_cast<int>(n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.f, a, m, b, m, 0.f, out, m);
}

}  // namespace kiln_bench
