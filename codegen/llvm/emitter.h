// Internal to the LLVM backend: the state shared by the files that lower a
// jit::Kernel to LLVM IR, and the entry points each of them provides.
//
//   dtype_ops.cpp    value representation per DType, loads / stores, cast_value,
//                    integer wrapping and float16 / bfloat16 rounding, constants
//   elementwise.cpp  the elementwise VOps (arithmetic, comparisons, math dispatch)
//   float_math.cpp   exp / log / sin / cos / tanh / pow for float32 as inline IR
//   vector_variants.cpp  those as lane functions: vector variants for the
//                    vectorizer, scalar twins (runtime_math.cpp) elsewhere
//   philox.cpp       Philox4x32-10 and the random maps of core/philox.h
//   lower_kernel.cpp loops, stores, accumulators and the value DAG of a kernel
//   stage_runtime.cpp  the Stage statements' functions, which kernels call
//   loop_hints.cpp   the vectorizer's hints for each innermost loop
//   llvm_backend.cpp the Backend: O3 pipeline, ORC LLJIT, IR / asm dumps
//
// Representation of a Value of each DType (kernel_ir.h): Bool is i1; UInt8,
// Int32 and Int64 are i64 (UInt8 zero-extended, Int32 sign-extended);
// Float16, BFloat16 and Float32 are float (16-bit ones always hold a value
// representable in their format); Float64 is double.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "jit/kernel_ir.h"
#include "kiln/dtype.h"

namespace llvm {
class TargetMachine;
}

namespace kiln::codegen::llvmcg {

// Whether a CPU of these features ("+avx512f,+avx512bw,...", LLVM's feature
// string) runs 512-bit vector code at full clock: AVX-512 with AVX512_VBMI2,
// which Ice Lake and later Intel cores and AMD's Zen 4 and later have and
// the Skylake and Cascade Lake servers, which slow their clock under 512-bit
// work, lack. LLVM's cost model plans 256-bit vectors on most of them
// (Sapphire Rapids included); kiln asks for 512 bits where a loop gains from
// them (lower_kernel.cpp: sums of lane function values, loops that only
// move float32 values, loops whose only math is float32 exp).
bool wide_vector_host(const std::string& features);

struct Emitter {
  llvm::LLVMContext& ctx;
  llvm::Module& mod;
  llvm::IRBuilder<> b;
  std::string cpu, features;  // set as "target-cpu" / "target-features" on every function
  // 512-bit vectors run at full clock on this CPU (wide_vector_host).
  bool wide_vectors;

  Emitter(llvm::Module& m, std::string cpu_name, std::string feature_string)
      : ctx(m.getContext()), mod(m), b(m.getContext()), cpu(std::move(cpu_name)),
        features(std::move(feature_string)), wide_vectors(wide_vector_host(features)) {}

  // Non-zero while a vector variant of a lane function is defined
  // (vector_variants.cpp): the types below are then vectors of this many
  // lanes and the constants splats, so one body serves every width.
  unsigned lanes = 0;
  llvm::Type* of(llvm::Type* t) { return lanes ? llvm::FixedVectorType::get(t, lanes) : t; }

  llvm::Type* i1() { return of(b.getInt1Ty()); }
  llvm::Type* i8() { return of(b.getInt8Ty()); }
  llvm::Type* i16() { return of(b.getInt16Ty()); }
  llvm::Type* i32() { return of(b.getInt32Ty()); }
  llvm::Type* i64() { return of(b.getInt64Ty()); }
  llvm::Type* f32() { return of(b.getFloatTy()); }
  llvm::Type* f64() { return of(b.getDoubleTy()); }
  llvm::Constant* c64(int64_t v) { return llvm::ConstantInt::get(i64(), static_cast<uint64_t>(v)); }
  llvm::Constant* c32(uint32_t v) { return llvm::ConstantInt::get(i32(), v); }
  llvm::Constant* cf(float v) { return llvm::ConstantFP::get(f32(), v); }
  llvm::Constant* cd(double v) { return llvm::ConstantFP::get(f64(), v); }

  // Sets the attributes every function of a kernel module carries.
  void set_common_attrs(llvm::Function* f);
  // An internal always-inline function `name` of type `type`, defined on
  // first use by `define(f)` (the builder's position is restored afterwards).
  llvm::Function* helper(const std::string& name, llvm::FunctionType* type,
                         const std::function<void(llvm::Function*)>& define);
  // Calls an llvm intrinsic overloaded on the type of its first argument.
  llvm::Value* intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> args);
  // A call to an external C function (libm) returning the type of args[0].
  llvm::Value* libcall(const char* name, llvm::ArrayRef<llvm::Value*> args);
};

// ---- vector_variants.cpp ----
// A function of one element that kernels' loops call (exp, log, ..., a
// Philox draw): inline IR in vectorized loops, a call to its twin, the same
// computation compiled into kiln (runtime_math.h), everywhere else.
struct LaneFn {
  const char* name;  // its vector variants are <name>.v<lanes>
  const char* twin;  // C symbol of the scalar twin in the process
  void* twin_address;
  // The scalar signature, lanes-aware: with e.lanes = n, the variant's.
  llvm::FunctionType* (*type)(Emitter& e);
  // The computation, written once for scalars and vectors (e.lanes).
  llvm::Value* (*body)(Emitter& e, llvm::ArrayRef<llvm::Value*> args);
};
// A call of fn's twin on args (scalars).
llvm::Value* call_lane_fn(Emitter& e, const LaneFn& fn, llvm::ArrayRef<llvm::Value*> args);
// Inside a lane function's body: `common` in every lane where `rare` is
// false; where some lane is rare (an unlikely branch), every lane's value
// from a call of the twin `twin` (float(float)) on `arg` instead. The twin
// must compute the common lanes' value bit for bit.
llvm::Value* twin_where(Emitter& e, const char* twin, llvm::Value* arg, llvm::Value* rare, llvm::Value* common);
// Before loop vectorization: declares the vector variants of each twin the
// module calls, for the widths of a loop over floats in tm's vector
// registers, and lists them on the calls for the vectorizer.
void declare_vector_variants(llvm::Module& m, const llvm::TargetMachine& tm);
// After it: defines each variant the vectorizer called (always-inline, for
// the inliner that follows) and drops the rest; a scalar call for which
// `runs_hot` says yes (a loop that stays scalar: a strided read) gets the
// scalar body inline instead of calling the twin.
void define_vector_variants(llvm::Module& m, const std::function<bool(llvm::CallInst&)>& runs_hot);
// Every lane function's twin (symbol, address): the JIT's symbol table.
std::vector<std::pair<const char*, void*>> lane_fn_twins();

// ---- dtype_ops.cpp ----
llvm::Type* repr_type(Emitter& e, DType t);  // i1 / i64 / float / double
llvm::Type* mem_type(Emitter& e, DType t);   // the element type in memory
bool is_float_dtype(DType t);
bool computes_in_float(DType t);  // Float16, BFloat16, Float32
// Reads element `index` of a buffer of dtype t and widens it to repr_type(t).
llvm::Value* load_widen(Emitter& e, llvm::Value* base, llvm::Value* index, DType t);
// Converts v (of dtype `from`) to the buffer dtype `to` (cast_value) and stores it.
void store_narrow(Emitter& e, llvm::Value* base, llvm::Value* index, llvm::Value* v, DType from,
                  DType to);
// The reference's cast_value from `from` to `to`, on representations.
llvm::Value* cast_value(Emitter& e, llvm::Value* v, DType from, DType to);
// Brings a freshly computed result to the representation of t: wraps
// UInt8 / Int32, rounds Float16 / BFloat16 (identity for the rest).
llvm::Value* canonicalize(Emitter& e, llvm::Value* v, DType t);
// A Const of dtype t (f for floating dtypes, i otherwise), with cast_value's rules.
llvm::Value* const_value(Emitter& e, DType t, double f, int64_t i);
// Float16 / BFloat16 bit conversions (round to nearest even, as kiln::Half / BFloat16).
llvm::Value* float_to_half_bits(Emitter& e, llvm::Value* f);      // float -> i16
llvm::Value* half_bits_to_float(Emitter& e, llvm::Value* h);      // i16 -> float
llvm::Value* float_to_bfloat16_bits(Emitter& e, llvm::Value* f);  // float -> i16
llvm::Value* bfloat16_bits_to_float(Emitter& e, llvm::Value* h);  // i16 -> float

// ---- elementwise.cpp ----
// The result of an elementwise VOp (not LoopIndex / Param / Const / Load /
// Philox / AccRead) on operand representations; `operand` is args[0]'s dtype.
llvm::Value* emit_elementwise(Emitter& e, const jit::Value& v, DType operand,
                              llvm::ArrayRef<llvm::Value*> args);
// Max / Min with the reference's NaN rule (a NaN operand wins, the first one first).
llvm::Value* emit_max_min(Emitter& e, bool is_max, DType t, llvm::Value* a, llvm::Value* b);

// ---- float_math.cpp: float32 in, float32 out, inline and vectorizable ----
llvm::Value* emit_expf(Emitter& e, llvm::Value* x);  // float arithmetic, <= 1 ulp
// 1 / (1 + exp(-x)) in float arithmetic with the roundings compensated
// (within 2 ulp of the float formula with libm's expf).
llvm::Value* emit_sigmoidf(Emitter& e, llvm::Value* x);
llvm::Value* emit_logf(Emitter& e, llvm::Value* x);
llvm::Value* emit_sinf(Emitter& e, llvm::Value* x);
llvm::Value* emit_cosf(Emitter& e, llvm::Value* x);
llvm::Value* emit_tanhf(Emitter& e, llvm::Value* x);
llvm::Value* emit_powf(Emitter& e, llvm::Value* x, llvm::Value* y);
llvm::Value* emit_expm1f(Emitter& e, llvm::Value* x);
llvm::Value* emit_log1pf(Emitter& e, llvm::Value* x);
llvm::Value* emit_erff(Emitter& e, llvm::Value* x);
llvm::Value* emit_tanf(Emitter& e, llvm::Value* x);
llvm::Value* emit_asinf(Emitter& e, llvm::Value* x);
llvm::Value* emit_acosf(Emitter& e, llvm::Value* x);
llvm::Value* emit_atanf(Emitter& e, llvm::Value* x);
llvm::Value* emit_sinhf(Emitter& e, llvm::Value* x);
llvm::Value* emit_coshf(Emitter& e, llvm::Value* x);
llvm::Value* emit_asinhf(Emitter& e, llvm::Value* x);
llvm::Value* emit_acoshf(Emitter& e, llvm::Value* x);
llvm::Value* emit_atanhf(Emitter& e, llvm::Value* x);
llvm::Value* emit_log2f(Emitter& e, llvm::Value* x);
llvm::Value* emit_log10f(Emitter& e, llvm::Value* x);
llvm::Value* emit_exp2f(Emitter& e, llvm::Value* x);
llvm::Value* emit_atan2f(Emitter& e, llvm::Value* y, llvm::Value* x);
// The lane functions behind the emitters above (vector_variants.cpp).
std::vector<const LaneFn*> float_math_lane_fns();

// ---- philox.cpp ----
// The value (in repr_type(v.dtype)) of a VOp::Philox node for element `index`.
llvm::Value* emit_philox(Emitter& e, const jit::Value& v, llvm::Value* index, llvm::Value* seed,
                         llvm::Value* offset);
// The lane function behind it: the Philox4x32-10 generator.
std::vector<const LaneFn*> philox_lane_fns();

// ---- lower_kernel.cpp ----
// Defines `symbol` with the KernelFn signature in e.mod, computing k.
llvm::Function* lower_kernel(Emitter& e, const jit::Kernel& k, const std::string& symbol);

// ---- loop_hints.cpp ----
// The loop metadata an innermost loop's latch carries (0 / false: LLVM's
// own choice): llvm.loop.interleave.count, llvm.loop.vectorize.width and
// llvm.loop.vectorize.predicate.enable (a masked last vector, no scalar
// remainder).
struct LoopHints {
  int interleave = 0;
  int width = 0;
  bool fold_tail = false;
  // > 0: the loop runs as two, its iterations up to a multiple of split
  // (no remainder), then the rest with its tail folded (one masked vector).
  int split = 0;
  // the second of those loops, labelled kKilnTailLoop (for dumps and tests)
  bool tail = false;
};
// The loop property the vectorized tail loop of a split carries.
inline constexpr const char* kKilnTailLoop = "kiln.loop.tail";
// The instructions of a partial vector's page test (pipeline.cpp,
// UnmaskFullVectors), which a loop's length leaves out.
inline constexpr const char* kKilnPageTest = "kiln.page.test";
// Tags the instructions among `values` with metadata `kind` (kKilnPageTest,
// stream_stores.h's kKilnStreamTest): tests a pass added on an address,
// which a loop's length for code generation (pipeline.cpp) leaves out.
inline void tag_instructions(std::initializer_list<llvm::Value*> values, const char* kind) {
  for (llvm::Value* v : values)
    if (auto* i = llvm::dyn_cast<llvm::Instruction>(v)) i->setMetadata(kind, llvm::MDNode::get(i->getContext(), {}));
}
// The hints for loop statement s of k; wide_vectors: Emitter::wide_vectors.
LoopHints loop_hints(const jit::Kernel& k, const jit::Stmt& s, bool wide_vectors);
// Whether code generation hoists loop invariants out of k's loops (early
// machine LICM; see pipeline.cpp): not for a kernel of several inner loops
// (a row kernel: softmax) that evaluates inline math polynomials, nor for
// one that draws random numbers (the Philox rounds are a loop inside it).
bool hoist_machine_invariants(const jit::Kernel& k);

}  // namespace kiln::codegen::llvmcg
