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
#include <bit>
#include <limits>

#include <llvm/IR/Intrinsics.h>

#include "codegen/llvm/emitter.h"
#include "codegen/llvm/stage_runtime.h"
#include "kiln/error.h"

namespace kiln::codegen::llvmcg {

using jit::Combiner;
using jit::Stmt;
using jit::StmtKind;
using jit::ValueId;
using jit::VOp;

namespace {

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
    llvm::AllocaInst* kept = nullptr;  // a float cummax / cummin's value (val: its key)
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
      if (i == nb || (!k_.buffers[i].output && !k_.buffers[i].local()))
        f->addParamAttr(i, llvm::Attribute::ReadOnly);
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
      acc.val = e_.b.CreateAlloca(acc_type(a), n);
      if (keeps_position(a.combiner)) acc.idx = e_.b.CreateAlloca(e_.i64(), n);
      if (compares_keys(a) && !is_arg(a.combiner)) acc.kept = e_.b.CreateAlloca(repr_type(e_, a.dtype), n);
      if (n)
        for (llvm::AllocaInst* slot : {acc.val, acc.idx, acc.kept})
          if (slot) slot->setAlignment(llvm::Align(64));
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
      const jit::BufferArg& a = k_.buffers[i];
      if (a.local()) {  // in this call's frame (kernel_ir.h: locals follow the arguments)
        llvm::AllocaInst* t = b.CreateAlloca(
            llvm::ArrayType::get(mem_type(e_, a.dtype), static_cast<uint64_t>(a.local_rows * a.local_cols)));
        t->setAlignment(llvm::Align(64));
        args.push_back(t);
        continue;
      }
      KILN_INTERNAL_ASSERT(i == 0 || !k_.buffers[i - 1].local(), "kernel ", k_.name,
                           ": an argument buffer after a local");
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
      case StmtKind::Store:
      case StmtKind::Stage: bufs.set(s.buffer); break;
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
    if (acc.kept)
      return cast_value(e_, e_.b.CreateLoad(repr_type(e_, a.dtype), at(acc.kept, v.args[0])), a.dtype, v.dtype);
    llvm::Value* x = e_.b.CreateLoad(acc_type(a), at(acc.val, v.args[0]));
    if (keyed(a)) x = e_.b.CreateBitCast(flip_key(x), repr_type(e_, a.dtype));
    return cast_value(e_, x, a.dtype, v.dtype);
  }

  // A float max / min accumulates an integer key of the value's bits that
  // orders as the reference does (-0 below +0; a NaN beats every number,
  // its payload kept): a max of integers (one cycle a step, and a
  // reduction the loop vectorizer splits into lanes) where llvm.maximum
  // lowers on x86 to a chain of five dependent instructions a step, 100 ns
  // for a row of 56 floats.
  static bool keyed(const jit::Accumulator& a) {
    return (a.combiner == Combiner::Max || a.combiner == Combiner::Min) && is_float_dtype(a.dtype);
  }
  // A float argmax / argmin and cummax / cummin compare keys too: every
  // NaN one key above every number (below for the min), -0 the key of +0,
  // so that the reference's rules are one signed compare: "strictly
  // better" for argmax (the first NaN, the first of equal values), "at
  // least as good" for cummax (a NaN taken, then only a NaN; the last of
  // equal values). An argmax's value is never read (acc_read gives the
  // position); a cummax keeps the value it took beside the key (`kept`).
  // The identity lies beyond every key, so the first update always takes
  // its element, and the key's chain from one element to the next is a
  // compare and a select: no test of the position, no float compare into a
  // mask and back (1 thread: argmax(1) of [65536, 10] 3.4 -> 0.89 ms).
  // Not for a row of accumulators (lanes: a scan down columns), whose
  // updates the loop vectorizer runs side by side: there the chain costs
  // nothing and the keys' arithmetic does (cummax(0) of [2048, 3136] 1.2x
  // slower with keys).
  static bool takes_max(Combiner c) { return c == Combiner::ArgMax || c == Combiner::CumMax; }
  static bool compares_keys(const jit::Accumulator& a) {
    return (is_arg(a.combiner) || a.combiner == Combiner::CumMax || a.combiner == Combiner::CumMin) &&
           is_float_dtype(a.dtype) && a.lanes < 0;
  }
  llvm::Type* acc_type(const jit::Accumulator& a) {
    if (!keyed(a) && !compares_keys(a)) return repr_type(e_, a.dtype);
    return a.dtype == DType::Float64 ? e_.i64() : llvm::Type::getInt32Ty(e_.ctx);
  }
  // bits -> key and back (the map is its own inverse): negative numbers'
  // magnitude bits flipped, so that signed integer order is the floats'.
  llvm::Value* flip_key(llvm::Value* k) {
    const unsigned w = k->getType()->getIntegerBitWidth();
    return e_.b.CreateXor(k, e_.b.CreateLShr(e_.b.CreateAShr(k, w - 1), 1));
  }
  // The key of v (in repr_type(a.dtype)) for keyed accumulator a.
  llvm::Value* order_key(llvm::Value* v, const jit::Accumulator& a) {
    auto& b = e_.b;
    const bool is_max = a.combiner == Combiner::Max;
    llvm::Type* it = acc_type(a);
    const unsigned w = it->getIntegerBitWidth();
    llvm::Value* bits = b.CreateBitCast(v, it);
    // a NaN above every number for a max (sign cleared), below for a min (set)
    const llvm::APInt sign = llvm::APInt::getSignMask(w);
    llvm::Value* nan_bits = is_max ? b.CreateAnd(bits, llvm::ConstantInt::get(it, ~sign))
                                   : b.CreateOr(bits, llvm::ConstantInt::get(it, sign));
    return flip_key(b.CreateSelect(b.CreateFCmpUNO(v, v), nan_bits, bits));
  }

  // The key of v (in repr_type(a.dtype)) for compares_keys accumulator a.
  llvm::Value* canonical_key(llvm::Value* v, const jit::Accumulator& a) {
    auto& b = e_.b;
    llvm::Type* it = acc_type(a);
    const unsigned w = it->getIntegerBitWidth();
    const llvm::APInt quiet = llvm::APInt::getOneBitSet(w, w == 64 ? 51 : 22);
    const llvm::APInt exponent = w == 64 ? llvm::APInt(64, 0x7FF0000000000000ull) : llvm::APInt(32, 0x7F800000u);
    llvm::APInt nan = exponent | quiet;
    if (!takes_max(a.combiner)) nan.setSignBit();
    llvm::Value* bits = b.CreateSelect(b.CreateFCmpOEQ(v, llvm::ConstantFP::get(v->getType(), 0.0)),
                                       llvm::ConstantInt::get(it, 0), b.CreateBitCast(v, it));
    return flip_key(b.CreateSelect(b.CreateFCmpUNO(v, v), llvm::ConstantInt::get(it, nan), bits));
  }

  llvm::Value* identity(const jit::Accumulator& a) {
    const DType t = a.dtype;
    if (compares_keys(a)) {
      const unsigned w = acc_type(a)->getIntegerBitWidth();
      return llvm::ConstantInt::get(acc_type(a), takes_max(a.combiner) ? llvm::APInt::getSignedMinValue(w)
                                                                        : llvm::APInt::getSignedMaxValue(w));
    }
    const double inf = std::numeric_limits<double>::infinity();
    switch (a.combiner) {
      case Combiner::Sum: return const_value(e_, t, 0.0, 0);
      case Combiner::LogAddExp: return const_value(e_, t, -std::numeric_limits<double>::infinity(), 0);
      case Combiner::Prod: return const_value(e_, t, 1.0, 1);
      case Combiner::All: return e_.b.getTrue();
      case Combiner::Any: return e_.b.getFalse();
      // The lowest value (the highest for the min variants): a cummax's
      // first update takes its element as at least this, an argmax's by
      // its position test.
      case Combiner::Max:
      case Combiner::ArgMax:
      case Combiner::CumMax:
        switch (t) {
          case DType::Bool: return e_.b.getFalse();
          case DType::UInt8: return e_.c64(0);
          case DType::Int32: return e_.c64(std::numeric_limits<int32_t>::min());
          case DType::Int64: return e_.c64(std::numeric_limits<int64_t>::min());
          default: return keyed(a) ? key_of(-inf, a) : const_value(e_, t, -inf, 0);
        }
      case Combiner::Min:
      case Combiner::ArgMin:
      case Combiner::CumMin:
        switch (t) {
          case DType::Bool: return e_.b.getTrue();
          case DType::UInt8: return e_.c64(255);
          case DType::Int32: return e_.c64(std::numeric_limits<int32_t>::max());
          case DType::Int64: return e_.c64(std::numeric_limits<int64_t>::max());
          default: return keyed(a) ? key_of(inf, a) : const_value(e_, t, inf, 0);
        }
    }
    KILN_INTERNAL_ASSERT(false, "unknown combiner ", static_cast<int>(a.combiner));
  }

  // The key of a constant (an identity: +-inf).
  llvm::Value* key_of(double x, const jit::Accumulator& a) {
    const uint64_t bits = a.dtype == DType::Float64 ? std::bit_cast<uint64_t>(x)
                                                    : std::bit_cast<uint32_t>(static_cast<float>(x));
    return flip_key(llvm::ConstantInt::get(acc_type(a), bits));
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
    if (accs_[s.acc].kept) {  // (never read before the first update takes its element)
      const double inf = std::numeric_limits<double>::infinity();
      e_.b.CreateStore(const_value(e_, a.dtype, takes_max(a.combiner) ? -inf : inf, 0), at(accs_[s.acc].kept, s.lane));
    }
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
    llvm::Value* cur = b.CreateLoad(acc_type(a), val);
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
        if (keyed(a)) {  // (keys: see keyed)
          next = b.CreateBinaryIntrinsic(a.combiner == Combiner::Max ? llvm::Intrinsic::smax : llvm::Intrinsic::smin,
                                         cur, order_key(v, a));
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
        if (compares_keys(a)) {
          llvm::Value* key = canonical_key(v, a);
          llvm::Value* take = a.combiner == Combiner::ArgMax ? b.CreateICmpSGT(key, cur) : b.CreateICmpSLT(key, cur);
          next = b.CreateSelect(take, key, cur);
          b.CreateStore(b.CreateSelect(take, pos, where), idx);
          break;
        }
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
        // being one, v >= kept (<= for cummin). Floats compare their keys
        // (compares_keys) where they can, else themselves (the ordered
        // compare is false for a kept NaN), integers themselves; the
        // identity is the lowest key or value (the highest for cummin), so
        // the first update takes v, and the chain from one element to the
        // next is one compare and one select (1 thread, cummax(1) of [1024,
        // 1024]: values and positions 5.8 -> 1.75 ms, values alone 5.9 ->
        // 1.27 ms; a -O3 hand loop of the values 2.8 ms).
        llvm::Value* v = cast_value(e_, x, xt, t);
        llvm::Value* pos = cast_value(e_, value(s.index), k_.values[s.index].dtype, DType::Int64);
        llvm::Value* where = b.CreateLoad(e_.i64(), idx);
        const bool is_max = a.combiner == Combiner::CumMax;
        llvm::Value* take;
        if (acc.kept) {
          llvm::Value* key = canonical_key(v, a);
          take = is_max ? b.CreateICmpSGE(key, cur) : b.CreateICmpSLE(key, cur);
          llvm::Value* kept = at(acc.kept, s.lane);
          b.CreateStore(b.CreateSelect(take, v, b.CreateLoad(v->getType(), kept)), kept);
          v = key;  // (the accumulator holds the key)
        } else if (is_float_dtype(t)) {
          take = b.CreateOr(b.CreateFCmpUNO(v, v), is_max ? b.CreateFCmpOGE(v, cur) : b.CreateFCmpOLE(v, cur));
        } else if (t == DType::Bool) {
          take = is_max ? b.CreateICmpUGE(v, cur) : b.CreateICmpULE(v, cur);
        } else {
          take = is_max ? b.CreateICmpSGE(v, cur) : b.CreateICmpSLE(v, cur);
        }
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
      case StmtKind::Stage: {
        const jit::BufferArg& local = k_.buffers.at(static_cast<size_t>(s.buffer));
        KILN_INTERNAL_ASSERT(local.local() && local.local_rows % 16 == 0 && local.local_cols % 16 == 0 &&
                                 k_.buffers.at(static_cast<size_t>(s.source)).dtype == local.dtype,
                             "kernel ", k_.name, ": a stage into buffer ", s.buffer,
                             ", not a local of its source's dtype and of sides multiples of 16");
        stage(s, local);
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

  // A Stage statement: a call of kiln's function for its element size
  // (stage_runtime.h), which reads the source and writes the local only.
  void stage(const Stmt& s, const jit::BufferArg& local) {
    auto& b = e_.b;
    llvm::Type* ptr = b.getPtrTy();
    llvm::Type* i64 = e_.i64();
    auto* fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, i64, i64, i64, i64, i64, i64}, false);
    const int64_t bytes = static_cast<int64_t>(element_size(local.dtype));
    llvm::FunctionCallee fn = e_.mod.getOrInsertFunction(stage_symbol(bytes), fty);
    if (auto* f = llvm::dyn_cast<llvm::Function>(fn.getCallee()); f && f->arg_size() == 8) {
      f->setDoesNotThrow();
      f->setMemoryEffects(llvm::MemoryEffects::argMemOnly());
      for (unsigned i = 0; i < 2; ++i) f->addParamAttr(i, llvm::Attribute::NoCapture);
      f->addParamAttr(0, llvm::Attribute::WriteOnly);
      f->addParamAttr(1, llvm::Attribute::ReadOnly);
    }
    b.CreateCall(fn, {bufs_[s.buffer], bufs_[s.source], value(s.index), value(s.value), value(s.extent),
                      value(s.cols), e_.c64(local.local_cols), value(s.span)});
  }

  void loop(const Stmt& s) {
    KILN_INTERNAL_ASSERT(s.loop >= 0 && s.loop < k_.num_loops && !loop_iv_[s.loop], "kernel ",
                         k_.name, ": bad or nested-twice loop id ", s.loop);
    Bits wa, wb;
    writes_of(s, wa, wb);
    forget(wa, wb);  // values read in the body must see the body's writes
    llvm::Value* extent = value(s.extent);
    llvm::Value* lo = s.parallel ? begin_ : e_.c64(0);
    llvm::Value* hi = s.parallel ? e_.intrinsic(llvm::Intrinsic::smin, {end_, extent}) : extent;
    LoopHints h = loop_hints(k_, s, e_.wide_vectors);
    if (h.split > 0) {  // (lo is 0: never the parallel loop)
      llvm::Value* mid = e_.b.CreateAnd(hi, e_.c64(-h.split));
      const int64_t block = h.split;
      h.split = 0;
      // entered at mid >= block (for mid > 0 the same): the vectorizer then
      // sees a trip count of whole vector steps and emits no scalar loop
      emit_loop(s, lo, mid, h, block);
      h.fold_tail = true;
      h.tail = true;
      // the rest (under 16 elements) as one 16-lane vector, not LLVM's
      // 2 x 8 of a plain sum: one load to test and branch on, not two
      // (pipeline.cpp, UnmaskFullVectors; x.sum(1) 22.6 -> 21.1 M
      // instructions of compile, callgrind)
      if (e_.wide_vectors) h.width = static_cast<int>(block), h.interleave = 1;
      emit_loop(s, mid, hi, h);
      return;
    }
    emit_loop(s, lo, hi, h);
  }

  void emit_loop(const Stmt& s, llvm::Value* lo, llvm::Value* hi, const LoopHints& h, int64_t min_trip = 1) {
    auto& b = e_.b;
    llvm::Function* f = b.GetInsertBlock()->getParent();
    const std::string tag = "loop" + std::to_string(s.loop);
    llvm::BasicBlock* pre = b.GetInsertBlock();
    llvm::BasicBlock* body = llvm::BasicBlock::Create(e_.ctx, tag + ".body", f);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(e_.ctx, tag + ".exit", f);
    b.CreateCondBr(min_trip > 1 ? b.CreateICmpSGE(b.CreateSub(hi, lo), e_.c64(min_trip)) : b.CreateICmpSLT(lo, hi),
                   body, exit);
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
    if (h.interleave || h.width || h.fold_tail) {
      llvm::LLVMContext& c = e_.ctx;
      std::vector<llvm::Metadata*> ops{nullptr};
      auto hint = [&](const char* name, int n, bool flag = false) {
        llvm::Constant* v = flag ? static_cast<llvm::Constant*>(b.getInt1(n != 0)) : b.getInt32(n);
        llvm::Metadata* kv[] = {llvm::MDString::get(c, name), llvm::ConstantAsMetadata::get(v)};
        ops.push_back(llvm::MDNode::get(c, kv));
      };
      if (h.interleave) hint("llvm.loop.interleave.count", h.interleave);
      if (h.width) hint("llvm.loop.vectorize.width", h.width);
      if (h.fold_tail) hint("llvm.loop.vectorize.predicate.enable", 1, /*flag=*/true);
      if (h.tail) {  // the vectorized loop's own property (LLVM's followup)
        llvm::Metadata* prop[] = {llvm::MDString::get(c, kKilnTailLoop)};
        llvm::Metadata* kv[] = {llvm::MDString::get(c, "llvm.loop.vectorize.followup_vectorized"),
                                llvm::MDNode::get(c, prop)};
        ops.push_back(llvm::MDNode::get(c, kv));
      }
      llvm::MDNode* md = llvm::MDNode::getDistinct(c, ops);
      md->replaceOperandWith(0, md);
      latch->setMetadata(llvm::LLVMContext::MD_loop, md);
    }
    b.SetInsertPoint(exit);
  }
};

}  // namespace

llvm::Function* lower_kernel(Emitter& e, const jit::Kernel& k, const std::string& symbol) {
  return Lowering(e, k).run(symbol);
}

}  // namespace kiln::codegen::llvmcg
