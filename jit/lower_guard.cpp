// Guarded loads: `where(inside, x[clamp(e, lo, hi)], fill)`, constant
// padding's read (core/padding.cpp: a gather at clamped positions, masked),
// becomes one Load of x at e itself, read only where `inside` holds
// (kernel_ir.h: Load's guard), when `inside` bounds e within [lo, hi]. The
// clamp kept every position in range; under the guard it changes nothing,
// and without it the index is affine in the loop variables: a convolution's
// column copy and a padded pooling window load consecutive elements under a
// mask (vector masked loads), not a gather of clamped positions.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <unordered_map>

#include "jit/lowerer.h"

namespace kiln::jit::lowering {

namespace {

// An integer constant (IntConst, or a Const of an integer dtype).
bool int_value(const Kernel& k, ValueId id, int64_t& out) {
  const Value& v = k.values[id];
  if (v.op == VOp::IntConst || (v.op == VOp::Const && (v.dtype == DType::Int64 || v.dtype == DType::Int32))) {
    out = v.i;
    return true;
  }
  return false;
}

// The bounds on index values that the conjuncts of `cond` (logical_and is
// where(a, b, false)) state against integer constants.
void conjunct_bounds(const Kernel& k, ValueId cond, std::unordered_map<ValueId, GuardBounds>& out, int depth = 0) {
  const Value& v = k.values[cond];
  if (depth > 16) return;
  if (v.op == VOp::Where) {
    const Value& z = k.values[v.args[2]];
    if (z.op == VOp::Const && z.dtype == DType::Bool && z.i == 0) {
      conjunct_bounds(k, v.args[0], out, depth + 1);
      conjunct_bounds(k, v.args[1], out, depth + 1);
    }
    return;
  }
  int64_t c;
  if (v.args[0] < 0 || v.args[1] < 0 || k.values[v.args[0]].dtype != DType::Int64 || !int_value(k, v.args[1], c))
    return;
  GuardBounds& b = out[v.args[0]];
  switch (v.op) {
    case VOp::Ge: b.lo = std::max(b.lo, c); break;
    case VOp::Gt: if (c < std::numeric_limits<int64_t>::max()) b.lo = std::max(b.lo, c + 1); break;
    case VOp::Le: b.hi = std::min(b.hi, c); break;
    case VOp::Lt: if (c > std::numeric_limits<int64_t>::min()) b.hi = std::min(b.hi, c - 1); break;
    default: break;
  }
}

}  // namespace

ValueId Lowerer::unclamped(ValueId id, const std::unordered_map<ValueId, GuardBounds>& bounds,
                           std::unordered_map<ValueId, ValueId>& memo, int depth) {
  if (auto it = memo.find(id); it != memo.end()) return it->second;
  const Value v = val(id);
  ValueId r = id;
  if (v.dtype == DType::Int64 && depth < 32) {
    // min(max(e, lo), hi) or max(min(e, hi), lo), e within [lo, hi] under the guard
    int64_t lo, hi;
    const bool clamp = (v.op == VOp::Min || v.op == VOp::Max) && val(v.args[0]).op ==
                           (v.op == VOp::Min ? VOp::Max : VOp::Min);
    if (clamp && int_value(k_, v.args[1], v.op == VOp::Min ? hi : lo) &&
        int_value(k_, val(v.args[0]).args[1], v.op == VOp::Min ? lo : hi)) {
      const ValueId e = val(v.args[0]).args[0];
      if (auto b = bounds.find(e); b != bounds.end() && b->second.lo >= lo && b->second.hi <= hi) r = e;
    } else if (v.op == VOp::Add || v.op == VOp::Sub || v.op == VOp::Mul) {
      const ValueId a = unclamped(v.args[0], bounds, memo, depth + 1);
      const ValueId b = unclamped(v.args[1], bounds, memo, depth + 1);
      if (a != v.args[0] || b != v.args[1]) r = op2(v.op, DType::Int64, a, b);
    }
  }
  memo.emplace(id, r);
  return r;
}

ValueId Lowerer::where(DType dt, ValueId cond, ValueId a, ValueId b) {
  const Value x = val(a);  // a copy: unclamped() adds values (the vector may move)
  if (x.op == VOp::Load && x.args[1] < 0 && x.dtype == dt && val(b).dtype == dt) {
    std::unordered_map<ValueId, GuardBounds> bounds;
    conjunct_bounds(k_, cond, bounds);
    if (!bounds.empty()) {
      std::unordered_map<ValueId, ValueId> memo;
      const ValueId at = unclamped(x.args[0], bounds, memo, 0);
      if (at != x.args[0]) {
        Value g = x;
        g.args[0] = at;
        g.args[1] = cond;
        g.args[2] = b;
        return add(g);
      }
    }
  }
  return op3(VOp::Where, dt, cond, a, b);
}

}  // namespace kiln::jit::lowering
