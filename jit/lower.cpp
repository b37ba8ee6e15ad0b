// Lowering a materialized node to kernel IR.
//
// A value is built by `value(node, idx)`: node's value at the multi-index idx
// (Values of the loop variables), expanded recursively through every node
// computed inline. Elementwise nodes pass idx to their inputs (all inputs have
// the output's shape); views map idx to their input's index (broadcasts and
// reshapes exactly, anything else through the flat position); stored nodes
// are loaded. Sizes and strides are runtime params, never constants, so a
// kernel serves every shape of its structure. Values are hash-consed, so a
// node read twice at the same index is computed once.
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
#include "jit/lower.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

#include "core/tensor_impl.h"
#include "jit/schedule.h"
#include "kiln/error.h"

namespace kiln::jit {

namespace {

using Idx = std::vector<ValueId>;

enum ParamTag : int { kSize, kStride, kViewStride, kViewOffset, kSliceStart, kSliceStep, kSeed, kOffset, kCatOffset };

class Lowerer {
 public:
  Lowerer(const Node& root, const NodeSet& mat) : root_(root), mat_(mat) { roots_.insert(&root); }
  Lowerer(const std::vector<const Node*>& group, const NodeSet& mat)
      : root_(*group.front()), mat_(mat), roots_(group.begin(), group.end()) {}

  Lowered finish(ValueId /*unused*/ = -1) {
    Lowered r;
    r.kernel = std::move(k_);
    r.params = std::move(params_);
    r.inputs = std::move(inputs_);
    r.parallel_extent = parallel_extent_;
    r.work = work_;
    return r;
  }

  // ---- value construction (hash-consed) ----
  ValueId add(const Value& v) {
    std::string key;
    key.reserve(64);
    auto put = [&key](const void* p, size_t n) { key.append(static_cast<const char*>(p), n); };
    put(&v.op, 1);
    put(&v.dtype, 1);
    put(&v.a, 4);
    put(&v.b, 4);
    put(v.args, 12);
    put(&v.i, 8);
    put(&v.i1, 8);
    put(&v.f, 8);
    put(&v.f1, 8);
    put(&v.random_op, 1);
    auto it = cons_.find(key);
    if (it != cons_.end()) return it->second;
    ValueId id = k_.add(v);
    cons_.emplace(std::move(key), id);
    return id;
  }
  const Value& val(ValueId id) const { return k_.values[id]; }
  bool is_int(ValueId id, int64_t c) const {
    return val(id).op == VOp::IntConst && val(id).i == c;
  }

  ValueId iconst(int64_t c) {
    Value v{VOp::IntConst, DType::Int64};
    v.i = c;
    return add(v);
  }
  ValueId param(const Node* n, int tag, int64_t k, int64_t value) {
    auto key = std::make_tuple(n, tag, k);
    auto it = param_slots_.find(key);
    if (it != param_slots_.end()) return it->second;
    Value v{VOp::Param, DType::Int64};
    v.a = static_cast<int32_t>(params_.size());
    params_.push_back(value);
    k_.num_params = static_cast<int32_t>(params_.size());
    ValueId id = add(v);
    param_slots_.emplace(key, id);
    return id;
  }
  ValueId op2(VOp op, DType dt, ValueId a, ValueId b) {
    Value v{op, dt};
    v.args[0] = a;
    v.args[1] = b;
    return add(v);
  }
  ValueId op1(VOp op, DType dt, ValueId a) {
    Value v{op, dt};
    v.args[0] = a;
    return add(v);
  }
  // Index arithmetic with the obvious folds.
  ValueId iadd(ValueId a, ValueId b) {
    if (is_int(a, 0)) return b;
    if (is_int(b, 0)) return a;
    if (val(a).op == VOp::IntConst && val(b).op == VOp::IntConst) return iconst(val(a).i + val(b).i);
    return op2(VOp::Add, DType::Int64, a, b);
  }
  ValueId imul(ValueId a, ValueId b) {
    if (is_int(a, 0) || is_int(b, 0)) return iconst(0);
    if (is_int(a, 1)) return b;
    if (is_int(b, 1)) return a;
    if (val(a).op == VOp::IntConst && val(b).op == VOp::IntConst) return iconst(val(a).i * val(b).i);
    return op2(VOp::Mul, DType::Int64, a, b);
  }
  ValueId idiv(ValueId a, ValueId b) {
    if (is_int(b, 1) || is_int(a, 0)) return a;
    return op2(VOp::Div, DType::Int64, a, b);
  }
  ValueId imod(ValueId a, ValueId b) {
    if (is_int(b, 1) || is_int(a, 0)) return iconst(0);
    return op2(VOp::Mod, DType::Int64, a, b);
  }
  ValueId cast(ValueId a, DType dt) {
    if (val(a).dtype == dt) return a;
    return op1(VOp::Cast, dt, a);
  }
  ValueId loop_var(int32_t loop) {
    Value v{VOp::LoopIndex, DType::Int64};
    v.a = loop;
    return add(v);
  }
  int32_t new_loop() { return k_.num_loops++; }

  // ---- shapes as params ----
  ValueId size_of(const Node* n, int64_t d) {
    // A size-1 dim is structural (broadcasting depends on it), so it is a constant.
    if (n->shape[d] == 1) return iconst(1);
    return param(n, kSize, d, n->shape[d]);
  }
  // Row-major flat position of idx in n's shape.
  ValueId ravel(const Node* n, const Idx& idx) {
    ValueId flat = iconst(0);
    for (size_t d = 0; d < idx.size(); ++d) flat = iadd(imul(flat, size_of(n, static_cast<int64_t>(d))), idx[d]);
    return flat;
  }
  Idx unravel(const Node* n, ValueId flat) {
    Idx idx(n->shape.size());
    for (size_t d = n->shape.size(); d-- > 0;) {
      ValueId s = size_of(n, static_cast<int64_t>(d));
      idx[d] = d == 0 ? flat : imod(flat, s);
      flat = idiv(flat, s);
    }
    return idx;
  }

  ValueId load(const Node* n, ValueId flat) {
    auto it = slots_.find(n);
    int32_t slot;
    if (it == slots_.end()) {
      slot = static_cast<int32_t>(inputs_.size());
      inputs_.push_back(n);
      k_.buffers.push_back({n->dtype, false});
      slots_.emplace(n, slot);
    } else {
      slot = it->second;
    }
    Value v{VOp::Load, n->dtype};
    v.a = slot;
    v.args[0] = flat;
    return add(v);
  }

  bool stored(const Node* n) const {
    return !roots_.count(n) && (has_value(*n) || mat_.count(n) > 0);
  }

  // ---- the value of node n at idx ----
  ValueId value(const Node* n, const Idx& idx) {
    auto key = std::make_pair(n, idx);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    ValueId r = compute(n, idx);
    memo_.emplace(std::move(key), r);
    return r;
  }

  ValueId compute(const Node* n, const Idx& idx) {
    if (stored(n)) return load(n, ravel(n, idx));
    const DType dt = n->dtype;
    switch (n->op) {
      case Op::Buffer:
        return load(n, ravel(n, idx));  // the root is never a Buffer
      case Op::Full: {
        if (n->attrs.ints.size() > 1 && n->attrs.ints[1] == 1) {  // a runtime value
          if (!is_floating_point(dt)) return cast(param(n, kSize, 0, n->attrs.ints[0]), dt);
          int64_t bits;
          std::memcpy(&bits, &n->attrs.reals[0], sizeof bits);
          ValueId p = param(n, kSize, 0, bits);
          Value f{VOp::Param, DType::Float64};
          f.a = val(p).a;
          return cast(add(f), dt);
        }
        Value v{VOp::Const, dt};
        if (is_floating_point(dt)) v.f = n->attrs.reals[0];
        else v.i = n->attrs.ints[0];
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
        v.a = val(param(n, kSeed, 0, n->attrs.ints[0])).a;
        v.b = val(param(n, kOffset, 0, n->attrs.ints[1])).a;
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
      case Op::LogicalNot: return unary(VOp::LogicalNot, n, idx);
      case Op::Add: return binary(VOp::Add, n, idx);
      case Op::Sub: return binary(VOp::Sub, n, idx);
      case Op::Mul: return binary(VOp::Mul, n, idx);
      case Op::Div: return binary(VOp::Div, n, idx);
      case Op::Pow: return binary(VOp::Pow, n, idx);
      case Op::Maximum: return binary(VOp::Max, n, idx);
      case Op::Minimum: return binary(VOp::Min, n, idx);
      case Op::Eq: return binary(VOp::Eq, n, idx);
      case Op::Ne: return binary(VOp::Ne, n, idx);
      case Op::Lt: return binary(VOp::Lt, n, idx);
      case Op::Le: return binary(VOp::Le, n, idx);
      case Op::Gt: return binary(VOp::Gt, n, idx);
      case Op::Ge: return binary(VOp::Ge, n, idx);
      case Op::Where: {
        Value v{VOp::Where, dt};
        for (int j = 0; j < 3; ++j) v.args[j] = value(n->inputs[j].get(), idx);
        return add(v);
      }
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
      case Op::Assign:
      case Op::Cat:
        break;
    }
    KILN_INTERNAL_ASSERT(false, "op ", op_name(n->op), " cannot be computed inline");
    return -1;
  }

  ValueId unary(VOp op, const Node* n, const Idx& idx) {
    return op1(op, n->dtype, value(n->inputs[0].get(), idx));
  }
  ValueId binary(VOp op, const Node* n, const Idx& idx) {
    return op2(op, n->dtype, value(n->inputs[0].get(), idx), value(n->inputs[1].get(), idx));
  }

  ValueId linspace(const Node* n, const Idx& idx) {
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
    Value w{VOp::Where, L};
    w.args[0] = op2(VOp::Lt, DType::Bool, i, halfway);
    w.args[1] = lo;
    w.args[2] = hi;
    Value one{VOp::Where, L};
    one.args[0] = op2(VOp::Eq, DType::Bool, steps, iconst(1));
    one.args[1] = start;
    one.args[2] = add(w);
    return cast(add(one), dt);
  }

  // ---- views ----
  ValueId view(const Node* n, const Idx& idx) {
    const Node* x = n->inputs[0].get();
    const auto& a = n->attrs.ints;  // {offset, strides...}
    const int64_t rank = n->rank(), xr = x->rank();
    const Shape xs = contiguous_strides(x->shape);
    // Broadcast pattern: trailing dims map 1:1 (or to 0 where x has size 1).
    if (a[0] == 0 && xr <= rank) {
      const int64_t lead = rank - xr;
      bool ok = true;
      for (int64_t d = 0; d < rank && ok; ++d) {
        int64_t st = a[1 + d];
        if (d < lead) ok = st == 0;
        else {
          int64_t xd = d - lead;
          ok = (st == 0 && x->shape[xd] == 1) ||
               (x->shape[xd] == n->shape[d] && (st == xs[xd] || n->shape[d] == 1));
        }
      }
      if (ok) {
        Idx xi(static_cast<size_t>(xr));
        for (int64_t d = 0; d < xr; ++d)
          xi[d] = x->shape[d] == 1 ? iconst(0) : idx[d + lead];
        return value(x, xi);
      }
    }
    // Reshape that only adds or drops size-1 dims.
    if (a[0] == 0 && n->numel() == x->numel() && Shape(a.begin() + 1, a.end()) == contiguous_strides(n->shape)) {
      Shape ns, xs1;
      for (int64_t s : n->shape) if (s != 1) ns.push_back(s);
      for (int64_t s : x->shape) if (s != 1) xs1.push_back(s);
      if (ns == xs1) {
        Idx kept;
        for (int64_t d = 0; d < rank; ++d) if (n->shape[d] != 1) kept.push_back(idx[d]);
        Idx xi;
        size_t j = 0;
        for (int64_t d = 0; d < xr; ++d) xi.push_back(x->shape[d] != 1 ? kept[j++] : iconst(0));
        return value(x, xi);
      }
    }
    // A strided slice of a value computed inline (x[o0::s0, o1::s1, ...], as
    // many dims, none merged): each dim maps on its own, with no division.
    if (!stored(x)) {
      Idx xi;
      if (slice_of(n, x, idx, xi)) return value(x, xi);
    }
    // General: the flat position in x's row-major layout.
    ValueId flat = a[0] == 0 ? iconst(0) : param(n, kViewOffset, 0, a[0]);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t st = a[1 + d];
      ValueId sv = st == 0 ? iconst(0) : (st == 1 && d == rank - 1) ? iconst(1) : param(n, kViewStride, d, st);
      flat = iadd(flat, imul(idx[d], sv));
    }
    if (stored(x)) return load(x, flat);
    return value(x, unravel(x, flat));
  }

  // Whether view n of x is x[o_d + i_d * step_d] dim by dim; if so xi gets
  // x's index. Steps and starts are runtime params (shape-generic kernels).
  bool slice_of(const Node* n, const Node* x, const Idx& idx, Idx& xi) {
    const auto& a = n->attrs.ints;
    const int64_t rank = n->rank();
    if (x->rank() != rank || x->numel() == 0 || n->numel() == 0) return false;
    const Shape xs = contiguous_strides(x->shape);
    int64_t off = a[0];
    Shape start(static_cast<size_t>(rank)), step(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      start[d] = off / xs[d];
      off -= start[d] * xs[d];
      if (n->shape[d] == 1) continue;  // step 0
      if (a[1 + d] < 0 || a[1 + d] % xs[d] != 0) return false;
      step[d] = a[1 + d] / xs[d];
    }
    if (off != 0) return false;
    for (int64_t d = 0; d < rank; ++d)
      if (start[d] < 0 || (n->shape[d] > 0 && start[d] + (n->shape[d] - 1) * step[d] >= x->shape[d]))
        return false;
    xi.resize(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      ValueId i = idx[d];
      if (n->shape[d] == 1) i = iconst(0);
      else if (step[d] != 1 || x->shape[d] != n->shape[d]) i = imul(i, param(n, kSliceStep, d, step[d]));
      xi[d] = a[0] == 0 ? i : iadd(i, param(n, kSliceStart, d, start[d]));
    }
    return true;
  }

  // ---- reductions inside a row kernel ----
  struct Row {
    bool active = false;
    Shape full;          // the shape every reduction reduces
    std::vector<ValueId> sizes;  // full's sizes (the first reduction's params)
    std::vector<int64_t> dims;
    Idx outer;           // index over the keepdim shape: outer loop vars, 0 on reduced and size-1 dims
    std::vector<Stmt>* body = nullptr;  // where reduction loop nests are appended
    std::unordered_map<const Node*, int32_t> acc;
  } row_;

  // What a reducing node (a Reduce node or an inline matmul) reduces: the
  // shape it folds and the dims of it that it folds.
  struct Domain {
    Shape full;
    std::vector<int64_t> dims;
  };
  static Domain domain(const Node* n) {
    if (n->op == Op::Matmul) {
      Shape full = n->shape;
      full.push_back(n->inputs[0]->shape.back());  // K
      return {full, {n->rank()}};
    }
    return {n->inputs[0]->shape, n->attrs.ints};
  }
  // The extent of dim d of n's domain, as a param of a real node. A
  // matmul's K up to kInlineMatmulMaxK is a constant: the decision depends
  // on it anyway, and a constant trip count lets LLVM unroll the dot product
  // and vectorize the loop over N around it.
  ValueId domain_size(const Node* n, int64_t d) {
    if (n->op == Op::Matmul) {
      if (d < n->rank()) return size_of(n, d);
      const int64_t K = n->inputs[0]->shape.back();
      return K <= kInlineMatmulMaxK ? iconst(K) : size_of(n->inputs[0].get(), n->rank() - 1);
    }
    return size_of(n->inputs[0].get(), d);
  }
  // n's index (over n's shape) as an index over its domain's keepdim shape.
  Idx keep_index(const Node* n, const Idx& idx) {
    if (n->op != Op::Matmul) return idx;
    Idx k = idx;
    k.push_back(iconst(0));
    return k;
  }

  // A loop scope of the row kernel being built: its loops (outermost first)
  // and the statement list where a reduction placed in this scope goes (it
  // runs once per iteration of these loops, before the statements reading it).
  struct Scope {
    std::vector<std::pair<int32_t, ValueId>> loops;  // loop id, extent
    std::vector<Stmt>* list = nullptr;
  };
  std::vector<Scope> scopes_;  // scopes_[0]: the rows; then the loops open where a value is being built
  int64_t nested_work_ = 0;  // iterations of the nested matmuls' loops
  std::unordered_map<const Node*, int> sites_;  // inline matmuls: places computed in this kernel

  // The scope in which an inline matmul read at idx, outside the rows it
  // would have as the kernel's first reduction, runs: the innermost scope
  // whose loops idx reads. It must read every loop (of extent other than 1)
  // of that scope and of the enclosing ones, so that each of the matmul's
  // values is computed once per kernel run; otherwise the matmul is stored.
  size_t nest_scope(const Node* n, const Idx& idx) {
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

  ValueId reduction(const Node* n, const Idx& idx) {
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
    for (int64_t d : dm.dims) {
      if (dm.full[d] == 1) {
        inner[d] = iconst(0);
        continue;
      }
      int32_t l = new_loop();
      own.loops.push_back({l, at_row ? row_.sizes[static_cast<size_t>(d)] : domain_size(n, d)});
      inner[d] = loop_var(l);
    }
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

  // `body` inside `loops` (outermost first); `body` itself when there are none.
  static std::vector<Stmt> nest(std::vector<Stmt> body, const std::vector<std::pair<int32_t, ValueId>>& loops) {
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

  ValueId read_acc(const Node* n, int32_t acc) {
    const Accumulator& a = k_.accs[acc];
    Value v{VOp::AccRead, (a.combiner == Combiner::ArgMax || a.combiner == Combiner::ArgMin) ? DType::Int64 : a.dtype};
    v.a = acc;
    return cast(add(v), n->dtype);
  }

  // ---- kernel structures ----
  // Finds the reductions computed inline below n (not crossing stored nodes).
  void find_reductions(const Node* n, std::vector<const Node*>& out, NodeSet& seen) {
    if (!seen.insert(n).second || stored(n)) return;
    if (reduces(*n)) out.push_back(n);
    for (const auto& in : n->inputs) find_reductions(in.get(), out, seen);
  }

  // Wraps `body` in loops over `dims` of `n`'s shape (outermost parallel).
  // Returns the index over n's shape; `inner` receives the innermost body.
  std::vector<Stmt>* open_loops(const Node* n, const std::vector<int64_t>& dims, Idx& idx,
                                std::vector<Stmt>& top, bool parallel_first) {
    std::vector<Stmt>* cur = &top;
    bool first = parallel_first;
    for (int64_t d : dims) {
      int32_t l = new_loop();
      Stmt loop{StmtKind::Loop};
      loop.loop = l;
      loop.extent = size_of(n, d);
      loop.parallel = first;
      if (first) parallel_extent_ = n->shape[d];
      first = false;
      idx[d] = loop_var(l);
      cur->push_back(std::move(loop));
      cur = &cur->back().body;
    }
    return cur;
  }

  // A parallel loop of extent 1 for kernels with no loop to split.
  std::vector<Stmt>* single(std::vector<Stmt>& top) {
    Stmt loop{StmtKind::Loop};
    loop.loop = new_loop();
    loop.extent = iconst(1);
    loop.parallel = true;
    parallel_extent_ = 1;
    top.push_back(std::move(loop));
    return &top.back().body;
  }

  void store(std::vector<Stmt>* body, int32_t slot, ValueId flat, ValueId v) {
    Stmt s{StmtKind::Store};
    s.buffer = slot;
    s.index = flat;
    s.value = v;
    body->push_back(s);
  }

  int32_t output_slot(DType dt) {
    k_.buffers.push_back({dt, true});
    return static_cast<int32_t>(k_.buffers.size() - 1);
  }

  // Iterates `src` (computed inline) over its shape and stores it at
  // offset + idx . strides in the output (Cat parts, Assign's scatter).
  Lowered lower_scatter(const Node* src, const Node* out, ValueId offset, const std::vector<ValueId>& strides) {
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
    return finish();
  }

  Lowered lower_cat(int part) {
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

  Lowered lower_assign_scatter() {
    const auto& a = root_.attrs.ints;
    const Node* src = root_.inputs[1].get();
    std::vector<ValueId> strides;
    for (size_t d = 0; d < src->shape.size(); ++d)
      strides.push_back(a[1 + d] == 0 ? iconst(0) : param(&root_, kViewStride, static_cast<int64_t>(d), a[1 + d]));
    ValueId offset = a[0] == 0 ? iconst(0) : param(&root_, kViewOffset, 0, a[0]);
    return lower_scatter(src, &root_, offset, strides);
  }

  // The kernel computing every node of `group` (one loop nest over the
  // shared iteration space, one store per member: horizontal fusion). An
  // Assign member computes its base (the first half of the write).
  // A value of out's own shape, computed inline at out's index, that is
  // costly (exp, log, ...) and also folded by one of the kernel's row
  // reductions: softmax's exp(x - max), summed and then divided. The
  // reduction's loop stores it into out, and the final loop reads it back
  // instead of computing it a second time. Null when there is none.
  const Node* kept_value(const Node* out, const std::vector<const Node*>& reds) {
    const Domain rows{row_.full, row_.dims};
    for (const Node* r : reds) {
      if (r->op == Op::Matmul || row_.acc.count(r)) continue;  // built already: too late to store
      const Domain dm = domain(r);
      if (dm.full != rows.full || dm.dims != rows.dims) continue;
      const Node* x = r->inputs[0].get();
      if (x->op == Op::Cast) x = x->inputs[0].get();
      if (is_transcendental(x->op) && !stored(x) && x->shape == out->shape && x->dtype == out->dtype &&
          reads_inline(out, x))
        return x;
    }
    return nullptr;
  }
  // Whether n reaches x through nodes computed inline in this kernel.
  bool reads_inline(const Node* n, const Node* x) {
    if (n == x) return true;
    if (n != &root_ && (stored(n) || reduces(*n))) return false;
    for (const auto& in : n->inputs)
      if (reads_inline(in.get(), x)) return true;
    return false;
  }
  static void patch_kept_slot(std::vector<Stmt>& body, int32_t slot) {
    for (Stmt& s : body) {
      if (s.kind == StmtKind::Store && s.buffer == kKeptSlot) s.buffer = slot;
      patch_kept_slot(s.body, slot);
    }
  }

  Lowered lower_group(const std::vector<const Node*>& group) {
    std::vector<const Node*> outs;
    bool writes = false;  // an Assign writes into a buffer the kernel may also read
    for (const Node* g : group) {
      outs.push_back(g->op == Op::Assign ? g->inputs[0].get() : g);
      writes = writes || g->op == Op::Assign;
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
    std::vector<Stmt> top;
    std::vector<ValueId> values(outs.size(), -1), flats(outs.size(), -1);
    if (reds.empty()) {
      // Elementwise: loops over the (shared) output shape.
      const Node* out = outs[0];
      Idx idx(out->shape.size());
      std::vector<int64_t> dims(out->shape.size());
      for (size_t d = 0; d < dims.size(); ++d) dims[d] = static_cast<int64_t>(d);
      std::vector<Stmt>* body = dims.empty() ? single(top) : open_loops(out, dims, idx, top, true);
      for (size_t j = 0; j < outs.size(); ++j) {
        KILN_INTERNAL_ASSERT(outs[j]->shape == out->shape, "horizontal group of different shapes");
        values[j] = cast(value(outs[j], idx), group[j]->dtype);
        flats[j] = ravel(outs[j], idx);
      }
      for (size_t j = 0; j < outs.size(); ++j) store(body, output_slot(group[j]->dtype), flats[j], values[j]);
      k_.body = std::move(top);
      work_ = out->numel();
      return finish();
    }
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
    row_.sizes.clear();
    for (int64_t d = 0; d < rank; ++d) row_.sizes.push_back(domain_size(r0, d));
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
        if (!final_open)
          for (int64_t d : row_.dims) {
            if (full[d] == 1) continue;
            int32_t l = new_loop();
            final_scope.loops.push_back({l, row_.sizes[static_cast<size_t>(d)]});
            full_idx[d] = loop_var(l);
          }
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
      if (element) scopes_.push_back(final_scope);
      values[j] = cast(value(out, idx), group[j]->dtype);  // appends the reduction nests
      if (element) scopes_.pop_back();
      flats[j] = ravel(out, idx);
    }
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
      for (size_t j : per_element) store(&final_body, slots[j], flats[j], values[j]);
      for (Stmt& st : nest(std::move(final_body), final_scope.loops)) body->push_back(std::move(st));
    }
    k_.body = std::move(top);
    return finish();
  }

  // The kept value (kept_value) while its output's slot is not yet known.
  static constexpr int32_t kKeptSlot = -2;
  struct Kept {
    const Node* n = nullptr;    // the value stored by the reduction's loop
    const Node* out = nullptr;  // the output it is stored into
    bool stored = false;
  } keep_;

  Kernel k_;
  std::vector<int64_t> params_;
  std::vector<const Node*> inputs_;
  int64_t parallel_extent_ = 1;
  int64_t work_ = 0;

 private:
  const Node& root_;
  const NodeSet& mat_;
  NodeSet roots_;
  std::unordered_map<std::string, ValueId> cons_;
  std::map<std::pair<const Node*, Idx>, ValueId> memo_;
  std::map<std::tuple<const Node*, int, int64_t>, ValueId> param_slots_;
  std::unordered_map<const Node*, int32_t> slots_;
};

std::string kernel_name(const Node& n, const Lowered& l) {
  std::string name = "k_";
  name += op_name(n.op);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  name += "_" + std::to_string(l.kernel.values.size());
  return name;
}

}  // namespace

Lowered lower_node(const Node& out, const NodeSet& materialized, int part) {
  if (out.op != Op::Cat) return lower_group({&out}, materialized);
  Lowerer lw(out, materialized);
  Lowered l = lw.lower_cat(part);
  l.kernel.name = kernel_name(out, l);
  return l;
}

Lowered lower_group(const std::vector<const Node*>& group, const NodeSet& materialized) {
  Lowerer lw(group, materialized);
  Lowered l = lw.lower_group(group);
  l.kernel.name = kernel_name(*group.front(), l);
  return l;
}

Lowered lower_assign_scatter(const Node& assign, const NodeSet& materialized) {
  Lowerer lw(assign, materialized);
  Lowered l = lw.lower_assign_scatter();
  l.kernel.name = kernel_name(assign, l) + "_scatter";
  return l;
}

}  // namespace kiln::jit
