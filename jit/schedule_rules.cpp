// The scheduler's rules that other passes ask about (whether a matmul is
// computed inline, which dim a value reads transposed) and the names and
// texts of its cuts, apart from the pipeline itself (schedule.cpp).
#include <cstdlib>
#include <vector>

#include "core/tensor_impl.h"
#include "jit/schedule.h"

namespace kiln::jit {

namespace {
// The stride, in elements, at which a kernel computing x inline reads memory
// along x's dim d: elementwise nodes pass the index to their inputs (of x's
// shape), a view reads its input with its own strides, a node computed from
// the index reads nothing, anything else is read row-major. The largest over
// every path; -1 when the walk is long (more than `budget` nodes).
int64_t read_stride(const Node* x, int64_t d, int& budget) {
  if (--budget < 0) return -1;
  if (x->shape[d] == 1) return 0;
  if (!has_value(*x)) switch (x->cls()) {
      case OpClass::Source:
      case OpClass::Random: return 0;
      case OpClass::View: return std::abs(x->attrs.ints[1 + d]);
      case OpClass::Unary:
      case OpClass::Binary:
      case OpClass::Ternary:
      case OpClass::Transfer: {
        int64_t s = 0;
        for (const auto& in : x->inputs) {
          const int64_t t = read_stride(in.get(), d, budget);
          if (t < 0) return -1;
          s = std::max(s, t);
        }
        return s;
      }
      default: break;
    }
  return contiguous_strides(x->shape)[d];
}
}  // namespace

bool matmul_inline(const Node& n) {
  if (n.op != Op::Matmul || n.dtype == DType::Bool) return false;
  const int64_t r = n.rank();
  const Node* a = n.inputs[0].get();
  const Node* b = n.inputs[1].get();
  const int64_t M = n.shape[r - 2], N = n.shape[r - 1], K = a->shape[r - 1];
  if (K <= kInlineMatmulMaxK) return true;
  if (M > kInlineMatmulMaxMN && N > kInlineMatmulMaxMN) return false;
  if (M * N * K <= kInlineMatmulTinyWork) return true;
  // A long dot product per output element: fast only when both operands are
  // read contiguously along K (the loop over K is the innermost one).
  int budget = 32;
  const int64_t sa = read_stride(a, r - 1, budget), sb = read_stride(b, r - 2, budget);
  return sa >= 0 && sa <= 1 && sb >= 0 && sb <= 1;
}

int64_t transposed_dim(const Node* n, int64_t rank, int& budget, const std::function<bool(const Node*)>& stored) {
  if (--budget < 0 || stored(n) || n->rank() != rank) return -1;
  switch (n->cls()) {
    case OpClass::View: {
      const auto& a = n->attrs.ints;  // {offset, strides...}
      const int64_t last = rank - 1;
      if (n->shape[last] < 2 || std::abs(a[1 + last]) <= 1) return -1;
      for (int64_t d = last; d-- > 0;)
        if (std::abs(a[1 + d]) == 1 && n->shape[d] > 1) return d;
      return -1;
    }
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Ternary:
    case OpClass::Transfer:
      for (const auto& in : n->inputs)
        if (int64_t d = transposed_dim(in.get(), rank, budget, stored); d >= 0) return d;
      return -1;
    default: return -1;
  }
}

namespace {
// Division, transcendental math, random numbers: several times a copy's cost.
bool costly(VOp op) {
  switch (op) {
    case VOp::Div: case VOp::Pow: case VOp::Atan2: case VOp::Exp: case VOp::Expm1: case VOp::Log:
    case VOp::Log1p: case VOp::Sqrt: case VOp::Rsqrt: case VOp::Sin: case VOp::Cos: case VOp::Tanh:
    case VOp::Erf: case VOp::Sigmoid: case VOp::Tan: case VOp::Asin: case VOp::Acos: case VOp::Atan:
    case VOp::Sinh: case VOp::Cosh: case VOp::Asinh: case VOp::Acosh: case VOp::Atanh: case VOp::Log2:
    case VOp::Log10: case VOp::Exp2: case VOp::Philox: return true;
    default: return false;
  }
}
}  // namespace

int64_t iteration_cost(const Kernel& k) {
  bool math = false;
  int64_t loads = 0;
  for (const Value& v : k.values) {
    math = math || costly(v.op);
    loads += v.op == VOp::Load;
  }
  return std::max<int64_t>(math ? 4 : 1, loads / 4);
}

bool element_math(const Kernel& k) {
  // fixed[v]: v is the same for the whole kernel (params, constants and
  // arithmetic on them, such as a tiled kernel's tile count ceil(n / 64))
  std::vector<char> fixed(k.values.size(), 0);
  for (size_t i = 0; i < k.values.size(); ++i) {
    const Value& v = k.values[i];
    bool f = v.op == VOp::Param || v.op == VOp::IntConst || v.op == VOp::Const;
    // Add .. Cast in kernel_ir.h's order: elementwise math, comparisons,
    // Where, Cast (no loads, indices, random numbers or accumulators)
    if (!f && v.op >= VOp::Add && v.op <= VOp::Cast) {
      f = true;
      for (ValueId a : v.args)
        if (a >= 0 && !fixed[a]) f = false;
    }
    fixed[i] = f;
    if (!f && costly(v.op)) return true;
  }
  return false;
}

bool cat_in_one_kernel(const Node& n) {
  if (n.op != Op::Cat || n.numel() == 0) return false;
  int64_t block = 1;  // the elements from the cat's dim on
  for (int64_t k = n.attrs.ints[0]; k < n.rank(); ++k) block *= n.shape[k];
  if (block > kCatWholeMaxWidth) return false;
  int parts = 0;
  for (const auto& in : n.inputs) parts += in->shape[n.attrs.ints[0]] > 0;
  return parts >= 2;
}

bool matmul_recomputed(const Node& n) {
  return matmul_inline(n) && n.inputs[0]->shape.back() == 1;
}

const char* cut_name(Cut c) {
  switch (c) {
    case Cut::Output: return "output";
    case Cut::FusionOff: return "fusion-off";
    case Cut::MatmulLibrary: return "matmul-library";
    case Cut::MatmulOperand: return "matmul-operand";
    case Cut::MatmulReuse: return "matmul-reuse";
    case Cut::Join: return "cat";
    case Cut::Write: return "inplace-write";
    case Cut::WriteSource: return "write-source";
    case Cut::IndexedRead: return "indexed-read";
    case Cut::Scan: return "scan";
    case Cut::Sort: return "sort";
    case Cut::SortInput: return "sort-input";
    case Cut::SharedReduction: return "shared-reduction";
    case Cut::ReductionInJoin: return "reduction-in-write";
    case Cut::OtherRows: return "other-rows";
    case Cut::Merged: return "merged-outputs";
    case Cut::ByDesign: return "stored-by-design";
    case Cut::SharedValue: return "shared-value";
    case Cut::BroadcastMath: return "broadcast-math";
    case Cut::ScatterIndex: return "scatter-index";
  }
  return "?";
}

const char* cut_text(Cut c) {
  switch (c) {
    case Cut::Output: return "an output the caller asked for";
    case Cut::FusionOff: return "fusion is off (KILN_FUSION=0): one kernel per op";
    case Cut::MatmulLibrary: return "a matmul too large to compute inline: a library call";
    case Cut::MatmulOperand: return "an operand of a library matmul (it reads memory)";
    case Cut::MatmulReuse: return "an inline matmul's operand, stored rather than recomputed";
    case Cut::Join: return "a cat: a kernel per part, or one for narrow parts";
    case Cut::Write: return "an in-place write: a scatter into the base (copied first unless its buffer is free)";
    case Cut::WriteSource: return "the value of an in-place write, computed from the tensor written: stored so the write can go in place";
    case Cut::IndexedRead: return "the input of a gather, read at positions its index holds, computed with a reduction: stored so it can be read anywhere";
    case Cut::Scan: return "a scan (cumsum, cummax, ...): one kernel whose loop along the dim carries the running value";
    case Cut::Sort: return "a sort: a library step that sorts the rows of its stored input";
    case Cut::SortInput: return "a computed value a sort reads: stored first";
    case Cut::SharedReduction: return "a reduction read by several kernels";
    case Cut::ReductionInJoin: return "a reduction read by a cat part or an in-place write";
    case Cut::OtherRows: return "a reduction its reader cannot compute in its own loops";
    case Cut::Merged: return "outputs over one iteration space, merged into one kernel";
    case Cut::ByDesign: return "stored by design: a stage of a blocked reduction, or what a fold's taps read plainly (its padded input, a stage's partial sum)";
    case Cut::SharedValue: return "a value read by several kernels that costs more to recompute in each than to store once";
    case Cut::BroadcastMath: return "costly math its reader broadcasts along an outer dim: computed once per element of its own, not once per element read";
    case Cut::ScatterIndex: return "a scatter's computed index: stored by a kernel of its own (vectorized, on every core), not computed in the scatter's serial loop";
  }
  return "?";
}

}  // namespace kiln::jit
