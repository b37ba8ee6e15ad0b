// Merging adjacent dims into one loop (dimension coalescing).
//
// A loop nest over dims that every read of the kernel sees as one
// contiguous block (a mean over an image's [H, W], an elementwise op over
// [N, C, H, W]) runs as one loop over their product: the inner loop of 56
// columns becomes one of 3136 (a vector loop without a remainder per row,
// one horizontal reduction per row block instead of one per column).
//
// The merged loop's variable q gives the dims' indices as a row-major
// unravel (q % S_last, q / S_last % ..., the divisions by the run's sizes),
// and ravel folds them back: (A + q / P) * S + q % P is A * S + q when the
// read node's size S equals P (Lowerer::unsplit). So a read of a buffer in
// the run costs no division; a read whose index does not fold (a transpose,
// a general reshape, a broadcast along part of the run) would divide per
// element, and the run is merged only where reads_flat proves that none
// does: elementwise ops, broadcasts along all or none of the run, size-1
// reshapes, stored values and index-free sources, and strided reads of a
// stored value whose strides are row-major within the run (a slice, a
// permutation that keeps the run's dims together).
// The loop that stays innermost where a broadcast keeps the dims apart may
// be a few elements long (rows of [N, 3]): narrow_inner_dims.
#include <algorithm>
#include <set>

#include "jit/lowerer.h"

namespace kiln::jit::lowering {

namespace {

// x's dims that view n's dims run map to, by Lowerer::view's exact maps
// (broadcast_lead, unit_dims_reshape); `none` when x does not depend on the
// run; false if neither. A row-major block of a stored x (a reshape, a
// narrow of the first dim, a select) is read at an offset plus n's own flat
// position: true with xrun empty (the read folds there).
bool map_run(const Node* n, const std::vector<int64_t>& run, bool stored, std::vector<int64_t>& xrun, bool& none) {
  const Node* x = n->inputs[0].get();
  xrun.clear();
  none = false;
  if (stored && row_major_view(n)) return true;
  if (const int64_t lead = broadcast_lead(n); lead >= 0) {
    size_t broadcast = 0;
    for (int64_t d : run) {
      if (d < lead || x->shape[d - lead] == 1) ++broadcast;
      else xrun.push_back(d - lead);
    }
    none = broadcast == run.size();
    return none || broadcast == 0;
  }
  std::vector<int64_t> nd, xd;
  if (!unit_dims_reshape(n, nd, xd)) {
    if (stored)  // a strided read (Lowerer::view's general case)
      return !strided_slice(n, x) && run_row_major(n, run);
    // a permutation of an inline x that keeps the run's dims together, in
    // order (NCHW -> NHWC's H and W)
    std::vector<int64_t> from;
    if (!permuted_dims(n, from)) return false;
    for (int64_t d : run) {
      if (!xrun.empty())
        for (int64_t k = xrun.back() + 1; k != from[d]; ++k)
          if (k > from[d] || x->shape[k] != 1) return false;
      xrun.push_back(from[d]);
    }
    return true;
  }
  for (int64_t d : run) {
    const size_t k = static_cast<size_t>(std::find(nd.begin(), nd.end(), d) - nd.begin());
    if (k == nd.size()) return false;  // (run dims have size > 1)
    xrun.push_back(xd[k]);
  }
  return true;
}

}  // namespace

bool Lowerer::reads_flat(const Node* n, const std::vector<int64_t>& run,
                         std::set<std::pair<const Node*, int64_t>>& seen, Periodic* per) const {
  size_t ones = 0;
  for (int64_t d : run) ones += n->shape[d] == 1;
  if (ones == run.size()) return true;  // constant along the run
  if (ones > 0) return false;           // a broadcast along part of it
  if (loaded(n)) return true;  // ravel folds
  if (!seen.insert({n, run.front()}).second) return true;
  switch (n->cls()) {
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Ternary:
      for (const auto& in : n->inputs)
        if (!reads_flat(in.get(), run, seen, per)) return false;
      return true;
    case OpClass::Random: return true;  // Philox at ravel(n, idx)
    case OpClass::Source: return n->op == Op::Full || n->op == Op::Arange;  // (Buffer: loaded above)
    case OpClass::View: {
      if (per && run == per->run && periodic_view(n, *per)) {
        if (std::find(per->nodes.begin(), per->nodes.end(), n) == per->nodes.end()) per->nodes.push_back(n);
        return true;
      }
      std::vector<int64_t> xrun;
      bool none = false;
      const Node* x = n->inputs[0].get();
      if (!map_run(n, run, loaded(x), xrun, none)) return false;
      return none || xrun.empty() || reads_flat(x, xrun, seen);
    }
    default: return false;  // reductions, indexed reads, joins: their own index arithmetic
  }
}

std::vector<int64_t> Lowerer::flat_run(const Shape& full, const std::vector<int64_t>& dims,
                                       const std::vector<const Node*>& readers) const {
  // The dims of size > 1, adjacent but for size-1 dims between them.
  std::vector<int64_t> run;
  for (int64_t d : dims) {
    if (full[d] == 1) continue;
    if (!run.empty())
      for (int64_t e = run.back() + 1; e < d; ++e)
        if (full[e] != 1) run.clear();  // a gap: start again from d
    run.push_back(d);
  }
  if (run.size() < 2) return {};
  std::set<std::pair<const Node*, int64_t>> seen;
  for (const Node* r : readers) {
    seen.clear();
    if (!reads_flat(r, run, seen)) return {};
  }
  return run;
}

void Lowerer::split_run(ValueId q, const std::vector<int64_t>& run, const std::vector<ValueId>& sizes, Idx& idx) {
  for (size_t j = run.size(); j-- > 1;) {
    const ValueId s = sizes[static_cast<size_t>(run[j])];
    idx[run[j]] = imod(q, s);
    run_mods_.insert(idx[run[j]]);
    q = idiv(q, s);
  }
  idx[run.front()] = q;
}

ValueId Lowerer::run_extent(const std::vector<int64_t>& run, const std::vector<ValueId>& sizes) {
  ValueId e = iconst(1);
  for (int64_t d : run) e = imul(e, sizes[static_cast<size_t>(d)]);
  return e;
}

void Lowerer::dim_loops(const Shape& full, const std::vector<int64_t>& dims, const std::vector<ValueId>& sizes,
                        const std::vector<int64_t>& run, std::vector<std::pair<int32_t, ValueId>>& loops, Idx& idx) {
  for (int64_t d : dims) {
    if (full[d] == 1) {
      idx[d] = iconst(0);
    } else if (run.empty() || d < run.front() || d > run.back()) {
      const int32_t l = new_loop();
      loops.push_back({l, sizes[static_cast<size_t>(d)]});
      idx[d] = loop_var(l);
    } else if (d == run.front()) {
      const int32_t l = new_loop();
      loops.push_back({l, run_extent(run, sizes)});
      split_run(loop_var(l), run, sizes, idx);
    }
  }
}

std::vector<int64_t> Lowerer::run_to(const Node* n, int64_t from, int64_t end,
                                     const std::vector<const Node*>& readers) const {
  std::vector<int64_t> run, dims;
  for (int64_t k = from; k < end && run.empty(); ++k) {
    dims.clear();
    for (int64_t d = k; d <= end; ++d) dims.push_back(d);
    run = flat_run(n->shape, dims, readers);
  }
  return run;
}

// The innermost loop's dims (the run, or the last dim of size > 1) when
// they hold at most kNarrowUnrollMax elements under an outer loop: dims
// that could not merge with the outer ones (a broadcast along those: [N, 3]
// points minus their centroid, [N, 4] boxes scaled by a [4] row or by a
// column [N, 1]; x[:, :3]). Their sizes, and views' strides of at most
// kNarrowRowMax, become constants of the kernel (narrow_dims_, read by
// size_of and Lowerer::view), and lower_group unrolls them. Empty otherwise.
std::vector<int64_t> Lowerer::narrow_inner_dims(const Node* n, const std::vector<int64_t>& run) {
  const int64_t rank = n->rank();
  std::vector<int64_t> inner = run;
  if (inner.empty())
    for (int64_t d = rank; d-- > 0 && inner.empty();)
      if (n->shape[d] > 1) inner.push_back(d);
  int64_t count = 1;
  for (int64_t d : inner) count *= n->shape[d];
  if (!unroll_narrow_ || count < 2 || count > kNarrowUnrollMax || n->numel() / count < 2) return {};
  set_narrow(rank, inner, kNarrowRowMax);
  return inner;
}

std::vector<Stmt>* Lowerer::open_flat_loops(const Node* n, const std::vector<const Node*>& readers, Idx& idx,
                                            std::vector<Stmt>& top, std::vector<int64_t>* unrolled) {
  const int64_t rank = n->rank();
  std::vector<int64_t> run = run_to(n, 0, rank - 1, readers);
  if (unrolled) {
    *unrolled = narrow_inner_dims(n, run);
    if (!unrolled->empty() && run == *unrolled) run.clear();
  }
  std::vector<Stmt>* cur = &top;
  bool parallel = true;
  for (int64_t d = 0; d < rank; ++d) {
    if (unrolled && !unrolled->empty() &&
        (n->shape[d] == 1 || std::find(unrolled->begin(), unrolled->end(), d) != unrolled->end())) {
      idx[d] = iconst(0);  // (an unrolled dim's: the caller's)
      continue;
    }
    if (!run.empty() && d >= run.front()) {
      if (d == run.front()) {
        std::vector<ValueId> sizes(static_cast<size_t>(rank), -1);
        int64_t count = 1;
        for (int64_t e : run) {
          sizes[static_cast<size_t>(e)] = size_of(n, e);
          count *= n->shape[e];
        }
        const ValueId q = open_loop(cur, run_extent(run, sizes), count, parallel);
        parallel = false;
        split_run(q, run, sizes, idx);
      } else if (n->shape[d] == 1) {
        idx[d] = iconst(0);  // (the run's own dims: split_run)
      }
      continue;
    }
    idx[d] = open_loop(cur, size_of(n, d), n->shape[d], parallel);
    parallel = false;
  }
  return cur;
}

}  // namespace kiln::jit::lowering
