// The scheduling pipeline: collect -> partition -> fuse-rows -> lower -> merge.
#include "jit/schedule.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <list>
#include <mutex>
#include <unordered_map>

#include "core/ptr_map.h"
#include "core/tensor_impl.h"
#include "jit/jit_log.h"
#include "jit/lower.h"
#include "jit/matmul.h"
#include "jit/schedule_graph.h"
#include "jit/stats.h"
#include "kiln/error.h"

namespace kiln::jit {

namespace {

// collect: the nodes without values below the roots, iteratively. It runs
// on every evaluation (a cached schedule is found by the graph's signature),
// so it uses flat maps; consumers are only needed to build a new schedule.
Graph collect(const std::vector<NodePtr>& roots) {
  Graph g;
  // Scratch kept per thread: a cached evaluation allocates nothing here.
  thread_local PtrMap<bool> seen(64), leaf_seen(16);
  thread_local std::vector<std::pair<const Node*, size_t>> stack;
  seen.reset(64);
  leaf_seen.reset(16);
  stack.clear();
  g.order.reserve(64);
  g.leaves.reserve(16);
  auto leaf = [&](const Node* n) {
    if (leaf_seen.insert(n, true)) g.leaves.push_back(n);
  };
  for (const NodePtr& r : roots) {
    if (has_value(*r)) leaf(r.get());
    if (has_value(*r) || !seen.insert(r.get(), true)) continue;
    stack.push_back({r.get(), 0});
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs.size()) {
        const Node* in = n->inputs[next++].get();
        if (has_value(*in)) {
          leaf(in);
          continue;
        }
        if (seen.insert(in, true)) stack.push_back({in, 0});
        continue;
      }
      g.order.push_back(n);
      stack.pop_back();
    }
  }
  return g;
}

// Every edge's consumer, for partitioning a graph not seen before.
void add_consumers(Graph& g) {
  for (const Node* n : g.order)
    for (const auto& in : n->inputs)
      if (!has_value(*in)) g.consumers[in.get()].push_back(n);
}

// The stored node a library matmul reads operand `op` from: op itself when
// it has a value or is stored anyway, else the stored node under op's views
// when BLAS reads them in place (a transpose flag and a leading dimension:
// x.t(), a column slice, a broadcast batch). Null when op must be copied.
// Decided here from strides, which are part of every node's structural hash
// and so of the schedule cache's key; the executor derives the same layout
// from the nodes at run time (matmul_operand).
const Node* blas_source(const Node* op, const NodeSet& mat) {
  auto stored = [&](const Node* x) { return has_value(*x) || mat.count(x) > 0; };
  std::optional<StridedRead> r = fold_views(op, stored);
  return r && stored(r->base) && blas_readable(*op, *r) ? r->base : nullptr;
}

// A computed value that op views whole in another order, BLAS-readable
// (a transpose: (a * 2).t(), a result in a permuted layout, core/layout.h):
// stored as it is computed, in its own order, BLAS reads it transposed,
// where storing op would transpose it through tiles first. The value may be
// a view of the same size between op and the computed node (a convolution's
// weight gradient reads its columns, the window view of the padded input
// copied in the forward's order, transposed): the first such node below op
// is stored (the forward's column copy itself: the views below it have
// more dims, whose loops the copy's kernel no longer merges). Null when
// there is none.
const Node* blas_viewed_value(const Node* op) {
  for (const Node* x = op; x->op == Op::AsStrided && !has_value(*x->inputs[0]);) {
    x = x->inputs[0].get();
    if (x->numel() != op->numel()) continue;
    std::optional<StridedRead> r = fold_views(op, [&](const Node* y) { return y == x; });
    if (r && r->base == x && blas_readable(*op, *r)) return x;
  }
  return nullptr;
}

// Per library matmul, the stored nodes its step reads (partition decides).
using MatmulReads = std::unordered_map<const Node*, std::array<const Node*, 2>>;

// The node an inline matmul's operand computes, under its views and casts;
// null when it only reads memory or a constant.
const Node* computed_operand(const Node* n) {
  while (!has_value(*n) && (n->op == Op::AsStrided || n->op == Op::Cast)) n = n->inputs[0].get();
  if (has_value(*n)) return nullptr;
  switch (n->op) {
    case Op::Full:
    case Op::Arange:
    case Op::Linspace:
    case Op::Eye: return nullptr;
    default: return n;
  }
}

// Whether `hit` holds for a node of n's inline region: n and the nodes below
// it without values (and not in `stored`, when given), each visited once,
// plus the nodes at its edge. A region of more than `limit` nodes answers
// `too_large`.
template <class Hit>
bool inline_region_has(const Node* n, size_t limit, bool too_large, Hit hit, const NodeSet* stored = nullptr) {
  std::vector<const Node*> stack{n}, seen;
  while (!stack.empty()) {
    const Node* m = stack.back();
    stack.pop_back();
    if (hit(m)) return true;
    if (has_value(*m) || (stored && stored->count(m)) || std::find(seen.begin(), seen.end(), m) != seen.end())
      continue;
    if (seen.size() >= limit) return too_large;
    seen.push_back(m);
    for (const auto& in : m->inputs) stack.push_back(in.get());
  }
  return false;
}

// Whether computing n inline draws random numbers (a small region only).
bool draws_random(const Node* n) {
  return inline_region_has(n, 64, false, [](const Node* m) {
    return m->cls() == OpClass::Random && !has_value(*m);
  });
}

// Whether computing n inline reads `target`; a long walk answers yes.
bool reads_inline(const Node* n, const Node* target) {
  return inline_region_has(n, 256, true, [target](const Node* m) { return m == target; });
}

// How often a kernel that computes v's input inline evaluates it: once per
// iteration of v's loops out to the last dim along which v reads it at a
// varying position. The loops inside that one broadcast it (stride 0), and
// LLVM hoists the value out of them: `log(s)` read as `[n, 1]` by a row is
// computed once per row, read as `[1, n]` once per element.
int64_t inline_evaluations(const Node& v) {
  int64_t evals = 1, run = 1;
  for (int64_t d = 0; d < v.rank(); ++d) {
    run *= v.shape[d];
    if (v.shape[d] > 1 && v.attrs.ints[1 + d] != 0) evals = run;
  }
  return evals;
}

// A value with costly math that a broadcast reads at a varying position
// along an inner dim while it repeats along an outer one (`x * c.sigmoid()`
// for c of [n], softmax(0)'s `1 / sum` and log_softmax(0)'s `log(sum)`, a
// batch norm's `rsqrt(var + eps)`) would be computed once per element of the
// reader: it is stored first, computed once per element of its own (6x to
// 20x faster at [1024, 1024]; the kernel more costs a launch). Only where the
// reader evaluates it at least kBroadcastMathRatio times as often as it has
// elements and kBroadcastMathMinEvals times in all, and where no reduction
// is computed inline under it (a row's `log(sum)` belongs to the row kernel;
// a reduction stored later, as softmax(0)'s column sum, lets this rule store
// the value on the next lowering round: lower_all). The values are the same
// either way: the same scalar code, stored in its own dtype.
constexpr int64_t kBroadcastMathRatio = 8;
constexpr int64_t kBroadcastMathMinEvals = 1 << 13;
void store_broadcast_math(const Graph& g, NodeSet& mat, CutMap& cuts) {
  for (const Node* v : g.order) {
    if (v->op != Op::AsStrided) continue;
    const Node* m = v->inputs[0].get();
    while (m->op == Op::AsStrided && !has_value(*m) && !mat.count(m)) m = m->inputs[0].get();
    if (has_value(*m) || mat.count(m) || !(is_elementwise(m->op) || m->cls() == OpClass::Random)) continue;
    const int64_t evals = inline_evaluations(*v);
    if (evals < kBroadcastMathMinEvals || evals < kBroadcastMathRatio * m->numel()) continue;
    auto inline_node = [&](const Node* x) { return !has_value(*x) && !mat.count(x); };
    const bool reduces_inline = inline_region_has(
        m, 64, true,
        [&](const Node* x) { return inline_node(x) && (reduces(*x) || x->cls() == OpClass::Contraction); }, &mat);
    if (reduces_inline) continue;
    if (inline_region_has(m, 64, false, [&](const Node* x) { return inline_node(x) && costly_op(*x); }, &mat))
      store(mat, cuts, m, Cut::BroadcastMath);
  }
}

// Whether computing n inline at arbitrary positions (a gather's input)
// meets a reduction, matmul, cat or write before stored values, or more
// than 256 nodes. Each gathered element computes its input once, so a large
// elementwise region costs nothing extra inline: a 3 x 3 col2im (two folds
// of three masked shifted reads, ~130 nodes) was stored per fold and per
// tap at 64 (conv2d's input gradient at [4, 64, 56, 56]: 5.5 -> 2.0 ms).
bool needs_own_loops(const Node* n, const NodeSet& mat) {
  return inline_region_has(
      n, 256, true,
      [&mat](const Node* m) {
        const OpClass c = m->cls();
        return !has_value(*m) && !mat.count(m) &&
               (reduces(*m) || c == OpClass::Contraction || c == OpClass::Join || c == OpClass::Write ||
                c == OpClass::Scan || c == OpClass::Sort);
      },
      &mat);
}

// partition: nodes that must be stored whatever fusion decides.
void partition(const Graph& g, const std::vector<NodePtr>& roots, const ScheduleOptions& opt,
               NodeSet& mat, CutMap& cuts, MatmulReads& reads) {
  for (const NodePtr& r : roots)
    if (!has_value(*r)) store(mat, cuts, r.get(), Cut::Output);
  // The input of a gather or a scan, read where its own loops cannot be
  // (at indexed positions, inside the scan's serial loop), is computed
  // there unless that needs a reduction's loops: then it is stored.
  auto store_if_own_loops = [&](const Node* x) {
    if (!has_value(*x) && !mat.count(x) && needs_own_loops(x, mat)) store(mat, cuts, x, Cut::IndexedRead);
  };
  for (const Node* n : g.order) {
    switch (n->cls()) {
      case OpClass::Contraction:
        if (matmul_inline(*n)) {  // a reduction over K: fuses like one
          if (!opt.fusion) store(mat, cuts, n, Cut::FusionOff);
          // Each element of A is read N times, each of B M times. A computed
          // operand is stored first when rereading it costs more than a store:
          // read more than kInlineMatmulMaxReuse times, or random numbers
          // (Box-Muller per element) read more than once.
          const int64_t r = n->rank();
          const int64_t reuse[2] = {n->shape[r - 1], n->shape[r - 2]};
          for (int i = 0; i < 2; ++i) {
            const Node* op = reuse[i] > 1 ? computed_operand(n->inputs[i].get()) : nullptr;
            if (op && reuse[i] > kInlineMatmulMaxReuse)
              store(mat, cuts, op, Cut::MatmulReuse, "read more than 64 times per element");
            else if (op && draws_random(op))
              store(mat, cuts, op, Cut::MatmulReuse, "random numbers read more than once");
          }
          break;
        }
        store(mat, cuts, n, Cut::MatmulLibrary, "K > 16 and neither a thin nor a tiny product");
        for (size_t i = 0; i < 2; ++i) {
          const Node* op = n->inputs[i].get();
          const Node* src = blas_source(op, mat);
          if (!src) {  // BLAS reads memory: a computed operand, or views it cannot walk
            const Node* viewed = blas_viewed_value(op);
            src = viewed ? viewed : op;
            store(mat, cuts, src, Cut::MatmulOperand);
          }
          reads[n][i] = src;
        }
        break;
      case OpClass::Join: store(mat, cuts, n, Cut::Join); break;
      case OpClass::Sort: {
        store(mat, cuts, n, Cut::Sort);
        const Node* in = n->inputs[0].get();
        if (!has_value(*in) && !mat.count(in)) store(mat, cuts, in, Cut::SortInput);
        break;
      }
      case OpClass::Scan: {
        // its own kernel (a loop carries the running value); its input is
        // computed in that loop unless it needs loops of its own
        store(mat, cuts, n, Cut::Scan);
        store_if_own_loops(n->inputs[0].get());
        break;
      }
      case OpClass::Index: {
        // x is read where the index says: computed there, like a view's
        // input (each element of the gather reads x once), unless that
        // needs the loops of a reduction (or the walk is long): then stored
        store_if_own_loops(n->inputs[0].get());
        if (!opt.fusion) store(mat, cuts, n, Cut::FusionOff);
        break;
      }
      case OpClass::Write: {
        store(mat, cuts, n, Cut::Write);
        if (n->op != Op::Assign) {  // the scatters
          // A computed index is stored first: the scatter's loop is serial
          // and scalar (positions may repeat), its own kernel vectorizes
          // and splits over the cores (max_pool's gradient scattering to
          // the window maxima: 27 -> 6.7 ms at [16, 64, 56, 56], 3 x 3).
          const Node* index = n->inputs[1].get();
          while (index->op == Op::AsStrided && !has_value(*index)) index = index->inputs[0].get();
          if (!has_value(*index) && !mat.count(index) && index->op != Op::Full)
            store(mat, cuts, index, Cut::ScatterIndex);
          break;
        }
        // A source computed from the tensor it is written into (x[0] += 1)
        // is stored first, so that the scatter does not read the base and
        // the write can go into the base's buffer (executor.cpp): storing
        // the region costs far less than copying the whole base.
        const Node* base = n->inputs[0].get();
        const Node* src = n->inputs[1].get();
        if (!has_value(*src) && !mat.count(src) && (has_value(*base) || mat.count(base)) &&
            reads_inline(src, base))
          store(mat, cuts, src, Cut::WriteSource);
        break;
      }
      case OpClass::Source:
      case OpClass::Random:
      case OpClass::Unary:
      case OpClass::Binary:
      case OpClass::Ternary:
      case OpClass::View:
      case OpClass::Reduce:
      case OpClass::Transfer:
        if (!opt.fusion && n->op != Op::AsStrided) store(mat, cuts, n, Cut::FusionOff);
        else if (n->store) store(mat, cuts, n, Cut::ByDesign);
        break;
    }
  }
}

// Why n's step exists: what the step is, else why partition, fuse-rows or
// lowering stored n.
Boundary boundary_of(const Node* n, const CutMap& cuts) {
  if (n->op == Op::Matmul && !matmul_inline(*n)) return {Cut::MatmulLibrary, "K > 16 and neither a thin nor a tiny product"};
  if (n->op == Op::Cat) return {Cut::Join};
  if (n->cls() == OpClass::Write) return {Cut::Write};
  auto it = cuts.why.find(n);
  KILN_INTERNAL_ASSERT(it != cuts.why.end(), "no reason recorded for storing ", op_name(n->op));
  return it->second;
}

// The steps lowered for each stored node in earlier rounds of lower_all,
// reused while none of the nodes their kernels computed inline has been
// stored since (lowering reads the stored set only through that question:
// Lowerer::stored, Lowered::inlined). Each round stops at the first kernel
// that asks for a store; before, each round lowered every kernel again,
// quadratic in the stores lowering finds (40 layers of `y - y.mean(0) +
// y.sum(1)`: 81 kernels, 40 rounds).
struct LoweringMemo {
  std::unordered_map<const Node*, std::vector<Step>> steps;
  std::unordered_map<const Node*, std::vector<const Node*>> readers;  // inlined node -> stored nodes
  size_t logged = 0;  // the stores (CutMap::log) seen when stale entries were last dropped

  void keep(const Node* n, const std::vector<Step>& lowered, const std::vector<const Node*>& inlined) {
    steps[n] = lowered;
    for (const Node* x : inlined) readers[x].push_back(n);
  }
  // Drops the entries whose kernels compute inline a node stored since.
  void drop_stale(const CutMap& cuts) {
    for (; logged < cuts.log.size(); ++logged) {
      auto it = readers.find(cuts.log[logged]);
      if (it == readers.end()) continue;
      for (const Node* n : it->second) steps.erase(n);
      readers.erase(it);
    }
  }
};

// lower: one or more steps per stored node, in topological order.
bool lower_all(const Graph& g, NodeSet& mat, CutMap& cuts, const MatmulReads& reads, LoweringMemo& memo,
               std::vector<Step>& steps) {
  steps.clear();
  memo.drop_stale(cuts);
  try {
    for (const Node* n : g.order) {
      if (!mat.count(n)) continue;
      const Boundary why = boundary_of(n, cuts);
      if (auto it = memo.steps.find(n); it != memo.steps.end()) {
        for (const Step& st : it->second) {
          steps.push_back(st);
          steps.back().why = why;
        }
        continue;
      }
      ++counters().kernels_lowered;  // an attempt: lowering may ask for a store and stop
      const size_t first = steps.size();
      std::vector<const Node*> inlined;
      auto push = [&](Lowered l) {
        Step s;
        s.kind = StepKind::Kernel;
        s.outputs = {n};
        s.inputs = std::move(l.inputs);
        s.code = std::make_shared<KernelCode>(std::move(l.kernel));
        s.params = std::move(l.params);
        s.data = std::move(l.data);
        s.parallel_extent = l.parallel_extent;
        s.work = l.work;
        s.rows = l.rows;
        s.why = why;
        steps.push_back(std::move(s));
        inlined.insert(inlined.end(), l.inlined.begin(), l.inlined.end());
      };
      if (n->op == Op::Matmul && !matmul_inline(*n)) {
        Step s;
        s.kind = StepKind::Matmul;
        s.outputs = {n};
        const std::array<const Node*, 2>& src = reads.at(n);
        s.inputs = {src[0], src[1]};
        s.why = why;
        steps.push_back(std::move(s));
      } else if (n->op == Op::ArgSort) {
        Step s;
        s.kind = StepKind::Sort;
        s.outputs = {n};
        s.inputs = {n->inputs[0].get()};
        s.why = why;
        steps.push_back(std::move(s));
      } else if (n->op == Op::Cat) {
        if (cat_in_one_kernel(*n)) push(lower_node(*n, mat, -1));
        else for (size_t part = 0; part < n->inputs.size(); ++part) push(lower_node(*n, mat, static_cast<int>(part)));
      } else if (n->cls() == OpClass::Write) {  // Assign, the scatters: the base, then the write
        push(lower_node(*n, mat));
        steps.back().base_copy = true;
        push(lower_assign_scatter(*n, mat));
      } else {
        push(lower_node(*n, mat));
      }
      if (steps[first].kind == StepKind::Kernel)
        memo.keep(n, std::vector<Step>(steps.begin() + static_cast<std::ptrdiff_t>(first), steps.end()), inlined);
    }
  } catch (const NeedMaterialize& need) {
    KILN_INTERNAL_ASSERT(!mat.count(need.node), "lowering asked again to store ", op_name(need.node->op));
    store(mat, cuts, need.node, Cut::OtherRows, need.why);
    return false;
  }
  return true;
}

// merge: kernels with the same iteration space whose steps do not depend on
// each other become one multi-output kernel: the roots evaluated together
// (horizontal fusion), and stored siblings that one later step reads (two
// row sums whose reader reduces over other dims: stored apart, computed in
// one pass over the rows), and steps over one iteration space reading one
// large input. Only those are tried, so that a large graph does not pay a
// trial lowering for every pair of its kernels.
void merge_independent(std::vector<Step>& steps, const NodeSet& mat, const std::vector<NodePtr>& roots) {
  auto mergeable = [](const Step& s) {
    return s.kind == StepKind::Kernel && !s.outputs.empty() && s.outputs[0]->op != Op::Cat &&
           s.outputs[0]->cls() != OpClass::Write;
  };
  // scans merge only with scans of the same input along the same dim
  // (cummax's values and positions)
  auto same_scan = [](const Node* a, const Node* b) {
    const bool sa = a->cls() == OpClass::Scan, sb = b->cls() == OpClass::Scan;
    return sa == sb && (!sa || (a->inputs[0] == b->inputs[0] && a->attrs.ints == b->attrs.ints));
  };
  NodeSet eligible;  // roots, and siblings one step reads
  if (roots.size() >= 2)
    for (const NodePtr& r : roots) eligible.insert(r.get());
  {
    std::unordered_map<const Node*, const Step*> producer;
    for (const Step& st : steps)
      if (mergeable(st))
        for (const Node* out : st.outputs) producer[out] = &st;
    for (const Step& st : steps) {
      std::vector<const Node*> sibs;
      for (const Node* in : st.inputs) {
        auto it = producer.find(in);
        if (it != producer.end() && std::find(sibs.begin(), sibs.end(), in) == sibs.end()) sibs.push_back(in);
      }
      if (sibs.size() >= 2) eligible.insert(sibs.begin(), sibs.end());
    }
  }
  // Steps over one iteration space that read one stored input at least as
  // large as what they write: merged, they read it once (the levels of
  // sibling column sums over x: var's sums of d and d*d).
  std::unordered_map<const Node*, size_t> made_by;  // stored node -> the step writing it
  for (size_t i = 0; i < steps.size(); ++i)
    for (const Node* out : steps[i].outputs) made_by[out] = i;
  std::unordered_map<const Node*, NodeSet> shares;  // step output -> outputs sharing an input
  const NodeSet paired = eligible;
  {
    std::unordered_map<const Node*, std::vector<const Node*>> readers;
    for (const Step& st : steps)
      if (mergeable(st) && st.outputs.size() == 1 && !st.rows)
        for (const Node* in : st.inputs)
          if (in->shape.numel() >= st.outputs[0]->shape.numel()) readers[in].push_back(st.outputs[0]);
    for (auto& [in, outs] : readers)
      for (size_t a = 0; a < outs.size(); ++a)
        for (size_t b = a + 1; b < outs.size(); ++b)
          if (outs[a]->shape == outs[b]->shape && outs[a] != outs[b]) {
            shares[outs[a]].insert(outs[b]);
            shares[outs[b]].insert(outs[a]);
            eligible.insert(outs[a]);
            eligible.insert(outs[b]);
          }
  }
  if (eligible.size() < 2) return;
  // Which stored nodes each step's output depends on (through stored inputs).
  std::unordered_map<const Node*, NodeSet> deps;
  for (const Step& st : steps)
    for (const Node* out : st.outputs) {
      NodeSet& d = deps[out];
      for (const Node* in : st.inputs) {
        d.insert(in);
        auto it = deps.find(in);
        if (it != deps.end()) d.insert(it->second.begin(), it->second.end());
      }
    }
  // The merged step runs where its last member ran, so every member's inputs
  // exist by then, unless a step between reads the first member: then where
  // the first ran, if the last one's inputs exist by then, or else at the
  // last with the steps between that read the first moved after it.
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!mergeable(steps[i]) || !eligible.count(steps[i].outputs[0])) continue;
    size_t pos = i;
    for (size_t j = i + 1; j < steps.size(); ++j) {
      if (!mergeable(steps[j]) || !eligible.count(steps[j].outputs[0])) continue;
      // steps[j] may itself be a merged step: all its outputs join.
      const std::vector<const Node*>& group = steps[pos].outputs;
      const std::vector<const Node*>& cands = steps[j].outputs;
      const bool rows_i = steps[pos].rows, rows_j = steps[j].rows;
      if (rows_i != rows_j || !same_scan(group[0], cands[0])) continue;
      if (!rows_i && cands[0]->shape != group[0]->shape) continue;
      bool related = paired.count(cands[0]) && paired.count(group[0]);
      for (const Node* g : group)
        if (!related && shares.count(g)) related = shares.at(g).count(cands[0]) > 0;
      if (!related) continue;
      bool independent = true;
      for (const Node* cand : cands)
        for (const Node* g : group)
          if (deps[cand].count(g) || deps[g].count(cand)) independent = false;
      if (!independent) continue;
      // Where the merged step can run: at j when no step between reads the
      // group, else at pos when the candidate's inputs exist by then (a
      // sibling column sum's first level, whose later levels come between),
      // else at j with the steps between that read the group, directly or
      // not, moved after it (the candidate reads a value stored between:
      // var's shift of narrow columns, beside the mean's levels).
      bool late = true, early = true;
      for (size_t k = pos + 1; k < j && late; ++k)
        for (const Node* in : steps[k].inputs)
          for (const Node* g : group)
            if (in == g) late = false;
      for (const Node* in : steps[j].inputs) {
        auto it = made_by.find(in);
        if (it != made_by.end() && it->second >= pos) early = false;
      }
      // else: the steps between reading the group, directly or not (an
      // Assign's copy and its scatter, which the executor runs as a pair,
      // together), move after j, and the candidate must not read them
      std::vector<char> moved;
      if (!late && !early) {
        moved.assign(j - pos, 0);  // moved[k - pos]
        NodeSet reach(group.begin(), group.end());
        for (size_t k = pos + 1; k < j; ++k) {
          const size_t last = steps[k].base_copy && k + 1 < j ? k + 1 : k;
          bool reads = false;
          for (size_t u = k; u <= last; ++u)
            for (const Node* in : steps[u].inputs) reads = reads || reach.count(in) > 0;
          for (size_t u = k; u <= last && reads; ++u) {
            moved[u - pos] = 1;
            reach.insert(steps[u].outputs.begin(), steps[u].outputs.end());
          }
          k = last;
        }
        bool cand_reads_moved = false;
        for (const Node* in : steps[j].inputs) cand_reads_moved = cand_reads_moved || reach.count(in) > 0;
        if (cand_reads_moved) continue;
      }
      std::vector<const Node*> trial = group;
      trial.insert(trial.end(), cands.begin(), cands.end());
      try {
        Lowered l = lower_group(trial, mat);
        Step merged;
        merged.kind = StepKind::Kernel;
        merged.outputs = trial;
        merged.inputs = std::move(l.inputs);
        merged.code = std::make_shared<KernelCode>(std::move(l.kernel));
        merged.params = std::move(l.params);
        merged.data = std::move(l.data);
        merged.parallel_extent = l.parallel_extent;
        merged.work = l.work;
        merged.rows = l.rows;
        merged.why = {Cut::Merged, ""};
        if (late) {
          steps[j] = std::move(merged);
          steps[pos].outputs.clear();  // emptied: removed below
          pos = j;
        } else if (early) {
          steps[pos] = std::move(merged);
          steps[j].outputs.clear();
        } else {
          std::vector<Step> before, after;
          for (size_t k = pos + 1; k < j; ++k) (moved[k - pos] ? after : before).push_back(std::move(steps[k]));
          const size_t first = pos;
          for (Step& st : before) steps[pos++] = std::move(st);
          steps[pos] = std::move(merged);
          size_t at = pos + 1;
          for (Step& st : after) steps[at++] = std::move(st);
          KILN_INTERNAL_ASSERT(at == j, "merge: steps moved past the candidate do not fill its range");
          steps[j].outputs.clear();  // the candidate's old place: removed below
          steps[j].inputs.clear();
          for (size_t k = first; k <= j; ++k)
            for (const Node* out : steps[k].outputs) made_by[out] = k;
          j = pos;
        }
        for (const Node* out : trial) made_by[out] = pos;
      } catch (const NeedMaterialize&) {
        // not the same rows: stays a kernel of its own
      }
    }
  }
  steps.erase(std::remove_if(steps.begin(), steps.end(), [](const Step& s) { return s.outputs.empty(); }),
              steps.end());
}

// ---- the schedule cache ----
// A graph's signature: every leaf's and node's structural hash, each node's
// inputs by position, and the roots by position. Equal signatures mean equal
// schedules (params included: they derive from shapes and attributes), but
// for the attributes that are data, not structure (random nodes' seeds and
// Philox offsets, floating-point fill values): each evaluation reads them
// from its own graph (DataParam).
struct Signature {
  std::vector<uint64_t> words;
  uint64_t hash = 0;
};

Signature sign(const Graph& g, const std::vector<NodePtr>& roots, bool fusion,
               PtrMap<uint64_t>& index) {
  Signature sig;
  sig.words.reserve(2 + g.leaves.size() + g.order.size() * 4 + roots.size());
  sig.words.push_back(fusion);
  sig.words.push_back(g.leaves.size());
  for (const Node* n : g.leaves) {
    index.insert(n, index.size());
    sig.words.push_back(n->hash);
  }
  for (const Node* n : g.order) {
    index.insert(n, index.size());
    sig.words.push_back(n->hash);
    for (const auto& in : n->inputs) sig.words.push_back(*index.find(in.get()));
  }
  for (const NodePtr& r : roots) sig.words.push_back(*index.find(r.get()));
  uint64_t h = 0xCBF29CE484222325ull;
  for (uint64_t w : sig.words) h = (h ^ (w * 0x9E3779B97F4A7C15ull)) * 0x100000001B3ull;
  sig.hash = h;
  return sig;
}

struct DataTemplate {
  int32_t slot;
  DataAttr source;
  uint64_t node;  // the node's number in the signature
};

struct StepTemplate {
  StepKind kind;
  std::vector<uint64_t> outputs, inputs;
  std::shared_ptr<KernelCode> code;
  std::vector<int64_t> params;
  std::vector<DataTemplate> data;
  int64_t parallel_extent;
  int64_t work;
  Boundary why;
  bool base_copy;
  bool rows;
};

struct CacheEntry {
  std::vector<uint64_t> words;
  std::vector<StepTemplate> steps;
  std::list<uint64_t>::iterator recent;  // its place in ScheduleCache::recency
};

// Least recently used goes first when the cache is full: a program that
// has scheduled more than kScheduleCacheEntries structures keeps the ones
// its loop runs. (Erasing the map's first entry, as before, erased about the
// newest one in libstdc++'s order: past that size a training step was
// scheduled again on every iteration.)
struct ScheduleCache {
  std::mutex mu;
  std::unordered_map<uint64_t, CacheEntry> entries;
  std::list<uint64_t> recency;  // signature hashes, most recently used first
  std::atomic<int64_t> hits{0};
};
ScheduleCache& schedule_cache() {
  static ScheduleCache c;
  return c;
}
constexpr size_t kScheduleCacheEntries = 1024;

}  // namespace

int64_t schedule_cache_hits() { return schedule_cache().hits.load(); }

void clear_schedule_cache() {
  ScheduleCache& c = schedule_cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.entries.clear();
  c.recency.clear();
}

Schedule schedule(const std::vector<NodePtr>& roots, const ScheduleOptions& options) {
  Schedule s;
  Graph g = collect(roots);
  ++counters().schedule_requests;
  thread_local PtrMap<uint64_t> index;
  index.reset(g.order.size() + g.leaves.size());
  Signature sig = sign(g, roots, options.fusion, index);
  // sign numbers the leaves, then the nodes in order.
  thread_local std::vector<const Node*> by_index;
  by_index.assign(g.leaves.begin(), g.leaves.end());
  by_index.insert(by_index.end(), g.order.begin(), g.order.end());
  ScheduleCache& cache = schedule_cache();
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.entries.find(sig.hash);
    if (it != cache.entries.end() && it->second.words == sig.words) {
      cache.recency.splice(cache.recency.begin(), cache.recency, it->second.recent);
      for (const StepTemplate& t : it->second.steps) {
        Step st;
        st.kind = t.kind;
        for (uint64_t i : t.outputs) st.outputs.push_back(by_index[i]);
        for (uint64_t i : t.inputs) st.inputs.push_back(by_index[i]);
        st.code = t.code;
        st.params = t.params;
        for (const DataTemplate& d : t.data) {
          const Node* n = by_index[d.node];
          st.params[d.slot] = data_attr_value(*n, d.source);
          st.data.push_back({d.slot, d.source, n});
        }
        st.parallel_extent = t.parallel_extent;
        st.work = t.work;
        st.why = t.why;
        st.base_copy = t.base_copy;
        st.rows = t.rows;
        s.steps.push_back(std::move(st));
      }
      ++cache.hits;
      if (jit_log_enabled())
        jit_log("schedule cache hit: " + std::to_string(g.order.size()) + " nodes, " +
                std::to_string(s.steps.size()) + " steps");
      return s;
    }
  }
  add_consumers(g);
  NodeSet materialized;
  CutMap cuts;
  MatmulReads reads;
  partition(g, roots, options, materialized, cuts, reads);
  LoweringMemo memo;
  RowFusion fuse_rows;
  do {
    if (options.fusion) fuse_rows.run(g, materialized, cuts), store_broadcast_math(g, materialized, cuts);
  } while (!lower_all(g, materialized, cuts, reads, memo, s.steps));
  if (options.fusion) merge_independent(s.steps, materialized, roots);
  ++counters().schedules;
  if (jit_log_enabled())
    jit_log("schedule cache miss (no graph of this structure, sharing and evaluated inputs was scheduled before): " +
            std::to_string(g.order.size()) + " nodes, " + std::to_string(s.steps.size()) + " steps");
  CacheEntry entry;
  entry.words = std::move(sig.words);
  for (const Step& st : s.steps) {
    StepTemplate t{st.kind, {}, {}, st.code, st.params, {}, st.parallel_extent, st.work, st.why, st.base_copy, st.rows};
    for (const DataParam& d : st.data) {
      const uint64_t* at = index.find(d.node);
      KILN_INTERNAL_ASSERT(at != nullptr, "a node lowered into a kernel is not in its graph");
      t.data.push_back({d.slot, d.source, *at});
    }
    for (const Node* n : st.outputs) t.outputs.push_back(*index.find(n));
    for (const Node* n : st.inputs) t.inputs.push_back(*index.find(n));
    entry.steps.push_back(std::move(t));
  }
  std::lock_guard<std::mutex> lock(cache.mu);
  if (auto old = cache.entries.find(sig.hash); old != cache.entries.end()) {  // a hash collision: replaced
    cache.recency.erase(old->second.recent);
    cache.entries.erase(old);
  }
  if (cache.entries.size() >= kScheduleCacheEntries) {
    cache.entries.erase(cache.recency.back());
    cache.recency.pop_back();
  }
  cache.recency.push_front(sig.hash);
  entry.recent = cache.recency.begin();
  cache.entries[sig.hash] = std::move(entry);
  return s;
}

}  // namespace kiln::jit
