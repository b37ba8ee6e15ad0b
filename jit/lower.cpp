// Lowering a materialized node to kernel IR: the entry points of lower.h,
// the values of the ops computed inline, and the kernels' loop structure.
//
// Elementwise nodes pass idx to their inputs (all inputs have the output's
// shape); views map idx to their input's index (lower_views.cpp); stored
// nodes are loaded; reductions run inside a row kernel (lower_reduce.cpp).
// The Lowerer and its per-value helpers are in lowerer.h.
#include "jit/lower.h"

#include <cctype>
#include <cstdlib>
#include <cstring>

#include "jit/inspect.h"
#include "jit/lowerer.h"
#include "jit/thread_pool.h"
#include "kiln/error.h"

namespace kiln::jit {

namespace lowering {

ValueId Lowerer::compute(const Node* n, const Idx& idx) {
  if (stored(n)) return load(n, ravel(n, idx));
  const DType dt = n->dtype;
  switch (n->op) {
    case Op::Buffer:
      return load(n, ravel(n, idx));  // the root is never a Buffer
    case Op::Full: {
      // A floating-point value is data (a learning rate, a fill value): a
      // Float64 param, so a new value compiles nothing. An integer one is a
      // constant (index arithmetic, division by it) unless a shape gave it.
      if (is_floating_point(dt)) {
        ValueId p = data_param(n, DataAttr::FloatValue);
        Value f{VOp::Param, DType::Float64};
        f.a = val(p).a;
        return cast(add(f), dt);
      }
      if (n->attrs.ints.size() > 1 && n->attrs.ints[1] == 1)  // a count: a shape's runtime value
        return cast(param(n, kSize, 0, n->attrs.ints[0]), dt);
      Value v{VOp::Const, dt};
      v.i = n->attrs.ints[0];
      return add(v);
    }
    case Op::Arange: {
      ValueId flat = ravel(n, idx);
      if (is_floating_point(dt)) {
        Value s{VOp::Const, DType::Float64}, st{VOp::Const, DType::Float64};
        s.f = n->attrs.reals[0];
        st.f = n->attrs.reals[1];
        return cast(op2(VOp::Add, DType::Float64, add(s),
                        op2(VOp::Mul, DType::Float64, cast(flat, DType::Float64), add(st))), dt);
      }
      return cast(iadd(iconst(n->attrs.ints[0]), imul(flat, iconst(n->attrs.ints[1]))), dt);
    }
    case Op::Linspace: return linspace(n, idx);
    case Op::Eye: return cast(op2(VOp::Eq, DType::Bool, idx[0], idx[1]), dt);
    case Op::RandUniform:
    case Op::RandNormal:
    case Op::RandInt: {
      Value v{VOp::Philox, dt};
      v.random_op = n->op;
      v.a = val(data_param(n, DataAttr::Seed)).a;
      v.b = val(data_param(n, DataAttr::Offset)).a;
      v.args[0] = ravel(n, idx);
      if (n->op == Op::RandInt) {
        v.i = n->attrs.ints[2];
        v.i1 = n->attrs.ints[3];
      } else {
        v.f = n->attrs.reals[0];
        v.f1 = n->attrs.reals[1];
      }
      return add(v);
    }
    case Op::Cast: return cast(value(n->inputs[0].get(), idx), dt);
    case Op::ToDevice: return value(n->inputs[0].get(), idx);
    case Op::Neg: return unary(VOp::Neg, n, idx);
    case Op::Exp: return unary(VOp::Exp, n, idx);
    case Op::Log: return unary(VOp::Log, n, idx);
    case Op::Sqrt: return unary(VOp::Sqrt, n, idx);
    case Op::Rsqrt: return unary(VOp::Rsqrt, n, idx);
    case Op::Abs: return unary(VOp::Abs, n, idx);
    case Op::Sin: return unary(VOp::Sin, n, idx);
    case Op::Cos: return unary(VOp::Cos, n, idx);
    case Op::Tanh: return unary(VOp::Tanh, n, idx);
    case Op::Sigmoid: return unary(VOp::Sigmoid, n, idx);
    case Op::Relu: return unary(VOp::Relu, n, idx);
    case Op::Floor: return unary(VOp::Floor, n, idx);
    case Op::Ceil: return unary(VOp::Ceil, n, idx);
    case Op::Round: return unary(VOp::Round, n, idx);
    case Op::Trunc: return unary(VOp::Trunc, n, idx);
    case Op::Sign: return unary(VOp::Sign, n, idx);
    case Op::Log1p: return unary(VOp::Log1p, n, idx);
    case Op::Expm1: return unary(VOp::Expm1, n, idx);
    case Op::Erf: return unary(VOp::Erf, n, idx);
    case Op::Tan: return unary(VOp::Tan, n, idx);
    case Op::Asin: return unary(VOp::Asin, n, idx);
    case Op::Acos: return unary(VOp::Acos, n, idx);
    case Op::Atan: return unary(VOp::Atan, n, idx);
    case Op::Sinh: return unary(VOp::Sinh, n, idx);
    case Op::Cosh: return unary(VOp::Cosh, n, idx);
    case Op::Asinh: return unary(VOp::Asinh, n, idx);
    case Op::Acosh: return unary(VOp::Acosh, n, idx);
    case Op::Atanh: return unary(VOp::Atanh, n, idx);
    case Op::Log2: return unary(VOp::Log2, n, idx);
    case Op::Log10: return unary(VOp::Log10, n, idx);
    case Op::Exp2: return unary(VOp::Exp2, n, idx);
    case Op::LogicalNot: return unary(VOp::LogicalNot, n, idx);
    case Op::Add: return binary(VOp::Add, n, idx);
    case Op::Sub: return binary(VOp::Sub, n, idx);
    case Op::Mul: return binary(VOp::Mul, n, idx);
    case Op::Div: return is_floating_point(n->dtype) ? binary(VOp::Div, n, idx) : int_division(VOp::Div, n, idx);
    case Op::Fmod: return is_floating_point(n->dtype) ? binary(VOp::Mod, n, idx) : int_division(VOp::Mod, n, idx);
    case Op::Pow: return binary(VOp::Pow, n, idx);
    case Op::Atan2: return binary(VOp::Atan2, n, idx);
    case Op::Maximum: return binary(VOp::Max, n, idx);
    case Op::Minimum: return binary(VOp::Min, n, idx);
    case Op::Eq: return binary(VOp::Eq, n, idx);
    case Op::Ne: return binary(VOp::Ne, n, idx);
    case Op::Lt: return binary(VOp::Lt, n, idx);
    case Op::Le: return binary(VOp::Le, n, idx);
    case Op::Gt: return binary(VOp::Gt, n, idx);
    case Op::Ge: return binary(VOp::Ge, n, idx);
    case Op::Where:
      return where(dt, value(n->inputs[0].get(), idx), value(n->inputs[1].get(), idx),
                   value(n->inputs[2].get(), idx));
    case Op::AsStrided: return view(n, idx);
    case Op::Sum:
    case Op::Prod:
    case Op::Max:
    case Op::Min:
    case Op::ArgMax:
    case Op::ArgMin:
    case Op::All:
    case Op::Any: return reduction(n, idx);
    case Op::Matmul:
      if (matmul_inline(*n)) return reduction(n, idx);
      break;
    case Op::Gather: {  // x at idx with the gathered dim's index replaced by index's value
      Idx at = idx;
      const int64_t d = n->attrs.ints[0];
      at[static_cast<size_t>(d)] = cast(value(n->inputs[1].get(), idx), DType::Int64);
      return value(n->inputs[0].get(), at);
    }
    case Op::Assign:
    case Op::ScatterAdd:
    case Op::Scatter:
    case Op::Cat:
    case Op::CumSum:
    case Op::CumProd:
    case Op::LogCumSumExp:
    case Op::CumMax:
    case Op::CumMin:
    case Op::CumArgMax:
    case Op::CumArgMin:
    case Op::ArgSort:
      break;
  }
  KILN_INTERNAL_ASSERT(false, "op ", op_name(n->op), " cannot be computed inline");
  return -1;
}

ValueId Lowerer::unary(VOp op, const Node* n, const Idx& idx) {
  return op1(op, n->dtype, value(n->inputs[0].get(), idx));
}

ValueId Lowerer::binary(VOp op, const Node* n, const Idx& idx) {
  return op2(op, n->dtype, value(n->inputs[0].get(), idx), value(n->inputs[1].get(), idx));
}

// Integer Div / Fmod, truncated as C's: the front end refuses a zero
// divisor, and a divisor of -1 divides by 1 instead (INT64_MIN / -1 traps
// on x86), the quotient negated (wrapping, as the reference). Index
// arithmetic (non-negative) uses VOp::Div / Mod directly.
ValueId Lowerer::int_division(VOp op, const Node* n, const Idx& idx) {
  const DType dt = n->dtype;
  const ValueId a = value(n->inputs[0].get(), idx), b = value(n->inputs[1].get(), idx);
  auto konst = [&](int64_t c) {
    Value v{VOp::Const, dt};
    v.i = c;
    return add(v);
  };
  auto where = [&](ValueId cond, ValueId x, ValueId y) { return op3(VOp::Where, dt, cond, x, y); };
  const bool is_signed = dt != DType::UInt8;
  const ValueId one = konst(1);
  ValueId safe = where(op2(VOp::Eq, DType::Bool, b, konst(0)), one, b);
  if (!is_signed) return op2(op, dt, a, safe);
  const ValueId minus_one = op2(VOp::Eq, DType::Bool, b, konst(-1));
  safe = where(minus_one, one, safe);
  const ValueId q = op2(op, dt, a, safe);
  return op == VOp::Div ? where(minus_one, op1(VOp::Neg, dt, a), q) : q;
}

ValueId Lowerer::linspace(const Node* n, const Idx& idx) {
  const DType dt = n->dtype;
  const DType L = (dt == DType::Float32 || dt == DType::Float16 || dt == DType::BFloat16)
                      ? DType::Float32 : DType::Float64;
  auto lconst = [&](double x) {
    Value v{VOp::Const, dt};  // first converted to the dtype, as the reference
    if (is_floating_point(dt)) v.f = x;
    else v.i = static_cast<int64_t>(x);
    return cast(add(v), L);
  };
  ValueId start = lconst(n->attrs.reals[0]), end = lconst(n->attrs.reals[1]);
  ValueId i = idx[0];
  ValueId steps = size_of(n, 0);
  ValueId steps_m1 = op2(VOp::Sub, DType::Int64, steps, iconst(1));
  // steps == 1 gives step = x/0, but then i = 0 < halfway is false and
  // end - step*0 would be NaN-free only if finite: select start explicitly.
  ValueId step = op2(VOp::Div, L, op2(VOp::Sub, L, end, start), cast(steps_m1, L));
  ValueId halfway = op2(VOp::Div, DType::Int64, steps, iconst(2));
  ValueId lo = op2(VOp::Add, L, start, op2(VOp::Mul, L, step, cast(i, L)));
  ValueId hi = op2(VOp::Sub, L, end,
                   op2(VOp::Mul, L, step, cast(op2(VOp::Sub, DType::Int64, steps_m1, i), L)));
  const ValueId two_sided = op3(VOp::Where, L, op2(VOp::Lt, DType::Bool, i, halfway), lo, hi);
  return cast(op3(VOp::Where, L, op2(VOp::Eq, DType::Bool, steps, iconst(1)), start, two_sided), dt);
}

// Wraps `body` in loops over `dims` of `n`'s shape (outermost parallel).
// Returns the index over n's shape; `inner` receives the innermost body.
std::vector<Stmt>* Lowerer::open_loops(const Node* n, const std::vector<int64_t>& dims, Idx& idx,
                              std::vector<Stmt>& top, bool parallel_first) {
  std::vector<Stmt>* cur = &top;
  bool parallel = parallel_first;
  for (int64_t d : dims) {
    idx[d] = open_loop(cur, size_of(n, d), n->shape[d], parallel);
    parallel = false;
  }
  return cur;
}

// Appends a loop of `extent` to *cur and makes its body the new *cur; the
// loop's variable. A parallel loop records its extent (static_extent) for
// the choice of thread count.
ValueId Lowerer::open_loop(std::vector<Stmt>*& cur, ValueId extent, int64_t static_extent,
                           bool parallel) {
  Stmt loop{StmtKind::Loop};
  loop.loop = new_loop();
  loop.extent = extent;
  loop.parallel = parallel;
  if (parallel) parallel_extent_ = static_extent;
  ValueId var = loop_var(loop.loop);
  cur->push_back(std::move(loop));
  cur = &cur->back().body;
  return var;
}

// x when view n is a row-major reshape (offset 0, contiguous strides) of x,
// computed inline, that merges runs of x's dims and splits none: a permuted
// tensor flattened (`x.transpose(1, 2).reshape({b, t, h * d})`), a
// convolution's im2col. Read at n's index, x's index would come from
// dividing each flat position by x's sizes (six divisions and six
// remainders per element of a 2-D convolution's columns, 0.2 GB/s); a
// kernel storing n loops over x's shape instead.
const Node* Lowerer::merged_from(const Node* n) {
  if (n->cls() != OpClass::View || n->numel() == 0) return nullptr;
  const Node* x = n->inputs[0].get();
  const auto& a = n->attrs.ints;  // {offset, strides...}
  if (stored(x) || a[0] != 0 || x->numel() != n->numel() || x->rank() <= n->rank()) return nullptr;
  if (!row_major_view(n)) return nullptr;
  size_t j = 0;
  for (int64_t s : n->shape) {
    int64_t p = 1;
    while (j < x->shape.size() && p < s) p *= x->shape[j++];
    if (p != s) return nullptr;
  }
  while (j < x->shape.size() && x->shape[j] == 1) ++j;
  return j == x->shape.size() ? x : nullptr;
}

// The transposed dim of n's kernel (schedule.h: transposed_dim), seen
// from this kernel's stored nodes. A view of a value computed inline counts
// (`(x * 2).t().contiguous()`, the row-major copy of a result in a permuted
// layout, core/layout.h): that value is computed from reads in its own
// row-major order. Decided from view strides, which are part of the
// structural hash that keys the schedule cache.
int64_t Lowerer::transposed_dim(const Node* n, int64_t rank, int& budget) {
  return jit::transposed_dim(n, rank, budget, [this](const Node* m) { return stored(m); });
}

// A parallel loop of extent 1 for kernels with no loop to split.
std::vector<Stmt>* Lowerer::single(std::vector<Stmt>& top) {
  Stmt loop{StmtKind::Loop};
  loop.loop = new_loop();
  loop.extent = iconst(1);
  loop.parallel = true;
  parallel_extent_ = 1;
  top.push_back(std::move(loop));
  return &top.back().body;
}

void Lowerer::store(std::vector<Stmt>* body, int32_t slot, ValueId flat, ValueId v) {
  Stmt s{StmtKind::Store};
  s.buffer = slot;
  s.index = flat;
  s.value = v;
  body->push_back(s);
}

int32_t Lowerer::output_slot(DType dt) {
  k_.buffers.push_back({dt, true});
  return static_cast<int32_t>(k_.buffers.size() - 1);
}

std::vector<int32_t> Lowerer::add_locals(const std::vector<BufferArg>& locals) {
  std::vector<int32_t> slots;
  for (const BufferArg& b : locals) {
    slots.push_back(static_cast<int32_t>(k_.buffers.size()));
    k_.buffers.push_back(b);
  }
  for (Value& v : k_.values)
    if (v.op == VOp::Load && v.a <= kLocalSlot) v.a = slots[static_cast<size_t>(kLocalSlot - v.a)];
  return slots;
}

// Iterates `src` (computed inline) over its shape and stores it at
// offset + idx . strides in the output (Cat parts, Assign's scatter).
Lowered Lowerer::lower_scatter(const Node* src, const Node* out, ValueId offset, const std::vector<ValueId>& strides) {
  std::vector<Stmt> top;
  Idx idx(src->shape.size());
  std::vector<int64_t> dims(src->shape.size());
  for (size_t d = 0; d < dims.size(); ++d) dims[d] = static_cast<int64_t>(d);
  std::vector<Stmt>* body = dims.empty() ? single(top) : open_loops(src, dims, idx, top, true);
  ValueId v = cast(value(src, idx), out->dtype);
  ValueId flat = offset;
  for (size_t d = 0; d < idx.size(); ++d) flat = iadd(flat, imul(idx[d], strides[d]));
  int32_t slot = output_slot(out->dtype);
  store(body, slot, flat, v);
  k_.body = std::move(top);
  // src's elements, not the whole output's: a row written into a [4096,
  // 4096] tensor runs on the calling thread and stores through the cache
  work_ = src->numel();
  written_ = src->numel();
  return finish();
}

Lowered Lowerer::lower_cat(int part) {
  const Node* src = root_.inputs[static_cast<size_t>(part)].get();
  const int64_t dim = root_.attrs.ints[0];
  int64_t off = 0;
  for (int j = 0; j < part; ++j) off += root_.inputs[static_cast<size_t>(j)]->shape[dim];
  Shape os = contiguous_strides(root_.shape);
  std::vector<ValueId> strides;
  for (size_t d = 0; d < os.size(); ++d)
    strides.push_back(d + 1 == os.size() ? iconst(1) : param(&root_, kStride, static_cast<int64_t>(d), os[d]));
  ValueId offset = off == 0 ? iconst(0) : imul(param(&root_, kCatOffset, part, off), strides[dim]);
  return lower_scatter(src, &root_, offset, strides);
}

// A cat of narrow parts (cat_in_one_kernel: its dim and the dims after it
// at most 16 elements): one kernel over the output, a loop over the dims
// before the cat's, and in it one store per position of the block, each
// reading the part it lies in at constant indices (narrow_dims_: the
// block's sizes and strides constants; nodes of lower rank aligned at the
// last dim). The vectorizer stores a row's positions as one interleaved
// group (codegen/llvm/loop_hints.cpp: no folded tail, 8 or 4 lanes past 8
// positions). One kernel per part wrote at the output's stride, one
// element at a time (LLVM versions such loops for a unit stride only), its
// math through scalar calls: three computed columns of 2^21 rows 9.7 -> 1.7
// ms; 3 x 3 rotation matrices from two angles 134 -> 3.6-4.0 ms. (Constant
// loops with a select chain of the parts, for LLVM to unroll, ran as fast
// up to 8 positions; past 8 LLVM left the loop rolled, its math scalar.)
Lowered Lowerer::lower_cat_whole() {
  const int64_t d = root_.attrs.ints[0], rank = root_.rank();
  std::vector<int64_t> block_dims;
  for (int64_t k = d; k < rank; ++k) block_dims.push_back(k);
  set_narrow(rank, block_dims, kCatWholeMaxWidth);
  std::vector<int64_t> outer;  // no loop for a dim of 1: the first loop is the parallel one ([1, T, 2])
  Idx idx(static_cast<size_t>(rank));
  for (int64_t k = 0; k < d; ++k)
    if (root_.shape[k] == 1) idx[k] = iconst(0);
    else outer.push_back(k);
  std::vector<Stmt> top;
  std::vector<Stmt>* body = outer.empty() ? single(top) : open_loops(&root_, outer, idx, top, true);
  // Every position of the narrow block, in row-major order, reads its own
  // part at constant indices: one store each.
  int64_t block = 1;
  for (int64_t k = d; k < rank; ++k) block *= root_.shape[k];
  std::vector<std::pair<ValueId, ValueId>> stores;  // (position, value): the slot comes after the inputs'
  for (int64_t e = 0; e < block; ++e) {
    idx = at_position(idx, root_.shape, block_dims, e);
    const int64_t along = val(idx[d]).i;  // the position along the cat's dim
    int64_t part = 0, off = 0;
    while (off + root_.inputs[part]->shape[d] <= along) off += root_.inputs[part++]->shape[d];
    Idx at = idx;
    at[d] = iconst(along - off);
    stores.emplace_back(ravel(&root_, idx), cast(value(root_.inputs[part].get(), at), root_.dtype));
  }
  const int32_t slot = output_slot(root_.dtype);
  for (const auto& [flat, v] : stores) store(body, slot, flat, v);
  k_.body = std::move(top);
  work_ = root_.numel();
  return finish();
}

// out[j with j[d] = index[j]] += src[j] (Scatter: = src[j]): loops over the
// index's shape in order, the parallel loop dim 0 unless d is 0 (then one
// thread: every j may write one element). Two j writing one element differ
// in j[d] only, so they run in one thread in the reference's order (the last
// write wins, as in the reference); the dims after d run inside d's loop,
// contiguous (an embedding's gradient adds whole rows).
Lowered Lowerer::lower_index_scatter() {
  const Node* index = root_.inputs[1].get();
  const Node* src = root_.inputs[2].get();
  const int64_t d = root_.attrs.ints[0];
  const int64_t r = src->rank();
  std::vector<int64_t> dims(static_cast<size_t>(r));
  for (int64_t k = 0; k < r; ++k) dims[static_cast<size_t>(k)] = k;
  std::vector<Stmt> top;
  Idx idx(static_cast<size_t>(r));
  std::vector<Stmt>* body = d != 0 ? open_loops(src, dims, idx, top, true) : open_loops(src, dims, idx, *single(top), false);
  Idx at = idx;
  at[static_cast<size_t>(d)] = cast(value(index, idx), DType::Int64);
  const ValueId flat = ravel(&root_, at);
  const ValueId v = cast(value(src, idx), root_.dtype);
  const int32_t slot = output_slot(root_.dtype);  // after every input's slot
  if (root_.op == Op::Scatter) {
    store(body, slot, flat, v);
  } else {
    Value old{VOp::Load, root_.dtype};  // the element so far: the base, or earlier additions
    old.a = slot;
    old.args[0] = flat;
    store(body, slot, flat, op2(VOp::Add, root_.dtype, add(old), v));
  }
  k_.body = std::move(top);
  work_ = src->numel();
  return finish();
}

Lowered Lowerer::lower_assign_scatter() {
  if (root_.op != Op::Assign) return lower_index_scatter();
  const auto& a = root_.attrs.ints;
  const Node* src = root_.inputs[1].get();
  std::vector<ValueId> strides;
  for (size_t d = 0; d < src->shape.size(); ++d)
    strides.push_back(a[1 + d] == 0 ? iconst(0) : param(&root_, kViewStride, static_cast<int64_t>(d), a[1 + d]));
  return lower_scatter(src, &root_, view_offset(&root_), strides);
}

// A scan (cumsum, cumprod, cummax, cummin and their positions): loops over
// the other dims (the first parallel), then the scanned dim serial,
// accumulators carrying the running values (sums and products in PyTorch's
// CPU acc_type, as the reference), stored at every step. Scanning the last
// dim, one accumulator walks each row (a 1-D scan runs on one thread).
// Scanning another dim, the kernel keeps a row of running values, one per
// column of the last dim (an accumulator with lanes, in the kernel's
// frame), and walks the scanned dim one row of the input at a time: every
// step reads and writes a whole contiguous row, as a hand-written loop
// does. Rows wider than the frame's budget (kScanRowBytes) go in blocks of
// columns, each walking the scanned dim; with no other dim, those blocks
// are the parallel loop, and a large scan has one per thread at least. The
// members of `group` scan one input along one dim (cummax's values and
// positions): one kernel, one accumulator per combiner.
Lowered Lowerer::lower_scan(const std::vector<const Node*>& group) {
  // The running values' bytes per kernel call, on its stack: 8192 float64
  // sums (a [*, 8192] cumsum(0) walks whole rows). Walking a block of
  // columns is 1.3-1.8x slower than walking whole rows (measured on the
  // Zen 5 VM: [4096, 4096] cumsum(0), blocks of 2048 against whole rows).
  constexpr int64_t kScanRowBytes = 64 << 10;
  const Node* x = root_.inputs[0].get();
  const int64_t d = root_.attrs.ints[0];
  for (const Node* g : group)
    KILN_INTERNAL_ASSERT(g->cls() == OpClass::Scan && g->inputs[0].get() == x && g->attrs.ints[0] == d,
                         "a scan group scans one input along one dim");
  const int64_t r = root_.rank();
  const int64_t last = r - 1;
  const bool columns = d != last;
  std::vector<int64_t> others;
  for (int64_t k = 0; k < r; ++k)
    if (k != d && !(columns && k == last)) others.push_back(k);
  std::vector<Stmt> top;
  Idx idx(static_cast<size_t>(r));
  std::vector<Stmt>* body = !others.empty() ? open_loops(&root_, others, idx, top, true)
                            : columns       ? &top
                                            : single(top);
  auto accumulator = [&](Op op) -> Accumulator {
    const DType dt = x->dtype;
    switch (op) {
      case Op::CumSum:
      case Op::CumProd:
      case Op::LogCumSumExp: {
        const DType adt = dt == DType::Float16 || dt == DType::BFloat16 ? DType::Float32
                          : is_floating_point(dt)                     ? DType::Float64
                                                                      : DType::Int64;
        const Combiner c = op == Op::CumSum ? Combiner::Sum : op == Op::CumProd ? Combiner::Prod : Combiner::LogAddExp;
        return {c, adt, true};
      }
      case Op::CumMax:
      case Op::CumArgMax: return {Combiner::CumMax, dt, true};
      case Op::CumMin:
      case Op::CumArgMin: return {Combiner::CumMin, dt, true};
      default: KILN_INTERNAL_ASSERT(false, "not a scan: ", op_name(op));
    }
    return {};
  };
  // The members' accumulators (members of one combiner share one) and the
  // distinct ones, each updated once a step.
  std::vector<Accumulator> kinds;
  std::vector<size_t> kind_of;
  for (const Node* g : group) {
    const Accumulator a = accumulator(g->op);
    size_t j = 0;
    while (j < kinds.size() && kinds[j].combiner != a.combiner) ++j;
    if (j == kinds.size()) kinds.push_back(a);
    kind_of.push_back(j);
  }
  ValueId width = -1, lanes = -1, first = -1, cols = -1;
  if (columns) {
    int64_t lane_bytes = 0;
    for (const Accumulator& a : kinds)
      lane_bytes += static_cast<int64_t>(element_size(a.dtype)) + (keeps_position(a.combiner) ? 8 : 0);
    const int64_t cap_max = kScanRowBytes / lane_bytes / 16 * 16;
    // With no other dim the column blocks are the parallel loop: a large
    // scan gets one per thread of the pool (each block walks every row, so
    // the values are the same on any count), of at least kScanMinBlock
    // columns; a param, so that another split compiles nothing. [4096,
    // 4096].cumsum(0) on this project's Intel VM: one block 11.1 ms on 1
    // thread and on 2; two blocks 12.6 ms on 1, 6.2-6.7 on 2.
    constexpr int64_t kScanMinBlock = 256;
    constexpr int64_t kScanSplitMinElements = int64_t{1} << 17;  // (the executor's threshold for threads)
    const int64_t w = root_.shape[static_cast<size_t>(last)];
    const int64_t threads = ThreadPool::instance().num_threads();
    int64_t cap = cap_max;
    if (others.empty() && threads > 1 && root_.numel() >= kScanSplitMinElements)
      cap = std::min(cap_max, std::max(kScanMinBlock, (w + threads * 16 - 1) / (threads * 16) * 16));
    width = size_of(&root_, last);
    const ValueId capv = param(&root_, kScanBlock, 0, cap);
    lanes = op2(VOp::Min, DType::Int64, width, capv);
    const ValueId blocks = idiv(iadd(width, iadd(capv, iconst(-1))), capv);
    const ValueId block = open_loop(body, blocks, (w + cap - 1) / cap, others.empty());
    first = imul(block, capv);
    cols = op2(VOp::Min, DType::Int64, capv, op2(VOp::Sub, DType::Int64, width, first));
  }
  std::vector<int32_t> ids;
  for (Accumulator a : kinds) {
    a.lanes = lanes;
    ids.push_back(static_cast<int32_t>(k_.accs.size()));
    k_.accs.push_back(a);
  }
  // Opens the loop over a block's columns in *at (returning the lane), or
  // none when the scan walks rows.
  auto lane_loop = [&](std::vector<Stmt>*& at) {
    return columns ? open_loop(at, cols, root_.shape[static_cast<size_t>(last)], false)
                   : ValueId{-1};
  };
  {
    std::vector<Stmt>* at = body;
    const ValueId lane = lane_loop(at);
    for (const int32_t id : ids) {
      Stmt init{StmtKind::AccInit};
      init.acc = id;
      init.lane = lane;
      at->push_back(init);
    }
  }
  std::vector<Stmt>* at = body;
  Idx at_idx = idx;
  at_idx[static_cast<size_t>(d)] = open_loop(at, size_of(&root_, d), root_.shape[static_cast<size_t>(d)], false);
  const ValueId lane = lane_loop(at);
  if (columns) at_idx[static_cast<size_t>(last)] = iadd(first, lane);
  const ValueId in = value(x, at_idx);
  for (size_t j = 0; j < kinds.size(); ++j) {
    Stmt upd{StmtKind::AccUpdate};
    upd.acc = ids[j];
    upd.lane = lane;
    upd.value = cast(in, kinds[j].dtype);
    if (keeps_position(kinds[j].combiner)) upd.index = at_idx[static_cast<size_t>(d)];
    at->push_back(upd);
  }
  const ValueId flat = ravel(&root_, at_idx);
  for (size_t j = 0; j < group.size(); ++j) {
    const Node* g = group[j];
    const bool position = g->op == Op::CumArgMax || g->op == Op::CumArgMin;
    const int32_t id = ids[kind_of[j]];
    Value running{position ? VOp::AccIndex : VOp::AccRead,
                  position ? DType::Int64 : k_.accs[static_cast<size_t>(id)].dtype};
    running.a = id;
    running.args[0] = lane;
    store(at, output_slot(g->dtype), flat, cast(add(running), g->dtype));
  }
  k_.body = std::move(top);
  work_ = root_.numel() * static_cast<int64_t>(group.size());
  return finish();
}

void Lowerer::set_narrow(int64_t rank, const std::vector<int64_t>& dims, int64_t max) {
  narrow_dims_.assign(static_cast<size_t>(rank), false);
  for (int64_t d : dims) narrow_dims_[static_cast<size_t>(d)] = true;
  narrow_trailing_ = true;
  narrow_max_ = max;
}

Idx Lowerer::at_position(Idx idx, const Shape& shape, const std::vector<int64_t>& dims, int64_t p) {
  for (size_t k = dims.size(); k-- > 0;) {
    const int64_t d = dims[k];
    idx[static_cast<size_t>(d)] = iconst(p % shape[d]);
    p /= shape[d];
  }
  return idx;
}

Lowered Lowerer::lower_with_loops(const std::vector<const Node*>& group) const {
  Lowerer loops(group, mat_);
  loops.unroll_narrow_ = false;
  return loops.lower_group(group);
}

// Whether a kernel with a narrow inner loop unrolled into `positions`
// (lower_group, idx its index) is one to keep, else it is lowered again with
// the loop. Every read must step along the rows' loop by 0 or 1 (a value
// per row: col[:, None]) or by the positions' count (rows stored one after
// the other): reading the rows of a wider tensor (x[:, :3] of [N, 64], or
// of [N, 12] at a constant stride) ran slower than the loop (the exp of 3
// of 64: 2.35 -> 3.0 ms, x * 2 of 3 of 12 1.95 -> 2.75 ms). And its float
// math may be at most `budget` (lowerer.h; a function 4, another op 1, a
// select, negation or cast 0): each
// position is a copy of the body, its vectors interleaved by shuffles, so
// compile time grows with positions x body (fresh processes, medians of 5:
// (p - c).exp() of 3 positions 13 -> 18 ms, of 8 11 -> 32 ms; a tanh GELU of
// 2 12 -> 20 ms, of 6 16 -> 49 ms).
bool Lowerer::unrolled_rows_pay(const Idx& idx, int64_t positions, int64_t budget) const {
  int32_t rows = -1;  // the innermost loop: the last dim's not unrolled
  for (size_t d = idx.size(); d-- > 0 && rows < 0;)
    if (val(idx[d]).op == VOp::LoopIndex) rows = val(idx[d]).a;
  int64_t math = 0;
  for (const Value& v : k_.values) {
    if (v.op == VOp::Load) {
      const int64_t step = k_.step_along(v.args[0], rows);
      if (step != 0 && step != 1 && step != positions) return false;
    }
    // (selects, negations and casts cost next to nothing: a max's NaN and
    // zero rules are selects)
    const bool arithmetic = ((v.op >= VOp::Add && v.op <= VOp::Sign) || v.op == VOp::Philox) &&
                            v.op != VOp::Neg && v.op != VOp::Abs;
    if (arithmetic && is_floating_point(v.dtype)) math += is_math_function(v.op) ? 4 : 1;
  }
  return math <= budget;
}

// The kernel computing every node of `group` (one loop nest over the
// shared iteration space, one store per member: horizontal fusion). An
// Assign member computes its base (the first half of the write).
Lowered Lowerer::lower_group(const std::vector<const Node*>& group) {
  if (group[0]->cls() == OpClass::Scan) return lower_scan(group);
  std::vector<const Node*> outs;
  bool writes = false;  // an Assign writes into a buffer the kernel may also read
  for (const Node* g : group) {
    const bool write = g->cls() == OpClass::Write;  // Assign, the scatters
    outs.push_back(write ? g->inputs[0].get() : g);
    writes = writes || write;
  }
  std::vector<const Node*> reds;
  NodeSet seen;
  for (const Node* o : outs) {
    if (!roots_.count(o)) {
      find_reductions(o, reds, seen);
      continue;
    }
    if (!seen.insert(o).second) continue;
    if (reduces(*o)) reds.push_back(o);
    for (const auto& in : o->inputs) find_reductions(in.get(), reds, seen);
  }
  if (reds.empty()) {
    // Elementwise: loops over the (shared) output shape; over the finer
    // shape of the value a lone output merges dims of (merged_from).
    std::vector<Stmt> top;
    std::vector<ValueId> values(outs.size(), -1), flats(outs.size(), -1);
    const Node* merged = outs.size() == 1 ? merged_from(outs[0]) : nullptr;
    const Node* out = merged ? merged : outs[0];
    Idx idx(out->shape.size());
    std::vector<int64_t> dims(out->shape.size());
    for (size_t d = 0; d < dims.size(); ++d) dims[d] = static_cast<int64_t>(d);
    int budget = 64;
    int64_t td = -1;
    for (size_t j = 0; j < outs.size() && td < 0 && dims.size() >= 2; ++j)
      td = transposed_dim(merged ? merged : outs[j], out->rank(), budget);
    std::vector<const Node*> readers;
    for (const Node* o : outs) readers.push_back(merged ? merged : o);
    Periodic per;  // a row operand broadcast along narrow rows (lower_periodic.cpp)
    const bool periodic = td < 0 && !dims.empty() && periodic_rows(out, readers, per);
    std::vector<int64_t> unrolled;  // narrow inner dims (open_flat_loops)
    std::vector<Stmt>* body = dims.empty() ? single(top)
                              : td >= 0    ? open_tiles(out, td, readers, idx, top)
                              : periodic   ? open_periodic(out, per, idx, top)
                                           : open_flat_loops(out, readers, idx, top, &unrolled);
    // A narrow inner loop's positions (a row of [N, 3]) each computed and
    // stored at constant indices, as a narrow cat's (lower_cat_whole): the
    // kernel's innermost loop is the rows', which LLVM vectorizes with a
    // row's elements as one interleaved group (codegen/llvm/loop_hints.cpp:
    // store_step). A loop of 3 ran one masked vector a row.
    int64_t positions = 1;
    for (int64_t d : unrolled) positions *= out->shape[d];
    values.resize(outs.size() * static_cast<size_t>(positions));
    flats.resize(values.size());
    for (int64_t p = 0; p < positions; ++p) {
      if (!unrolled.empty()) idx = at_position(idx, out->shape, unrolled, p);
      for (size_t j = 0; j < outs.size(); ++j) {
        const Node* o = merged ? merged : outs[j];
        KILN_INTERNAL_ASSERT(o->shape == out->shape, "horizontal group of different shapes");
        const size_t at = static_cast<size_t>(p) * outs.size() + j;
        values[at] = cast(value(o, idx), group[j]->dtype);
        flats[at] = ravel(o, idx);  // a merge keeps the row-major position
      }
    }
    if (!unrolled.empty() && !unrolled_rows_pay(idx, positions, kNarrowUnrollMath)) return lower_with_loops(group);
    std::vector<int32_t> slots;
    for (const Node* g : group) slots.push_back(output_slot(g->dtype));
    for (size_t at = 0; at < values.size(); ++at) store(body, slots[at % outs.size()], flats[at], values[at]);
    if (td >= 0) place_stages();
    if (periodic) place_periodic_locals(per, top);
    k_.body = std::move(top);
    if (td >= 0) k_.drop_dead_values();  // the reads' analysis's unread values (lower_tiles.cpp)
    work_ = out->numel();
    return finish();
  }
  return lower_rows(group, outs, reds, writes);
}

}  // namespace lowering

namespace {

std::string kernel_name(const Node& n, const Lowered& l) {
  std::string name = "k_";
  name += op_name(n.op);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  name += "_" + std::to_string(l.kernel.values.size());
  return name;
}

}  // namespace

using lowering::Lowerer;

Lowered lower_node(const Node& out, const NodeSet& materialized, int part) {
  if (out.op != Op::Cat) return lower_group({&out}, materialized);
  Lowerer lw(out, materialized);
  Lowered l = part < 0 ? lw.lower_cat_whole() : lw.lower_cat(part);
  l.kernel.name = kernel_name(out, l);
  l.kernel.origin = Loc::of(out).str();
  return l;
}

Lowered lower_group(const std::vector<const Node*>& group, const NodeSet& materialized) {
  Lowerer lw(group, materialized);
  Lowered l = lw.lower_group(group);
  l.kernel.name = kernel_name(*group.front(), l);
  l.kernel.origin = Loc::of(*group.front()).str();
  return l;
}

Lowered lower_assign_scatter(const Node& assign, const NodeSet& materialized) {
  Lowerer lw(assign, materialized);
  Lowered l = lw.lower_assign_scatter();
  l.kernel.name = kernel_name(assign, l) + "_scatter";
  l.kernel.origin = Loc::of(assign).str();
  return l;
}

}  // namespace kiln::jit
