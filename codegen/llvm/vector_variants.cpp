// Lane functions (emitter.h: LaneFn): exp, log, sin, cos, tanh, pow, ... of
// float32 and the Philox generator, which a kernel evaluates as inline IR
// where its loops are vectorized and by calling a scalar twin compiled into kiln
// (runtime_math.h) everywhere else.
//
// Before, each was an always-inline helper inlined before vectorization: a
// vectorized loop then carried the polynomial twice, widened in the vector
// body and scalar in the remainder loop that finishes each row, and
// instruction selection paid for both (softmax's exp, log_softmax's exp
// and log). Now the loop sees a call of the twin that lists vector variants
// (LLVM's `vector-function-abi-variant`, one declaration per width). The
// vectorizer widens the call to the variant of its width; after it,
// define_vector_variants gives the variants it used their bodies (the same
// IR as before, built for vectors through Emitter::lanes) and the inliner
// puts them in place. The remainder and per-row values call the twin,
// compiled once with kiln; a loop that stays scalar for a runtime stride
// (pipeline.cpp decides) gets the scalar body inline, as before.
//
// Measured (callgrind, instructions per cold compile, Ice Lake): chain
// -21%, tanh GELU -17%, sigmoid -21%, sin + cos -28%, pow -31%,
// log_softmax -6%, softmax +6% (its exp loop is now 8 lanes wide, not 4:
// 1.2-1.3x faster); rows narrower than one vector, all remainder, run
// 1.2-1.35x slower through the calls (bench/README.md).
#include <algorithm>
#include <functional>
#include <string>

#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/Attributes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "codegen/llvm/emitter.h"
#include "kiln/error.h"

namespace kiln::codegen::llvmcg {

namespace {

std::vector<const LaneFn*> all_lane_fns() {
  std::vector<const LaneFn*> fns = float_math_lane_fns();
  for (const LaneFn* fn : philox_lane_fns()) fns.push_back(fn);
  return fns;
}

std::string variant_name(const LaneFn& fn, unsigned lanes) {
  return std::string(fn.name) + ".v" + std::to_string(lanes);
}

// The lane function and width of a variant's name (<name>.v<lanes>), or null.
const LaneFn* variant_of(llvm::StringRef name, unsigned* lanes) {
  for (const LaneFn* fn : all_lane_fns()) {
    llvm::StringRef rest = name;
    if (!rest.consume_front(fn->name) || !rest.consume_front(".v")) continue;
    unsigned n = 0;
    if (rest.getAsInteger(10, n)) continue;
    *lanes = n;
    return fn;
  }
  return nullptr;
}

void set_pure(llvm::Function* f) {
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->addFnAttr(llvm::Attribute::WillReturn);
  f->addFnAttr(llvm::Attribute::NoFree);
  f->addFnAttr(llvm::Attribute::NoSync);
  f->setDoesNotAccessMemory();
}

// The kernel's first defined function (they all carry its target).
const llvm::Function* defined_function(const llvm::Module& m) {
  for (const llvm::Function& f : m)
    if (!f.isDeclaration()) return &f;
  return nullptr;
}

// An emitter into m for the kernel's target, for the variants' bodies.
Emitter emitter_for(llvm::Module& m) {
  const llvm::Function* f = defined_function(m);
  KILN_INTERNAL_ASSERT(f != nullptr, "a kernel module without a function");
  return Emitter(m, f->getFnAttribute("target-cpu").getValueAsString().str(),
                 f->getFnAttribute("target-features").getValueAsString().str());
}

}  // namespace

llvm::Value* call_lane_fn(Emitter& e, const LaneFn& fn, llvm::ArrayRef<llvm::Value*> args) {
  KILN_INTERNAL_ASSERT(e.lanes == 0, "lane function ", fn.name, " called inside a vector variant");
  llvm::Function* twin = e.mod.getFunction(fn.twin);
  if (!twin) {
    twin = llvm::Function::Create(fn.type(e), llvm::Function::ExternalLinkage, fn.twin, e.mod);
    set_pure(twin);
  }
  llvm::CallInst* call = e.b.CreateCall(twin, args);
  call->setDoesNotAccessMemory();
  return call;
}

llvm::Value* twin_where(Emitter& e, const char* twin, llvm::Value* arg, llvm::Value* rare, llvm::Value* common) {
  auto& b = e.b;
  llvm::Type* scalar = common->getType()->getScalarType();
  llvm::Function* fn = e.mod.getFunction(twin);
  if (!fn) {
    fn = llvm::Function::Create(llvm::FunctionType::get(scalar, {arg->getType()->getScalarType()}, false),
                                llvm::Function::ExternalLinkage, twin, e.mod);
    set_pure(fn);
  }
  llvm::Value* any = e.lanes ? b.CreateOrReduce(rare) : rare;
  llvm::BasicBlock* from = b.GetInsertBlock();
  llvm::Function* f = from->getParent();
  llvm::BasicBlock* slow = llvm::BasicBlock::Create(e.ctx, "rare_lanes", f);
  llvm::BasicBlock* join = llvm::BasicBlock::Create(e.ctx, "join", f);
  b.CreateCondBr(any, slow, join, llvm::MDBuilder(e.ctx).createUnlikelyBranchWeights());
  b.SetInsertPoint(slow);
  auto call = [&](llvm::Value* x) {
    llvm::CallInst* c = b.CreateCall(fn, {x});
    c->setDoesNotAccessMemory();
    return c;
  };
  llvm::Value* v = common;
  if (!e.lanes) v = call(arg);
  for (unsigned i = 0; i < e.lanes; ++i)
    v = b.CreateInsertElement(v, call(b.CreateExtractElement(arg, uint64_t{i})), uint64_t{i});
  b.CreateBr(join);
  b.SetInsertPoint(join);
  llvm::PHINode* phi = b.CreatePHI(common->getType(), 2);
  phi->addIncoming(common, from);
  phi->addIncoming(v, slow);
  return phi;
}

// Widths from 2 lanes up to a register's worth of floats, the widths the
// vectorizer considers for a loop over floats: a function that computes in
// double then splits each operation over two registers, as the inline body
// did (8 lanes of pow: two independent chains per iteration, where 4 lanes
// ran 1.5x slower, bound by the polynomial's latency). The register is
// 512 bits wide where those run at full clock (wide_vector_host), whatever
// width the vectorizer plans with: a loop may ask for 16 float lanes.
void declare_vector_variants(llvm::Module& m, const llvm::TargetMachine& tm) {
  const llvm::Function* kernel = defined_function(m);
  if (!kernel) return;
  Emitter e = emitter_for(m);
  const llvm::TargetTransformInfo tti = tm.getTargetTransformInfo(*kernel);
  const uint64_t planned =
      tti.getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector).getFixedValue();
  const uint64_t register_bits = std::max<uint64_t>(e.wide_vectors ? 512 : 0, planned);
  for (const LaneFn* fn : all_lane_fns()) {
    llvm::Function* twin = m.getFunction(fn->twin);
    if (!twin || twin->use_empty()) continue;
    std::string mappings;
    const unsigned params = static_cast<unsigned>(twin->arg_size());
    for (unsigned n = 2; n * 32 <= register_bits; n *= 2) {
      e.lanes = n;
      const std::string name = variant_name(*fn, n);
      if (!m.getFunction(name))
        set_pure(llvm::Function::Create(fn->type(e), llvm::Function::ExternalLinkage, name, m));
      // _ZGV <isa: _LLVM_> <N: unmasked> <lanes> <v: a vector per parameter> _ <scalar> (<variant>)
      if (!mappings.empty()) mappings += ',';
      mappings += "_ZGV_LLVM_N" + std::to_string(n) + std::string(params, 'v') + "_" + fn->twin + "(" +
                  name + ")";
    }
    if (mappings.empty()) continue;
    for (llvm::User* u : twin->users())
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(u))
        call->addFnAttr(llvm::Attribute::get(m.getContext(), "vector-function-abi-variant", mappings));
  }
}

void define_vector_variants(llvm::Module& m, const std::function<bool(llvm::CallInst&)>& runs_hot) {
  if (!defined_function(m)) return;
  Emitter e = emitter_for(m);
  // f (a declaration) gets fn's body for `lanes` (0: scalar), always-inline
  auto define = [&](llvm::Function& f, const LaneFn& fn, unsigned lanes) {
    e.lanes = lanes;
    f.setLinkage(llvm::Function::InternalLinkage);
    e.set_common_attrs(&f);
    f.addFnAttr(llvm::Attribute::AlwaysInline);
    e.b.SetInsertPoint(llvm::BasicBlock::Create(e.ctx, "entry", &f));
    std::vector<llvm::Value*> args;
    for (llvm::Argument& a : f.args()) args.push_back(&a);
    e.b.CreateRet(fn.body(e, args));
  };
  // The scalar calls left: their attribute names variants about to be
  // erased; those that run hot get the scalar body inline, as before.
  for (const LaneFn* fn : all_lane_fns()) {
    llvm::Function* twin = m.getFunction(fn->twin);
    if (!twin) continue;
    std::vector<llvm::CallInst*> hot;
    for (llvm::User* u : twin->users())
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(u)) {
        call->removeFnAttr("vector-function-abi-variant");
        if (runs_hot(*call)) hot.push_back(call);
      }
    if (hot.empty()) continue;
    const std::string name = std::string(fn->name) + ".inline";
    llvm::Function* body = m.getFunction(name);
    if (!body) {
      body = llvm::Function::Create(twin->getFunctionType(), llvm::Function::InternalLinkage, name, m);
      define(*body, *fn, 0);
    }
    for (llvm::CallInst* call : hot) call->setCalledFunction(body);
  }
  std::vector<llvm::Function*> unused;
  for (llvm::Function& f : m) {
    unsigned lanes = 0;
    const LaneFn* fn = f.isDeclaration() ? variant_of(f.getName(), &lanes) : nullptr;
    if (!fn) continue;
    if (f.use_empty()) {
      unused.push_back(&f);
      continue;
    }
    define(f, *fn, lanes);
  }
  for (llvm::Function* f : unused) f->eraseFromParent();
}

std::vector<std::pair<const char*, void*>> lane_fn_twins() {
  std::vector<std::pair<const char*, void*>> out;
  for (const LaneFn* fn : all_lane_fns()) out.emplace_back(fn->twin, fn->twin_address);
  return out;
}

}  // namespace kiln::codegen::llvmcg
