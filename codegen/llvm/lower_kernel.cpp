// Lowers a jit::Kernel to an LLVM function with the KernelFn signature.
//
// Shape of the output: the exported function loads the buffer pointers and
// calls an internal always-inline body whose buffer parameters are `noalias`
// (inputs also `readonly`), so after inlining every load and store carries
// alias-scope metadata saying that different buffers never alias. Loops are
// emitted guarded and rotated (preheader -> body/latch -> exit, one phi for
// the induction variable, `lo < hi` checked once before entry), the form
// LLVM's loop vectorizer expects; the parallel loop runs [begin, min(end,
// extent)). Accumulators are allocas (promoted to phis by SROA); one with
// lanes is an array alloca of its runtime count, made on entry (a
// scan's row of running values, indexed by its lane).
//
// Values are emitted at their first use and cached per loop scope: a cached
// value is reused wherever it dominates (same or enclosing scope, emitted
// earlier) and dropped when its scope closes, when a Store writes a buffer it
// loads, or when an AccInit / AccUpdate changes an accumulator it reads
// (and, on entry to a loop, for everything the loop body writes). LLVM's LICM
// and GVN then hoist and merge what is loop-invariant.
#include <algorithm>
#include <limits>

#include <llvm/IR/Intrinsics.h>

#include "codegen/llvm/emitter.h"
#include "kiln/error.h"

namespace kiln::codegen::llvmcg {

using jit::Combiner;
using jit::Stmt;
using jit::StmtKind;
using jit::ValueId;
using jit::VOp;

namespace {

// Ops lowered to inline polynomials (float_math.cpp) or, for random
// numbers, to Philox rounds and a transform (philox.cpp).
bool is_vector_math(const jit::Value& v) {
  switch (v.op) {
    case VOp::Exp:
    case VOp::Log:
    case VOp::Sin:
    case VOp::Cos:
    case VOp::Tanh:
    case VOp::Expm1:
    case VOp::Log1p:
    case VOp::Erf:
    case VOp::Tan:
    case VOp::Asin:
    case VOp::Acos:
    case VOp::Atan:
    case VOp::Sinh:
    case VOp::Cosh:
    case VOp::Asinh:
    case VOp::Acosh:
    case VOp::Atanh:
    case VOp::Log2:
    case VOp::Log10:
    case VOp::Exp2:
    case VOp::Atan2:
    case VOp::Sigmoid:
    case VOp::Pow:
    case VOp::Philox: return true;
    default: return false;
  }
}

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

// A set of small ids (buffer slots or accumulators) as bits.
struct Bits {
  std::vector<uint64_t> w;
  void set(int i) {
    if (w.size() <= static_cast<size_t>(i / 64)) w.resize(i / 64 + 1, 0);
    w[i / 64] |= uint64_t{1} << (i % 64);
  }
  void merge(const Bits& o) {
    if (w.size() < o.w.size()) w.resize(o.w.size(), 0);
    for (size_t j = 0; j < o.w.size(); ++j) w[j] |= o.w[j];
  }
  bool intersects(const Bits& o) const {
    for (size_t j = 0; j < w.size() && j < o.w.size(); ++j)
      if (w[j] & o.w[j]) return true;
    return false;
  }
  bool empty() const {
    for (uint64_t x : w)
      if (x) return false;
    return true;
  }
};

class Lowering {
 public:
  Lowering(Emitter& e, const jit::Kernel& k) : e_(e), k_(k) {}

  llvm::Function* run(const std::string& symbol) {
    validate();
    llvm::Function* body = build_body(symbol + ".body");
    return build_wrapper(symbol, body);
  }

 private:
  struct Acc {
    llvm::AllocaInst* val = nullptr;
    llvm::AllocaInst* idx = nullptr;  // keeps_position: ArgMax / ArgMin / CumMax / CumMin
  };

  Emitter& e_;
  const jit::Kernel& k_;
  std::vector<llvm::Value*> bufs_;
  llvm::Value* params_ = nullptr;
  llvm::Value* begin_ = nullptr;
  llvm::Value* end_ = nullptr;
  std::vector<llvm::Value*> loop_iv_;
  std::vector<Acc> accs_;
  std::vector<Bits> reads_accs_, reads_bufs_;  // per value, transitively
  std::vector<llvm::Value*> cache_;
  std::vector<std::vector<ValueId>> scopes_;   // ids cached in each open scope

  // ---- checks ----
  void validate() {
    const int n = static_cast<int>(k_.values.size());
    reads_accs_.assign(n, {});
    reads_bufs_.assign(n, {});
    for (int id = 0; id < n; ++id) {
      const jit::Value& v = k_.values[id];
      for (ValueId a : v.args) {
        if (a < 0) continue;
        KILN_INTERNAL_ASSERT(a < id, "kernel ", k_.name, ": value ", id, " uses later value ", a);
        reads_accs_[id].merge(reads_accs_[a]);
        reads_bufs_[id].merge(reads_bufs_[a]);
      }
      auto need_args = [&](int count) {
        for (int j = 0; j < count; ++j)
          KILN_INTERNAL_ASSERT(v.args[j] >= 0, "kernel ", k_.name, ": value ", id, " (VOp ",
                               static_cast<int>(v.op), ") lacks operand ", j);
      };
      switch (v.op) {
        case VOp::LoopIndex:
          KILN_INTERNAL_ASSERT(v.a >= 0 && v.a < k_.num_loops, "bad loop id ", v.a);
          break;
        case VOp::Param:
          KILN_INTERNAL_ASSERT(v.a >= 0 && v.a < k_.num_params, "bad param slot ", v.a);
          break;
        case VOp::IntConst: case VOp::Const: break;
        case VOp::Load:
          KILN_INTERNAL_ASSERT(v.a >= 0 && v.a < static_cast<int>(k_.buffers.size()),
                               "bad buffer slot ", v.a);
          need_args(1);
          reads_bufs_[id].set(v.a);
          break;
        case VOp::Philox:
          KILN_INTERNAL_ASSERT(v.a >= 0 && v.a < k_.num_params && v.b >= 0 && v.b < k_.num_params,
                               "bad Philox seed / offset params ", v.a, ", ", v.b);
          need_args(1);
          break;
        case VOp::AccRead:
        case VOp::AccIndex:
          KILN_INTERNAL_ASSERT(v.a >= 0 && v.a < static_cast<int>(k_.accs.size()) &&
                                   (v.op == VOp::AccRead || keeps_position(k_.accs[v.a].combiner)),
                               "bad accumulator ", v.a);
          KILN_INTERNAL_ASSERT((v.args[0] >= 0) == (k_.accs[v.a].lanes >= 0), "kernel ", k_.name,
                               ": a read of accumulator ", v.a, " names a lane iff it has lanes");
          reads_accs_[id].set(v.a);
          break;
        case VOp::Add: case VOp::Sub: case VOp::Mul: case VOp::Div: case VOp::Mod:
        case VOp::Pow: case VOp::Atan2: case VOp::Max: case VOp::Min: case VOp::Eq: case VOp::Ne:
        case VOp::Lt: case VOp::Le: case VOp::Gt: case VOp::Ge:
          need_args(2);
          break;
        case VOp::Where: need_args(3); break;
        default: need_args(1); break;
      }
    }
    cache_.assign(n, nullptr);
    loop_iv_.assign(static_cast<size_t>(std::max(k_.num_loops, 0)), nullptr);
  }

  // ---- functions ----
  llvm::Function* build_body(const std::string& name) {
    std::vector<llvm::Type*> types(k_.buffers.size(), e_.b.getPtrTy());
    types.push_back(e_.b.getPtrTy());
    types.push_back(e_.i64());
    types.push_back(e_.i64());
    auto* fty = llvm::FunctionType::get(e_.b.getVoidTy(), types, false);
    auto* f = llvm::Function::Create(fty, llvm::Function::InternalLinkage, name, &e_.mod);
    e_.set_common_attrs(f);
    avoid_gathers(f);
    f->addFnAttr(llvm::Attribute::AlwaysInline);
    const unsigned nb = static_cast<unsigned>(k_.buffers.size());
    if (k_.num_params > 0) f->addDereferenceableParamAttr(nb, static_cast<uint64_t>(k_.num_params) * 8);
    for (unsigned i = 0; i <= nb; ++i) {
      f->addParamAttr(i, llvm::Attribute::NoAlias);
      f->addParamAttr(i, llvm::Attribute::NoCapture);
      if (i == nb || !k_.buffers[i].output) f->addParamAttr(i, llvm::Attribute::ReadOnly);
      bufs_.push_back(f->getArg(i));
    }
    bufs_.pop_back();
    params_ = f->getArg(nb);
    begin_ = f->getArg(nb + 1);
    end_ = f->getArg(nb + 2);
    e_.b.SetInsertPoint(llvm::BasicBlock::Create(e_.ctx, "entry", f));
    scopes_.emplace_back();
    for (const jit::Accumulator& a : k_.accs) {
      // a row's count is computed here, in the entry block (params and
      // constants only): the allocas are made once per call
      llvm::Value* n = a.lanes >= 0 ? value(a.lanes) : nullptr;
      Acc acc;
      acc.val = e_.b.CreateAlloca(repr_type(e_, a.dtype), n);
      if (keeps_position(a.combiner)) acc.idx = e_.b.CreateAlloca(e_.i64(), n);
      if (n) {
        acc.val->setAlignment(llvm::Align(64));
        if (acc.idx) acc.idx->setAlignment(llvm::Align(64));
      }
      accs_.push_back(acc);
    }
    for (const Stmt& s : k_.body) stmt(s);
    e_.b.CreateRetVoid();
    return f;
  }

  llvm::Function* build_wrapper(const std::string& name, llvm::Function* body) {
    auto& b = e_.b;
    auto* fty = llvm::FunctionType::get(b.getVoidTy(),
                                        {b.getPtrTy(), b.getPtrTy(), e_.i64(), e_.i64()}, false);
    auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, &e_.mod);
    e_.set_common_attrs(f);
    avoid_gathers(f);
    for (unsigned i = 0; i < 2; ++i) {
      f->addParamAttr(i, llvm::Attribute::NoCapture);
      f->addParamAttr(i, llvm::Attribute::ReadOnly);
    }
    // every param readable anywhere: a param read only under a guard
    // (guarded_load's index, sunk into its block) still hoists out of the
    // loop instead of turning into a masked gather of the same slot
    if (k_.num_params > 0) {
      f->addDereferenceableParamAttr(1, static_cast<uint64_t>(k_.num_params) * 8);
      f->addParamAttr(1, llvm::Attribute::getWithAlignment(e_.ctx, llvm::Align(8)));
    }
    b.SetInsertPoint(llvm::BasicBlock::Create(e_.ctx, "entry", f));
    std::vector<llvm::Value*> args;
    for (size_t i = 0; i < k_.buffers.size(); ++i) {
      llvm::Value* slot = b.CreateConstInBoundsGEP1_64(b.getPtrTy(), f->getArg(0), i);
      args.push_back(b.CreateAlignedLoad(b.getPtrTy(), slot, llvm::Align(8)));
    }
    args.push_back(f->getArg(1));
    args.push_back(f->getArg(2));
    args.push_back(f->getArg(3));
    b.CreateCall(body, args);
    b.CreateRetVoid();
    return f;
  }

  // ---- value cache ----
  void remember(ValueId id, llvm::Value* v) {
    cache_[id] = v;
    scopes_.back().push_back(id);
  }
  void forget(const Bits& accs, const Bits& bufs) {
    if (accs.empty() && bufs.empty()) return;
    for (size_t id = 0; id < cache_.size(); ++id)
      if (cache_[id] && (reads_accs_[id].intersects(accs) || reads_bufs_[id].intersects(bufs)))
        cache_[id] = nullptr;
  }
  void writes_of(const Stmt& s, Bits& accs, Bits& bufs) {
    switch (s.kind) {
      case StmtKind::Loop:
        for (const Stmt& c : s.body) writes_of(c, accs, bufs);
        break;
      case StmtKind::Store: bufs.set(s.buffer); break;
      case StmtKind::AccInit:
      case StmtKind::AccUpdate: accs.set(s.acc); break;
    }
  }

  llvm::Value* value(ValueId id) {
    KILN_INTERNAL_ASSERT(id >= 0 && id < static_cast<ValueId>(k_.values.size()), "kernel ",
                         k_.name, ": bad value id ", id);
    if (cache_[id]) return cache_[id];
    const jit::Value& v = k_.values[id];
    llvm::Value* r = compute(v);
    KILN_INTERNAL_ASSERT(r->getType() == repr_type(e_, v.dtype), "kernel ", k_.name, ": value ",
                         id, " (VOp ", static_cast<int>(v.op), ") of dtype ", v.dtype,
                         " computed with a mismatched type (operand dtypes inconsistent?)");
    remember(id, r);
    return r;
  }

  llvm::Value* param(int slot) {
    llvm::Value* p = e_.b.CreateConstInBoundsGEP1_64(e_.i64(), params_, slot);
    return e_.b.CreateAlignedLoad(e_.i64(), p, llvm::Align(8));
  }

  llvm::Value* compute(const jit::Value& v) {
    switch (v.op) {
      case VOp::LoopIndex:
        KILN_INTERNAL_ASSERT(loop_iv_[v.a], "kernel ", k_.name, ": LoopIndex of loop ", v.a,
                             " used outside that loop");
        return loop_iv_[v.a];
      case VOp::Param: {  // Int64; with dtype Float64 the slot's bits read as a double
        llvm::Value* p = param(v.a);
        if (v.dtype == DType::Int64) return p;
        if (v.dtype == DType::Float64) return e_.b.CreateBitCast(p, e_.f64());
        return cast_value(e_, p, DType::Int64, v.dtype);
      }
      case VOp::IntConst: return e_.c64(v.i);
      case VOp::Const: return const_value(e_, v.dtype, v.f, v.i);
      case VOp::Load: {
        const DType bt = k_.buffers[v.a].dtype;
        if (v.args[1] >= 0) return guarded_load(v);
        llvm::Value* x = load_widen(e_, bufs_[v.a], value(v.args[0]), bt);
        return cast_value(e_, x, bt, v.dtype);
      }
      case VOp::Philox: return emit_philox(e_, v, value(v.args[0]), param(v.a), param(v.b));
      case VOp::AccRead: return acc_read(v);
      case VOp::AccIndex:
        return cast_value(e_, e_.b.CreateLoad(e_.i64(), at(accs_[v.a].idx, v.args[0])), DType::Int64, v.dtype);
      default: break;
    }
    llvm::Value* args[3];
    int n = 0;
    for (ValueId a : v.args)
      if (a >= 0) args[n++] = value(a);
    return emit_elementwise(e_, v, k_.values[v.args[0]].dtype, llvm::ArrayRef(args, n));
  }

  // A kernel without guarded loads vectorizes no load as a gather: LLVM's
  // cost model picks one for a lone read at a constant step (`x[:, ::2] *
  // 2`), where loading the two vectors it spans and shuffling is 8x faster
  // on Zen 5 (24 ms -> 3 ms at [4096, 4096], 1 thread; a runtime step ran
  // scalar in 3.2 ms); a pooling window's taps read as one interleaved
  // group either way. Under a guard that varies along the loop (padding's
  // columns), the alternative to a masked gather is a branch per lane,
  // slower (a padded 3 x 3 max pool with indices 11 -> 25 ms): gathers stay.
  void avoid_gathers(llvm::Function* f) const {
    for (const jit::Value& v : k_.values)
      if (v.op == VOp::Load && v.args[1] >= 0) return;
    // (an x86 tuning flag: another target would warn about it)
    if (e_.features.find("+sse2") != std::string::npos)
      f->addFnAttr("target-features", e_.features + ",+prefer-no-gather");
  }

  // A guarded load (kernel_ir.h): the read in a block of its own, taken
  // where the guard holds; the loop vectorizer turns the block into a
  // masked load at the (affine) index.
  llvm::Value* guarded_load(const jit::Value& v) {
    auto& b = e_.b;
    const DType bt = k_.buffers[v.a].dtype;
    llvm::Value* at = value(v.args[0]);
    llvm::Value* guard = value(v.args[1]);
    llvm::Value* other = value(v.args[2]);
    llvm::BasicBlock* from = b.GetInsertBlock();
    llvm::Function* f = from->getParent();
    llvm::BasicBlock* read = llvm::BasicBlock::Create(e_.ctx, "guarded", f);
    llvm::BasicBlock* join = llvm::BasicBlock::Create(e_.ctx, "guarded.join", f);
    b.CreateCondBr(guard, read, join);
    b.SetInsertPoint(read);
    llvm::Value* x = cast_value(e_, load_widen(e_, bufs_[v.a], at, bt), bt, v.dtype);
    llvm::BasicBlock* read_end = b.GetInsertBlock();
    b.CreateBr(join);
    b.SetInsertPoint(join);
    llvm::PHINode* phi = b.CreatePHI(x->getType(), 2);
    phi->addIncoming(x, read_end);
    phi->addIncoming(other, from);
    return phi;
  }

  // ---- accumulators ----
  static bool is_arg(Combiner c) { return c == Combiner::ArgMax || c == Combiner::ArgMin; }

  // An accumulator's storage (val or idx), or with lanes the lane's element.
  llvm::Value* at(llvm::AllocaInst* slot, ValueId lane) {
    if (lane < 0) return slot;
    return e_.b.CreateInBoundsGEP(slot->getAllocatedType(), slot, value(lane));
  }

  llvm::Value* acc_read(const jit::Value& v) {
    const jit::Accumulator& a = k_.accs[v.a];
    const Acc& acc = accs_[v.a];
    if (is_arg(a.combiner))
      return cast_value(e_, e_.b.CreateLoad(e_.i64(), at(acc.idx, v.args[0])), DType::Int64, v.dtype);
    return cast_value(e_, e_.b.CreateLoad(repr_type(e_, a.dtype), at(acc.val, v.args[0])), a.dtype, v.dtype);
  }

  llvm::Value* identity(const jit::Accumulator& a) {
    const DType t = a.dtype;
    const double inf = std::numeric_limits<double>::infinity();
    switch (a.combiner) {
      case Combiner::Sum: return const_value(e_, t, 0.0, 0);
      case Combiner::LogAddExp: return const_value(e_, t, -std::numeric_limits<double>::infinity(), 0);
      case Combiner::Prod: return const_value(e_, t, 1.0, 1);
      case Combiner::All: return e_.b.getTrue();
      case Combiner::Any: return e_.b.getFalse();
      case Combiner::Max:
      case Combiner::ArgMax:
      case Combiner::CumMax:  // never compared: the first update takes its value
        switch (t) {
          case DType::Bool: return e_.b.getFalse();
          case DType::UInt8: return e_.c64(0);
          case DType::Int32: return e_.c64(std::numeric_limits<int32_t>::min());
          case DType::Int64: return e_.c64(std::numeric_limits<int64_t>::min());
          default: return const_value(e_, t, -inf, 0);
        }
      case Combiner::Min:
      case Combiner::ArgMin:
      case Combiner::CumMin:
        switch (t) {
          case DType::Bool: return e_.b.getTrue();
          case DType::UInt8: return e_.c64(255);
          case DType::Int32: return e_.c64(std::numeric_limits<int32_t>::max());
          case DType::Int64: return e_.c64(std::numeric_limits<int64_t>::max());
          default: return const_value(e_, t, inf, 0);
        }
    }
    KILN_INTERNAL_ASSERT(false, "unknown combiner ", static_cast<int>(a.combiner));
  }

  // Whether candidate v beats the current best (the reference's rule: strictly
  // better, a NaN beats everything, nothing beats a NaN).
  llvm::Value* beats(bool is_max, DType t, llvm::Value* v, llvm::Value* best) {
    auto& b = e_.b;
    if (is_float_dtype(t)) {
      llvm::Value* better = is_max ? b.CreateFCmpUGT(v, best) : b.CreateFCmpULT(v, best);
      return b.CreateAnd(better, b.CreateFCmpORD(best, best));
    }
    if (t == DType::Bool) return is_max ? b.CreateICmpUGT(v, best) : b.CreateICmpULT(v, best);
    return is_max ? b.CreateICmpSGT(v, best) : b.CreateICmpSLT(v, best);
  }

  void acc_init(const Stmt& s) {
    const jit::Accumulator& a = k_.accs[s.acc];
    e_.b.CreateStore(identity(a), at(accs_[s.acc].val, s.lane));
    if (keeps_position(a.combiner)) e_.b.CreateStore(e_.c64(-1), at(accs_[s.acc].idx, s.lane));
  }

  void acc_update(const Stmt& s) {
    auto& b = e_.b;
    const jit::Accumulator& a = k_.accs[s.acc];
    const Acc& acc = accs_[s.acc];
    const DType t = a.dtype;
    llvm::Value* x = value(s.value);
    const DType xt = k_.values[s.value].dtype;
    llvm::Value* val = at(acc.val, s.lane);
    llvm::Value* idx = acc.idx ? at(acc.idx, s.lane) : nullptr;
    llvm::Value* cur = b.CreateLoad(repr_type(e_, t), val);
    llvm::Value* next = nullptr;
    switch (a.combiner) {
      case Combiner::Sum:
      case Combiner::Prod: {
        const bool sum = a.combiner == Combiner::Sum;
        llvm::Value* v = cast_value(e_, x, xt, t);
        if (t == DType::Bool) next = sum ? b.CreateOr(cur, v) : b.CreateAnd(cur, v);
        else if (is_float_dtype(t)) {
          // Reassociation lets the loop vectorizer split the accumulator into
          // vector lanes: the order is fixed by the code, not by threads, so
          // results stay deterministic (and agree with the reference's
          // double accumulation within the stated tolerances). A scan's
          // running values are each stored: kept in order, as the reference.
          llvm::IRBuilderBase::FastMathFlagGuard guard(b);
          llvm::FastMathFlags fmf;
          fmf.setAllowReassoc(!a.running);
          b.setFastMathFlags(fmf);
          next = canonicalize(e_, sum ? b.CreateFAdd(cur, v) : b.CreateFMul(cur, v), t);
        }
        else next = canonicalize(e_, sum ? b.CreateAdd(cur, v) : b.CreateMul(cur, v), t);
        break;
      }
      case Combiner::Max:
      case Combiner::Min: {
        llvm::Value* v = cast_value(e_, x, xt, t);
        if (is_float_dtype(t)) {
          // llvm.maximum / llvm.minimum propagate NaN, as the reference's
          // rule, and the loop vectorizer recognizes them as a reduction
          // (the compare-and-select form stays scalar). -0 orders below +0,
          // in the reference too.
          next = a.combiner == Combiner::Max ? b.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, cur, v)
                                             : b.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, cur, v);
          break;
        }
        next = b.CreateSelect(beats(a.combiner == Combiner::Max, t, v, cur), v, cur);
        break;
      }
      case Combiner::ArgMax:
      case Combiner::ArgMin: {
        KILN_INTERNAL_ASSERT(s.index >= 0, "kernel ", k_.name, ": ArgMax/ArgMin update without index");
        llvm::Value* v = cast_value(e_, x, xt, t);
        llvm::Value* pos = cast_value(e_, value(s.index), k_.values[s.index].dtype, DType::Int64);
        llvm::Value* where = b.CreateLoad(e_.i64(), idx);
        llvm::Value* take = b.CreateOr(b.CreateICmpSLT(where, e_.c64(0)),
                                       beats(a.combiner == Combiner::ArgMax, t, v, cur));
        next = b.CreateSelect(take, v, cur);
        b.CreateStore(b.CreateSelect(take, pos, where), idx);
        break;
      }
      case Combiner::LogAddExp: {
        // PyTorch's _log_add_exp_helper(v, cur): min / max as std::min /
        // std::max (a NaN cur is both), log1p(exp(min - max)) + max unless
        // both are the same infinity (then v)
        KILN_INTERNAL_ASSERT(is_float_dtype(t), "kernel ", k_.name, ": LogAddExp in ", t);
        llvm::Value* v = cast_value(e_, x, xt, t);
        const bool dbl = t == DType::Float64;
        llvm::Value* cur_nan = b.CreateFCmpUNO(cur, cur);
        llvm::Value* mn = b.CreateSelect(cur_nan, cur, b.CreateSelect(b.CreateFCmpOLT(cur, v), cur, v));
        llvm::Value* mx = b.CreateSelect(cur_nan, cur, b.CreateSelect(b.CreateFCmpOLT(v, cur), cur, v));
        llvm::Value* finite = b.CreateFCmpONE(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, mn),
                                              const_value(e_, t, std::numeric_limits<double>::infinity(), 0));
        llvm::Value* combine = b.CreateOr(b.CreateFCmpUNE(mn, mx), finite);
        llvm::Value* sum = b.CreateFAdd(
            e_.libcall(dbl ? "log1p" : "log1pf", {e_.libcall(dbl ? "exp" : "expf", {b.CreateFSub(mn, mx)})}), mx);
        next = b.CreateSelect(combine, sum, v);
        break;
      }
      case Combiner::CumMax:
      case Combiner::CumMin: {
        // PyTorch's cummax: take v when it is a NaN or, the kept value not
        // being one, v >= kept (<= for cummin); the first update always does
        llvm::Value* v = cast_value(e_, x, xt, t);
        llvm::Value* pos = cast_value(e_, value(s.index), k_.values[s.index].dtype, DType::Int64);
        llvm::Value* where = b.CreateLoad(e_.i64(), idx);
        const bool is_max = a.combiner == Combiner::CumMax;
        llvm::Value* wins;
        if (is_float_dtype(t))
          wins = b.CreateOr(b.CreateFCmpUNO(v, v),
                            b.CreateAnd(b.CreateFCmpORD(cur, cur), is_max ? b.CreateFCmpOGE(v, cur)
                                                                          : b.CreateFCmpOLE(v, cur)));
        else if (t == DType::Bool)
          wins = is_max ? b.CreateICmpUGE(v, cur) : b.CreateICmpULE(v, cur);
        else wins = is_max ? b.CreateICmpSGE(v, cur) : b.CreateICmpSLE(v, cur);
        llvm::Value* take = b.CreateOr(b.CreateICmpSLT(where, e_.c64(0)), wins);
        next = b.CreateSelect(take, v, cur);
        b.CreateStore(b.CreateSelect(take, pos, where), idx);
        break;
      }
      case Combiner::All:
      case Combiner::Any: {
        llvm::Value* v = cast_value(e_, x, xt, DType::Bool);
        KILN_INTERNAL_ASSERT(t == DType::Bool, "All/Any accumulate in Bool, not ", t);
        next = a.combiner == Combiner::All ? b.CreateAnd(cur, v) : b.CreateOr(cur, v);
        break;
      }
    }
    b.CreateStore(next, val);
  }

  // ---- statements ----
  void stmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Loop: loop(s); return;
      case StmtKind::Store: {
        KILN_INTERNAL_ASSERT(s.buffer >= 0 && s.buffer < static_cast<int>(k_.buffers.size()),
                             "kernel ", k_.name, ": store to bad buffer slot ", s.buffer);
        llvm::Value* idx = value(s.index);
        llvm::Value* v = value(s.value);
        store_narrow(e_, bufs_[s.buffer], idx, v, k_.values[s.value].dtype,
                     k_.buffers[s.buffer].dtype);
        Bits bufs;
        bufs.set(s.buffer);
        forget({}, bufs);
        return;
      }
      case StmtKind::AccInit:
      case StmtKind::AccUpdate: {
        KILN_INTERNAL_ASSERT(s.acc >= 0 && s.acc < static_cast<int>(k_.accs.size()), "kernel ",
                             k_.name, ": bad accumulator ", s.acc);
        KILN_INTERNAL_ASSERT((s.lane >= 0) == (k_.accs[s.acc].lanes >= 0), "kernel ", k_.name,
                             ": a statement on accumulator ", s.acc, " names a lane iff it has lanes");
        if (s.kind == StmtKind::AccInit) acc_init(s);
        else acc_update(s);
        Bits accs;
        accs.set(s.acc);
        forget(accs, {});
        return;
      }
    }
  }

  void loop(const Stmt& s) {
    auto& b = e_.b;
    KILN_INTERNAL_ASSERT(s.loop >= 0 && s.loop < k_.num_loops && !loop_iv_[s.loop], "kernel ",
                         k_.name, ": bad or nested-twice loop id ", s.loop);
    Bits wa, wb;
    writes_of(s, wa, wb);
    forget(wa, wb);  // values read in the body must see the body's writes
    llvm::Value* extent = value(s.extent);
    llvm::Value* lo = s.parallel ? begin_ : e_.c64(0);
    llvm::Value* hi = s.parallel ? e_.intrinsic(llvm::Intrinsic::smin, {end_, extent}) : extent;
    llvm::Function* f = b.GetInsertBlock()->getParent();
    const std::string tag = "loop" + std::to_string(s.loop);
    llvm::BasicBlock* pre = b.GetInsertBlock();
    llvm::BasicBlock* body = llvm::BasicBlock::Create(e_.ctx, tag + ".body", f);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(e_.ctx, tag + ".exit", f);
    b.CreateCondBr(b.CreateICmpSLT(lo, hi), body, exit);
    b.SetInsertPoint(body);
    llvm::PHINode* iv = b.CreatePHI(e_.i64(), 2, tag + ".i");
    iv->addIncoming(lo, pre);
    loop_iv_[s.loop] = iv;
    scopes_.emplace_back();
    for (const Stmt& c : s.body) stmt(c);
    for (ValueId id : scopes_.back()) cache_[id] = nullptr;
    scopes_.pop_back();
    loop_iv_[s.loop] = nullptr;
    llvm::Value* next = b.CreateAdd(iv, e_.c64(1), tag + ".next", /*HasNUW=*/true, /*HasNSW=*/true);
    iv->addIncoming(next, b.GetInsertBlock());
    llvm::BranchInst* latch = b.CreateCondBr(b.CreateICmpSLT(next, hi), body, exit);
    // A float32 sum into a float64 accumulator: LLVM's default (4 vectors
    // of 8 doubles per iteration, 128 bytes, loads folded into the
    // conversions) ran at half the memory bandwidth here (Zen 5; measured:
    // 4.2 ms against 2.2 ms for 4096 x 4096 row sums); 2 vectors do not.
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
    const std::vector<bool> varying = innermost ? varying_in(s) : std::vector<bool>();
    const MapBody computes = map_body(s, varying);
    const bool widening = widening_reduction(s);
    const bool wide_lane_sum = widening && e_.wide_vectors && evaluates_float_math(s, varying);
    const bool wide_move = e_.wide_vectors && !short_loop(s) && moves_float32_only(s, varying);
    // A loop reading at a constant step > 1 (a pooling window's taps, x[:, ::2])
    // loads its interleaved groups as several wide vectors already: one
    // copy of the body a step, or a row as short as a CNN's (16) never
    // reaches the vector loop.
    const bool strided = innermost && reads_strided(s, varying);
    const int interleave = wide_lane_sum || strided ? 1
                           : widening || wide_move  ? 2
                           : (short_loop(s) || computes.lane_math) ? 1
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
    const bool wide_exp = e_.wide_vectors && computes.lane_math && !computes.math_in_double &&
                          !computes.calls_libm && !computes.philox && !short_loop(s);
    const int width =
        wide_lane_sum || wide_move || wide_exp ? 16 : computes.calls_libm ? 4 : computes.philox ? 8 : 0;
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
    const bool fold_tail = computes.philox || wide_exp;
    if (interleave || width || fold_tail) {
      llvm::LLVMContext& c = e_.ctx;
      std::vector<llvm::Metadata*> ops{nullptr};
      auto hint = [&](const char* name, int n, bool flag = false) {
        llvm::Constant* v = flag ? static_cast<llvm::Constant*>(b.getInt1(n != 0)) : b.getInt32(n);
        llvm::Metadata* kv[] = {llvm::MDString::get(c, name), llvm::ConstantAsMetadata::get(v)};
        ops.push_back(llvm::MDNode::get(c, kv));
      };
      if (interleave) hint("llvm.loop.interleave.count", interleave);
      if (width) hint("llvm.loop.vectorize.width", width);
      if (fold_tail) hint("llvm.loop.vectorize.predicate.enable", 1, /*flag=*/true);
      llvm::MDNode* md = llvm::MDNode::getDistinct(c, ops);
      md->replaceOperandWith(0, md);
      latch->setMetadata(llvm::LLVMContext::MD_loop, md);
    }
    b.SetInsertPoint(exit);
  }

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
};

}  // namespace

llvm::Function* lower_kernel(Emitter& e, const jit::Kernel& k, const std::string& symbol) {
  return Lowering(e, k).run(symbol);
}

bool hoist_machine_invariants(const jit::Kernel& k) {
  // innermost loops, counted up to 2
  int inner = 0;
  auto count = [&](auto&& self, const std::vector<Stmt>& body) -> bool {
    bool has_loop = false;
    for (const Stmt& c : body)
      if (c.kind == StmtKind::Loop) {
        has_loop = true;
        if (!self(self, c.body)) ++inner;
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
