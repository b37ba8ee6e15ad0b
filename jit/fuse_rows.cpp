// fuse-rows: which reductions run inside their reader's kernel, and which
// values computed in several loop nests are stored once (schedule_graph.h,
// RowFusion; README "The rule for shared nodes").
#include <algorithm>
#include <iterator>
#include <queue>

#include "core/tensor_impl.h"
#include "jit/schedule_graph.h"
#include "jit/stats.h"

namespace kiln::jit {

namespace {

// What computing n inline costs per element, in cheap operations: each node
// of its region once (n and the nodes below it neither stored nor with
// values), an add or a compare 1, costly math (costly_op) 8, random numbers
// 16, a gather 2, views and constants 0, and each read of memory 1. A node
// with fewer elements than n (a row's statistic, a reduction) counts as a
// read: computed once per row, or hoisted out of the loops that broadcast it
// (what a reduction costs is its own loop's). Stops past `limit` (or 256
// nodes) and answers limit + 1.
int64_t recompute_cost(const Node* n, const NodeSet& mat, int64_t limit) {
  std::vector<const Node*> stack{n}, seen;
  int64_t cost = 0;
  while (!stack.empty() && cost <= limit) {
    const Node* m = stack.back();
    stack.pop_back();
    if (std::find(seen.begin(), seen.end(), m) != seen.end()) continue;
    if (seen.size() >= 256) return limit + 1;
    seen.push_back(m);
    if (has_value(*m) || mat.count(m) || (m != n && (reduces(*m) || m->numel() < n->numel()))) {
      cost += 1;
      continue;
    }
    switch (m->cls()) {
      case OpClass::Source:
      case OpClass::View:
      case OpClass::Transfer: break;
      case OpClass::Random: cost += 16; break;
      case OpClass::Index: cost += 2; break;
      case OpClass::Unary:
      case OpClass::Binary:
      case OpClass::Ternary: cost += costly_op(*m) ? 8 : 1; break;
      case OpClass::Reduce:
      case OpClass::Contraction:
      case OpClass::Write:
      case OpClass::Join:
      case OpClass::Scan:
      case OpClass::Sort: return limit + 1;  // never inline here
    }
    for (const auto& in : m->inputs) stack.push_back(in.get());
  }
  return std::min(cost, limit + 1);
}

// A value computed in k loop nests (kernels, or reductions' loops inside one
// kernel) is computed k - 1 times more than once: it is stored once when
// that extra work exceeds this many cheap operations per element. Low
// enough to cut the growth of chained layers, high enough that a row kernel
// keeps recomputing what is cheaper than a round trip through memory
// (softmax's exp(x - max) in its sum loop and its output loop, a layer
// norm's output read by a softmax's three loops).
constexpr int64_t kSharedRecomputeLimit = 32;

// The reduction whose rows the kernel of stored node `owner` runs over, when
// the kernel is that reduction or views / one-input ops of it (constants
// aside): lowering's find_reductions meets it first, so it leads. Null
// otherwise (several inputs, or a matmul, which nests in other loops).
const Node* leading_reduction(const Node* owner, const NodeSet& mat) {
  for (const Node* m = owner;;) {
    if (reduces(*m)) return m->op == Op::Matmul ? nullptr : m;
    const Node* next = nullptr;
    for (const auto& in : m->inputs) {
      if (in->cls() == OpClass::Source && in->inputs.empty()) continue;  // a constant or a leaf
      if (next) return nullptr;
      next = in.get();
    }
    if (!next || has_value(*next) || mat.count(next)) return nullptr;
    m = next;
  }
}

// Whether lowering the kernel of `owner` would find reduction n, computed
// inline there, over other dims or another shape than the kernel's rows
// and ask to store it (lower_reduce.cpp, Lowerer::reduction: the rows are
// the leading reduction's). Deciding it here, in the pass that also stores
// shared reductions, stores a chain's reductions layer by layer in one pass:
// found by lowering, each was one more round of fuse_rows and lowering (40
// layers of `y - y.mean(0) + y.sum(1)`, then `.sum()`: 40 rounds).
bool reduces_other_rows(const Node& n, const Node* owner, const NodeSet& mat) {
  if (!reduces(n) || n.op == Op::Matmul) return false;
  const Node* lead = leading_reduction(owner, mat);
  return lead && lead != &n && reduction_domain(n) != reduction_domain(*lead);
}

void merge_into(std::vector<const Node*>& into, const std::vector<const Node*>& from) {
  if (from.empty()) return;
  std::vector<const Node*> merged;
  merged.reserve(into.size() + from.size());
  std::set_union(into.begin(), into.end(), from.begin(), from.end(), std::back_inserter(merged));
  into.swap(merged);
}

}  // namespace

// fuse-rows: a reduction runs inside its reader's kernel when exactly one
// kernel reads it; otherwise it is stored once. The same pass stores a value
// whose recomputation costs more than storing it (kSharedRecomputeLimit):
// without that, a chain of layers whose outputs each feed two reductions
// (softmax of softmax, x - x.mean(0) + x.sum(1) repeated) recomputes every
// earlier layer in every later loop, work and code growing with the square
// of the depth or faster, and no two layers' kernels alike. One pass from
// the outputs down: a node's owners (the stored nodes whose kernels compute
// it) and sites (the loop nests that compute it: stored nodes, reductions
// computed inline, and each part of a cat, a kernel of its own: an RNN's
// gradient through unbind, 64 parts sharing the backward chain, compiled
// 64 kernels growing with the steps in 32 s, now 8 in 0.07 s) are final
// once its consumers are decided.
// visit: n's owners and sites from its consumers' (final by then), and the
// stores they call for; whether n's state changed.
bool RowFusion::visit(const Graph& g, const Node* n, NodeSet& mat, CutMap& cuts) {
  ++counters().fuse_rows_visits;
  State next;
  if (!mat.count(n)) {
    Nodes& o = next.owners;
    Nodes& s = next.sites;
    auto c = g.consumers.find(n);
    if (c != g.consumers.end())
      for (const Node* consumer : c->second) {
        const State& cs = state_.at(consumer);
        merge_into(o, cs.owners);
        // a cat's parts are loop nests of their own: a part is its own site
        if (consumer->op == Op::Cat) merge_into(s, Nodes{n});
        else if (mat.count(consumer) || reduces(*consumer)) merge_into(s, Nodes{consumer});
        else merge_into(s, cs.sites);
      }
    auto in_join = [&] {  // a reduction cannot be computed inside a Cat part or a write's scatter
      return std::any_of(o.begin(), o.end(), [](const Node* owner) {
        return owner->op == Op::Cat || owner->cls() == OpClass::Write;
      });
    };
    // A value smaller than a loop nest that reads it is broadcast there:
    // evaluated once per row (hoisted) or stored by store_broadcast_math.
    auto per_element = [&] {
      return std::all_of(s.begin(), s.end(), [n](const Node* site) {
        int64_t extent = site->numel();
        if (reduces(*site))
          for (const auto& in : site->inputs) extent = std::max(extent, in->numel());
        return n->numel() >= extent;
      });
    };
    const int64_t extra = static_cast<int64_t>(s.size()) - 1;
    if (reduces(*n) && o.size() > 1 && !matmul_recomputed(*n)) store(mat, cuts, n, Cut::SharedReduction);
    else if (reduces(*n) && in_join()) store(mat, cuts, n, Cut::ReductionInJoin);
    else if (o.size() == 1 && reduces_other_rows(*n, o.front(), mat))
      store(mat, cuts, n, Cut::OtherRows, "a reduction over other dims than the kernel's rows");
    else if (extra > 0 && (is_elementwise(n->op) || n->cls() == OpClass::Random) && per_element() &&
             recompute_cost(n, mat, kSharedRecomputeLimit / extra) * extra > kSharedRecomputeLimit)
      store(mat, cuts, n, Cut::SharedValue);
  }
  if (mat.count(n)) next = State{Nodes{n}, {}};
  State& old = state_[n];
  if (old == next) return false;
  old = std::move(next);
  return true;
}

void RowFusion::run(const Graph& g, NodeSet& mat, CutMap& cuts) {
  if (position_.empty()) {  // the first round: every node, from the outputs down
    for (size_t i = 0; i < g.order.size(); ++i) position_[g.order[i]] = i;
    for (auto it = g.order.rbegin(); it != g.order.rend(); ++it) visit(g, *it, mat, cuts);
    logged_ = cuts.log.size();
    return;
  }
  // Later rounds: the nodes stored since, then below each node whose state
  // changed, consumers before inputs (the highest position first). A node
  // whose consumers' states did not change keeps its own.
  std::priority_queue<size_t> todo;
  std::vector<bool> queued(g.order.size(), false);
  auto enqueue = [&](const Node* n) {
    auto at = position_.find(n);
    if (at == position_.end() || queued[at->second]) return;
    queued[at->second] = true;
    todo.push(at->second);
  };
  for (; logged_ < cuts.log.size(); ++logged_) enqueue(cuts.log[logged_]);
  while (!todo.empty()) {
    const Node* n = g.order[todo.top()];
    todo.pop();
    if (visit(g, n, mat, cuts))
      for (const auto& in : n->inputs) enqueue(in.get());
  }
  logged_ = cuts.log.size();
}

}  // namespace kiln::jit
