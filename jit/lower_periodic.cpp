// Elementwise kernels over narrow rows that read a row operand broadcast
// along the rows: `p - c` of [N, 3] points and a [3] centre, `(x - mean) /
// std` of [N, 10] features and their [10] statistics, a bias over rows of
// 56 or 100 (jit/lowerer.h: kPeriodicRowMax, kPeriodicLocal).
//
// The broadcast keeps the row's dims from merging with the dims before
// them, so the kernel's innermost loop would run over one row: a masked
// vector a row of 3 or of 10, a vector and a remainder a row of 56 (or,
// up to 6 elements, the row unrolled into its positions: LLVM's
// interleaved groups, whose shuffles cost a third of the time of rows of
// 3). Here every other read is flat over the whole tensor, and the row
// operand's values repeat with the row's period, so the kernel is one flat
// loop in spans of L elements, L a multiple of the row's width and of a
// vector's 16 lanes: before its loops each call fills a local with the
// operand's row repeated L / width times, and a span's position t reads
// the local at t, contiguous like every other read. The loops see no
// row: full vectors, no shuffles, and the width a runtime param like any
// size (rows of 3 and of 100 run the same kernel).
//
//   for each row position w:  v = c[w];  for r < L / width: local[r * width + w] = v
//   for g in spans (parallel):  for t < min(L, total - g * L):  out[g * L + t] = p[g * L + t] - local[t]
#include <numeric>

#include "jit/lowerer.h"
#include "kiln/error.h"

namespace kiln::jit::lowering {

bool Lowerer::periodic_view(const Node* n, const Periodic& per) const {
  const int64_t lead = broadcast_lead(n);
  if (lead < 0) return false;
  const Node* x = n->inputs[0].get();
  for (size_t j = 0; j < per.run.size(); ++j) {
    const int64_t d = per.run[j];
    const bool broadcast = d < lead || x->shape[d - lead] == 1;
    if (broadcast != (j < per.outer)) return false;
  }
  return true;
}

bool Lowerer::periodic_rows(const Node* out, const std::vector<const Node*>& readers, Periodic& per) const {
  per = {};
  if (out->numel() == 0) return false;
  for (int64_t d = 0; d < out->rank(); ++d)
    if (out->shape[d] > 1) per.run.push_back(d);
  if (per.run.size() < 2) return false;
  std::set<std::pair<const Node*, int64_t>> seen;
  int64_t width = 1;
  // the row: the run's last dims, from one on, while they fit
  for (size_t k = per.run.size(); k-- > 1;) {
    width *= out->shape[per.run[k]];
    if (width > kPeriodicRowMax || std::lcm(width, kPeriodicAlign) > kPeriodicLocal) return false;
    per.outer = k;
    per.width = width;
    per.nodes.clear();
    bool flat = true;
    for (const Node* r : readers) {
      seen.clear();
      if (!reads_flat(r, per.run, seen, &per)) {
        flat = false;
        break;
      }
    }
    if (flat)  // (none: the dims merge without a local)
      return !per.nodes.empty() && static_cast<int64_t>(per.nodes.size()) <= kPeriodicOperands;
  }
  return false;
}

std::vector<Stmt>* Lowerer::open_periodic(const Node* out, const Periodic& per, Idx& idx, std::vector<Stmt>& top) {
  const int64_t rank = out->rank(), numel = out->numel(), width = per.width;
  // L: whole vectors of whole rows, about kPeriodicSpan elements (fewer
  // for a tensor smaller than that: one span)
  const int64_t lcm = std::lcm(width, kPeriodicAlign);
  const int64_t span = std::min(lcm * std::max<int64_t>(1, kPeriodicSpan / lcm), numel);
  KILN_INTERNAL_ASSERT(span <= kPeriodicLocal, "a periodic span of ", span, " elements outgrows its local");
  const int64_t spans = (numel + span - 1) / span;
  const ValueId L = param(out, kPeriod, 0, span);
  const ValueId repeats = param(out, kPeriod, 1, span / width);
  const ValueId count = param(out, kPeriod, 2, spans);
  const ValueId total = param(out, kPeriod, 3, numel);

  // The locals: each periodic node's row (its value with the outer dims at
  // 0), stored at each of its L / width repeats (slots kLocalSlot - j
  // until place_periodic_locals).
  std::vector<Stmt>* cur = &top;
  Idx row(static_cast<size_t>(rank), iconst(0));
  ValueId pos = iconst(0), w = iconst(1);
  for (size_t j = per.outer; j < per.run.size(); ++j) {
    const int64_t d = per.run[j];
    const ValueId s = size_of(out, d);
    row[d] = open_loop(cur, s, out->shape[d], false);
    pos = iadd(imul(pos, s), row[d]);
    w = imul(w, s);
  }
  std::vector<ValueId> rows;
  for (const Node* p : per.nodes) rows.push_back(cast(value(p, row), p->dtype));
  const ValueId r = open_loop(cur, repeats, span / width, false);
  for (size_t j = 0; j < rows.size(); ++j) store(cur, kLocalSlot - static_cast<int32_t>(j), iadd(imul(r, w), pos), rows[j]);

  // The spans: position q = g * L + t of the whole tensor, the row
  // operands read at t.
  cur = &top;
  const ValueId g = open_loop(cur, count, spans, true);
  const ValueId base = imul(g, L);
  const ValueId t = open_loop(cur, op2(VOp::Min, DType::Int64, L, isub(total, base)), span, false);
  std::vector<ValueId> sizes(static_cast<size_t>(rank), -1);
  for (int64_t d : per.run) sizes[static_cast<size_t>(d)] = size_of(out, d);
  idx.assign(static_cast<size_t>(rank), iconst(0));
  split_run(iadd(base, t), per.run, sizes, idx);
  for (size_t j = 0; j < per.nodes.size(); ++j) {
    Value v{VOp::Load, per.nodes[j]->dtype};
    v.a = kLocalSlot - static_cast<int32_t>(j);
    v.args[0] = t;
    memo_[{per.nodes[j], idx}] = add(v);
  }
  return cur;
}

void Lowerer::place_periodic_locals(const Periodic& per, std::vector<Stmt>& top) {
  std::vector<BufferArg> locals;
  for (const Node* p : per.nodes) locals.push_back({p->dtype, false, 1, kPeriodicLocal});
  const std::vector<int32_t> slots = add_locals(locals);
  auto place = [&](auto&& self, std::vector<Stmt>& body) -> void {
    for (Stmt& st : body) {
      if (st.kind == StmtKind::Store && st.buffer <= kLocalSlot)
        st.buffer = slots[static_cast<size_t>(kLocalSlot - st.buffer)];
      self(self, st.body);
    }
  };
  place(place, top);
}

}  // namespace kiln::jit::lowering
