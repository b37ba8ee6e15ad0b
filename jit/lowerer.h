// The Lowerer: the state of one kernel's lowering (kernel IR being built,
// its params and input buffers), shared by lower.cpp (value construction
// and the kernel structures), lower_views.cpp (views) and lower_reduce.cpp
// (reductions and row kernels). Internal to jit/: lower.h is the interface.
//
// A value is built by `value(node, idx)`: node's value at the multi-index idx
// (Values of the loop variables), expanded recursively through every node
// computed inline. Sizes and strides are runtime params, never constants, so
// a kernel serves every shape of its structure (but for views' small steps:
// kConstantStepMax). Values are hash-consed, so a
// node read twice at the same index is computed once. The per-value helpers
// (add, value, the index arithmetic) are defined here, inline: they run for
// every value built.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/tensor_impl.h"
#include "jit/lower.h"
#include "jit/schedule.h"

namespace kiln::jit::lowering {

using Idx = std::vector<ValueId>;

// The tiles of a kernel with transposed reads (lower_tiles.cpp): positions
// along the dim read contiguously, and along the output's last dim the
// elements of this many bytes, at most kTileLastMax (multiples of 16).
inline constexpr int64_t kTileTd = 64;
inline constexpr int64_t kTileLastBytes = 512;
inline constexpr int64_t kTileLastMax = 128;
// A tile's side of at most kTileNarrowLast elements (an image's RGB
// channels) is not tiled: its loop runs innermost, its size a constant of
// the kernel (lower_tiles.cpp).
inline constexpr int64_t kTileNarrowLast = 8;

// A view's step along a dim (x[:, ::2], a pooling window's or a strided
// convolution's stride) up to this is a constant of the kernel, not a
// param: LLVM vectorizes a loop reading at a constant stride (its
// interleaved loads: one wide load and shuffles per tap), while a runtime
// stride other than 1 runs the loop one element at a time (it versions the
// loop only for a stride of 1). Steps are the user's (a slice's, a
// window's), not sizes: a new shape of the same views compiles nothing new;
// a new step does.
inline constexpr int64_t kConstantStepMax = 8;
// Along an outer dim (not x's innermost) a step up to 16, a column level's
// block of rows (core/reduction_forms.cpp), is a constant too, as is a
// start inside it: sibling levels over one x (a mean's and var's sums)
// then load the same values, once in their merged kernel, not once each
// through params of their own.
inline constexpr int64_t kConstantOuterStepMax = 16;
// A view's stride over a block of at most this many elements of a stored
// buffer (one of its contiguous strides: a row of [N, 3]) is a constant
// of the kernel, as is an offset inside the block (lower_views.cpp).
inline constexpr int64_t kNarrowRowMax = 16;
// An elementwise kernel's innermost loop over at most this many elements
// (narrow_inner_dims) is unrolled into its positions (lower_group), and so
// are a row kernel's reductions over at most this many (lower_rows), where
// the float math stays within kNarrowUnrollMath / kNarrowRowsMath
// (unrolled_rows_pay). A row kernel's loops cost more to compile than an
// elementwise loop (softmax over rows of 4: 16 ms with its three loops, 19
// unrolled; (p - c).exp() of 5 positions: 11 ms as a loop, 19 unrolled), so
// its budget is the larger.
inline constexpr int64_t kNarrowUnrollMax = 6;
inline constexpr int64_t kNarrowUnrollMath = 24;
inline constexpr int64_t kNarrowRowsMath = 40;
// An elementwise kernel over rows of at most kPeriodicRowMax elements that
// reads at most kPeriodicOperands row operands broadcast along the rows
// (`p - c`, [N, 3] - [3]; `(x - mean) / std` over [N, 10]; a bias over
// [B, 100]) runs as one flat loop over the whole tensor in spans, the row
// operands read from locals holding their rows repeated
// (lower_periodic.cpp). A span is whole rows and whole vectors of
// kPeriodicAlign lanes: the row's least common multiple with the lanes,
// repeated up to kPeriodicSpan elements (each call fills the locals' span
// first: 1024 elements cost a [1000, 3] - [3] 0.4 us more than 256 and
// ran large tensors no faster). A local holds kPeriodicLocal elements,
// the longest span: rows whose multiple is longer (250 elements: 2000)
// keep their loop, as locals of 8 KiB each ran `(p - m) / s` 1.15-1.2x
// slower than the row's loop (the L1 cache's share).
inline constexpr int64_t kPeriodicRowMax = 256;
inline constexpr int64_t kPeriodicOperands = 8;
inline constexpr int64_t kPeriodicAlign = 16;
inline constexpr int64_t kPeriodicSpan = 256;
inline constexpr int64_t kPeriodicLocal = 1024;

// The bounds a guard keeps an index value within (lower_guard.cpp): each
// value >= lo / <= hi for lo, hi = base + off (base a value id, -1 for
// the constant off).
struct GuardBounds {
  struct Bound {
    ValueId base;
    int64_t off;
  };
  std::vector<Bound> lo, hi;
};

// The exact maps of a view n onto its input x (lower_views.cpp), shared by
// Lowerer::view and lower_merge.cpp's look-ahead:
// the broadcast pattern (offset 0; n's dim d is x's dim d - lead, stride 0
// where x has size 1 or d < lead): lead, or -1;
int64_t broadcast_lead(const Node* n);
// strides those of n's own row-major layout (any offset);
bool row_major_view(const Node* n);
// a reshape that only adds or drops size-1 dims: n's dims of size > 1 (nd)
// are x's (xd), in order.
bool unit_dims_reshape(const Node* n, std::vector<int64_t>& nd, std::vector<int64_t>& xd);
// Whether view n of x (of x's rank, or with more dims of one element: a
// depthwise window's group dim) steps by a constant step > 1 along some
// dim of x (x[:, ::2], a pooling tap): slice_of reads it with constant
// steps and phases.
bool strided_slice(const Node* n, const Node* x);
// a permutation of x's dims (offset 0; dims of one element may come and
// go): n's dim d is x's dim from[d] (-1 where n has size 1).
bool permuted_dims(const Node* n, std::vector<int64_t>& from);
// Whether n's strides along the dims `run` (of size > 1, in order) are
// row-major within the run: the general strided read folds a merged run
// (x[:, 2:50], a permutation keeping H and W adjacent).
bool run_row_major(const Node* n, const std::vector<int64_t>& run);

enum ParamTag : int {
  kSize, kStride, kViewStride, kViewOffset, kSliceStart, kSliceStep, kCatOffset, kData, kPeriod, kScanBlock, kShiftBase
};

class Lowerer {
 public:
  Lowerer(const Node& root, const NodeSet& mat) : root_(root), mat_(mat) { roots_.insert(&root); }
  Lowerer(const std::vector<const Node*>& group, const NodeSet& mat)
      : root_(*group.front()), mat_(mat), roots_(group.begin(), group.end()) {}

  Lowered finish(ValueId /*unused*/ = -1) {
    if (!run_mods_.empty()) k_.drop_dead_values();  // the quotients ravel folded away
    add_footprint();  // jit/lower_footprint.cpp
    Lowered r;
    r.kernel = std::move(k_);
    r.params = std::move(params_);
    r.data = std::move(data_);
    r.inputs = std::move(inputs_);
    r.parallel_extent = parallel_extent_;
    r.work = work_;
    r.rows = row_.active;
    r.inlined.assign(inlined_.begin(), inlined_.end());
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
  // View n's offset into its input (attrs.ints[0]): a param unless 0, so
  // that another offset of the same view compiles nothing.
  ValueId view_offset(const Node* n) {
    const int64_t o = n->attrs.ints[0];
    return o == 0 ? iconst(0) : param(n, kViewOffset, 0, o);
  }
  // The param holding n's data attribute s (a seed, an offset, a float value:
  // lower.h, DataParam), recorded so a cached schedule can refresh it.
  ValueId data_param(const Node* n, DataAttr s) {
    const size_t before = params_.size();
    ValueId id = param(n, kData, static_cast<int64_t>(s), data_attr_value(*n, s));
    if (params_.size() > before) data_.push_back({val(id).a, s, n});
    return id;
  }
  ValueId op2(VOp op, DType dt, ValueId a, ValueId b) {
    Value v{op, dt};
    v.args[0] = a;
    v.args[1] = b;
    return add(v);
  }
  ValueId op3(VOp op, DType dt, ValueId a, ValueId b, ValueId c) {  // Where
    Value v{op, dt};
    v.args[0] = a;
    v.args[1] = b;
    v.args[2] = c;
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
  ValueId isub(ValueId a, ValueId b) {
    if (is_int(b, 0)) return a;
    if (val(a).op == VOp::IntConst && val(b).op == VOp::IntConst) return iconst(val(a).i - val(b).i);
    return op2(VOp::Sub, DType::Int64, a, b);
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
    if (narrow(n, d)) return iconst(n->shape[d]);
    return param(n, kSize, d, n->shape[d]);
  }
  // Row-major flat position of idx in n's shape.
  ValueId ravel(const Node* n, const Idx& idx) {
    if (idx.empty()) return iconst(0);
    ValueId flat = idx[0];  // (the outermost size never multiplies: no param for it)
    for (size_t d = 1; d < idx.size(); ++d) {
      const ValueId s = size_of(n, static_cast<int64_t>(d));
      const ValueId f = run_mods_.count(idx[d]) ? unsplit(flat, idx[d], s) : -1;
      flat = f >= 0 ? f : iadd(imul(flat, s), idx[d]);
    }
    return flat;
  }
  // flat * s + m for m = q % P of a merged run (lower_merge.cpp) and flat =
  // q / P or A + q / P: q or A * s + q when s and P are the same size; else -1.
  ValueId unsplit(ValueId flat, ValueId m, ValueId s) {
    const ValueId q = val(m).args[0], P = val(m).args[1];
    const bool same = P == s || (val(P).op == VOp::Param && val(s).op == VOp::Param &&
                                 params_[static_cast<size_t>(val(P).a)] == params_[static_cast<size_t>(val(s).a)]);
    if (!same) return -1;
    if (run_quotient(flat, m) >= 0) return q;
    if (val(flat).op != VOp::Add || run_quotient(val(flat).args[1], m) < 0) return -1;
    const ValueId a = val(flat).args[0];
    return iadd(imul(a, s), q);
  }
  // q if m is q % P of a merged run and v is q / P; else -1.
  ValueId run_quotient(ValueId v, ValueId m) {
    if (!run_mods_.count(m)) return -1;
    const ValueId q = val(m).args[0], P = val(m).args[1];
    return val(v).op == VOp::Div && val(v).args[0] == q && val(v).args[1] == P ? q : -1;
  }
  // The value of an integer constant or a param (a size) at this lowering.
  int64_t int_value(ValueId v) const {
    return val(v).op == VOp::Param ? params_[static_cast<size_t>(val(v).a)] : val(v).i;
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
    if (tile_.list)  // inside a transposed tile (lower_tiles.cpp)
      if (const ValueId t = staged_load(slot, n->dtype, flat); t >= 0) return t;
    Value v{VOp::Load, n->dtype};
    v.a = slot;
    v.args[0] = flat;
    return add(v);
  }

  // Whether n is read from memory rather than computed inline: the only
  // question lowering asks of the stored set. The nodes answered "inline"
  // are kept (Lowered::inlined): a later store of one changes this kernel.
  bool stored(const Node* n) const {
    if (loaded(n)) return true;
    if (!roots_.count(n)) inlined_.insert(n);
    return false;
  }

  // stored(n) without recording anything (lower_merge.cpp's look-ahead).
  bool loaded(const Node* n) const { return roots_.count(n) == 0 && (has_value(*n) || mat_.count(n) > 0); }

  // ---- the value of node n at idx ----
  ValueId value(const Node* n, const Idx& idx) {
    auto key = std::make_pair(n, idx);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    ValueId r = compute(n, idx);
    memo_.emplace(std::move(key), r);
    return r;
  }

  // ---- lower.cpp: values of the ops computed inline ----
  ValueId compute(const Node* n, const Idx& idx);
  ValueId unary(VOp op, const Node* n, const Idx& idx);
  ValueId binary(VOp op, const Node* n, const Idx& idx);
  ValueId int_division(VOp op, const Node* n, const Idx& idx);  // Div, Fmod of integers
  ValueId linspace(const Node* n, const Idx& idx);

  // ---- lower_guard.cpp: where(inside, x[clamp(e)], fill) as a guarded load ----
  ValueId where(DType dt, ValueId cond, ValueId a, ValueId b);
  ValueId unclamped(ValueId id, const std::unordered_map<ValueId, GuardBounds>& bounds,
                    std::unordered_map<ValueId, ValueId>& memo, int depth);
  ValueId guard_loads(ValueId id, ValueId cond, const std::unordered_map<ValueId, GuardBounds>& bounds,
                      std::unordered_map<ValueId, ValueId>& unclamp_memo, std::unordered_map<ValueId, ValueId>& memo,
                      int depth);

  // ---- lower_views.cpp ----
  ValueId view(const Node* n, const Idx& idx);
  bool slice_of(const Node* n, const Node* x, const Idx& idx, Idx& xi);
  bool strided_of(const Node* n, const Node* x, const Idx& idx, Idx& xi);
  bool permutation_of(const Node* n, const Node* x, const Idx& idx, Idx& xi);
  bool grouped_reshape(const Node* n, const Node* x, const Idx& idx, Idx& xi);
  bool shifted_of(const Node* n, const Node* x, const Idx& idx, Idx& xi);
  void find_shift_bases();

  // ---- lower_reduce.cpp: reductions inside a row kernel ----
  struct Row {
    bool active = false;
    Shape full;          // the shape every reduction reduces
    std::vector<ValueId> sizes;  // full's sizes (the first reduction's params)
    std::vector<int64_t> dims;
    std::vector<int64_t> run;  // reduced dims merged into one loop (flat_run)
    Idx outer;           // index over the keepdim shape: outer loop vars, 0 on reduced and size-1 dims
    std::vector<Stmt>* body = nullptr;  // where reduction loop nests are appended
    std::unordered_map<const Node*, int32_t> acc;
    // > 0: the reduced dims hold this many positions, unrolled (narrow rows:
    // a softmax over 3 classes): each reduction a chain over the positions
    // at constant indices, each per-element output stored at each position
    int64_t positions = 0;
  } row_;
  // A reduction of narrow rows as that chain (row_.positions).
  ValueId unrolled_reduction(const Node* n, const Idx& kidx);

  using Domain = ReductionDomain;
  static Domain domain(const Node* n) { return reduction_domain(*n); }
  ValueId domain_size(const Node* n, int64_t d);
  Idx keep_index(const Node* n, const Idx& idx);

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

  size_t nest_scope(const Node* n, const Idx& idx);
  ValueId reduction(const Node* n, const Idx& idx);
  static std::vector<Stmt> nest(std::vector<Stmt> body, const std::vector<std::pair<int32_t, ValueId>>& loops);
  ValueId read_acc(const Node* n, int32_t acc);
  void find_reductions(const Node* n, std::vector<const Node*>& out, NodeSet& seen);
  const Node* kept_value(const Node* out, const std::vector<const Node*>& reds);
  bool reads_inline(const Node* n, const Node* x, NodeSet& seen);
  static void patch_kept_slot(std::vector<Stmt>& body, int32_t slot);
  Lowered lower_rows(const std::vector<const Node*>& group, const std::vector<const Node*>& outs,
                     std::vector<const Node*>& reds, bool writes);

  // ---- lower_merge.cpp: adjacent dims as one loop ----
  // The last run of `dims` (size-1 dims of full skipped) that every reader
  // reads as one contiguous block; empty if none of 2 dims or more.
  std::vector<int64_t> flat_run(const Shape& full, const std::vector<int64_t>& dims,
                                const std::vector<const Node*>& readers) const;
  // flat_run of n's dims k..end for the first k from `from` on where it
  // finds one: the longest run at the end of dims from..end; empty if none.
  std::vector<int64_t> run_to(const Node* n, int64_t from, int64_t end,
                              const std::vector<const Node*>& readers) const;
  // A kernel's periodic reads (lower_periodic.cpp): the views that
  // broadcast a row operand along every dim of `run` before `outer`.
  struct Periodic {
    std::vector<int64_t> run;  // every dim of size > 1
    size_t outer = 0;          // run[outer..]: the row's dims
    int64_t width = 0;         // the row's elements
    std::vector<const Node*> nodes;
  };
  // With `per`, a broadcast view of per->run (at the kernel's own index)
  // that broadcasts along exactly the dims before per->outer reads flat,
  // recorded in per->nodes.
  bool reads_flat(const Node* n, const std::vector<int64_t>& run,
                  std::set<std::pair<const Node*, int64_t>>& seen, Periodic* per = nullptr) const;
  bool periodic_view(const Node* n, const Periodic& per) const;
  // Whether out's readers read flat but for periodic views (per filled).
  bool periodic_rows(const Node* out, const std::vector<const Node*>& readers, Periodic& per) const;
  // The loops of a periodic kernel over out (the locals' fill, then the
  // spans), idx its index in them: the body where its stores go.
  std::vector<Stmt>* open_periodic(const Node* out, const Periodic& per, Idx& idx, std::vector<Stmt>& top);
  // Gives the periodic nodes' locals their slots once the kernel's stores are in top.
  void place_periodic_locals(const Periodic& per, std::vector<Stmt>& top);
  // idx over the run's dims from the merged loop's variable q.
  void split_run(ValueId q, const std::vector<int64_t>& run, const std::vector<ValueId>& sizes, Idx& idx);
  ValueId run_extent(const std::vector<int64_t>& run, const std::vector<ValueId>& sizes);
  // Loops (appended to `loops`, outermost first) over `dims` of size > 1 in
  // full, of extents `sizes`, the run's merged into one; idx on those dims
  // (0 on size-1 ones). A reduction's loop nest, a row kernel's final loops.
  void dim_loops(const Shape& full, const std::vector<int64_t>& dims, const std::vector<ValueId>& sizes,
                 const std::vector<int64_t>& run, std::vector<std::pair<int32_t, ValueId>>& loops, Idx& idx);
  // Loops over every dim of n (the first parallel), the trailing dims that
  // every reader reads as one block merged into one loop.
  // With `unrolled`, the innermost loop's dims when narrow (narrow_inner_dims)
  // get no loop: the caller computes and stores each of their positions at
  // constant indices (lower_group).
  std::vector<Stmt>* open_flat_loops(const Node* n, const std::vector<const Node*>& readers, Idx& idx,
                                     std::vector<Stmt>& top, std::vector<int64_t>* unrolled = nullptr);
  std::vector<int64_t> narrow_inner_dims(const Node* n, const std::vector<int64_t>& run);
  bool unroll_narrow_ = true;  // false: lower_group found the unrolled rows do not pay
  bool unrolled_rows_pay(const Idx& idx, int64_t positions, int64_t budget) const;
  // The group lowered again by a fresh Lowerer that unrolls no narrow rows.
  Lowered lower_with_loops(const std::vector<const Node*>& group) const;
  // idx with `dims` at position p of their block (row-major over their sizes
  // in `shape`), as constants: a narrow row's or a narrow cat's positions.
  Idx at_position(Idx idx, const Shape& shape, const std::vector<int64_t>& dims, int64_t p);
  std::unordered_set<ValueId> run_mods_;  // the q % P values split_run made

  // ---- lower.cpp: kernel structures ----
  std::vector<Stmt>* open_loops(const Node* n, const std::vector<int64_t>& dims, Idx& idx,
                                std::vector<Stmt>& top, bool parallel_first);
  ValueId open_loop(std::vector<Stmt>*& cur, ValueId extent, int64_t static_extent, bool parallel);
  std::vector<Stmt>* single(std::vector<Stmt>& top);
  int64_t transposed_dim(const Node* n, int64_t rank, int& budget);
  const Node* merged_from(const Node* n);

  // ---- lower_tiles.cpp: tiled transposes, their strided reads staged ----
  std::vector<Stmt>* open_tiles(const Node* n, int64_t td, const std::vector<const Node*>& readers, Idx& idx,
                                std::vector<Stmt>& top);
  struct Tile {
    std::vector<Stmt>* list = nullptr;  // the tile loop's body (the stages go first); null: no tile
    ValueId a = -1, b = -1;             // the variables inside a tile: td's, the last dim's
    ValueId a_extent = -1, b_extent = -1;
    int64_t side_a = 0, side_b = 0;     // the tile's sides (the locals': rows of side_b elements)
    std::vector<Stmt> stages;           // one per local, slots kLocalSlot - j until placed
    std::vector<DType> dtypes;
    std::unordered_map<ValueId, bool> mentions;
  } tile_;
  // A narrow side's dims (lower_tiles.cpp; of the output's rank, empty
  // elsewhere): their sizes, and views' strides of at most kTileNarrowLast,
  // are constants of the kernel, so LLVM unrolls the side's loop and moves
  // the elements of a position as one group (interleaved loads or stores).
  // In a narrow cat's kernel (lower_cat_whole) a node of lower rank counts
  // its dims from the last, as broadcasting aligns them: a part stacked
  // from [N, 2] values reads them at a constant row stride.
  // A narrow cat's block of up to kCatWholeMaxWidth elements (a row of
  // nine or sixteen, a 3 x 3 or 4 x 4 matrix) keeps constant sizes too.
  std::vector<bool> narrow_dims_;
  bool narrow_trailing_ = false;
  int64_t narrow_max_ = kTileNarrowLast;
  // narrow_dims_ (over `rank` dims) true on `dims`, lower ranks aligned at
  // the last dim, views' strides up to `max` constants.
  void set_narrow(int64_t rank, const std::vector<int64_t>& dims, int64_t max);
  bool narrow(const Node* n, int64_t d) const {
    const int64_t off = static_cast<int64_t>(narrow_dims_.size()) - n->rank();
    if (off != 0 && (!narrow_trailing_ || off < 0 || d + off < 0)) return false;
    return narrow_dims_[static_cast<size_t>(d + off)] && n->shape[d] <= narrow_max_;
  }
  // A local's slot until place_stages: kLocalSlot - j for the j-th.
  static constexpr int32_t kLocalSlot = -100;
  bool mentions_tile(ValueId v);
  bool tile_linear(ValueId v, ValueId var, ValueId& coef);
  ValueId at_tile_origin(ValueId v);
  ValueId staged_load(int32_t slot, DType dt, ValueId flat);
  void place_stages();
  void store(std::vector<Stmt>* body, int32_t slot, ValueId flat, ValueId v);
  int32_t output_slot(DType dt);
  // Appends `locals` after every argument buffer (kernel_ir.h) and gives
  // the Loads of placeholder slot kLocalSlot - j the j-th: their slots.
  std::vector<int32_t> add_locals(const std::vector<BufferArg>& locals);
  // Appends the footprint param where the kernel's stores may stream.
  void add_footprint();
  Lowered lower_scatter(const Node* src, const Node* out, ValueId offset, const std::vector<ValueId>& strides);
  Lowered lower_cat(int part);
  Lowered lower_cat_whole();  // cat_in_one_kernel (schedule.h)
  Lowered lower_assign_scatter();
  Lowered lower_index_scatter();  // ScatterAdd, Scatter
  Lowered lower_scan(const std::vector<const Node*>& group);  // CumSum, CumProd, CumMax, ...: one input, one dim
  Lowered lower_group(const std::vector<const Node*>& group);

  // The kept value (kept_value) while its output's slot is not yet known.
  static constexpr int32_t kKeptSlot = -2;
  struct Kept {
    const Node* n = nullptr;    // the value stored by the reduction's loop
    const Node* out = nullptr;  // the output it is stored into
    bool stored = false;
  } keep_;

  Kernel k_;
  std::vector<int64_t> params_;
  std::vector<DataParam> data_;
  std::vector<const Node*> inputs_;
  int64_t parallel_extent_ = 1;
  int64_t work_ = 0;
  int64_t written_ = -1;  // elements a scatter stores (a Cat part, an Assign), -1: the whole output

 private:
  const Node& root_;
  const NodeSet& mat_;
  NodeSet roots_;
  mutable NodeSet inlined_;
  std::unordered_map<std::string, ValueId> cons_;
  std::map<std::pair<const Node*, Idx>, ValueId> memo_;
  std::map<std::tuple<const Node*, int, int64_t>, ValueId> param_slots_;
  std::unordered_map<const Node*, int32_t> slots_;
  // per stored buffer, the smallest start along each dim of its shifted
  // views in this kernel (lower_views.cpp: shifted_of); found on first use
  std::unordered_map<const Node*, Shape> shift_base_;
  bool shift_bases_found_ = false;
};

}  // namespace kiln::jit::lowering
