// The graph view (nodes numbered in topological order) and the plan: the
// scheduler's steps, each with the nodes it computes, the bytes it moves, its
// arithmetic and the source lines it fused.
#include <algorithm>
#include <climits>

#include "jit/inspect.h"
#include "jit/lower.h"
#include "kiln/jit.h"

namespace kiln::jit {

std::string Loc::str() const {
  if (empty()) return "";
  const size_t slash = file.find_last_of('/');
  return (slash == std::string::npos ? file : file.substr(slash + 1)) + ":" + std::to_string(line);
}

Loc GraphView::loc(const Node* n) const {
  if (loaded) {
    auto it = loaded_locs.find(n);
    return it == loaded_locs.end() ? Loc{} : it->second;
  }
  return Loc::of(*n);
}

GraphView view_graph(std::vector<NodePtr> roots) {
  GraphView g;
  g.roots = std::move(roots);
  // Iterative post-order: a graph may be hundreds of nodes deep.
  std::vector<std::pair<const Node*, size_t>> stack;
  for (const NodePtr& r : g.roots) {
    if (g.ids.count(r.get())) continue;
    stack.push_back({r.get(), 0});
    g.ids.emplace(r.get(), -1);
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (!has_value(*n) && next < n->inputs.size()) {
        const Node* in = n->inputs[next++].get();
        if (g.ids.emplace(in, -1).second) stack.push_back({in, 0});
        continue;
      }
      g.ids[n] = static_cast<int64_t>(g.nodes.size());
      g.nodes.push_back(n);
      stack.pop_back();
    }
  }
  return g;
}

namespace {

// Saturating arithmetic: a loaded graph may be huge (tools/kiln-dump).
int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

// Scalar operations a node costs where it is computed.
int64_t node_ops(const Node& n) {
  switch (n.cls()) {
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Ternary:
    case OpClass::Random:
    case OpClass::Index:
    case OpClass::Scan: return n.numel();
    case OpClass::Sort: {  // comparisons: about n log2 k per row of n
      int64_t lg = 1;
      while (lg < 62 && (int64_t{1} << lg) < n.attrs.ints[2]) ++lg;
      return sat_mul(n.inputs[0]->numel(), lg);
    }
    case OpClass::Reduce: return n.inputs[0]->numel();
    case OpClass::Contraction: return sat_mul(2 * n.numel(), n.inputs[0]->shape.back());  // multiply-add per K
    case OpClass::Source:
    case OpClass::View:
    case OpClass::Write:
    case OpClass::Join:
    case OpClass::Transfer: return 0;
  }
  return 0;
}

int64_t nbytes(const Node& n) { return sat_mul(n.numel(), static_cast<int64_t>(element_size(n.dtype))); }

// The nodes a step computes: its outputs, and from `starts` down to what
// it reads from memory; in discovery order.
std::vector<const Node*> walk_step(const Step& st, const std::vector<const Node*>& starts) {
  NodeSet stop(st.inputs.begin(), st.inputs.end()), seen(st.outputs.begin(), st.outputs.end());
  std::vector<const Node*> out(st.outputs.begin(), st.outputs.end());
  std::vector<const Node*> stack(starts.begin(), starts.end());
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (stop.count(n) || has_value(*n) || !seen.insert(n).second) continue;
    out.push_back(n);
    for (const auto& in : n->inputs) stack.push_back(in.get());
  }
  return out;
}

}  // namespace

size_t step_part(const Schedule& s, size_t step) {
  const Node* node = s.steps[step].outputs[0];
  size_t part = 0;
  while (part < step && s.steps[step - part - 1].outputs[0] == node) ++part;
  return part;
}

int64_t step_bytes_written(const Schedule& s, size_t step) {
  const Step& st = s.steps[step];
  const Node& first = *st.outputs[0];
  // stored in the node's dtype, whatever the source's
  auto bytes = [](const Node& n, DType dt) { return sat_mul(n.numel(), static_cast<int64_t>(element_size(dt))); };
  if (first.op == Op::Cat && !cat_in_one_kernel(first)) return bytes(*first.inputs[step_part(s, step)], first.dtype);
  if (first.op == Op::Assign && !st.base_copy) return bytes(*first.inputs[1], first.dtype);
  if ((first.op == Op::ScatterAdd || first.op == Op::Scatter) && !st.base_copy) return bytes(*first.inputs[2], first.dtype);
  int64_t n = 0;
  for (const Node* o : st.outputs) n = sat_add(n, bytes(*o, o->dtype));
  return n;
}

Plan describe_plan(const GraphView& g, Schedule s) {
  Plan p;
  p.schedule = std::move(s);
  for (size_t i = 0; i < p.schedule.steps.size(); ++i) {
    const Step& st = p.schedule.steps[i];
    PlanEntry e;
    e.label = "k" + std::to_string(i);
    e.name = step_name(st);
    const Node* first = st.outputs[0];
    std::vector<const Node*> starts;
    if ((first->op == Op::Cat && !cat_in_one_kernel(*first)) || first->cls() == OpClass::Write) {
      // one step of several over the node: its part's source
      const size_t part = step_part(p.schedule, i);
      starts = {first->inputs[std::min(part, first->inputs.size() - 1)].get()};
    } else {
      for (const Node* o : st.outputs)
        for (const auto& in : o->inputs) starts.push_back(in.get());
    }
    e.fused = walk_step(st, starts);
    std::sort(e.fused.begin(), e.fused.end(), [&](const Node* a, const Node* b) { return g.id(a) < g.id(b); });
    for (const Node* in : st.inputs) e.bytes_read = sat_add(e.bytes_read, nbytes(*in));
    e.bytes_written = step_bytes_written(p.schedule, i);
    for (const Node* n : e.fused) {
      // A Cat or Assign node itself moves data and computes nothing.
      e.ops = sat_add(e.ops, node_ops(*n));
      Loc l = g.loc(n);
      if (l.empty()) continue;
      if (std::none_of(e.locs.begin(), e.locs.end(),
                       [&](const Loc& x) { return x.line == l.line && x.file == l.file; }))
        e.locs.push_back(std::move(l));
    }
    std::sort(e.locs.begin(), e.locs.end(),
              [](const Loc& a, const Loc& b) { return a.file != b.file ? a.file < b.file : a.line < b.line; });
    p.entries.push_back(std::move(e));
  }
  return p;
}

std::string node_lines(const std::vector<const Node*>& nodes) {
  std::vector<std::string> seen;
  std::string out;
  for (const Node* n : nodes) {
    const std::string l = Loc::of(*n).str();
    if (l.empty() || std::find(seen.begin(), seen.end(), l) != seen.end()) continue;
    out += (seen.empty() ? "" : ", ") + l;
    seen.push_back(l);
  }
  return out;
}

std::string step_lines(const Step& st) {
  std::vector<const Node*> starts;
  for (const Node* o : st.outputs)
    for (const auto& in : o->inputs) starts.push_back(in.get());
  return node_lines(walk_step(st, starts));
}

Plan make_plan(const GraphView& g) {
  ScheduleOptions opt;
  opt.fusion = fusion_enabled();
  std::vector<NodePtr> pending;
  for (const NodePtr& r : g.roots)
    if (!has_value(*r)) pending.push_back(r);
  return describe_plan(g, pending.empty() ? Schedule{} : schedule(pending, opt));
}

}  // namespace kiln::jit
