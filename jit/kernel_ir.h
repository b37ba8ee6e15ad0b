// The kernel IR: what the scheduler lowers each fused group of graph nodes
// to, and what every backend (LLVM for the CPU, CUDA C later) renders. It is
// small and C-like: nested loops over an iteration space whose extents are
// runtime parameters (so a new shape never recompiles), loads through int64
// index expressions, a DAG of scalar values, accumulators for reductions, and
// stores.
//
// Every compiled kernel has one signature, whatever the backend:
//
//   void kernel(char* const* buffers, const int64_t* params, int64_t begin, int64_t end);
//
//   buffers  one pointer per Kernel::buffers entry that is not a local
//            (element 0 of that buffer)
//   params   Kernel::num_params runtime int64 values (sizes, strides, offsets,
//            seeds); their meaning is the scheduler's business, not the backend's
//   [begin, end)  the part of the top-level parallel loop this call runs; the
//            runtime splits that loop's extent across threads
//
// Value semantics (the backend must follow them so that kernels agree with the
// reference evaluator, core/reference/kernels.h):
//   * Every Value has a semantic dtype. Bool is i1; UInt8, Int32 and Int64 are
//     computed in int64 and every op producing UInt8/Int32 wraps its result to
//     that width (zext of the low 8 bits, sext of the low 32 bits); Float16 and
//     BFloat16 are computed in float32 and every op producing them rounds the
//     result to that precision (round to nearest even) and widens it back;
//     Float32 is f32, Float64 is f64. Index values (LoopIndex, Param, IntConst
//     and the arithmetic on them) are Int64.
//   * Load reads element `index` of a buffer (an argument or a local) of the
//     buffer's dtype and widens it as above. A guarded Load (args[1], a Bool, and args[2], a value of
//     the Load's dtype) reads only where args[1] holds and is args[2]
//     elsewhere, where its index may be out of range (constant padding's
//     read: lower_guard.cpp). Store narrows a value to the buffer's dtype with the
//     reference's cast rules (cast_value): float -> integer truncates toward
//     zero (NaN and out-of-range give INT64_MIN before wrapping), anything ->
//     bool is != 0 (NaN -> true), to float16/bfloat16 rounds to nearest even.
//   * Arithmetic follows core/reference: Div on floats only; integer Div/Mod
//     appear only on non-negative index values (C semantics); Pow on integers
//     is repeated squaring with the reference's rule for negative exponents;
//     Max/Min propagate NaN; Relu(x) = x > 0 ? x : 0 with NaN propagated;
//     Sigmoid = 1 / (1 + exp(-x)); Floor / Ceil / Round / Trunc and the
//     transcendentals (Exp .. Sigmoid) take floating operands only;
//     comparisons give Bool (false with NaN,
//     except Ne). Cast converts with cast_value's rules.
//   * Philox: element `args[0]` (Int64 counter index) of a random node whose
//     seed and offset are params a and b (Int64 bit patterns of uint64):
//     the value is the one core/philox.h defines for the node's op
//     (philox_uniform_float / _double, philox_normal_double, philox_randint)
//     with reals f0/f1 (low/high or mean/std) or ints i0/i1 (low/high for
//     RandInt), converted to the Value's dtype.
//   * Values are pure: a backend may compute one once per iteration of the
//     innermost loop enclosing every loop it depends on, or at each use.
//
// Accumulators: Stmt::AccInit sets an accumulator to its combiner's identity,
// Stmt::AccUpdate folds a value in, Value AccRead reads it. An accumulator
// with `lanes` (a value of params and constants only) is a row of that many
// independent accumulators, each statement and read naming one by its
// `lane` (Stmt::lane; AccRead / AccIndex args[0]): the running sums of a
// scan along an outer dim, one per column, kept in the kernel's frame
// (every call of the function has its own row). Sum and Prod
// accumulate in Accumulator::dtype (Float64 for floating inputs, Int64 for
// integers, as the reference); Max/Min keep NaN once seen (-0 orders below +0); ArgMax/ArgMin keep
// the first index of the extreme (a NaN counts as the extreme), reading back
// the Int64 index; All/Any give Bool. CumMax/CumMin keep a value and its
// position by PyTorch's cummax rule (a value >= (<=) the kept one, or a NaN,
// replaces it; only a NaN replaces a NaN, and the first update always
// does): AccRead reads the value, AccIndex the position (as for ArgMax /
// ArgMin, whose AccRead reads it too). LogAddExp (a float accumulator,
// starting at -inf) keeps log(exp(acc) + exp(v)) by PyTorch's
// _log_add_exp_helper: log1p(exp(min - max)) + max, NaN propagating; two
// equal infinities stay.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/op.h"
#include "kiln/dtype.h"

namespace kiln::jit {

using ValueId = int32_t;

enum class VOp : uint8_t {
  // index arithmetic and constants
  LoopIndex,  // a = loop id: the current value of that loop's variable (Int64)
  Param,      // a = params slot: Int64, or with dtype Float64 the slot's 64 bits read as a double
  IntConst,   // i (Int64)
  Const,      // a scalar of `dtype`: f for floating dtypes, i for integers and bool
  // memory
  Load,       // a = buffer slot, args[0] = element index (Int64); guarded: args[1] (Bool) >= 0, see above
  // elementwise math, Add to Sign (lower_guard.cpp rebuilds this range);
  // operand dtypes equal the result dtype unless stated
  Add, Sub, Mul, Div, Mod, Pow, Atan2, Max, Min,
  Neg, Abs, Exp, Expm1, Log, Log1p, Sqrt, Rsqrt, Sin, Cos, Tanh, Erf, Sigmoid, Relu,
  Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Log2, Log10, Exp2,
  Floor, Ceil, Round, Trunc, Sign,  // Round: half to even; Sign: (0 < x) - (x < 0)
  LogicalNot,          // any operand dtype -> Bool
  Eq, Ne, Lt, Le, Gt, Ge,  // operands of one dtype -> Bool
  Where,               // args {cond (Bool), a, b}
  Cast,                // args[0] converted to `dtype`
  Philox,              // see above: op = which random op, a/b = seed/offset params
  AccRead,             // a = accumulator id, args[0] = lane (an accumulator with lanes) or -1
  AccIndex,            // as AccRead (ArgMax/ArgMin/CumMax/CumMin): its kept position, Int64
};

// A transcendental function or a random draw: many instructions an element
// (a polynomial, a call, Philox rounds), where the other ops are one or few.
inline bool is_math_function(VOp op) {
  switch (op) {
    case VOp::Pow: case VOp::Atan2: case VOp::Exp: case VOp::Expm1: case VOp::Log: case VOp::Log1p:
    case VOp::Sin: case VOp::Cos: case VOp::Tanh: case VOp::Erf: case VOp::Sigmoid: case VOp::Tan:
    case VOp::Asin: case VOp::Acos: case VOp::Atan: case VOp::Sinh: case VOp::Cosh: case VOp::Asinh:
    case VOp::Acosh: case VOp::Atanh: case VOp::Log2: case VOp::Log10: case VOp::Exp2: case VOp::Philox:
      return true;
    default: return false;
  }
}

struct Value {
  VOp op;
  DType dtype;
  int32_t a = 0, b = 0;
  ValueId args[3] = {-1, -1, -1};
  int64_t i = 0, i1 = 0;
  double f = 0.0, f1 = 0.0;
  Op random_op = Op::RandUniform;  // VOp::Philox only
};

enum class Combiner : uint8_t { Sum, Prod, Max, Min, ArgMax, ArgMin, All, Any, CumMax, CumMin, LogAddExp };
// Whether the combiner keeps a position beside its value (AccUpdate's index).
inline bool keeps_position(Combiner c) {
  return c == Combiner::ArgMax || c == Combiner::ArgMin || c == Combiner::CumMax || c == Combiner::CumMin;
}

struct Accumulator {
  Combiner combiner;
  DType dtype;  // the accumulation type (Sum/Prod) or the value type (Max/Min/Arg*)
  // A scan's: every running value is read, so updates keep their order (a
  // reduction's Sum/Prod may be reassociated into vector lanes).
  bool running = false;
  // A row of accumulators: how many (a value of params and constants, read
  // once on entry), or -1 for one.
  ValueId lanes = -1;
};

enum class StmtKind : uint8_t { Loop, Store, AccInit, AccUpdate, Stage };

struct Stmt {
  StmtKind kind;
  // Loop: for (var[a] = 0; var < value(extent); ++var) body. `parallel` marks
  // the top-level loop whose [begin, end) slice each call runs.
  int32_t loop = -1;
  ValueId extent = -1;
  bool parallel = false;
  std::vector<Stmt> body = {};
  // Store: buffers[buffer][value(index)] = value(value)
  int32_t buffer = -1;
  ValueId index = -1;
  ValueId value = -1;
  // AccInit / AccUpdate: acc; AccUpdate folds value (and, for a combiner
  // that keeps_position, the candidate position `index`) into it.
  int32_t acc = -1;
  ValueId lane = -1;  // AccInit / AccUpdate of an accumulator with lanes: which one
  // Stage: a tile of buffer `source` copied transposed into local `buffer`
  // (of rows of L = BufferArg::local_cols elements): for r < value(extent),
  // c < value(cols),
  //   buffers[buffer][c * L + r] = buffers[source][value(index) + r * value(value) + c]
  // (value(value): the source's step from one of the tile's rows to the
  // next). A tiled transpose's strided read (jit/lower_tiles.cpp): each
  // source row is read contiguously, the body then reads the local along
  // its own rows; a backend may move the tile with vector shuffles (the CPU)
  // or through shared memory (a GPU).
  // value(span): the source's element count, a hint: a backend may
  // prefetch a tile's next rows where the source outgrows the caches.
  int32_t source = -1;
  ValueId cols = -1;
  ValueId span = -1;
};

struct BufferArg {
  DType dtype;
  bool output;
  // > 0: a local, local_rows x local_cols elements (row-major) in the
  // kernel's frame (each call has its own), written by Stage statements
  // (a transposed tile) or Stores (a periodic row's repeats,
  // jit/lower_periodic.cpp) before it is read; not an argument. Locals
  // follow every argument buffer, so a kernel's `buffers` pointers are its
  // argument slots, in order.
  int64_t local_rows = 0, local_cols = 0;
  bool local() const { return local_rows > 0; }
};

struct Kernel {
  std::string name;              // readable, e.g. "k3_add_mul_sum"
  // Where the user asked for its first output ("train.cpp:42"; "" when
  // unknown): for tools (the perf map), like the name not part of key().
  std::string origin;
  std::vector<BufferArg> buffers;
  int32_t num_params = 0;
  // params[footprint_param] (-1: none): the bytes of the buffers the kernel
  // reads and writes, a hint: a backend may write its results past the
  // caches (streaming stores) where they outgrow them, since they would be
  // evicted before anyone read them (the CPU's: codegen/llvm/stream_stores.h).
  int32_t footprint_param = -1;
  int32_t num_loops = 0;
  std::vector<Value> values;
  std::vector<Accumulator> accs;
  std::vector<Stmt> body;

  // Builders: append and return the id.
  ValueId add(Value v) {
    values.push_back(v);
    return static_cast<ValueId>(values.size() - 1);
  }
  // Removes the values no statement reads (directly or through other
  // values), renumbering the rest in order: lowering may build index
  // arithmetic that a fold then leaves unread (lower_merge.cpp).
  void drop_dead_values();
  // Value id's constant step along loop variable `loop` (its index
  // arithmetic affine in it with constant coefficients): 0 if it does not
  // depend on the loop, -1 if the step is not a constant (a runtime stride).
  int64_t step_along(ValueId id, int32_t loop) const;
  // A structural key (everything but the name): equal keys compile to the
  // same code, so the kernel cache is keyed by it.
  std::string key() const;
  // The IR as readable text (KILN_DUMP=kernel-ir).
  std::string to_string() const;
};

// Signature of every compiled kernel.
using KernelFn = void (*)(char* const* buffers, const int64_t* params, int64_t begin, int64_t end);

const char* vop_name(VOp op);
const char* combiner_name(Combiner c);

}  // namespace kiln::jit
