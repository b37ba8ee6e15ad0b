// Guarded loads: `where(inside, x[clamp(e, lo, hi)], fill)`, constant
// padding's read (core/padding.cpp: a gather at clamped positions, masked),
// becomes one Load of x at e itself, read only where `inside` holds
// (kernel_ir.h: Load's guard), when `inside` bounds e within [lo, hi]
// (integer constants, or the same runtime value plus constants). The
// clamp kept every position in range; under the guard it changes nothing,
// and without it the index is affine in the loop variables: a convolution's
// column copy and a padded pooling window load consecutive elements under a
// mask (vector masked loads), not a gather of clamped positions.
#include <cstdint>
#include <unordered_map>

#include "jit/lowerer.h"

namespace kiln::jit::lowering {

namespace {

// An index value as base + off: base a value id, or -1 for the integer
// constant off. A shape scalar (a padded dim's n - 1: a runtime param) is a
// base of its own, so a guard and a clamp that name the same one compare
// at compile time whatever its value.
struct Affine {
  ValueId base = -1;
  int64_t off = 0;
};

// v as an Affine: integer constants, and base + / - constant; anything
// else is a base.
Affine affine(const Kernel& k, ValueId id, int depth = 0) {
  const Value& v = k.values[id];
  if (v.op == VOp::IntConst || (v.op == VOp::Const && (v.dtype == DType::Int64 || v.dtype == DType::Int32)))
    return {-1, v.i};
  if ((v.op == VOp::Add || v.op == VOp::Sub) && v.dtype == DType::Int64 && depth < 8) {
    const Affine a = affine(k, v.args[0], depth + 1), b = affine(k, v.args[1], depth + 1);
    const int64_t lim = int64_t{1} << 40;  // offsets stay far from overflow
    if (b.base < 0 && b.off > -lim && b.off < lim && a.off > -lim && a.off < lim)
      return {a.base, v.op == VOp::Add ? a.off + b.off : a.off - b.off};
    if (v.op == VOp::Add && a.base < 0 && a.off > -lim && a.off < lim && b.off > -lim && b.off < lim)
      return {b.base, a.off + b.off};
  }
  return {id, 0};
}

// The bounds that the conjuncts of `cond` (logical_and is where(a, b,
// false)) state on index values: e >= lo or e <= hi for lo, hi Affine.
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
  if (v.op != VOp::Ge && v.op != VOp::Gt && v.op != VOp::Le && v.op != VOp::Lt) return;
  if (v.args[0] < 0 || v.args[1] < 0 || k.values[v.args[0]].dtype != DType::Int64 ||
      k.values[v.args[1]].dtype != DType::Int64)
    return;
  Affine c = affine(k, v.args[1]);
  if (c.off <= -(int64_t{1} << 62) || c.off >= (int64_t{1} << 62)) return;  // no overflow below
  if (v.op == VOp::Gt) ++c.off;  // e > c: e >= c + 1
  if (v.op == VOp::Lt) --c.off;  // e < c: e <= c - 1
  GuardBounds& b = out[v.args[0]];
  (v.op == VOp::Ge || v.op == VOp::Gt ? b.lo : b.hi).push_back({c.base, c.off});
}

// Whether the guard keeps e >= lo (is_lo) or e <= hi: a bound of the
// guard's on the same base at least as tight.
bool within(const GuardBounds& b, const Affine& x, bool is_lo) {
  for (const GuardBounds::Bound& g : is_lo ? b.lo : b.hi)
    if (g.base == x.base && (is_lo ? g.off >= x.off : g.off <= x.off)) return true;
  return false;
}

}  // namespace

ValueId Lowerer::unclamped(ValueId id, const std::unordered_map<ValueId, GuardBounds>& bounds,
                           std::unordered_map<ValueId, ValueId>& memo, int depth) {
  if (auto it = memo.find(id); it != memo.end()) return it->second;
  const Value v = val(id);
  ValueId r = id;
  if (v.dtype == DType::Int64 && depth < 32) {
    // min(max(e, lo), hi) or max(min(e, hi), lo), e within [lo, hi] under the guard
    const bool clamp = (v.op == VOp::Min || v.op == VOp::Max) && val(v.args[0]).op ==
                           (v.op == VOp::Min ? VOp::Max : VOp::Min);
    if (clamp) {
      const Value& inner = val(v.args[0]);
      const ValueId e = inner.args[0];
      const Affine outer_bound = affine(k_, v.args[1]), inner_bound = affine(k_, inner.args[1]);
      const bool is_min = v.op == VOp::Min;  // outer bound hi, inner lo
      if (auto b = bounds.find(e); b != bounds.end() && within(b->second, outer_bound, !is_min) &&
                                   within(b->second, inner_bound, is_min))
        r = e;
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
  } else if (is_floating_point(dt) && x.op != VOp::Load) {
    // where(inside, f(x[clamp(e)], ...), fill), f float arithmetic (a
    // col2im's tap: a gradient times a weight, read at clamped positions):
    // the loads under f read at e under the same guard (their fill is
    // discarded by where), so the tap loads consecutive
    // elements under a mask instead of gathering clamped positions
    std::unordered_map<ValueId, GuardBounds> bounds;
    conjunct_bounds(k_, cond, bounds);
    if (!bounds.empty()) {
      std::unordered_map<ValueId, ValueId> unclamp_memo, memo;
      const ValueId guarded = guard_loads(a, cond, bounds, unclamp_memo, memo, 0);
      if (guarded != a) return op3(VOp::Where, dt, cond, guarded, b);
    }
  }
  return op3(VOp::Where, dt, cond, a, b);
}

// id with its loads at clamped positions read under `cond` at the
// unclamped ones, through float math, which cannot trap whatever the
// loads' fill (no integer op is rebuilt); id itself when none is. The
// kernel IR lists the elementwise math ops from Add to Sign.
ValueId Lowerer::guard_loads(ValueId id, ValueId cond, const std::unordered_map<ValueId, GuardBounds>& bounds,
                             std::unordered_map<ValueId, ValueId>& unclamp_memo,
                             std::unordered_map<ValueId, ValueId>& memo, int depth) {
  if (auto it = memo.find(id); it != memo.end()) return it->second;
  const Value v = val(id);  // a copy: add() may move the values
  ValueId r = id;
  if (v.op == VOp::Load && v.args[1] < 0) {
    const ValueId at = unclamped(v.args[0], bounds, unclamp_memo, 0);
    if (at != v.args[0]) {
      // fill 1, not 0: where discards it, and a zero fill let x86's
      // instruction selection fold the plain load of a full vector and its
      // select (codegen/llvm/pipeline.cpp, UnmaskFullVectors) into a
      // zero-masking load, as slow as any masked load on Zen 5 (pad(g * 2)
      // of [2048, 1800]: 2.8 against 0.74 ms for pad(g))
      Value one{VOp::Const, v.dtype};
      one.f = 1.0;
      one.i = 1;
      Value g = v;
      g.args[0] = at;
      g.args[1] = cond;
      g.args[2] = add(one);
      r = add(g);
    }
  } else if (depth < 8 && is_floating_point(v.dtype) &&
             ((v.op >= VOp::Add && v.op <= VOp::Sign) || v.op == VOp::Where || v.op == VOp::Cast)) {
    Value w = v;
    bool changed = false;
    for (ValueId& arg : w.args)
      if (arg >= 0) {
        const ValueId g = guard_loads(arg, cond, bounds, unclamp_memo, memo, depth + 1);
        changed = changed || g != arg;
        arg = g;
      }
    if (changed) r = add(w);
  }
  memo.emplace(id, r);
  return r;
}

}  // namespace kiln::jit::lowering
