// The one op list. Every graph node's op is declared here with its class,
// and every pass (reference evaluator, JIT scheduler, autograd, printer)
// switches on OpClass or on Op with no default, so a new op cannot be missed.
#pragma once

#include <cstdint>

namespace kiln {

enum class OpClass : uint8_t {
  Source,       // no inputs: a buffer, or a value computed from the index
  Random,       // no inputs: Philox numbers from (seed, offset, index)
  Unary,        // elementwise, one input of the output's shape
  Binary,       // elementwise, two inputs of the output's shape
  Ternary,      // elementwise, three inputs of the output's shape
  View,         // reads its input through (sizes, strides, offset): no copy
  Write,        // its first input with a region replaced or added to: in-place writes
  Index,        // reads its first input at positions its second input holds
  Reduce,       // reduces dims (kept as size 1) of its input
  Contraction,  // matmul
  Join,         // concatenation
  Scan,         // a running combination along one dim (cumsum, cumprod, logcumsumexp, cummax, cummin)
  Sort,         // the positions that order one dim (a library step, not a kernel)
  Transfer,     // a copy to another device
};

// X(Name, Class, Arity). Attributes (Node::attrs) per op:
//   Buffer      its data in Node::buffer
//   Full        ints[0] / reals[0]: the value (integer / floating view);
//               ints[1] == 1 marks a value derived from a shape (a mean's
//               count): the JIT passes it at run time, so shapes share kernels
//   Arange      reals {start, step}, ints {start, step}: v[i] = start + i*step
//   Linspace    reals {start, end}: PyTorch's two-sided formula
//   Eye         shape {n, m}: 1 on the diagonal
//   RandUniform ints {seed, offset}, reals {low, high}
//   RandNormal  ints {seed, offset}, reals {mean, std}
//   RandInt     ints {seed, offset, low, high}
//   Cast        to Node::dtype
//   AsStrided   ints {offset, strides...}: out[i] = flat(in)[offset + i.strides]
//   Assign      inputs {base, src}, ints {offset, strides...}: base with the
//               region of src's shape at (offset, strides) replaced by src
//   Gather      inputs {x, index (int64, the output's shape, same rank as x)},
//               ints {dim}: out[i] = x[i with i[dim] = index[i]]; the front
//               end has checked every index against x's size
//   ScatterAdd  inputs {base, index (int64), src (index's shape)}, ints {dim}:
//               base, then out[j with j[dim] = index[j]] += src[j] for every j
//               in order (Gather's gradient)
//   Div         floats: a / b; integers: truncated (C's), the divisor
//               nonzero (the front end checks)
//   Fmod        C's fmod / %: the remainder of the truncated division, the
//               dividend's sign; integer divisors nonzero
//   Scatter     as ScatterAdd, but out[j with j[dim] = index[j]] = src[j]
//               (for repeated positions the last j in order wins)
//   reductions  ints: the reduced dims, sorted; shape keeps them as 1
//   Matmul      inputs [..., M, K] and [..., K, N] with equal batch dims
//   Cat         ints {dim}
//   CumSum      ints {dim}: out[..., i, ...] = sum of in[..., :i+1, ...],
//               accumulated in float64 for floats (PyTorch's CPU acc_type),
//               int64 for integers; the output's dtype is the node's
//   CumProd     as CumSum, the running product
//   LogCumSumExp  as CumSum (floats only), log(sum exp) by PyTorch's
//               _log_add_exp_helper in the same accumulator
//   CumMax      ints {dim}: the running maximum by PyTorch's cummax rule (a
//               value >= the kept one, or a NaN, replaces it; only a NaN
//               replaces a NaN); CumMin with <=; the input's dtype
//   CumArgMax   ints {dim}: the position along dim of CumMax's kept value
//               (int64); CumArgMin of CumMin's
//   ArgSort     ints {dim, descending, k[, selection]}: the first k int64
//               positions along dim that sort the input (core/sort_rows.h:
//               stable, NaN above numbers); the input's shape with k along
//               dim. With a selection (SortSelect: the k-th, a median) the
//               one position it picks, 1 along dim
//   ToDevice    to Node::device
#define KILN_FORALL_OPS(X)        \
  X(Buffer, Source, 0)            \
  X(Full, Source, 0)              \
  X(Arange, Source, 0)            \
  X(Linspace, Source, 0)          \
  X(Eye, Source, 0)               \
  X(RandUniform, Random, 0)       \
  X(RandNormal, Random, 0)        \
  X(RandInt, Random, 0)           \
  X(Cast, Unary, 1)               \
  X(Neg, Unary, 1)                \
  X(Exp, Unary, 1)                \
  X(Log, Unary, 1)                \
  X(Sqrt, Unary, 1)               \
  X(Rsqrt, Unary, 1)              \
  X(Abs, Unary, 1)                \
  X(Sin, Unary, 1)                \
  X(Cos, Unary, 1)                \
  X(Tanh, Unary, 1)               \
  X(Sigmoid, Unary, 1)            \
  X(Relu, Unary, 1)               \
  X(Floor, Unary, 1)              \
  X(Ceil, Unary, 1)               \
  X(Round, Unary, 1)              \
  X(Trunc, Unary, 1)              \
  X(Sign, Unary, 1)               \
  X(Log1p, Unary, 1)              \
  X(Expm1, Unary, 1)              \
  X(Erf, Unary, 1)                \
  X(Tan, Unary, 1)                \
  X(Asin, Unary, 1)               \
  X(Acos, Unary, 1)               \
  X(Atan, Unary, 1)               \
  X(Sinh, Unary, 1)               \
  X(Cosh, Unary, 1)               \
  X(Asinh, Unary, 1)              \
  X(Acosh, Unary, 1)              \
  X(Atanh, Unary, 1)              \
  X(Log2, Unary, 1)               \
  X(Log10, Unary, 1)              \
  X(Exp2, Unary, 1)               \
  X(LogicalNot, Unary, 1)         \
  X(Add, Binary, 2)               \
  X(Sub, Binary, 2)               \
  X(Mul, Binary, 2)               \
  X(Div, Binary, 2)               \
  X(Pow, Binary, 2)               \
  X(Atan2, Binary, 2)             \
  X(Fmod, Binary, 2)              \
  X(Maximum, Binary, 2)           \
  X(Minimum, Binary, 2)           \
  X(Eq, Binary, 2)                \
  X(Ne, Binary, 2)                \
  X(Lt, Binary, 2)                \
  X(Le, Binary, 2)                \
  X(Gt, Binary, 2)                \
  X(Ge, Binary, 2)                \
  X(Where, Ternary, 3)            \
  X(AsStrided, View, 1)           \
  X(Assign, Write, 2)             \
  X(ScatterAdd, Write, 3)         \
  X(Scatter, Write, 3)            \
  X(Gather, Index, 2)             \
  X(Sum, Reduce, 1)               \
  X(Prod, Reduce, 1)              \
  X(Max, Reduce, 1)               \
  X(Min, Reduce, 1)               \
  X(ArgMax, Reduce, 1)            \
  X(ArgMin, Reduce, 1)            \
  X(All, Reduce, 1)               \
  X(Any, Reduce, 1)               \
  X(Matmul, Contraction, 2)       \
  X(Cat, Join, -1)                \
  X(CumSum, Scan, 1)              \
  X(CumProd, Scan, 1)             \
  X(LogCumSumExp, Scan, 1)        \
  X(CumMax, Scan, 1)              \
  X(CumMin, Scan, 1)              \
  X(CumArgMax, Scan, 1)           \
  X(CumArgMin, Scan, 1)           \
  X(ArgSort, Sort, 1)             \
  X(ToDevice, Transfer, 1)

enum class Op : uint8_t {
#define KILN_OP_ENUM(name, cls, arity) name,
  KILN_FORALL_OPS(KILN_OP_ENUM)
#undef KILN_OP_ENUM
};

struct OpInfo {
  const char* name;
  OpClass cls;
  int arity;  // -1: variadic
};

const OpInfo& op_info(Op op);
inline const char* op_name(Op op) { return op_info(op).name; }
inline OpClass op_class(Op op) { return op_info(op).cls; }

// Traits the passes ask about (tinygrad's GroupOp).
inline bool is_elementwise(Op op) {
  OpClass c = op_class(op);
  return c == OpClass::Unary || c == OpClass::Binary || c == OpClass::Ternary;
}
inline bool is_reduction(Op op) { return op_class(op) == OpClass::Reduce; }
inline bool is_view(Op op) { return op_class(op) == OpClass::View; }
inline bool is_source(Op op) {
  return op_class(op) == OpClass::Source || op_class(op) == OpClass::Random;
}
// Elementwise ops whose value costs tens of instructions (a polynomial):
// worth storing and reloading rather than computing twice in one kernel.
inline bool is_transcendental(Op op) {
  return op == Op::Exp || op == Op::Log || op == Op::Sin || op == Op::Cos || op == Op::Tanh ||
         op == Op::Sigmoid || op == Op::Pow || op == Op::Log1p || op == Op::Expm1 || op == Op::Erf ||
         op == Op::Tan || op == Op::Asin || op == Op::Acos || op == Op::Atan || op == Op::Sinh ||
         op == Op::Cosh || op == Op::Asinh || op == Op::Acosh || op == Op::Atanh || op == Op::Log2 ||
         op == Op::Log10 || op == Op::Exp2 || op == Op::Atan2;
}
// Comparisons produce bool from inputs of any dtype.
inline bool is_comparison(Op op) {
  return op == Op::Eq || op == Op::Ne || op == Op::Lt || op == Op::Le || op == Op::Gt ||
         op == Op::Ge;
}

}  // namespace kiln
