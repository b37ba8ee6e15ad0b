// The reference implementations of bench/fusion.cpp's workloads: hand-written
// C++ loops (fusion_hand.cpp, the only file of the program compiled with
// -ffast-math: -O3 -march=native -ffast-math, OpenMP `simd`, std::exp
// vectorized through glibc's libmvec), cblas_sgemm for matmul, and the
// STREAM-triad probe; and the same workloads with Eigen (fusion_eigen.cpp,
// when Eigen 3 was found: KILN_BENCH_HAVE_EIGEN). Every function writes a
// preallocated output and runs on the threads set by its *_set_threads.
// Shapes: x, a, b, d: [rows, cols] row-major; row: [cols]; col: [rows];
// square ones: [n, n].
#pragma once

#include <cstdint>
#include <string>

namespace kiln_bench {

// The workloads, once per implementation: hand_<name> and eigen_<name>.
#define KILN_BENCH_WORKLOAD_DECLS(P)                                                                 \
  void P##chain(float* out, const float* a, const float* b, const float* row, const float* d,     \
                int64_t rows, int64_t cols);                                                      \
  void P##bcast_row(float* out, const float* x, const float* row, int64_t rows, int64_t cols);    \
  void P##bcast_col(float* out, const float* x, const float* col, int64_t rows, int64_t cols);    \
  float P##sum(const float* x, int64_t n);                                                        \
  float P##dot(const float* a, const float* b, int64_t n);                                        \
  void P##rowsum(float* out, const float* x, int64_t rows, int64_t cols);                         \
  void P##colsum(float* out, const float* x, int64_t rows, int64_t cols);                         \
  void P##softmax(float* out, const float* x, int64_t rows, int64_t cols);                        \
  void P##center(float* out, const float* x, int64_t rows, int64_t cols);                         \
  void P##layernorm(float* out, const float* x, int64_t rows, int64_t cols, float eps);           \
  void P##standardize(float* out, const float* x, int64_t rows, int64_t cols);                    \
  void P##transpose_add(float* out, const float* x, const float* y, int64_t n);                   \
  void P##matmul(float* out, const float* a, const float* b, int64_t n);

KILN_BENCH_WORKLOAD_DECLS(hand_)
KILN_BENCH_WORKLOAD_DECLS(eigen_)

// Workloads without an Eigen counterpart: x's rows at int64 positions
// (x.index({idx})), running sums along rows (x.cumsum(1)) and down columns
// (x.cumsum(0)), in float64 as PyTorch's CPU kernel.
void hand_gather_rows(float* out, const float* x, const int64_t* idx, int64_t rows, int64_t cols);
void hand_cumsum_rows(float* out, const float* x, int64_t rows, int64_t cols);
void hand_sort_rows(float* out, const float* x, int64_t rows, int64_t cols);
void hand_topk_rows(float* out, const float* x, int64_t rows, int64_t cols, int64_t k);
void hand_cumsum_cols(float* out, const float* x, int64_t rows, int64_t cols);
// atan2(a, b) + tan(a) elementwise: the inverse and plain trigonometric
// functions (libmvec's vector atan2f / tanf under -ffast-math).
void hand_atan2_tan(float* out, const float* a, const float* b, int64_t n);
// 3 x 3 rotation matrices from n angle pairs (a narrow cat of nine
// columns: kiln's `stack` along dim 1), sin / cos from libmvec.
void hand_rotmat(float* out, const float* a, const float* b, int64_t n);
void hand_points(float* out, const float* p, const float* centre, const float* scale, int64_t n);
// A CNN block, max_pool2d(relu(conv2d(x, w, b, stride 1, padding 1)), 2) of
// x [batch, 16, 32, 32] with w [32, 16, 3, 3]: per image an im2col into a
// scratch buffer, one OpenBLAS sgemm, then bias, relu and the 2x2 maximum in
// one pass ([batch, 32, 16, 16]).
void hand_conv_block(float* out, const float* x, const float* w, const float* b, int64_t batch);

// a[i] = b[i] + s * c[i], the STREAM triad.
void triad(float* a, const float* b, const float* c, float s, int64_t n);

// Threads of the hand loops (OpenMP) and of OpenBLAS; returns the hand
// loops' count (1 without OpenMP). openblas_set_num_threads is process-wide:
// kiln's matmul, which calls OpenBLAS, runs on the same count.
int hand_set_threads(int n);
// Eigen's threads (Eigen::setNbThreads) and its version, "" without Eigen.
std::string eigen_setup(int threads);

}  // namespace kiln_bench
