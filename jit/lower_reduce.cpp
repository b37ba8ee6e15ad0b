// Lowering reductions: the row kernel and the reductions inside it.
//
// Reductions run inside a "row kernel": outer loops over the dims a reduction
// keeps, then one loop nest per reduction over the dims it reduces (each
// folding its input into an accumulator), then the output's own store. Every
// reduction in a kernel must reduce the same dims of the same shape and be
// read at the current row; otherwise lowering throws NeedMaterialize and the
// scheduler stores it instead.
//
// A matmul that matmul_inline accepts is such a reduction too: over the
// virtual shape [batch..., M, N, K] (reducing the last dim), its value at
// [b..., m, n, k] being A[b..., m, k] * B[b..., k, n] in the accumulation type
// (Float64 for floats, Int64 for integers), as the reference's triple loop.
// Its operands are computed inline at those indices. Unlike other
// reductions, it may also be read outside the kernel's rows: inside another
// reduction's loop nest or the final per-element loops, it is nested there
// (its own init, loop over K and update placed before the reading statement),
// provided its index walks every enclosing loop (nest_scope), so that no value
// of it is computed twice.
#include <algorithm>

#include "jit/lowerer.h"
#include "kiln/error.h"

namespace kiln::jit {

ReductionDomain reduction_domain(const Node& n) {
  if (n.op == Op::Matmul) {
    Shape full = n.shape;
    full.push_back(n.inputs[0]->shape.back());  // K
    return {full, {n.rank()}};
  }
  return {n.inputs[0]->shape, n.attrs.ints};
}

namespace lowering {

// The extent of dim d of n's domain, as a param of a real node. A
// matmul's K up to kInlineMatmulMaxK is a constant: the decision depends
// on it anyway, and a constant trip count lets LLVM unroll the dot product
// and vectorize the loop over N around it.
ValueId Lowerer::domain_size(const Node* n, int64_t d) {
  if (n->op == Op::Matmul) {
    if (d < n->rank()) return size_of(n, d);
    const int64_t K = n->inputs[0]->shape.back();
    return K <= kInlineMatmulMaxK ? iconst(K) : size_of(n->inputs[0].get(), n->rank() - 1);
  }
  return size_of(n->inputs[0].get(), d);
}

// n's index (over n's shape) as an index over its domain's keepdim shape.
Idx Lowerer::keep_index(const Node* n, const Idx& idx) {
  if (n->op != Op::Matmul) return idx;
  Idx k = idx;
  k.push_back(iconst(0));
  return k;
}

// The scope in which an inline matmul read at idx, outside the rows it
// would have as the kernel's first reduction, runs: the innermost scope
// whose loops idx reads. It must read every loop (of extent other than 1)
// of that scope and of the enclosing ones, so that each of the matmul's
// values is computed once per kernel run; otherwise the matmul is stored.
size_t Lowerer::nest_scope(const Node* n, const Idx& idx) {
  std::vector<int32_t> used;
  for (ValueId v : idx) {
    if (val(v).op == VOp::LoopIndex) used.push_back(val(v).a);
    else if (val(v).op != VOp::IntConst) throw NeedMaterialize{n, "a matmul read at a computed index"};
  }
  auto reads = [&](int32_t l) { return std::find(used.begin(), used.end(), l) != used.end(); };
  size_t at = 0, found = 0;
  for (size_t sc = 0; sc < scopes_.size(); ++sc)
    for (const auto& [l, extent] : scopes_[sc].loops)
      if (reads(l)) {
        at = sc;
        ++found;
      }
  if (found != used.size()) throw NeedMaterialize{n, "a matmul read at an index of no open loop"};
  for (size_t sc = 0; sc <= at; ++sc)
    for (const auto& [l, extent] : scopes_[sc].loops)
      if (!is_int(extent, 1) && !reads(l))
        throw NeedMaterialize{n, "a matmul read again at each iteration of a loop"};
  return at;
}

ValueId Lowerer::reduction(const Node* n, const Idx& idx) {
  if (!row_.active) throw NeedMaterialize{n, "a reduction read outside its rows"};
  const Domain dm = domain(n);
  const Idx kidx = keep_index(n, idx);
  // The scope it runs in: the rows (one value per row), or for a matmul
  // read elsewhere, the loops its index reads (nested reductions).
  const bool at_row = dm.full == row_.full && dm.dims == row_.dims && kidx == row_.outer;
  if (!at_row && n->op != Op::Matmul)
    throw NeedMaterialize{n, dm.full != row_.full || dm.dims != row_.dims
                                 ? "a reduction over other dims than the kernel's rows"
                                 : "a reduction read at another row"};
  if (at_row && row_.positions > 0) return unrolled_reduction(n, kidx);
  const size_t at = at_row ? 0 : nest_scope(n, idx);
  if (!at_row) nested_work_ += dm.full.numel();  // each of its values once (nest_scope)
  if (at_row) {
    auto found = row_.acc.find(n);
    if (found != row_.acc.end()) return read_acc(n, found->second);
  }
  // A matmul read at several places of one kernel is computed at each (as
  // an elementwise node would be): cheap for K <= 16, not for longer dot
  // products, which are stored once instead.
  if (n->op == Op::Matmul && ++sites_[n] > 1 && n->inputs[0]->shape.back() > kInlineMatmulMaxK)
    throw NeedMaterialize{n, "a matmul with a long K read at several places of one kernel"};

  const bool matmul = n->op == Op::Matmul;
  const Node* x = matmul ? nullptr : n->inputs[0].get();
  Combiner c = Combiner::Sum;
  DType adt = n->dtype;
  switch (n->op) {
    // The reference's matmul: products and their sum in double for floats,
    // in (wrapping) int64 for integers.
    case Op::Matmul: c = Combiner::Sum; adt = is_floating_point(n->dtype) ? DType::Float64 : DType::Int64; break;
    case Op::Sum: c = Combiner::Sum; adt = is_floating_point(x->dtype) ? DType::Float64 : DType::Int64; break;
    case Op::Prod: c = Combiner::Prod; adt = is_floating_point(x->dtype) ? DType::Float64 : DType::Int64; break;
    case Op::Max: c = Combiner::Max; adt = x->dtype; break;
    case Op::Min: c = Combiner::Min; adt = x->dtype; break;
    case Op::ArgMax: c = Combiner::ArgMax; adt = x->dtype; break;
    case Op::ArgMin: c = Combiner::ArgMin; adt = x->dtype; break;
    case Op::All: c = Combiner::All; adt = DType::Bool; break;
    case Op::Any: c = Combiner::Any; adt = DType::Bool; break;
    default: KILN_INTERNAL_ASSERT(false, "not a reduction: ", op_name(n->op));
  }
  int32_t acc = static_cast<int32_t>(k_.accs.size());
  k_.accs.push_back({c, adt});
  Stmt init{StmtKind::AccInit};
  init.acc = acc;

  // Loop nest over the reduced dims (none for size-1 ones), outermost first.
  Idx inner = kidx;
  Scope own;
  std::vector<Stmt> pre;  // reductions placed inside this one's loops
  own.list = &pre;
  // (a run of reduced dims read as one block: one loop, lower_merge.cpp)
  std::vector<ValueId> sizes(dm.full.size(), -1);
  for (int64_t d : dm.dims)
    if (dm.full[d] != 1) sizes[static_cast<size_t>(d)] = at_row ? row_.sizes[static_cast<size_t>(d)] : domain_size(n, d);
  dim_loops(dm.full, dm.dims, sizes, at_row ? row_.run : std::vector<int64_t>{}, own.loops, inner);
  // Build the value in this reduction's scope (reductions it reads are
  // placed before it, in its scope or an enclosing one).
  std::vector<Scope> saved = scopes_;
  scopes_.resize(at + 1);
  if (!own.loops.empty()) scopes_.push_back(own);
  ValueId v;
  if (matmul) {
    // inner = [b..., m, n, k]: A at [b..., m, k], B at [b..., k, n].
    const size_t r = n->shape.size();
    Idx ia(inner.begin(), inner.begin() + static_cast<std::ptrdiff_t>(r)), ib = ia;
    ia[r - 1] = inner[r];
    ib[r - 2] = inner[r];
    ib[r - 1] = inner[r - 1];
    for (size_t d = 0; d < r; ++d) {  // a size-1 dim of an operand is index 0
      if (n->inputs[0]->shape[d] == 1) ia[d] = iconst(0);
      if (n->inputs[1]->shape[d] == 1) ib[d] = iconst(0);
    }
    ValueId a = cast(value(n->inputs[0].get(), ia), adt);
    ValueId b = cast(value(n->inputs[1].get(), ib), adt);
    v = op2(VOp::Mul, adt, a, b);
  } else {
    v = value(x, inner);
    if (at_row && keep_.n && !keep_.stored &&
        (x == keep_.n || (x->op == Op::Cast && x->inputs[0].get() == keep_.n))) {
      store(&pre, kKeptSlot, ravel(keep_.out, inner), value(keep_.n, inner));
      keep_.stored = true;
    }
  }
  scopes_ = std::move(saved);
  if (c == Combiner::All || c == Combiner::Any) v = cast(v, DType::Bool);
  else if (c == Combiner::Sum || c == Combiner::Prod) v = cast(v, adt);
  Stmt upd{StmtKind::AccUpdate};
  upd.acc = acc;
  upd.value = v;
  if (c == Combiner::ArgMax || c == Combiner::ArgMin) upd.index = inner[dm.dims[0]];
  pre.push_back(upd);
  std::vector<Stmt>* list = scopes_[at].list;
  list->push_back(init);
  for (Stmt& st : nest(std::move(pre), own.loops)) list->push_back(std::move(st));
  if (at_row) row_.acc.emplace(n, acc);
  return read_acc(n, acc);
}

// The reference's order: a sum from 0 (float64 for floats) adding each
// position in turn, a product from 1; a float max / min keeps the first NaN
// and orders -0 below +0 (core/reference/reduce.cpp): where two values are
// equal zeros, best + v (max) or -(-best + -v) (min) is the one to keep.
ValueId Lowerer::unrolled_reduction(const Node* n, const Idx& kidx) {
  const Node* x = n->inputs[0].get();
  const bool sum = n->op == Op::Sum, prod = n->op == Op::Prod;
  const DType adt = sum || prod ? (is_floating_point(x->dtype) ? DType::Float64 : DType::Int64) : x->dtype;
  auto constant = [&](double c) {
    Value v{VOp::Const, adt};
    if (is_floating_point(adt)) v.f = c;
    else v.i = static_cast<int64_t>(c);
    return add(v);
  };
  ValueId best = sum ? constant(0) : prod ? constant(1) : -1;
  for (int64_t p = 0; p < row_.positions; ++p) {
    const ValueId v = cast(value(x, at_position(kidx, row_.full, row_.dims, p)), adt);
    if (sum || prod) {
      best = op2(sum ? VOp::Add : VOp::Mul, adt, best, v);
    } else if (best < 0) {
      best = v;
    } else if (!is_floating_point(adt)) {
      best = op2(n->op == Op::Max ? VOp::Max : VOp::Min, adt, best, v);
    } else {
      const bool max = n->op == Op::Max;
      const ValueId zero = constant(0);
      const ValueId equal = op3(VOp::Where, adt, op2(VOp::Eq, DType::Bool, best, zero),
                                max ? op2(VOp::Add, adt, best, v)
                                    : op1(VOp::Neg, adt, op2(VOp::Add, adt, op1(VOp::Neg, adt, best), op1(VOp::Neg, adt, v))),
                                best);
      const ValueId ordered = op3(VOp::Where, adt, op2(max ? VOp::Gt : VOp::Lt, DType::Bool, v, best), v,
                                  op3(VOp::Where, adt, op2(VOp::Eq, DType::Bool, v, best), equal, best));
      best = op3(VOp::Where, adt, op2(VOp::Ne, DType::Bool, best, best), best,
                 op3(VOp::Where, adt, op2(VOp::Ne, DType::Bool, v, v), v, ordered));
    }
  }
  return cast(best, n->dtype);
}

// `body` inside `loops` (outermost first); `body` itself when there are none.
std::vector<Stmt> Lowerer::nest(std::vector<Stmt> body, const std::vector<std::pair<int32_t, ValueId>>& loops) {
  for (size_t j = loops.size(); j-- > 0;) {
    Stmt loop{StmtKind::Loop};
    loop.loop = loops[j].first;
    loop.extent = loops[j].second;
    loop.body = std::move(body);
    body.clear();
    body.push_back(std::move(loop));
  }
  return body;
}

ValueId Lowerer::read_acc(const Node* n, int32_t acc) {
  const Accumulator& a = k_.accs[acc];
  Value v{VOp::AccRead, (a.combiner == Combiner::ArgMax || a.combiner == Combiner::ArgMin) ? DType::Int64 : a.dtype};
  v.a = acc;
  return cast(add(v), n->dtype);
}

// Finds the reductions computed inline below n (not crossing stored nodes).
void Lowerer::find_reductions(const Node* n, std::vector<const Node*>& out, NodeSet& seen) {
  if (!seen.insert(n).second || stored(n)) return;
  if (reduces(*n)) out.push_back(n);
  for (const auto& in : n->inputs) find_reductions(in.get(), out, seen);
}

// A value of out's own shape, computed inline at out's index, that is
// costly (exp, log, ...) and also folded by one of the kernel's row
// reductions: softmax's exp(x - max), summed and then divided. The
// reduction's loop stores it into out, and the final loop reads it back
// instead of computing it a second time. Null when there is none.
const Node* Lowerer::kept_value(const Node* out, const std::vector<const Node*>& reds) {
  for (const Node* r : reds) {
    if (r->op == Op::Matmul || row_.acc.count(r)) continue;  // built already: too late to store
    const Domain dm = domain(r);
    if (dm.full != row_.full || dm.dims != row_.dims) continue;
    const Node* x = r->inputs[0].get();
    if (x->op == Op::Cast) x = x->inputs[0].get();
    NodeSet seen;
    if (is_transcendental(x->op) && !stored(x) && x->shape == out->shape && x->dtype == out->dtype &&
        reads_inline(out, x, seen))
      return x;
  }
  return nullptr;
}

// Whether n reaches x through nodes computed inline in this kernel. Each
// node is visited once (`seen`): a graph that shares nodes would otherwise
// be walked once per path, exponentially many.
bool Lowerer::reads_inline(const Node* n, const Node* x, NodeSet& seen) {
  if (n == x) return true;
  if (!seen.insert(n).second) return false;
  if (n != &root_ && (stored(n) || reduces(*n))) return false;
  for (const auto& in : n->inputs)
    if (reads_inline(in.get(), x, seen)) return true;
  return false;
}

void Lowerer::patch_kept_slot(std::vector<Stmt>& body, int32_t slot) {
  for (Stmt& s : body) {
    if (s.kind == StmtKind::Store && s.buffer == kKeptSlot) s.buffer = slot;
    patch_kept_slot(s.body, slot);
  }
}

// The row kernel of lower_group, for a group whose outputs read reductions
// (`reds`, found by find_reductions; `writes`: a member is an Assign).
Lowered Lowerer::lower_rows(const std::vector<const Node*>& group, const std::vector<const Node*>& outs,
                            std::vector<const Node*>& reds, bool writes) {
  std::vector<Stmt> top;
  std::vector<ValueId> values(outs.size(), -1), flats(outs.size(), -1);
  // A Reduce node leads (an inline matmul can nest in its loops, not the
  // other way round).
  std::stable_partition(reds.begin(), reds.end(), [](const Node* r) { return r->op != Op::Matmul; });
  // Row kernel over the first reduction's rows. Size-1 dims of the rows get
  // no loop (index 0), so that views adding or dropping them read the rows.
  const Node* r0 = reds.front();
  const Domain dm = domain(r0);
  const Shape& full = dm.full;
  const int64_t rank = static_cast<int64_t>(full.size());
  row_.active = true;
  row_.full = full;
  row_.dims = dm.dims;
  // Narrow rows (a softmax over 3 classes, the sum of [N, 4] boxes' rows):
  // reductions over at most kNarrowUnrollMax positions of sums, products,
  // maxima and minima run as chains over the positions at constant indices
  // and the per-element outputs are stored position by position, so the
  // kernel's innermost loop is the rows' and LLVM vectorizes it, a row's
  // elements one interleaved group; a loop over 3 ran a masked vector per
  // row and step. The reduced dims' sizes are constants (narrow_dims_);
  // lower_group lowers the kernel again with the loops where
  // unrolled_rows_pay says no.
  row_.positions = 0;
  {
    int64_t count = 1;
    for (int64_t d : row_.dims) count *= full[d];
    bool plain = unroll_narrow_ && count >= 2 && count <= kNarrowUnrollMax && full.numel() / count >= 2;
    for (const Node* r : reds)
      plain = plain && (r->op == Op::Sum || r->op == Op::Prod || r->op == Op::Max || r->op == Op::Min);
    if (plain) {
      row_.positions = count;
      set_narrow(rank, row_.dims, kNarrowRowMax);
    }
  }
  row_.sizes.clear();
  for (int64_t d = 0; d < rank; ++d) row_.sizes.push_back(domain_size(r0, d));
  // The reduced dims that every reduction's input and every per-element
  // output read as one block run as one loop (lower_merge.cpp); not for
  // positions (argmax's index is along one dim) or inline matmuls.
  row_.run.clear();
  {
    std::vector<const Node*> readers;
    bool plain = true;
    for (const Node* r : reds) {
      plain = plain && r->op != Op::Matmul && r->op != Op::ArgMax && r->op != Op::ArgMin;
      if (plain && r->inputs[0]->shape == full) readers.push_back(r->inputs[0].get());
    }
    for (const Node* o : outs)
      if (o->shape == full) readers.push_back(o);
    if (plain && row_.positions == 0) row_.run = flat_run(full, row_.dims, readers);
  }
  std::vector<int64_t> outer_dims;
  for (int64_t d = 0; d < rank; ++d)
    if (!std::binary_search(row_.dims.begin(), row_.dims.end(), d)) outer_dims.push_back(d);
  row_.outer.assign(full.size(), iconst(0));
  std::vector<Stmt>* body = nullptr;
  for (int64_t d : outer_dims) {
    if (full[d] == 1) continue;
    const bool first = body == nullptr;
    if (first) body = &top;
    int32_t l = new_loop();
    Stmt loop{StmtKind::Loop};
    loop.loop = l;
    loop.extent = row_.sizes[static_cast<size_t>(d)];
    loop.parallel = first;
    if (first) parallel_extent_ = full[d];
    row_.outer[d] = loop_var(l);
    body->push_back(std::move(loop));
    body = &body->back().body;
  }
  if (!body) body = single(top);
  row_.body = body;
  scopes_.assign(1, Scope{});
  scopes_[0].list = body;
  for (int64_t d : outer_dims)
    if (full[d] != 1) scopes_[0].loops.push_back({val(row_.outer[d]).a, row_.sizes[static_cast<size_t>(d)]});
  // The rows without their size-1 dims: a per-row output is one whose
  // shape without size-1 dims is this; it is read at the outer loops.
  Shape rows_shape;
  for (int64_t d : outer_dims)
    if (full[d] != 1) rows_shape.push_back(full[d]);
  auto per_row_index = [&](const Node* out, Idx& idx) {
    Shape s;
    for (int64_t v : out->shape)
      if (v != 1) s.push_back(v);
    if (s != rows_shape) return false;
    size_t j = 0;
    for (int64_t v : out->shape) {
      if (v != 1) {
        while (full[outer_dims[j]] == 1) ++j;
        idx.push_back(row_.outer[outer_dims[j++]]);
      } else {
        idx.push_back(iconst(0));
      }
    }
    return true;
  };
  // Members with one value per row read the outer loops; members with one
  // value per element of the rows get a final loop nest over the reduced dims.
  Idx full_idx = row_.outer;
  struct Positioned {
    size_t j;
    ValueId value, flat;
  };
  std::vector<Positioned> unrolled;  // the per-element outputs' values at each position (row_.positions)
  Scope final_scope;  // the final loops (none for size-1 dims)
  std::vector<Stmt> final_body;
  final_scope.list = &final_body;
  bool final_open = false;
  std::vector<size_t> per_row, per_element;
  for (size_t j = 0; j < outs.size(); ++j) {
    const Node* out = outs[j];
    Idx idx;
    if (per_row_index(out, idx)) {
      per_row.push_back(j);
    } else if (out->shape == full) {
      if (!final_open && row_.positions == 0) dim_loops(full, row_.dims, row_.sizes, row_.run, final_scope.loops, full_idx);
      final_open = true;
      idx = full_idx;
      per_element.push_back(j);
    } else {
      throw NeedMaterialize{r0, "the output is not laid out by rows"};
    }
    const bool element = !per_element.empty() && per_element.back() == j;
    // (not when every reduced dim has size 1: the reduction's index would be the final one)
    if (element && !keep_.n && !writes && !final_scope.loops.empty()) {
      if (const Node* kept = kept_value(out, reds)) {
        keep_ = {kept, out, false};
        Value ld{VOp::Load, kept->dtype};  // the slot is patched once outputs have theirs
        ld.a = kKeptSlot;
        ld.args[0] = ravel(out, idx);
        memo_.emplace(std::make_pair(kept, idx), add(ld));
      }
    }
    if (element && row_.positions > 0) {  // each position's value (unrolled: no final loops)
      for (int64_t p = 0; p < row_.positions; ++p) {
        const Idx at = at_position(idx, full, row_.dims, p);
        unrolled.push_back({j, cast(value(out, at), group[j]->dtype), ravel(out, at)});
      }
      continue;
    }
    if (element) scopes_.push_back(final_scope);
    values[j] = cast(value(out, idx), group[j]->dtype);  // appends the reduction nests
    if (element) scopes_.pop_back();
    flats[j] = ravel(out, idx);
  }
  if (row_.positions > 0 && !unrolled_rows_pay(row_.outer, row_.positions, kNarrowRowsMath))
    return lower_with_loops(group);
  work_ = full.numel() + nested_work_;
  std::vector<int32_t> slots;
  for (size_t j = 0; j < outs.size(); ++j) slots.push_back(output_slot(group[j]->dtype));
  if (keep_.n) {
    KILN_INTERNAL_ASSERT(keep_.stored, "kernel ", k_.name, ": a kept value was never stored");
    const size_t j = static_cast<size_t>(std::find(outs.begin(), outs.end(), keep_.out) - outs.begin());
    patch_kept_slot(top, slots[j]);
    for (Value& v : k_.values)
      if (v.op == VOp::Load && v.a == kKeptSlot) v.a = slots[j];
  }
  for (size_t j : per_row) store(body, slots[j], flats[j], values[j]);
  if (!per_element.empty()) {
    // The output whose buffer holds the kept value is written last: a load
    // is emitted where its value is first used, so every other output that
    // reads the kept value (a matmul merged with a log_softmax of its
    // operand) must read it before that write replaces it.
    if (keep_.n)
      std::stable_partition(per_element.begin(), per_element.end(), [&](size_t j) { return outs[j] != keep_.out; });
    if (row_.positions == 0)
      for (size_t j : per_element) store(&final_body, slots[j], flats[j], values[j]);
    for (const Positioned& u : unrolled) store(&final_body, slots[u.j], u.flat, u.value);  // (row_.positions > 0)
    for (Stmt& st : nest(std::move(final_body), final_scope.loops)) body->push_back(std::move(st));
  }
  k_.body = std::move(top);
  return finish();
}

}  // namespace lowering
}  // namespace kiln::jit
