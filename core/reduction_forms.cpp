// The forms a primitive reduction takes in the graph (core/reduce.cpp's
// ops build them): one Reduce node, or for shapes one node would run
// slowly, a composition of nodes: a full reduction in two stages, a column
// reduction in levels of row-block combinations, narrow rows read as wider
// ones, several reduced dims in stages, a permuted view reduced in memory
// order. Each form's comment says what it replaced and by how much.
#include "core/reduction_forms.h"

#include <algorithm>
#include <initializer_list>
#include <numeric>
#include <unordered_map>

#include "core/built_nodes.h"
#include "core/layout.h"
#include "core/ops_common.h"

namespace kiln {

namespace {

// The dtype a form keeps its partial results in: float64 for float sums
// and products, as the one-pass accumulator; the result's own otherwise.
DType partial_dtype(Op op, DType out) {
  return (op == Op::Sum || op == Op::Prod) && is_floating_point(out) ? DType::Float64 : out;
}

// The elementwise op that combines two partial results of reduction op.
Op combine_op(Op op) {
  return op == Op::Sum ? Op::Add : op == Op::Prod ? Op::Mul : op == Op::Max ? Op::Maximum : Op::Minimum;
}

NodePtr reduce_node(Op op, DType dtype, const NodePtr& x, const Shape& rdims) {
  Shape kept = x->shape;
  for (int64_t d : rdims) kept[d] = 1;
  Attrs a;
  a.ints = rdims;
  return make_node(op, dtype, x->device, std::move(kept), node_list(x), std::move(a));
}

// A reduction of every element of a large tensor in two stages: partial
// results over fixed blocks (a row kernel, parallel over the blocks), then
// the reduction of the partials. One kernel would run on one thread. The
// blocks depend on the shape alone, never on the thread count, so results
// are the same on any number of threads (and partial sums of floats are
// kept in float64, as the single pass accumulates). Blocks: the leading
// dim when it has at least kSplitMinBlocks rows, else the flat elements cut
// into 256 ... 16 equal blocks of at least 1024 elements; null when neither.
constexpr int64_t kSplitMinElements = 1 << 15;
constexpr int64_t kSplitMinBlocks = 16;
NodePtr split_full_reduction(Op op, DType out, const NodePtr& x) {
  const int64_t n = x->numel();
  if (n < kSplitMinElements || op == Op::ArgMax || op == Op::ArgMin) return nullptr;
  NodePtr blocks = x;
  if (x->rank() < 2 || x->shape[0] < kSplitMinBlocks) {
    int64_t c = 256;
    while (c >= kSplitMinBlocks && (n % c != 0 || n / c < 1024)) c /= 2;
    if (c < kSplitMinBlocks) return nullptr;
    blocks = reshape_node(x, {c, n / c});
  }
  const DType partial = partial_dtype(op, out);
  Shape inner, all;
  for (int64_t d = 0; d < blocks->rank(); ++d) {
    if (d > 0) inner.push_back(d);
    all.push_back(d);
  }
  NodePtr parts = reduce_node(op, partial, cast_node(blocks, partial), inner);
  NodePtr total = cast_node(reduce_node(op, partial, parts, all), out);
  Shape kept(x->shape.size(), 1);
  return reshape_node(total, kept);
}

// x[start::step] along dim d, `len` long: a view of x's row-major layout.
NodePtr slice_node(const NodePtr& x, int64_t d, int64_t start, int64_t step, int64_t len) {
  Shape strides = contiguous_strides(x->shape), shape = x->shape;
  shape[d] = len;
  const int64_t offset = start * strides[d];
  strides[d] *= step;
  return as_strided_node(x, std::move(shape), offset, strides);
}

// The stored tensor x reads in row-major order, through reshapes (views
// of offset 0 and contiguous strides): x itself when it is stored; null
// when x is computed, or a view of another layout.
NodePtr stored_base(const NodePtr& x) {
  NodePtr base = x;
  while (base->op == Op::AsStrided && base->attrs.ints[0] == 0 && base->inputs[0]->numel() == base->numel() &&
         Shape(base->attrs.ints.begin() + 1, base->attrs.ints.end()) == contiguous_strides(base->shape))
    base = base->inputs[0];
  return has_value(*base) ? base : nullptr;
}

NodePtr narrow_column_reduction(Op op, DType out, const NodePtr& x, int64_t d, int64_t inner);

// A reduction over one dim d that is not the innermost (a column reduction:
// sum(0) of a matrix, a bias gradient). One kernel would read each output's
// column with a stride (140x slower than a row sum at 2048 x 2048). Instead,
// levels of an elementwise combination of kColumnBlock row-slices,
// out[i] = x[8i] + x[8i+1] + ... + x[8i+7], each stored by its own kernel
// whose inner loop runs along the contiguous dims (vectorized), shrink d
// 8x per level (16x over stored rows: x's own, or a level's partials); a
// final short reduction and the leftover rows finish it.
// The order depends on the shape only (deterministic on any thread count);
// float sums and products are combined in float64, as the one-pass
// accumulator. Null when the shape does not call for it.
// Small inputs (cache-resident) keep one kernel, whose loop down a column
// is as fast as its one accumulator's chain of additions allows: under
// 16384 elements a sum's single kernel costs less than the levels' launches.
// A max or min (NaN-exact, a longer chain) and a reduction of exp-like math
// (a scalar call per element down the column, vectorized in the levels)
// pay for the levels from 2048 elements: softmax(0) of [32, 256] ran 4x
// faster, amax(0) of [64, 64] 2.8x.
constexpr int64_t kColumnBlock = 8;
// A level over stored rows (x's, or views of them; the levels' partials)
// combines 16: half the partials to write and read back, a level fewer
// (1 thread: 4096 x 4096 sum(0) 4.9-5.9 -> 3.8-4.6 ms, x.t().sum(1)
// 4.7-5.0 -> 3.7-3.8, [2^20, 16] 8.3 -> 5.5-6.5, var(0) of [64, 65536]
// 5.3-5.8 -> 2.0, [65536, 256] 7.9 -> 8.5). Rows computed inline keep 8:
// each row of a level is an expression to evaluate.
constexpr int64_t kStoredColumnBlock = 16;
constexpr int64_t kColumnMinInner = 16;
constexpr int64_t kColumnMinElements = 1 << 14;
constexpr int64_t kColumnSlowChainMinElements = 1 << 11;
// Whether computing x inline costs transcendental math: a walk over at
// most `budget` nodes without values, elementwise ops and views only.
bool computes_transcendental(const Node* x, int& budget) {
  if (has_value(*x) || --budget < 0) return false;
  if (is_transcendental(x->op)) return true;
  if (!is_elementwise(x->op) && !is_view(x->op)) return false;
  for (const NodePtr& in : x->inputs)
    if (computes_transcendental(in.get(), budget)) return true;
  return false;
}
bool computes_transcendental(const Node* x) {
  int budget = 32;
  return computes_transcendental(x, budget);
}
// Whether x is stored memory or views of it (a reshape, a permutation in
// memory order): the levels read its rows as they lie.
bool views_stored(const Node* x) {
  while (!has_value(*x) && is_view(x->op) && !x->inputs.empty()) x = x->inputs[0].get();
  return has_value(*x);
}
// Whether x is a few additions, subtractions, products and casts of stored
// memory and constants (var's x - K and its square): its levels combine 16
// rows as stored rows' do, so that they merge with x's own (x.mean(0)'s in
// a standardization) into one pass over x.
bool cheap_of_stored(const Node* x, std::vector<const Node*>& seen) {
  if (has_value(*x) || std::find(seen.begin(), seen.end(), x) != seen.end()) return true;
  if (seen.size() >= 16) return false;
  seen.push_back(x);
  const Op op = x->op;
  if (!is_view(op) && op != Op::Cast && op != Op::Add && op != Op::Sub && op != Op::Mul && op != Op::Neg &&
      op != Op::Abs && op != Op::Full)
    return false;
  for (const NodePtr& in : x->inputs)
    if (!cheap_of_stored(in.get(), seen)) return false;
  return true;
}
bool cheap_of_stored(const Node* x) {
  std::vector<const Node*> seen;  // (at most 16 distinct nodes)
  return cheap_of_stored(x, seen);
}
NodePtr blocked_column_reduction(Op op, DType out, const NodePtr& x, const Shape& rdims) {
  if (rdims.size() != 1 || (op != Op::Sum && op != Op::Prod && op != Op::Max && op != Op::Min)) return nullptr;
  if (x->numel() < kColumnSlowChainMinElements) return nullptr;
  if (x->numel() < kColumnMinElements && op != Op::Max && op != Op::Min && !computes_transcendental(x.get()))
    return nullptr;
  const int64_t d = rdims[0];
  if (d == x->rank() - 1 || x->shape[d] < 2 * kColumnBlock) return nullptr;
  int64_t inner = 1;
  for (int64_t k = d + 1; k < x->rank(); ++k) inner *= x->shape[k];
  // Rows narrower than kColumnMinInner (the x, y, z columns of [N, 3]
  // points, a bias of 10 classes) run as wider rows where x reads them in
  // row-major order (narrow_column_reduction); otherwise they take the
  // levels for a plain sum or product: the one kernel walked each column
  // down with a stride, as many passes over x as it has columns
  // ([2^20, 12].sum(0) 16-33 -> 3.4-4.1 ms, [2^20, 3] 2.3-2.8 -> 1.4 ms,
  // var(0) 30-38 -> 8-9 ms). Not a max or min, nor a reduction of exp-like
  // math: the levels' short inner loops run them an element at a time
  // ([2^20, 3].amax(0) 3.1-4.0 -> 4.9-5.1 ms, softmax(0) 17 -> 31-34 ms).
  if (inner < kColumnMinInner)
    if (NodePtr r = narrow_column_reduction(op, out, x, d, inner)) return r;
  if (inner < kColumnMinInner && (op == Op::Max || op == Op::Min || computes_transcendental(x.get()))) return nullptr;
  const Op combine = combine_op(op);
  const DType acc = partial_dtype(op, out);
  NodePtr v = cast_node(x, acc);
  std::vector<NodePtr> leftovers;
  bool stored = views_stored(x.get()) || cheap_of_stored(x.get());
  while (v->shape[d] >= 2 * kColumnBlock) {
    const int64_t rows = v->shape[d];
    const int64_t block = stored && rows >= 2 * kStoredColumnBlock ? kStoredColumnBlock : kColumnBlock;
    const int64_t q = rows / block, rest = rows - q * block;
    Shape shape = v->shape;
    shape[d] = q;
    NodePtr level = slice_node(v, d, 0, block, q);
    for (int64_t k = 1; k < block; ++k)
      level = make_node(combine, acc, x->device, shape, {level, slice_node(v, d, k, block, q)}, {},
                        /*store=*/k == block - 1);
    if (rest > 0) leftovers.push_back(reduce_node(op, acc, slice_node(v, d, q * block, 1, rest), rdims));
    v = level;
    stored = true;  // (each level is)
  }
  NodePtr r = reduce_node(op, acc, v, rdims);
  for (const NodePtr& l : leftovers) r = make_node(combine, acc, x->device, r->shape, {r, l});
  return cast_node(r, out);
}

// Computed narrow rows as wide ones: x, an elementwise expression of
// [outer..., N, w] reading stored memory of its own shape in row-major
// order, per-column operands broadcast along N (a column mean, `x -
// x.mean(0)` in var(0); a mean per batch, [B, 1, w]) and single values,
// rebuilt over [outer, q, L] (narrow_column_reduction): the stored reads
// become views of wider rows, each per-column operand its row repeated k
// times for each outer position (stored: outer x L elements, computed
// once), the ops the same. Null where x reads anything else (random
// numbers, a transposed view, an operand whose outer dims do not walk in
// order, more than 64 nodes).
class WideRows {
 public:
  WideRows(const NodePtr& x, int64_t d, int64_t inner, int64_t wide, int64_t q, int64_t outer)
      : x_(x), d_(d), inner_(inner), wide_(wide), q_(q), outer_(outer),
        key_(key_of(x->shape, {d, inner, wide, q, outer})) {}

  NodePtr at(const NodePtr& n) {
    auto found = memo_.find(n.get());
    if (found != memo_.end()) return found->second;
    if (--budget_ < 0 || n->shape != x_->shape) return nullptr;
    if (NodePtr r = Rebuilt::find(n, key_)) {
      memo_.emplace(n.get(), r);
      return r;
    }
    const Shape shape{outer_, q_, wide_};
    NodePtr r;
    if (const NodePtr base = stored_base(n)) {
      r = as_strided_node(base, shape, 0, {x_->shape[d_] * inner_, wide_, 1});
    } else if (n->op == Op::AsStrided && !has_value(*n)) {
      r = broadcast(n);
    } else if (n->op == Op::Full && n->inputs.empty()) {  // a scalar operand: one value everywhere
      r = make_node(Op::Full, n->dtype, n->device, shape, {}, n->attrs);
    } else if (is_elementwise(n->op) && !n->store) {
      NodeList in;
      for (const NodePtr& i : n->inputs) {
        NodePtr w = at(i);
        if (!w) return nullptr;
        in.push_back(std::move(w));
      }
      r = make_node(n->op, n->dtype, n->device, shape, std::move(in), n->attrs);
    }
    memo_.emplace(n.get(), r);
    if (r) Rebuilt::remember(n, key_, r);
    return r;
  }

 private:
  // The nodes rebuilt last on this thread over the same wide rows
  // (core/built_nodes.h): sibling reductions of one x (var's sums of d and
  // d * d, beside x.mean(0)'s) then read the same views and the same
  // stored operands, and their levels merge into one pass over x
  // (jit/schedule.cpp).
  using Rebuilt = BuiltNodes<struct WideRowsTag, Shape, 64>;
  static Shape key_of(Shape k, std::initializer_list<int64_t> form) {  // x's shape, then the wide rows' form
    k.insert(k.end(), form);
    return k;
  }

  // A view of x's shape broadcasting one value, or one row of w along N
  // and the outer dims, over the wide rows; null for any other view.
  NodePtr broadcast(const NodePtr& v) {
    const NodePtr& m = v->inputs[0];
    const int64_t offset = v->attrs.ints[0];
    const Shape strides(v->attrs.ints.begin() + 1, v->attrs.ints.end());
    const Shape inner_shape(x_->shape.begin() + d_ + 1, x_->shape.end());
    const Shape inner_strides = contiguous_strides(inner_shape);
    bool single = true, row = strides[static_cast<size_t>(d_)] == 0;
    for (size_t j = 0; j < strides.size(); ++j) {
      single = single && (strides[j] == 0 || x_->shape[j] == 1);
      if (static_cast<int64_t>(j) > d_) row = row && (strides[j] == inner_strides[j - static_cast<size_t>(d_) - 1] || x_->shape[j] == 1);
    }
    if (single) return as_strided_node(m, {outer_, q_, wide_}, offset, {0, 0, 0});
    // the outer dims as one (a mean per batch: [B, 1, w]): one stride
    // walks them in order, 0 where the row is the same for all
    int64_t step = 0, next = -1;
    for (int64_t j = d_ - 1; j >= 0; --j) {
      const size_t at = static_cast<size_t>(j);
      if (x_->shape[at] == 1) continue;
      if (next < 0) step = strides[at];
      else row = row && strides[at] == next;
      next = (next < 0 ? step : next) * x_->shape[at];
    }
    if (!row) return nullptr;
    // each outer position's row repeated k times: [outer, k, w] -> [outer, 1, L], stored
    const NodePtr repeated = as_strided_node(m, {outer_, wide_ / inner_, inner_}, offset, {step, 0, 1});
    const NodePtr tiled = as_strided_node(repeated, {outer_, 1, wide_}, 0, {wide_, wide_, 1}, /*store=*/true);
    return expand_node(tiled, {outer_, q_, wide_});
  }

  const NodePtr& x_;
  int64_t d_, inner_, wide_, q_, outer_;
  const Shape key_;  // what Rebuilt knows these wide rows by
  std::unordered_map<const Node*, NodePtr> memo_;
  int budget_ = 64;
};

// The column reduction of narrow rows (the x, y, z columns of [N, 3]
// points: their amax(0) and amin(0), a bounding box; the sum(0) and var(0)
// of [N, 10] features; softmax(0)) over rows as wide as the rows' least
// common multiple with 16 elements: stored [N, w] is, for the first q * k
// rows, [q, L] with L = lcm(w, 16) and k = L / w rows to a wide row, a
// view of the same memory; computed rows are rebuilt over it (WideRows).
// Its column reduction runs in levels over full vectors, then L columns
// fold into w ([k, w] over k), and the last N - q * k rows are reduced
// apart and combined. The levels over rows of w ran each row as a short
// loop, element by element for a max or min, which the single kernel
// walked down each column instead: as many passes over x as it has
// columns. Partials stay in the accumulator's dtype (float64 for float
// sums and products); the order depends on the shape only. Null where x
// reads what WideRows cannot widen, or is too short for a level.
NodePtr narrow_column_reduction(Op op, DType out, const NodePtr& x, int64_t d, int64_t inner) {
  // Small inputs keep the single kernel, whose walks down the columns stay
  // in cache, for a max or min under 8192 elements, exp-like math under
  // 4096 (sums take the levels from 16384): the wide rows' dozen kernels
  // cost more there (1 thread: [700, 3].amax(0) 2.6 us in one kernel, 5.8
  // as wide rows; [2000, 3] 5.8 / 6.0; softmax(0) of [700, 3] 12.3 /
  // 17.0, of [2000, 3] 31 / 19).
  const int64_t min_elements = computes_transcendental(x.get()) ? 1 << 12 : 1 << 13;
  if (inner < 2 || x->numel() < min_elements) return nullptr;
  const NodePtr base = stored_base(x);
  const int64_t wide = std::lcm(inner, kColumnMinInner), k = wide / inner;
  const int64_t rows = x->shape[d], q = rows / k, rest = rows - q * k;
  if (q < 2 * kColumnBlock) return nullptr;
  int64_t outer = 1;
  for (int64_t j = 0; j < d; ++j) outer *= x->shape[j];
  const Op combine = combine_op(op);
  const DType acc = partial_dtype(op, out);
  // [outer, q, L] -> [outer, 1, L] in levels -> [outer, k, w] -> [outer, 1, w]
  const NodePtr wide_rows = base ? as_strided_node(base, {outer, q, wide}, 0, {rows * inner, wide, 1})
                                : WideRows(x, d, inner, wide, q, outer).at(x);
  if (!wide_rows) return nullptr;
  NodePtr r = blocked_column_reduction(op, acc, wide_rows, {1});
  if (!r) r = reduce_node(op, acc, cast_node(wide_rows, acc), {1});  // (just under the levels' threshold)
  r = reduce_node(op, acc, reshape_node(r, {outer, k, inner}), {1});
  if (rest > 0) {
    // (x computed: a view of its value, each element's index recovered by
    // division, for fewer than k rows)
    const NodePtr last = as_strided_node(base ? base : x, {outer, rest, inner}, q * k * inner, {rows * inner, inner, 1});
    r = make_node(combine, acc, x->device, r->shape, {r, reduce_node(op, acc, cast_node(last, acc), {1})});
  }
  Shape kept = x->shape;
  kept[d] = 1;
  return reshape_node(cast_node(r, out), kept);
}

// A reduction over several dims, some of them not innermost (the bias
// gradient of a [batch, seq, features] activation is sum({0, 1})). One node
// would read each output's elements with strides, on as few threads as there
// are outputs. Instead: adjacent reduced dims merge into one (a view of
// stored memory), the trailing reduced dim goes first (one contiguous row
// reduction), then each other reduced dim from the innermost out, as a
// blocked column reduction (above) where its shape calls for one. Partials
// stay in the accumulator's dtype (float64 for float sums and products), as
// the one pass keeps them; the order depends on the shape only. Null when
// one node serves: one dim, or only trailing dims, or a small input.
NodePtr staged_reduction(Op op, DType out, const NodePtr& x, const Shape& rdims) {
  if (rdims.size() < 2 || (op != Op::Sum && op != Op::Prod && op != Op::Max && op != Op::Min)) return nullptr;
  if (x->numel() < kColumnMinElements) return nullptr;
  // Adjacent reduced dims merge when that is free: x is stored memory read
  // through a reshape (a computed x would recover its indices by division).
  const NodePtr base = stored_base(x);
  const bool merge = base != nullptr;
  auto reduced = [&](int64_t d) { return std::binary_search(rdims.begin(), rdims.end(), d); };
  Shape shape, dims;  // x's shape with adjacent reduced dims merged, and its reduced dims
  for (int64_t d = 0; d < x->rank(); ++d) {
    if (merge && reduced(d) && d > 0 && reduced(d - 1)) {
      shape.back() *= x->shape[d];
      continue;
    }
    if (reduced(d)) dims.push_back(static_cast<int64_t>(shape.size()));
    shape.push_back(x->shape[d]);
  }
  // dims is sorted: its trailing ones are rank - 1, rank - 2, ...
  const int64_t rank = static_cast<int64_t>(shape.size());
  size_t lead = dims.size();
  while (lead > 0 && dims[lead - 1] == rank - static_cast<int64_t>(dims.size() - lead) - 1) --lead;
  if (lead == 0) return nullptr;  // only trailing dims: already one contiguous row reduction
  const DType acc = partial_dtype(op, out);
  NodePtr v = cast_node(merge ? reshape_node(base, shape) : x, acc);
  if (lead < dims.size()) v = reduce_node(op, acc, v, Shape(dims.begin() + static_cast<std::ptrdiff_t>(lead), dims.end()));
  for (size_t i = lead; i-- > 0;) {
    const Shape one{dims[i]};
    NodePtr blocked = blocked_column_reduction(op, acc, v, one);
    v = blocked ? blocked : reduce_node(op, acc, v, one);
  }
  Shape kept = x->shape;
  for (int64_t d : rdims) kept[d] = 1;
  return reshape_node(cast_node(v, out), kept);
}

// The strides of the memory that x reads in order, through a view (x.t(),
// x.permute(...), an elementwise result in a permuted layout: core/layout.h)
// directly or under elementwise ops; empty when x is stored itself (its
// order is its shape's) or reads nothing through a view of x's own shape.
// A view's strides are into its input's row-major value, stored or computed
// (then read in that order, computed inline or not). A broadcast input (a
// zero stride) says nothing.
Shape view_strides_under(const Node* x, int budget) {
  if (--budget < 0 || has_value(*x)) return {};
  switch (x->cls()) {
    case OpClass::View: {
      Shape st(x->attrs.ints.begin() + 1, x->attrs.ints.end());
      for (size_t d = 0; d < st.size(); ++d)
        if (x->shape[d] > 1 && st[d] == 0) return {};
      return st;
    }
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Ternary:
      for (const NodePtr& in : x->inputs)
        if (in->shape == x->shape)
          if (Shape st = view_strides_under(in.get(), budget); !st.empty()) return st;
      return {};
    default: return {};
  }
}

// The permutation p for which x.permute(p) walks x's memory in order
// (core/layout.h); empty when x's dims are in that order already or the
// layout is unknown or overlapping.
Shape memory_order(const NodePtr& x) {
  const Shape st = view_strides_under(x.get(), 8);
  return st.empty() ? Shape{} : memory_permutation(x->shape, st);
}

// The reduction of x over rdims, in the form its shape calls for.
NodePtr reduction(Op op, DType out, const NodePtr& x, const Shape& rdims) {
  NodePtr r;
  if (static_cast<int64_t>(rdims.size()) == x->rank()) r = split_full_reduction(op, out, x);
  else if (rdims.size() == 1) r = blocked_column_reduction(op, out, x, rdims);
  else r = staged_reduction(op, out, x, rdims);
  return r ? r : reduce_node(op, out, x, rdims);
}

}  // namespace

// A reduction of a permuted view (x.t().sum(1), x.permute(...).sum(d), or
// elementwise work on one) runs over the dims in memory order: the view
// x.permute(p), reduced over the same dims under their new positions, the
// result permuted back (a view: its kept dims are few, or of one element).
// Read in logical order, each element would be a new cache line: a row sum
// of x.t() took 35 ms where the column sum of x takes 1.3 ms. The blocked
// and staged forms above then see the layout as it is. Results are those of
// a reduction in memory order, as PyTorch's.
NodePtr reduction_in_memory_order(Op op, DType out, const NodePtr& x, const Shape& rdims) {
  const bool eligible = x->numel() >= kColumnMinElements &&
                        (op == Op::Sum || op == Op::Prod || op == Op::Max || op == Op::Min);
  const Shape p = eligible ? memory_order(x) : Shape{};
  if (p.empty()) return reduction(op, out, x, rdims);
  Shape moved, back(p.size()), kept_dims;
  for (size_t k = 0; k < p.size(); ++k) {
    back[p[k]] = static_cast<int64_t>(k);
    if (std::binary_search(rdims.begin(), rdims.end(), p[k])) moved.push_back(static_cast<int64_t>(k));
    else if (x->shape[p[k]] > 1) kept_dims.push_back(p[k]);
  }
  NodePtr r = reduction(op, out, permute_node(x, p), moved);
  // kept dims still in x's order (a sum over the transposed dim of a
  // matrix): the result's elements are in place, a reshape
  if (std::is_sorted(kept_dims.begin(), kept_dims.end())) {
    Shape kept = x->shape;
    for (int64_t d : rdims) kept[d] = 1;
    return reshape_node(r, kept);
  }
  return permute_node(r, back);
}

}  // namespace kiln
