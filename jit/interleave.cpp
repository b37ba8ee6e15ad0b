// When a kernel and the batched matmul reading its output run chunk by
// chunk (jit/interleave.h).
#include "jit/interleave.h"

#include <algorithm>

#include "kiln/dtype.h"
#include "jit/matmul.h"

namespace kiln::jit {

namespace {

// v's value where it is a kernel constant, a param, or a sum or product of
// such (a flattened loop's extent, p0 * p1 * p2); -1 otherwise.
int64_t fixed_value(const Kernel& k, const std::vector<int64_t>& params, ValueId v, int depth = 0) {
  const Value& x = k.values[static_cast<size_t>(v)];
  if (x.op == VOp::IntConst) return x.i;
  if (x.op == VOp::Param && x.dtype == DType::Int64) return params[static_cast<size_t>(x.a)];
  if ((x.op == VOp::Mul || x.op == VOp::Add) && x.dtype == DType::Int64 && depth < 16) {
    const int64_t a = fixed_value(k, params, x.args[0], depth + 1), b = fixed_value(k, params, x.args[1], depth + 1);
    if (a < 0 || b < 0) return -1;
    return x.op == VOp::Mul ? a * b : a + b;
  }
  return -1;
}

bool is_loop(const Kernel& k, ValueId v, int32_t loop) {
  const Value& x = k.values[static_cast<size_t>(v)];
  return x.op == VOp::LoopIndex && x.a == loop;
}

}  // namespace

bool writes_rows_in_order(const Kernel& k, const std::vector<int64_t>& params, int slot, int64_t rows, int64_t n) {
  if (k.body.size() != 1) return false;
  const Stmt* s = &k.body[0];
  if (s->kind != StmtKind::Loop || !s->parallel || fixed_value(k, params, s->extent) != rows) return false;
  // the nest: each loop's body one statement, a loop or, innermost, the store
  std::vector<const Stmt*> loops{s};
  while (s->kind == StmtKind::Loop) {
    if (s->body.size() != 1) return false;
    s = &s->body[0];
    if (s->kind == StmtKind::Loop) loops.push_back(s);
  }
  if (s->kind != StmtKind::Store || s->buffer != slot) return false;
  // index = ((i0 * e1 + i1) * e2 + i2) ... + i_last, in either operand order
  ValueId at = s->index;
  int64_t elems = 1;
  for (size_t d = loops.size() - 1; d >= 1; --d) {
    const Value& add = k.values[static_cast<size_t>(at)];
    if (add.op != VOp::Add) return false;
    const int32_t loop = loops[d]->loop;
    const ValueId other = is_loop(k, add.args[0], loop) ? add.args[1] : is_loop(k, add.args[1], loop) ? add.args[0] : -1;
    if (other < 0) return false;
    const Value& mul = k.values[static_cast<size_t>(other)];
    const ValueId extent = loops[d]->extent;
    const int64_t e = fixed_value(k, params, extent);
    ValueId rest = -1;
    if (mul.op == VOp::Mul) rest = mul.args[0] == extent ? mul.args[1] : mul.args[1] == extent ? mul.args[0] : -1;
    if (rest < 0 && e == 1 && k.values[static_cast<size_t>(extent)].op == VOp::IntConst) rest = other;  // (x 1 folded)
    if (rest < 0 || e < 1) return false;
    elems *= e;
    at = rest;
  }
  return is_loop(k, at, loops[0]->loop) && elems == n;
}

std::optional<Interleave> interleavable(const Step& k, const Step& m, int64_t readers, bool root, int threads) {
  if (k.kind != StepKind::Kernel || m.kind != StepKind::Matmul || k.outputs.size() != 1 || readers != 1 || root)
    return std::nullopt;
  const Node& out = *k.outputs[0];
  const int64_t elt = static_cast<int64_t>(element_size(out.dtype));
  if (out.numel() * elt < kInterleaveMinBytes) return std::nullopt;
  int operand = -1;
  for (int i = 0; i < 2; ++i)
    if (m.inputs[static_cast<size_t>(i)] == &out) operand = operand < 0 ? i : 2;
  const Node& mm = *m.outputs[0];
  int64_t rows = 1;  // the matmul's batch entries
  for (int64_t d = 0; d + 2 < mm.rank(); ++d) rows *= mm.shape[d];
  const int64_t p = k.parallel_extent;
  if (operand < 0 || operand > 1 || rows < 2 || p % rows != 0 || out.numel() % p != 0) return std::nullopt;
  const int64_t n = out.numel() / rows, bytes = n * elt;  // an entry's
  if (bytes > kInterleaveMaxEntryBytes) return std::nullopt;
  const int slot = static_cast<int>(k.inputs.size());  // the output's buffer slot, after the inputs
  if (!operand_in_rows(mm, operand, out, n) || !writes_rows_in_order(k.code->ir, k.params, slot, p, out.numel() / p))
    return std::nullopt;
  // Chunks of about 512 KiB (an L2's share; small entries would pay a
  // matmul call and a kernel launch each), one entry at least: the kernel
  // runs over a chunk's iterations (on the pool where they are many), the
  // matmul's BLAS on its own threads. (An im2col's iteration is a whole
  // image: one at a time on the caller. Two side by side on two threads,
  // then their two GEMMs, measured no faster: a GEMM read half its data
  // from the other core's cache.)
  const Interleave il{rows, n, p / rows, operand, std::min(rows, std::max<int64_t>(1, (int64_t{512} << 10) / bytes))};
  // With several threads, only where a chunk is one iteration of the kernel
  // (an im2col's image), which runs on the caller: a kernel split over the
  // pool chunk by chunk, between GEMMs on BLAS's own threads, ran 1.2-1.9x
  // slower on two threads than stored whole (the two pools' threads spin
  // against each other); on one thread 1.05-1.3x faster.
  if (threads > 1 && il.chunk * il.iters > 1) return std::nullopt;
  return il;
}

}  // namespace kiln::jit
