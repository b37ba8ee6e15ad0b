// Matmul: one BLAS call per batch entry for float32/float64, a loop otherwise.
// Operands are read through their views (offset, strides) in the buffer of
// the stored node below them; the output is contiguous.
#include "jit/matmul.h"

#include <algorithm>
#include <climits>

#include "core/reference/kernels.h"
#include "core/tensor_impl.h"
#include "jit/thread_pool.h"
#include "kiln/error.h"

#if defined(KILN_HAVE_BLAS)
#include <cblas.h>
#endif

namespace kiln::jit {

namespace {

// Composes r (a read of `shape` from x's contiguous buffer) with x =
// AsStrided(y) into a read of y's buffer. Each dim of the read must step
// along a single dim of x without carrying into the next one (its reach,
// from the offset's index there, stays inside x's size): then stepping it
// steps y's buffer by a fixed stride. Expand and reshape views over one
// strided view (what core/matmul.cpp builds) compose this way.
bool compose(const Shape& shape, StridedRead& r, const Node& x) {
  const Node* y = x.inputs[0].get();
  if (shape.numel() == 0) {  // nothing is read
    r = StridedRead{y, 0, contiguous_strides(shape)};
    return true;
  }
  const Shape& xs = x.shape;
  const Shape cx = contiguous_strides(xs);
  const int64_t* xstr = x.attrs.ints.data() + 1;
  Shape reach(xs.size(), 0);
  int64_t offset = x.attrs.ints[0];
  for (size_t j = 0; j < xs.size(); ++j) {
    reach[j] = (r.offset / cx[j]) % xs[j];
    offset += reach[j] * xstr[j];
  }
  Shape strides(shape.size(), 0);
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t s = r.strides[d];
    if (shape[d] == 1 || s == 0) continue;
    if (s < 0) return false;
    size_t j = 0;
    while (j < xs.size() && !(xs[j] > 1 && cx[j] <= s && s < cx[j] * xs[j])) ++j;
    if (j == xs.size() || s % cx[j] != 0) return false;
    reach[j] += (shape[d] - 1) * (s / cx[j]);
    strides[d] = s / cx[j] * xstr[j];
  }
  for (size_t j = 0; j < xs.size(); ++j)
    if (reach[j] >= xs[j]) return false;
  r = StridedRead{y, offset, std::move(strides)};
  return true;
}

// The element offset of batch entry i (row-major over the batch dims).
int64_t batch_offset(const Shape& shape, const StridedRead& r, int64_t i) {
  int64_t off = r.offset;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 3; d >= 0; --d) {
    off += (i % shape[d]) * r.strides[d];
    i /= shape[d];
  }
  return off;
}

#if defined(KILN_HAVE_BLAS)
CBLAS_TRANSPOSE flag(const BlasMatrix& m) { return m.trans ? CblasTrans : CblasNoTrans; }
void gemm(const BlasMatrix& ma, const BlasMatrix& mb, int M, int N, int K, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, flag(ma), flag(mb), M, N, K, 1.0f, a, static_cast<int>(ma.ld), b,
              static_cast<int>(mb.ld), 0.0f, c, N);
}
void gemm(const BlasMatrix& ma, const BlasMatrix& mb, int M, int N, int K, const double* a, const double* b,
          double* c) {
  cblas_dgemm(CblasRowMajor, flag(ma), flag(mb), M, N, K, 1.0, a, static_cast<int>(ma.ld), b,
              static_cast<int>(mb.ld), 0.0, c, N);
}
#endif

}  // namespace

std::optional<StridedRead> fold_views(const Node* op, const std::function<bool(const Node*)>& stop) {
  if (stop(op) || op->op != Op::AsStrided) return StridedRead{op, 0, contiguous_strides(op->shape)};
  StridedRead r{op->inputs[0].get(), op->attrs.ints[0], Shape(op->attrs.ints.begin() + 1, op->attrs.ints.end())};
  while (!stop(r.base) && r.base->op == Op::AsStrided)
    if (!compose(op->shape, r, *r.base)) return std::nullopt;
  return r;
}

std::optional<BlasMatrix> blas_matrix(int64_t rows, int64_t cols, int64_t sr, int64_t sc) {
  // BLAS needs ld >= max(1, cols) even where a size-1 dim makes it unused.
  const int64_t min_row_ld = std::max<int64_t>(1, cols), min_col_ld = std::max<int64_t>(1, rows);
  if (rows == 0 || cols == 0) return BlasMatrix{false, min_row_ld};  // nothing is read
  if (cols == 1 || sc == 1) {
    const int64_t ld = rows == 1 ? min_row_ld : sr;
    if (ld >= min_row_ld && ld <= INT_MAX) return BlasMatrix{false, ld};
  }
  if (rows == 1 || sr == 1) {
    const int64_t ld = cols == 1 ? min_col_ld : sc;
    if (ld >= min_col_ld && ld <= INT_MAX) return BlasMatrix{true, ld};
  }
  return std::nullopt;
}

bool blas_readable(const Node& op, const StridedRead& r) {
  const size_t n = op.shape.size();
  KILN_INTERNAL_ASSERT(n >= 2 && r.strides.size() == n, "matmul operand of rank ", n);
  return blas_matrix(op.shape[n - 2], op.shape[n - 1], r.strides[n - 2], r.strides[n - 1]).has_value();
}

namespace {
StridedRead operand_read(const Node& n, int i, const Node& stored) {
  const Node& op = *n.inputs[static_cast<size_t>(i)];
  std::optional<StridedRead> r = fold_views(&op, [&](const Node* x) { return x == &stored; });
  KILN_INTERNAL_ASSERT(r && r->base == &stored && blas_readable(op, *r), "matmul operand ", i,
                       " is not a strided read of its step's input ", op_name(stored.op));
  return std::move(*r);
}
}  // namespace

MatmulOperand matmul_operand(const Node& n, int i, const Node& stored, const Buffer& buffer) {
  return MatmulOperand{&buffer, operand_read(n, i, stored)};
}

bool operand_in_rows(const Node& n, int i, const Node& stored, int64_t row_elems) {
  const StridedRead r = operand_read(n, i, stored);
  const Shape& s = n.inputs[static_cast<size_t>(i)]->shape;
  const size_t d = s.size();
  // the last element a batch entry's matrix reads past its first (strides >= 0: blas_readable)
  const int64_t reach = (s[d - 2] - 1) * r.strides[d - 2] + (s[d - 1] - 1) * r.strides[d - 1];
  int64_t batch = 1;
  for (size_t k = 0; k + 2 < d; ++k) batch *= s[k];
  if (s[d - 2] == 0 || s[d - 1] == 0 || batch * row_elems != stored.numel()) return false;
  for (int64_t e = 0; e < batch; ++e) {
    const int64_t first = batch_offset(s, r, e) - e * row_elems;
    if (first < 0 || first + reach >= row_elems) return false;
  }
  return true;
}

bool matmul_transposed(const Node& n, int i, const Node& stored) {
  const StridedRead r = operand_read(n, i, stored);
  const Shape& s = n.inputs[static_cast<size_t>(i)]->shape;
  const size_t d = s.size();
  return blas_matrix(s[d - 2], s[d - 1], r.strides[d - 2], r.strides[d - 1])->trans;
}

void run_matmul(const Node& n, const MatmulOperand& a, const MatmulOperand& b, Buffer& out, int64_t first,
                int64_t last) {
  const int64_t r = n.rank();
  const int64_t M = n.shape[r - 2], N = n.shape[r - 1];
  const Shape& sa = n.inputs[0]->shape;
  const Shape& sb = n.inputs[1]->shape;
  const int64_t K = sa[r - 1];
  int64_t batch = 1;
  for (int64_t d = 0; d < r - 2; ++d) batch *= n.shape[d];
  if (batch * M * N == 0) return;
  if (last < 0) last = batch;
  const StridedRead &ra = a.read, &rb = b.read;
#if defined(KILN_HAVE_BLAS)
  if ((n.dtype == DType::Float32 || n.dtype == DType::Float64) && K > 0) {
    const std::optional<BlasMatrix> ma = blas_matrix(M, K, ra.strides[r - 2], ra.strides[r - 1]);
    const std::optional<BlasMatrix> mb = blas_matrix(K, N, rb.strides[r - 2], rb.strides[r - 1]);
    KILN_INTERNAL_ASSERT(ma && mb, "matmul operands BLAS cannot read");
    auto call = [&](auto* po, const auto* pa, const auto* pb) {
      for (int64_t i = first; i < last; ++i)
        gemm(*ma, *mb, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), pa + batch_offset(sa, ra, i),
             pb + batch_offset(sb, rb, i), po + i * M * N);
    };
    if (n.dtype == DType::Float32) call(out.as<float>(), a.buffer->as<float>(), b.buffer->as<float>());
    else call(out.as<double>(), a.buffer->as<double>(), b.buffer->as<double>());
    return;
  }
#endif
  // Any strides: the scheduler still only hands this loop BLAS-readable
  // operands (one rule for every dtype, see blas_readable). K = 0 gives zeros.
  reference::visit_dtype(n.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = reference::accum_t<T>;
    const T* pa = a.buffer->as<T>();
    const T* pb = b.buffer->as<T>();
    T* po = out.as<T>();
    const int64_t am = ra.strides[r - 2], ak = ra.strides[r - 1], bk = rb.strides[r - 2], bn = rb.strides[r - 1];
    ThreadPool::instance().parallel_for((last - first) * M, [&](int64_t begin, int64_t end) {
      for (int64_t row = first * M + begin; row < first * M + end; ++row) {
        const int64_t i = row / M, m = row % M;
        const T* arow = pa + batch_offset(sa, ra, i) + m * am;
        const T* bmat = pb + batch_offset(sb, rb, i);
        for (int64_t c = 0; c < N; ++c) {
          A acc = 0;
          for (int64_t k = 0; k < K; ++k)
            acc += static_cast<A>(reference::cast_value<A>(arow[k * ak])) *
                   static_cast<A>(reference::cast_value<A>(bmat[k * bk + c * bn]));
          po[row * N + c] = reference::cast_value<T>(acc);
        }
      }
    });
  });
}

}  // namespace kiln::jit
