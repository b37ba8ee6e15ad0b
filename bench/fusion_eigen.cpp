// bench/fusion.cpp's workloads with Eigen (see fusion_hand.h): Eigen::Map over
// the same input memory, results written into the preallocated output, on
// Eigen::setNbThreads threads (only its GEMM uses more than one). Compiled
// only when CMake found Eigen 3 (KILN_BENCH_HAVE_EIGEN); -O3 -march=native,
// no -ffast-math.
#include "fusion_hand.h"

#include <Eigen/Core>

namespace kiln_bench {

namespace {
using Index = Eigen::Index;
using RowArr = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using In = Eigen::Map<const RowArr>;
using Out = Eigen::Map<RowArr>;
using InRow = Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>>;
using InCol = Eigen::Map<const Eigen::Array<float, Eigen::Dynamic, 1>>;
using OutCol = Eigen::Map<Eigen::Array<float, Eigen::Dynamic, 1>>;
using OutRow = Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>>;

In in(const float* p, int64_t rows, int64_t cols) { return In(p, static_cast<Index>(rows), static_cast<Index>(cols)); }
Out out_of(float* p, int64_t rows, int64_t cols) { return Out(p, static_cast<Index>(rows), static_cast<Index>(cols)); }
}  // namespace

std::string eigen_setup(int threads) {
  Eigen::setNbThreads(threads);
  return std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION);
}

void eigen_chain(float* out, const float* a, const float* b, const float* row, const float* d,
                 int64_t rows, int64_t cols) {
  out_of(out, rows, cols) = ((in(a, rows, cols) * in(b, rows, cols)).rowwise() + InRow(row, cols))
                                .max(0.f) * (-in(d, rows, cols)).exp();
}

void eigen_bcast_row(float* out, const float* x, const float* row, int64_t rows, int64_t cols) {
  out_of(out, rows, cols) = in(x, rows, cols).rowwise() + InRow(row, cols);
}

void eigen_bcast_col(float* out, const float* x, const float* col, int64_t rows, int64_t cols) {
  out_of(out, rows, cols) = in(x, rows, cols).colwise() * InCol(col, rows);
}

float eigen_sum(const float* x, int64_t n) { return InCol(x, n).sum(); }

float eigen_dot(const float* a, const float* b, int64_t n) {
  return InCol(a, n).matrix().dot(InCol(b, n).matrix());
}

void eigen_rowsum(float* out, const float* x, int64_t rows, int64_t cols) {
  OutCol(out, rows) = in(x, rows, cols).rowwise().sum();
}

void eigen_colsum(float* out, const float* x, int64_t rows, int64_t cols) {
  OutRow(out, cols) = in(x, rows, cols).colwise().sum();
}

void eigen_softmax(float* out, const float* x, int64_t rows, int64_t cols) {
  Out y = out_of(out, rows, cols);
  y = (in(x, rows, cols).colwise() - in(x, rows, cols).rowwise().maxCoeff()).exp();
  y.colwise() /= y.rowwise().sum().eval();
}

void eigen_center(float* out, const float* x, int64_t rows, int64_t cols) {
  out_of(out, rows, cols) = in(x, rows, cols).colwise() - in(x, rows, cols).rowwise().mean();
}

void eigen_layernorm(float* out, const float* x, int64_t rows, int64_t cols, float eps) {
  Out y = out_of(out, rows, cols);
  y = in(x, rows, cols).colwise() - in(x, rows, cols).rowwise().mean();
  y.colwise() *= (y.square().rowwise().mean() + eps).rsqrt().eval();
}

void eigen_standardize(float* out, const float* x, int64_t rows, int64_t cols) {
  const In X = in(x, rows, cols);
  const Eigen::Array<float, 1, Eigen::Dynamic> m = X.colwise().mean();
  const Eigen::Array<float, 1, Eigen::Dynamic> sd =
      ((X.rowwise() - m).square().colwise().sum() / static_cast<float>(rows - 1)).sqrt();
  out_of(out, rows, cols) = (X.rowwise() - m).rowwise() / sd;
}

void eigen_transpose_add(float* out, const float* x, const float* y, int64_t n) {
  out_of(out, n, n) = in(x, n, n).transpose() + in(y, n, n);
}

void eigen_matmul(float* out, const float* a, const float* b, int64_t n) {
  const auto N = static_cast<Index>(n);
  Eigen::Map<RowMat>(out, N, N).noalias() =
      Eigen::Map<const RowMat>(a, N, N) * Eigen::Map<const RowMat>(b, N, N);
}

}  // namespace kiln_bench
