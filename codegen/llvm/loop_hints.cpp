// Which LLVM loop hints (interleave count, vector width, a folded tail)
// an innermost loop of a kernel gets, from what its body computes, and
// whether code generation hoists a kernel's loop invariants. Each choice
// below was measured against LLVM's own cost model; the comments say where
// and by how much.
#include <algorithm>

#include "codegen/llvm/emitter.h"

namespace kiln::codegen::llvmcg {

using jit::Combiner;
using jit::Stmt;
using jit::StmtKind;
using jit::ValueId;
using jit::VOp;

namespace {

// Ops lowered to inline polynomials (float_math.cpp) or, for random
// numbers, to Philox rounds and a transform (philox.cpp).
bool is_vector_math(const jit::Value& v) { return jit::is_math_function(v.op); }

// The float32 lane functions computed in float arithmetic (float_math.cpp);
// the others widen to double.
bool in_float_arithmetic(VOp op) {
  return op == VOp::Exp || op == VOp::Erf || op == VOp::Log || op == VOp::Sigmoid || op == VOp::Tanh;
}

// Whether v is computed by a call into libm (elementwise.cpp: float64 math).
bool calls_libm(const jit::Value& v) {
  return v.op != VOp::Philox && is_vector_math(v) && v.dtype == DType::Float64;
}

// Whether v is computed by a lane function (vector_variants.cpp: float32
// math, the Philox generator).
bool calls_lane_fn(const jit::Value& v) {
  return v.op == VOp::Philox || (is_vector_math(v) && computes_in_float(v.dtype));
}

// Whether a loop body only stores into locals (a periodic row's repeats,
// jit/lower_periodic.cpp: a few hundred elements once a call, no math).
bool fills_local(const jit::Kernel& k, const std::vector<Stmt>& body) {
  return !body.empty() && std::all_of(body.begin(), body.end(), [&](const Stmt& c) {
    return c.kind == StmtKind::Store && k.buffers[static_cast<size_t>(c.buffer)].local();
  });
}

// The walks over what an innermost loop's body computes.
class LoopBody {
 public:
  explicit LoopBody(const jit::Kernel& k) : k_(k) {}

  // Visits the values an innermost loop's statements store or accumulate
  // and every value they are computed from that changes from one iteration
  // to the next (`varying`, varying_in(s)), each once, until visit returns
  // true (then true). What does not change (a row's statistics, the log of a row's sum
  // in log_softmax's last loop) is hoisted out of the loop and costs the
  // loop nothing. A loop holding a loop visits nothing, and so does one that
  // accumulates unless `accumulations`.
  template <class Visit>
  bool any_value(const Stmt& s, const std::vector<bool>& varying, bool accumulations, Visit visit) const {
    std::vector<ValueId> stack;
    for (const Stmt& c : s.body) {
      if (c.kind == StmtKind::Loop || (c.kind == StmtKind::AccUpdate && !accumulations)) return false;
      if (c.value >= 0) stack.push_back(c.value);
    }
    std::vector<bool> seen(k_.values.size());
    while (!stack.empty()) {
      const ValueId id = stack.back();
      stack.pop_back();
      if (id < 0 || seen[id] || !varying[id]) continue;
      seen[id] = true;
      const jit::Value& v = k_.values[id];
      if (visit(v)) return true;
      for (ValueId a : v.args) stack.push_back(a);
    }
    return false;
  }

  // Which of the kernel's values change between iterations of innermost
  // loop s: its index, a read of a buffer s stores to or of an accumulator
  // s updates, and what is computed from them (a value's arguments come
  // before it; one that does not is taken as changing).
  std::vector<bool> varying_in(const Stmt& s) const {
    std::vector<bool> stored(k_.buffers.size()), updated(k_.accs.size()), r(k_.values.size());
    for (const Stmt& c : s.body) {
      if (c.kind == StmtKind::Store) stored[c.buffer] = true;
      if (c.kind == StmtKind::AccUpdate) updated[c.acc] = true;
    }
    for (size_t id = 0; id < k_.values.size(); ++id) {
      const jit::Value& v = k_.values[id];
      bool x = (v.op == VOp::LoopIndex && v.a == s.loop) || (v.op == VOp::Load && stored[v.a]) ||
               ((v.op == VOp::AccRead || v.op == VOp::AccIndex) && updated[v.a]);
      for (ValueId a : v.args) x = x || (a >= 0 && (static_cast<size_t>(a) >= id || r[a]));
      r[id] = x;
    }
    return r;
  }

  // What an innermost loop that accumulates nothing computes, found in one
  // walk of its values (a width or a folded tail of its own in a loop that
  // sums would change the order of the sum from the unfused kernel's, which
  // the determinism tests pin: such a loop reports neither).
  struct MapBody {
    bool calls_libm = false;  // a float64 libm call (calls_libm)
    bool philox = false;      // random numbers
    bool lane_math = false;   // a lane function (calls_lane_fn)
    bool math_in_double = false;  // one other than float32 exp, erf, log, sigmoid (float_math.cpp)
  };
  MapBody map_body(const Stmt& s, const std::vector<bool>& varying) const {
    MapBody r;
    any_value(s, varying, false, [&](const jit::Value& v) {
      r.calls_libm = r.calls_libm || calls_libm(v);
      r.philox = r.philox || v.op == VOp::Philox;
      const bool lane = calls_lane_fn(v);
      r.lane_math = r.lane_math || lane;
      r.math_in_double = r.math_in_double || (lane && v.op != VOp::Philox && !in_float_arithmetic(v.op));
      return r.calls_libm && r.philox && r.math_in_double;  // lane_math too, then
    });
    return r;
  }

  // Whether the values an innermost loop stores or accumulates call a
  // float32 math lane function, the Philox generator aside.
  bool evaluates_float_math(const Stmt& s, const std::vector<bool>& varying) const {
    return any_value(s, varying, true,
                     [](const jit::Value& v) { return calls_lane_fn(v) && v.op != VOp::Philox; });
  }

  // Whether an innermost loop only loads and stores float32 buffers, computes
  // no lane function, and accumulates at most a float32 max or min.
  bool moves_float32_only(const Stmt& s, const std::vector<bool>& varying) const {
    for (const Stmt& c : s.body) {
      if (c.kind == StmtKind::Loop) return false;
      if (c.kind == StmtKind::Store && k_.buffers[c.buffer].dtype != DType::Float32) return false;
      if (c.kind == StmtKind::AccUpdate) {
        const jit::Accumulator& a = k_.accs[c.acc];
        if ((a.combiner != Combiner::Max && a.combiner != Combiner::Min) || a.dtype != DType::Float32) return false;
      }
    }
    return !any_value(s, varying, true, [&](const jit::Value& v) {
      return calls_lane_fn(v) || calls_libm(v) || (v.op == VOp::Load && k_.buffers[v.a].dtype != DType::Float32);
    });
  }

  // Whether innermost loop s reads at a constant step > 1 along its index
  // (i * c in an index, c a constant step of a view: kConstantStepMax).
  bool reads_strided(const Stmt& s, const std::vector<bool>& varying) const {
    return any_value(s, varying, true, [&](const jit::Value& v) {
      if (v.op != VOp::Mul) return false;
      const jit::Value& a = k_.values[v.args[0]];
      const jit::Value& b = k_.values[v.args[1]];
      return (a.op == VOp::LoopIndex && a.a == s.loop && b.op == VOp::IntConst && b.i > 1) ||
             (b.op == VOp::LoopIndex && b.a == s.loop && a.op == VOp::IntConst && a.i > 1);
    });
  }

  // The largest constant step along innermost loop s of its stores (above
  // 1: a narrow cat's row of positions, jit/lower.cpp: lower_cat_whole).
  int store_step(const Stmt& s) const {
    int64_t m = 0;
    for (const Stmt& c : s.body)
      if (c.kind == StmtKind::Store) m = std::max(m, k_.step_along(c.index, s.loop));
    return static_cast<int>(m);
  }

  // Whether innermost loop s reads under a guard that changes along it
  // (kernel_ir.h: a guarded load; padding's columns).
  bool reads_guarded(const Stmt& s, const std::vector<bool>& varying) const {
    return any_value(s, varying, false, [&](const jit::Value& v) {
      return v.op == VOp::Load && v.args[1] >= 0 && varying[v.args[1]];
    });
  }

  // Whether innermost loop s accumulates, and only maxima and minima
  // (exact in any order: integers, or floats as integer keys,
  // lower_kernel.cpp).
  bool accumulates_extremes_only(const Stmt& s) const {
    bool any = false;
    for (const Stmt& c : s.body) {
      if (c.kind == StmtKind::Loop) return false;
      if (c.kind != StmtKind::AccUpdate) continue;
      const Combiner cb = k_.accs[c.acc].combiner;
      if (cb != Combiner::Max && cb != Combiner::Min) return false;
      any = true;
    }
    return any;
  }

  // Whether innermost loop s reads one buffer at kTapLoads positions or
  // more an iteration (a window's taps over its stored padded input: a
  // depthwise convolution's fold, a stencil).
  static constexpr int kTapLoads = 4;
  bool reads_taps(const Stmt& s, const std::vector<bool>& varying) const {
    std::vector<int> loads(k_.buffers.size());
    return any_value(s, varying, false,
                     [&](const jit::Value& v) { return v.op == VOp::Load && ++loads[v.a] >= kTapLoads; });
  }

  // A loop whose extent is min(c, ...) for a small constant c (a tile).
  bool short_loop(const Stmt& s) const {
    const jit::Value& x = k_.values[s.extent];
    if (x.op != VOp::Min) return false;
    for (int j = 0; j < 2; ++j) {
      const jit::Value& a = k_.values[x.args[j]];
      if (a.op == VOp::IntConst && a.i <= 64) return true;
    }
    return false;
  }

  // A span of a periodic kernel's flat loop (jit/lower_periodic.cpp):
  // min(L, rest) for a param L, whole vectors but in the tensor's last
  // span. Its exp loop keeps LLVM's scalar remainder (run in the last span
  // only): folded, every vector tested its page and ran 1.3x slower (1
  // thread, (p - c).exp() of 12 Mi elements, 4.3 against 3.0-3.5 ms); split,
  // a second copy of the polynomial cost 4-9 ms of compile (exp over rows
  // of 8: 22 against 14 ms, a tanh GELU 22 against 16) for the same time.
  bool span_loop(const Stmt& s) const {
    const jit::Value& x = k_.values[s.extent];
    if (x.op != VOp::Min || k_.values[x.args[0]].op != VOp::Param) return false;
    const jit::Value& rest = k_.values[x.args[1]];  // total - g * L
    return rest.op == VOp::Sub && k_.values[rest.args[1]].op == VOp::Mul &&
           k_.values[k_.values[rest.args[1]].args[0]].op == VOp::LoopIndex;
  }

  // An innermost loop that accumulates narrower floats into a wider float
  // accumulator (a float32 / 16-bit sum, kept in float64).
  bool widening_reduction(const Stmt& s) const {
    bool widening = false;
    for (const Stmt& c : s.body) {
      if (c.kind == StmtKind::Loop) return false;
      if (c.kind != StmtKind::AccUpdate) continue;
      // the IR widens before it accumulates: look through the cast
      const jit::Value* v = &k_.values[c.value];
      if (v->op == VOp::Cast) v = &k_.values[v->args[0]];
      const DType acc = k_.accs[c.acc].dtype;
      if (is_float_dtype(acc) && is_float_dtype(v->dtype) && element_size(v->dtype) < element_size(acc))
        widening = true;
    }
    return widening;
  }

  // An innermost loop whose accumulations are all reductions a vector may
  // reassociate (no scan's running value, no row of accumulators).
  bool reduces_only(const Stmt& s) const {
    for (const Stmt& c : s.body) {
      if (c.kind == StmtKind::Loop) return false;
      if (c.kind == StmtKind::AccUpdate && (k_.accs[c.acc].running || k_.accs[c.acc].lanes >= 0)) return false;
    }
    return true;
  }

 private:
  const jit::Kernel& k_;
};

}  // namespace

LoopHints loop_hints(const jit::Kernel& k, const Stmt& s, bool wide_vectors) {
  // A loop filling a local stays scalar: vectorized, LLVM versions it for
  // a unit stride (a copy of the loop to compile for a few hundred stores).
  if (fills_local(k, s.body)) return {1, 1, false, 0};
  const LoopBody body(k);
  // A float32 sum into a float64 accumulator: LLVM's default (4 vectors
  // of 8 doubles per iteration, 128 bytes, loads folded into the
  // conversions) ran at half the memory bandwidth here (Zen 5; measured:
  // 4.2 ms against 2.2 ms for 4096 x 4096 row sums); 2 vectors do not.
  // Their 8 lanes are said up front where 512-bit vectors run at full
  // clock: LLVM's cost model for an Intel host (rocketlake) picked 2 x 4,
  // as fast there (4096 x 4096 row sums, three alternating runs, within
  // the VM's noise), and one lane count on every such host adds a row's
  // elements in one order: the same sum bit for bit on AMD and Intel.
  // A float32 sum of lane function values (softmax's exp(x - max)) where
  // 512-bit vectors run at full clock: 16 lanes, one copy of the
  // polynomial a step, not the 2 x 8 lanes LLVM picks (two copies in
  // 256-bit registers): 1.1-1.5x faster on Sapphire Rapids (softmax
  // [64, 4096] 0.81x the time, x.exp().sum(1) 0.67x), a twentieth fewer
  // instructions to compile. Its 16 partial sums add up in the same order
  // as the 2 x 8 (the wide vector's halves first).
  // A loop of at most a tile's extent (min(32, rest)): one vector per
  // iteration, else the vector loop is longer than the whole loop and
  // never runs.
  // A loop evaluating a float32 lane function (vector_variants.cpp) runs
  // one vector per iteration: the vectorizer sees a call, not the
  // polynomial behind it, and would interleave up to four copies of it
  // (pow: 4 x 4 lanes of double arithmetic, a third more compile time
  // than the 8 lanes of one copy it picked for the inline body, for no
  // more throughput: the polynomial's own operations keep the core busy).
  // A loop that only moves and combines float32 values (x * 2, a row's
  // max, softmax's normalizing multiply) where 512-bit vectors run at
  // full clock: 2 x 16 lanes a step, not the 4 x 8 LLVM picks, the same
  // 32 elements an iteration in half the instructions to select and to
  // run (callgrind: x * 2 8.60 -> 7.93 M, x.amax(1) 15.2 -> 13.4 M,
  // softmax 37.2 -> 34.8 M; 1 thread, same process, alternating: amax
  // [256, 1024] 0.94x the time, softmax [256, 100] 0.83x, [64, 4096]
  // 0.97x, x * 2 the same). A max or a min is the same in any lane order;
  // a loop that sums never counts as a move.
  // The walks below see only what changes from one iteration to the next
  // (varying_in, found once per innermost loop).
  const bool innermost =
      std::none_of(s.body.begin(), s.body.end(), [](const Stmt& c) { return c.kind == StmtKind::Loop; });
  const std::vector<bool> varying = innermost ? body.varying_in(s) : std::vector<bool>();
  const auto computes = body.map_body(s, varying);
  const bool widening = body.widening_reduction(s);
  const bool wide_lane_sum = widening && wide_vectors && body.evaluates_float_math(s, varying);
  const bool wide_move = wide_vectors && !body.short_loop(s) && body.moves_float32_only(s, varying);
  // A loop reading at a constant step > 1 (a pooling window's taps, x[:, ::2])
  // loads its interleaved groups as several wide vectors already: one
  // copy of the body a step, or a row as short as a CNN's (16) never
  // reaches the vector loop.
  const bool strided = innermost && body.reads_strided(s, varying);
  // A loop reading under a guard that changes along it (padding's
  // columns) loads masked vectors already: one copy a step (below, its
  // tail folded too). LLVM's own interleave (2) ran a convolution's
  // columns 8% faster but compiled a padded 3 x 3 pool in 25 ms, not 17.
  const bool guarded = innermost && body.reads_guarded(s, varying);
  // A row kernel's loop that moves values and accumulates nothing
  // (softmax's multiply, log_softmax's and x - x.mean(1, true)'s subtract:
  // not the parallel loop, whose rows are the merged dims) runs one 16-lane
  // vector a step: its scalar remainder is then under 16 elements, not 32
  // (rows of 56: 8, not 24). 1 thread, processes alternating, medians of
  // 11 rounds: log_softmax(3) of [32, 64, 56, 56] 0.80x the time,
  // softmax(3) 0.90x, rows of 24 0.70x / 0.78x, rows of 1024-4096
  // 0.94-0.99x; the same compile time (callgrind: softmax 64.2 -> 63.9 M
  // instructions). A remainder of one masked vector (a split, as the
  // sums') ran rows of 56 a few percent faster still but cost 6-7 M
  // instructions of compile a loop (softmax 70.2 M); one vector a step in
  // the parallel loop (x * 2) gained nothing.
  const bool extremes = innermost && body.accumulates_extremes_only(s);
  const bool row_move = wide_move && !s.parallel && !extremes;
  const int interleave = wide_lane_sum || strided || guarded || row_move ? 1
                         : widening || wide_move                     ? 2
                         : (body.short_loop(s) || computes.lane_math) ? 1
                                                                      : 0;
  // A loop calling libm (float64 math) runs the calls one lane at a time,
  // each spilling the vector registers live across it: 4 lanes ran as fast
  // as the 8 LLVM picks and cost a third less compile time (measured on
  // randn when it still called libm's log and cos: 64 x 4096, 6.9 ms
  // either way; callgrind 182 M -> 126 M instructions).
  // A loop drawing random numbers runs 8 lanes, the width LLVM picks for
  // it on AVX-512 (the counter is 64-bit, Box-Muller computes in double):
  // said up front, the vectorizer costs no other width (a tenth of randn's
  // compile was its planning, most of it weighing every fma at every width).
  // A loop whose only math is float32 exp, erf, log or sigmoid (the lane functions
  // computed in float arithmetic, float_math.cpp; the others widen to
  // double) runs 16 lanes where 512-bit vectors run at full clock, not the 8 LLVM
  // picks: the chain relu(a*b + c) * exp(-d) 0.77x the time at [64, 1024],
  // 0.81x at [1024, 4096], x.exp() 0.74x (1 thread, same process,
  // alternating; before its tail was masked, below; GELU's erf about 0.9x,
  // and 0.9x the compile time). Functions evaluated in
  // double gain nothing from it (gelu's tanh 0.98x, erf in double 0.97x,
  // x.sigmoid() * x.log() 1.06x) and cost up to a fifth more to compile.
  const bool wide_exp = wide_vectors && computes.lane_math && !computes.math_in_double &&
                        !computes.calls_libm && !computes.philox && !body.short_loop(s);
  // A loop storing a row of more than 8 positions (a narrow cat's 3 x 3,
  // 3 x 4 or 4 x 4 matrices, jit/lower.cpp: lower_cat_whole) runs 8 lanes
  // up to 12 positions, 4 above: LLVM's cost of a group of 16 lanes of 9
  // or more, or 8 lanes of 16, is above the scatters' and it scatters
  // (1 thread, 2^20 rows, 8 / 4 / LLVM's 16 lanes: nine positions of sin /
  // cos products 3.6-3.8 / 6.7 / 3.9 ms, compiled in 24-26 / 30 / 49 ms;
  // [N, 3] rows stacked 2.5 / 4.1 / 3.7 ms; 3 x 4 of sin / cos and
  // constants 3.1-5.1 / 4.2-4.3; 4 x 4 of loads and constants 17 / 4.0 /
  // 19 ms).
  const int64_t row_step = innermost ? body.store_step(s) : 0;
  const int width = row_step > 8                             ? (row_step <= 12 ? 8 : 4)
                    : wide_lane_sum || wide_move || wide_exp ? 16
                    : computes.calls_libm                    ? 4
                    : computes.philox                        ? 8
                    : widening && wide_vectors               ? 8
                                                             : 0;
  // A loop drawing random numbers runs its last, partial vector with
  // masked loads and stores instead of a scalar remainder loop: the
  // remainder was a second copy of the ten Philox rounds (now a call of
  // the generator's twin) and of Box-Muller, a sixth of the kernel's
  // compile time and all of it for a row narrower than the vector
  // (callgrind: rand 121 M -> 96 M, randn 146 M -> 102 M instructions;
  // rows of 5 through a slice: randn 3.7x, rand 3.2x faster; long rows as
  // fast). Only for loops that accumulate
  // nothing: a folded tail would change the order of a sum from the
  // unfused kernel's. Where the target cannot mask an access, LLVM falls
  // back to the scalar remainder.
  // The 16-lane exp loop does so too: without it a row of 8-31 elements
  // ran mostly through calls of exp's scalar twin (x[:, :12].exp() 2.8x
  // slower than at 8 lanes); folded, a row of 12 is 0.52x and of 5 0.36x
  // the 8-lane time, long rows 0.85-0.87x (the masks cost 5-18% of the
  // unmasked 16 lanes), and the chain compiles in 17% fewer instructions
  // (20.5 -> 17.0 M: no scalar remainder).
  // So does a loop reading under a guard at unit steps: its loads are
  // masked anyway, and a padded row of 56-58 elements ran 26 of them in a
  // scalar remainder that tests the guard per element (1 thread, [32, 64,
  // 56, 56]: pad(x, 1) 3.6 -> 1.6 ms, max_pool2d(x, 3, 1, 1) 26 -> 11 ms,
  // avg_pool2d 25 -> 15.7 ms; a convolution's columns of rows of 32, which
  // had no remainder, 2.1 -> 2.4 ms). Not at a constant step: its masked
  // interleaved groups ran 2.5x slower than the plain ones and a remainder
  // (max_pool2d(x, 3, 2, 1) 6.5 -> 17 ms, avg_pool2d 5.4 -> 12 ms).
  // So does a loop that accumulates only maxima and minima (the same in
  // any order, and the masked lanes hold the identity): a row of 56
  // ran 32 elements in vectors and 24 in a scalar remainder (1 thread,
  // x.amax(3) of [32, 64, 56, 56] 4.5 -> 0.95 ms, rows of 16 9.2 -> 1.8 ms,
  // rows of 3136 0.59 / 0.64 ms, within the noise).
  // So does a loop that moves float32 values read at several positions of
  // one buffer (a depthwise convolution's taps, kTapLoads or more): a row
  // of 56 ran 48 elements in vectors and 8 in a scalar remainder of every
  // tap, about as long as the vectors (1 thread, [8, 64, 56, 56], all 25
  // taps of a 5 x 5 in one kernel: 4.8 -> 2.7-3.4 ms; 3 x 3 1.65 -> 1.2
  // ms; rows of 48, 112 or 224, no remainder, within the noise). LLVM
  // loads each row of taps as a few vectors and shifts them into place
  // (VPERMT2PS), so few of the masked loads are left.
  // Not where the loop stores at a constant step (a narrow cat's row of
  // positions): a masked interleaved store is scattered lane by lane
  // (a stack of [N, 2] pairs with exp, 2.2 -> 19 ms). Nor the exp loop
  // reading at a constant step: its masked interleaved loads cost the
  // whole loop 3-6x (1 thread: x[:, ::2].exp() of [1024, 2048] 1.6-3.5 ->
  // 0.52 ms, the columns of [N, 4] with exp 4.3-4.7 -> 0.92 ms); a row
  // kernel's such loop runs its rest as one masked vector instead (split,
  // below).
  const bool span = innermost && body.span_loop(s);
  const bool taps = wide_move && !strided && body.reads_taps(s, varying);
  const bool fold_tail = (computes.philox || (wide_exp && !strided && !span) || (guarded && !strided) ||
                          (extremes && !strided) || taps) &&
                         row_step <= 1;
  // A float sum into float64 (a float32 row's sum, softmax's sum of exp)
  // cannot fold its tail: its remainder's elements would go into the
  // vector lanes, an order other than the scalar remainder's, and the
  // unfused sum of the same values (a loop that only sums) must add in the
  // same order as the fused one. It runs as two loops instead: up to a
  // multiple of 16 elements (LLVM's 2 x 8 or the 16 lanes above; the
  // remainder never runs), then the rest as one masked vector: the same
  // order in both, whatever the body computes. Rows of 56 (1 thread,
  // [32, 64, 56, 56]): softmax(3) 9.8 -> 6.3 ms (its sum of exp ran 8 exp
  // a row through the scalar twin), x.sum(3) 0.78 -> 0.82 ms (the masked
  // vector's setup against 8 scalar adds); rows of 3136 as fast. The
  // cost is compile time, a second vector loop per sum (bench/compile,
  // medians of 5 fresh processes: x.sum(1) 5.3 -> 7.5 ms, softmax 14.0 ->
  // 18.3 ms); the first loop is entered at 16 elements or more, so LLVM
  // emits no scalar loop for it.
  // (Not a scan's running sum: in order, it gains nothing from a vector tail.)
  // So does a row's exp loop reading at a constant step (above): rows of
  // 12 through the scalar twin ran 2.2x slower than folded.
  const bool sums = widening && body.reduces_only(s) && !strided;
  const int split = innermost && (sums || (wide_exp && strided)) && !s.parallel && !fold_tail ? 16 : 0;
  return {interleave, width, fold_tail, split};
}

bool hoist_machine_invariants(const jit::Kernel& k) {
  // innermost loops, counted up to 2; not one that only fills a local
  int inner = 0;
  auto count = [&](auto&& self, const std::vector<Stmt>& body) -> bool {
    bool has_loop = false;
    for (const Stmt& c : body)
      if (c.kind == StmtKind::Loop) {
        has_loop = true;
        if (!self(self, c.body) && !fills_local(k, c.body)) ++inner;
      }
    return has_loop;
  };
  count(count, k.body);
  // A random draw's rounds are a loop of their own inside the element loop
  // (philox.cpp), so a kernel drawing random numbers is such a kernel too.
  const bool draws = std::any_of(k.values.begin(), k.values.end(),
                                 [](const jit::Value& v) { return v.op == VOp::Philox; });
  return !draws && (inner < 2 || std::none_of(k.values.begin(), k.values.end(), is_vector_math));
}

}  // namespace kiln::codegen::llvmcg
