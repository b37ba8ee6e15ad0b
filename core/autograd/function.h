// Backward functions: what a differentiable op records on its result.
//
// A Function holds one edge per differentiable input (the input's own
// backward function, or the accumulator of a leaf), the inputs' shapes and
// dtypes (the engine sums and casts gradients back to them), the tensors its
// rule needs (saved with their version, so an in-place write made before
// backward is detected) and the op's parameters. Its rule, in rules.cpp, is
// a few kiln tensor ops. KILN_FORALL_GRAD_FNS is the list of them: the name
// printed as grad_fn=<...> (PyTorch's) and the rule that runs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/pool_alloc.h"
#include "core/tensor_impl.h"
#include "kiln/autograd.h"
#include "kiln/scalar.h"

namespace kiln::autograd {

// X(enum, name printed as grad_fn=<...>, rule). Several share a rule
// (mm, mv, dot are all matmul) and a few share a printed name (PyTorch
// computes scalar / tensor as a product: MulBackward0).
#define KILN_FORALL_GRAD_FNS(X)                                \
  X(AccumulateGrad, "AccumulateGrad", AccumulateGrad)          \
  X(AddBackward0, "AddBackward0", Add)                         \
  X(SubBackward0, "SubBackward0", Sub)                         \
  X(RsubBackward1, "RsubBackward1", Rsub)                      \
  X(MulBackward0, "MulBackward0", Mul)                         \
  X(RdivBackward0, "MulBackward0", Rdiv)                       \
  X(DivBackward0, "DivBackward0", Div)                         \
  X(PowBackward0, "PowBackward0", PowScalar)                   \
  X(PowBackward1, "PowBackward1", Pow)                         \
  X(FmodBackward0, "FmodBackward0", Fmod)                      \
  X(FmodBackward1, "FmodBackward1", Fmod)                      \
  X(RpowBackward1, "PowBackward1", Rpow)                       \
  X(NegBackward0, "NegBackward0", Neg)                         \
  X(ExpBackward0, "ExpBackward0", Exp)                         \
  X(LogBackward0, "LogBackward0", Log)                         \
  X(SqrtBackward0, "SqrtBackward0", Sqrt)                      \
  X(RsqrtBackward0, "RsqrtBackward0", Rsqrt)                   \
  X(AbsBackward0, "AbsBackward0", Abs)                         \
  X(SinBackward0, "SinBackward0", Sin)                         \
  X(CosBackward0, "CosBackward0", Cos)                         \
  X(TanhBackward0, "TanhBackward0", Tanh)                      \
  X(SigmoidBackward0, "SigmoidBackward0", Sigmoid)             \
  X(ReluBackward0, "ReluBackward0", Relu)                      \
  X(Log1pBackward0, "Log1PBackward0", Log1p)                   \
  X(Expm1Backward0, "Expm1Backward0", Expm1)                   \
  X(ErfBackward0, "ErfBackward0", Erf)                         \
  X(TanBackward0, "TanBackward0", Tan)                         \
  X(AsinBackward0, "AsinBackward0", Asin)                      \
  X(AcosBackward0, "AcosBackward0", Acos)                      \
  X(AtanBackward0, "AtanBackward0", Atan)                      \
  X(SinhBackward0, "SinhBackward0", Sinh)                      \
  X(CoshBackward0, "CoshBackward0", Cosh)                      \
  X(AsinhBackward0, "AsinhBackward0", Asinh)                   \
  X(AcoshBackward0, "AcoshBackward0", Acosh)                   \
  X(AtanhBackward0, "AtanhBackward0", Atanh)                   \
  X(Log2Backward0, "Log2Backward0", Log2)                      \
  X(Log10Backward0, "Log10Backward0", Log10)                   \
  X(Exp2Backward0, "Exp2Backward0", Exp2)                      \
  X(Atan2Backward0, "Atan2Backward0", Atan2)                   \
  X(FloorBackward0, "FloorBackward0", Zero)                    \
  X(CeilBackward0, "CeilBackward0", Zero)                      \
  X(RoundBackward0, "RoundBackward0", Zero)                    \
  X(TruncBackward0, "TruncBackward0", Zero)                    \
  X(SignBackward0, "SignBackward0", Zero)                      \
  X(ClampBackward1, "ClampBackward1", Clamp)                   \
  X(MaximumBackward0, "MaximumBackward0", Maximum)             \
  X(MinimumBackward0, "MinimumBackward0", Minimum)             \
  X(WhereBackward0, "WhereBackward0", Where)                   \
  X(MmBackward0, "MmBackward0", Matmul)                        \
  X(MvBackward0, "MvBackward0", Matmul)                        \
  X(DotBackward0, "DotBackward0", Matmul)                      \
  X(SqueezeBackward3, "SqueezeBackward3", Matmul)              \
  X(BmmBackward, "UnsafeViewBackward0", Matmul)                \
  X(BmmBackward0, "BmmBackward0", Matmul)                      \
  X(VdotBackward0, "VdotBackward0", Matmul)                    \
  X(UnsafeViewBackward0, "UnsafeViewBackward0", Reshape)       \
  X(SumBackward0, "SumBackward0", Sum)                         \
  X(SumBackward1, "SumBackward1", Sum)                         \
  X(MeanBackward0, "MeanBackward0", Mean)                      \
  X(MeanBackward1, "MeanBackward1", Mean)                      \
  X(ProdBackward0, "ProdBackward0", Prod)                      \
  X(ProdBackward1, "ProdBackward1", Prod)                      \
  X(MaxBackward1, "MaxBackward1", Extremum)                    \
  X(MinBackward1, "MinBackward1", Extremum)                    \
  X(AmaxBackward0, "AmaxBackward0", Extremum)                  \
  X(AminBackward0, "AminBackward0", Extremum)                  \
  X(MaxBackward0, "MaxBackward0", IndexedExtremum)             \
  X(MinBackward0, "MinBackward0", IndexedExtremum)             \
  X(VarBackward0, "VarBackward0", Var)                         \
  X(StdBackward0, "StdBackward0", Std)                         \
  X(SoftmaxBackward0, "SoftmaxBackward0", Softmax)             \
  X(LogSoftmaxBackward0, "LogSoftmaxBackward0", LogSoftmax)    \
  X(CatBackward0, "CatBackward0", Cat)                         \
  X(GatherBackward0, "GatherBackward0", Gather)                \
  X(ScatterAddBackward0, "ScatterAddBackward0", ScatterAdd)    \
  X(ScatterBackward0, "ScatterBackward0", Scatter)             \
  X(ScatterBackward1, "ScatterBackward1", Scatter)             \
  X(CumsumBackward0, "CumsumBackward0", Cumsum)                \
  X(CumprodBackward0, "CumprodBackward0", Cumprod)             \
  X(LogcumsumexpBackward0, "LogcumsumexpBackward0", Logcumsumexp)\
  X(CummaxBackward0, "CummaxBackward0", ToPositions)           \
  X(CumminBackward0, "CumminBackward0", ToPositions)           \
  X(SortBackward0, "SortBackward0", ToPositions)               \
  X(TopkBackward0, "TopkBackward0", ToPositions)               \
  X(KthvalueBackward0, "KthvalueBackward0", ToPositions)       \
  X(MedianBackward0, "MedianBackward0", ToPositions)           \
  X(MedianBackward1, "MedianBackward1", ToPositions)           \
  X(NanmedianBackward0, "NanmedianBackward0", ToPositions)     \
  X(NanmedianBackward1, "NanmedianBackward1", ToPositions)     \
  X(StackBackward0, "StackBackward0", Stack)                   \
  X(SelectBackward0, "SelectBackward0", Select)                \
  X(UnbindBackward0, "UnbindBackward0", Select)                \
  X(SliceBackward0, "SliceBackward0", Slice)                   \
  X(SplitBackward0, "SplitBackward0", Slice)                   \
  X(ViewBackward0, "ViewBackward0", Reshape)                   \
  X(ReshapeAliasBackward0, "ReshapeAliasBackward0", Reshape)   \
  X(SqueezeBackward0, "SqueezeBackward0", Reshape)             \
  X(SqueezeBackward1, "SqueezeBackward1", Reshape)             \
  X(UnsqueezeBackward0, "UnsqueezeBackward0", Reshape)         \
  X(TBackward0, "TBackward0", Transpose)                       \
  X(TransposeBackward0, "TransposeBackward0", Transpose)       \
  X(PermuteBackward0, "PermuteBackward0", Permute)             \
  X(ExpandBackward0, "ExpandBackward0", Expand)                \
  X(AsStridedBackward0, "AsStridedBackward0", AsStrided)       \
  X(DiagonalBackward0, "DiagonalBackward0", Diagonal)          \
  X(UnfoldBackward0, "UnfoldBackward0", Unfold)                \
  X(ConstantPadNdBackward0, "ConstantPadNdBackward0", ConstantPad) \
  X(MaxPool1DWithIndicesBackward0, "MaxPool1DWithIndicesBackward0", MaxPool) \
  X(MaxPool2DWithIndicesBackward0, "MaxPool2DWithIndicesBackward0", MaxPool) \
  X(MaxPool3DWithIndicesBackward0, "MaxPool3DWithIndicesBackward0", MaxPool) \
  X(AvgPool2DBackward0, "AvgPool2DBackward0", AvgPool)           \
  X(AvgPool3DBackward0, "AvgPool3DBackward0", AvgPool)           \
  X(ConvolutionBackward0, "ConvolutionBackward0", DepthwiseConv)  \
  X(Col2ImBackward0, "Col2ImBackward0", Col2Im)                \
  X(CloneBackward0, "CloneBackward0", Identity)                \
  X(ToCopyBackward0, "ToCopyBackward0", Identity)              \
  X(AliasBackward0, "AliasBackward0", Identity)                \
  X(ZeroBackward0, "ZeroBackward0", Zero)                      \
  X(FillBackward0, "FillBackward0", Zero)                      \
  X(FillBackward2, "FillBackward2", FillTensor)                \
  X(CopyBackwards, "CopyBackwards", Copy)                      \
  X(CopySlices, "CopySlices", CopySlices)

enum class GradFn : uint8_t {
#define KILN_GRAD_FN_ENUM(e, name, rule) e,
  KILN_FORALL_GRAD_FNS(KILN_GRAD_FN_ENUM)
#undef KILN_GRAD_FN_ENUM
};
const char* grad_fn_name(GradFn f);

struct Function;
using FunctionPtr = std::shared_ptr<Function>;

// What the engine needs to know about an input to hand it a gradient.
struct InputMeta {
  Shape sizes;
  DType dtype;
  Device device;
};

// A tensor a rule needs, as it was when the op ran.
struct SavedTensor {
  bool defined = false;
  NodePtr value;                     // its value node at save time
  Shape sizes;
  std::shared_ptr<Storage> storage;  // to compare versions at backward time
  uint64_t version = 0;
  bool check_version = true;         // false: an in-place op's own old self
  bool is_output = false;            // the op's result: its grad_fn is the function itself
  // A leaf requiring grad: returned as is while it lives. Weak, because a
  // leaf can reach this function (a leaf view's base written in place with
  // a result of the leaf, a .grad built with create_graph): a strong
  // reference would make a cycle that is never freed. A dead leaf's
  // gradient has nowhere to go, so its value is then a constant.
  std::weak_ptr<TensorImpl> leaf;
  FunctionPtr grad_fn;               // a non-leaf input's backward function at save time
  bool requires_grad = false;
};

struct Function : Node, std::enable_shared_from_this<Function> {
  GradFn kind;
  // Small vectors whose buffers come from the pool (core/pool_alloc.h).
  std::vector<FunctionPtr, PoolAllocator<FunctionPtr>> next;  // one per input; null: none wanted
  std::vector<InputMeta, PoolAllocator<InputMeta>> inputs;
  std::vector<SavedTensor, PoolAllocator<SavedTensor>> saved;
  std::vector<int64_t> ints;  // the op's integer parameters (dims, keepdim, ...)
  std::vector<double> reals;  // its real parameters (scalar operands)
  bool released = false;      // saved tensors freed by a backward without retain_graph
  // The forward op's source location: the rule's nodes are stamped with it,
  // so backward kernels map back to the lines whose gradient they compute.
  SourceLoc loc;

  // AccumulateGrad: the leaf it fills (weak: the leaf owns this function).
  std::weak_ptr<TensorImpl> leaf;
  // Non-leaf tensors whose grad() this function's incoming gradient fills.
  std::vector<std::weak_ptr<TensorImpl>> retained;

  // CopySlices: the op that wrote through a view, and the view's region of
  // the base (sizes, strides, storage offset).
  FunctionPtr inner;
  Shape view_sizes, view_strides;
  int64_t view_offset = 0;

  explicit Function(GradFn k) : kind(k) {}
  std::string name() const override { return grad_fn_name(kind); }
  std::vector<std::shared_ptr<Node>> next_functions() const override;

  bool needs(size_t input) const { return input < next.size() && next[input] != nullptr; }
  // Saves t (or an empty slot when !keep, so slots keep their indices).
  void save(const Tensor& t, bool keep = true);
  void save_output(const Tensor& out);
  // The saved tensor `i` for the rule, after the version check. With
  // create_graph it carries its grad_fn so the rule itself is differentiable.
  Tensor saved_tensor(size_t i);
};

// The edge a gradient for t goes to: its grad_fn, a leaf's accumulator, or null.
FunctionPtr gradient_edge(const Tensor& t);
// t's current backward function (regenerated for a view whose base was
// written in place since the view was taken).
FunctionPtr grad_fn_of(TensorImpl& t);

// A function for an op on these inputs when grad mode is on and one of
// them requires grad (else null). Undefined inputs get no edge.
FunctionPtr make_function(GradFn kind, std::initializer_list<const Tensor*> inputs);
FunctionPtr make_function(GradFn kind, const std::vector<const Tensor*>& inputs);
// Makes f the backward function of `out` (a fresh result of the op).
void attach(const FunctionPtr& f, const Tensor& out);
// make_function + attach: returns the function to save tensors and
// parameters into, or null when nothing is recorded.
FunctionPtr record(GradFn kind, const Tensor& out, std::initializer_list<const Tensor*> inputs);
FunctionPtr record(GradFn kind, const Tensor& out, const std::vector<const Tensor*>& inputs);
// Gives t's backward function another of PyTorch's names for the same rule
// (a full sum is SumBackward0, a chunk of split SplitBackward0, ...).
void relabel(const Tensor& t, GradFn kind);
// Whether an op on these inputs records (grad mode on, one requires grad):
// the cheap test before building anything.
bool should_record(std::initializer_list<const Tensor*> inputs);

// The rule of a function: gradients for its inputs from the gradient of its
// result (undefined where an input needs none). rules.cpp.
std::vector<Tensor> apply_rule(Function& f, const Tensor& grad);

// A view's gradient that fills a run of one dim of its input (a slice, a
// select): `piece` (the input's rank) at positions start + i * step (i <
// len) of dim `dim`, zeros elsewhere. The engine collects an input's runs
// and places them together: the gradients of a split's pieces become one
// cat, those of x[..., 0::2] and x[..., 1::2] one interleaving cat.
struct GradRun {
  int64_t dim, start, len;
  Tensor piece;
  int64_t step = 1;
};
// A slice's step up to which its gradient is a run (interleaved with zero
// rows by a cat of `step` parts); a larger step scatters into zeros.
inline constexpr int64_t kGradRunMaxStep = 8;
// f's gradient as a run; nullopt for a function of another rule.
std::optional<GradRun> gradient_run(const Function& f, const Tensor& grad);
// The sum of the runs as a tensor of `sizes`: strided runs interleaved
// first (runs of one step over the same rows as one cat of the step's
// phases, missing phases zeros), then one cat when they lie along one dim
// without overlapping, a run over at least half its dim as g
// padded (fused with its consumer), a shorter one as a cat with zeros.
Tensor place_runs(std::vector<GradRun> runs, const Shape& sizes);

// In-place ops (inplace.cpp): the checks before a write and the history
// after it.
void check_inplace(const Tensor& self, const char* op);
// After the write: `fn` (input 0: self's old value) becomes self's history,
// through CopySlices on its base when self is a view.
void rebase_history(const Tensor& self, const FunctionPtr& fn);

// The engine's treatment of a rule's gradient for an input: summed back
// over broadcast dims to the input's shape, cast to its dtype and device.
Tensor to_input(Tensor grad, const InputMeta& meta);

// A tensor holding `value` (a fresh storage) whose backward function is fn.
Tensor tensor_with_history(NodePtr value, const FunctionPtr& fn);

// The step boundary of NoGradGuard (grad_mode.cpp): a leaf requiring grad
// written in place with grad mode off is evaluated when the guard closes.
void note_leaf_update(const Tensor& leaf);
// A tensor an op updated in place as a side effect (batch_norm's running
// statistics): evaluated with the step's parameters when the outermost
// NoGradGuard next closes, so its update joins the step's one evaluation
// instead of hanging every step's forward pass off it.
void note_step_update(const Tensor& t);

}  // namespace kiln::autograd

