// How each DType lives in LLVM IR (emitter.h gives the representation), and
// the conversions between representations and memory that must agree bit for
// bit with the reference evaluator: loads that widen, stores that narrow,
// cast_value (core/reference/kernels.h), integer wrapping, and float16 /
// bfloat16 rounding written as branch-free integer IR (exactly kiln::Half's
// and kiln::BFloat16's conversions, NaN payloads included, and vectorizable
// on any target: no F16C instructions and no libcalls). Also the Emitter's
// small utilities.
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

#include <llvm/IR/Intrinsics.h>

#include "codegen/llvm/emitter.h"
#include "kiln/error.h"

namespace kiln::codegen::llvmcg {

// ---- Emitter utilities ----

bool wide_vector_host(const std::string& features) {
  auto has = [&](std::string_view f) {
    for (size_t at = features.find(f); at != std::string::npos; at = features.find(f, at + 1)) {
      const size_t end = at + f.size();
      if (at > 0 && features[at - 1] == '+' && (end == features.size() || features[end] == ','))
        return true;
    }
    return false;
  };
  return has("avx512f") && has("avx512bw") && has("avx512dq") && has("avx512vl") && has("avx512vbmi2");
}

void Emitter::set_common_attrs(llvm::Function* f) {
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->addFnAttr(llvm::Attribute::MustProgress);
  if (!cpu.empty()) f->addFnAttr("target-cpu", cpu);
  if (!features.empty()) f->addFnAttr("target-features", features);
}

llvm::Function* Emitter::helper(const std::string& name, llvm::FunctionType* type,
                                const std::function<void(llvm::Function*)>& define) {
  if (llvm::Function* f = mod.getFunction(name)) return f;
  llvm::Function* f =
      llvm::Function::Create(type, llvm::Function::InternalLinkage, name, &mod);
  set_common_attrs(f);
  f->addFnAttr(llvm::Attribute::AlwaysInline);
  f->addFnAttr(llvm::Attribute::WillReturn);
  f->setDoesNotAccessMemory();
  llvm::IRBuilderBase::InsertPointGuard guard(b);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", f));
  define(f);
  return f;
}

llvm::Value* Emitter::intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> args) {
  return b.CreateIntrinsic(id, {args[0]->getType()}, args);
}

llvm::Value* Emitter::libcall(const char* name, llvm::ArrayRef<llvm::Value*> args) {
  std::vector<llvm::Type*> params;
  for (llvm::Value* a : args) params.push_back(a->getType());
  llvm::FunctionType* type = llvm::FunctionType::get(args[0]->getType(), params, false);
  llvm::FunctionCallee callee = mod.getOrInsertFunction(name, type);
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr(llvm::Attribute::WillReturn);
    f->setDoesNotAccessMemory();  // errno is not observed by kernels
  }
  llvm::CallInst* call = b.CreateCall(callee, args);
  call->setDoesNotAccessMemory();
  return call;
}

// ---- representation ----

bool is_float_dtype(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 ||
         t == DType::Float64;
}

bool computes_in_float(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32;
}

llvm::Type* repr_type(Emitter& e, DType t) {
  switch (t) {
    case DType::Bool: return e.i1();
    case DType::UInt8:
    case DType::Int32:
    case DType::Int64: return e.i64();
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32: return e.f32();
    case DType::Float64: return e.f64();
  }
  KILN_INTERNAL_ASSERT(false, "unknown dtype ", static_cast<int>(t));
}

llvm::Type* mem_type(Emitter& e, DType t) {
  switch (t) {
    case DType::Bool:
    case DType::UInt8: return e.i8();
    case DType::Int32: return e.i32();
    case DType::Int64: return e.i64();
    case DType::Float16:
    case DType::BFloat16: return e.i16();
    case DType::Float32: return e.f32();
    case DType::Float64: return e.f64();
  }
  KILN_INTERNAL_ASSERT(false, "unknown dtype ", static_cast<int>(t));
}

// ---- float16 / bfloat16 ----

llvm::Value* float_to_half_bits(Emitter& e, llvm::Value* f) {
  auto& b = e.b;
  llvm::Value* x = b.CreateBitCast(f, e.i32());
  llvm::Value* sign = b.CreateAnd(b.CreateLShr(x, 16), e.c32(0x8000u));
  llvm::Value* a = b.CreateAnd(x, e.c32(0x7FFFFFFFu));
  // normal: rebias the exponent, round the 13 dropped bits to nearest even
  llvm::Value* rebased = b.CreateSub(a, e.c32(112u << 23));
  llvm::Value* lsb = b.CreateAnd(b.CreateLShr(a, 13), e.c32(1));
  llvm::Value* normal =
      b.CreateLShr(b.CreateAdd(rebased, b.CreateAdd(e.c32(0xFFFu), lsb)), 13);
  // subnormal (|f| < 2^-14): |f| + 0.5 rounds |f| to a multiple of 2^-24 (RNE)
  llvm::Value* sum = b.CreateFAdd(b.CreateBitCast(a, e.f32()), e.cf(0.5f));
  llvm::Value* sub = b.CreateSub(b.CreateBitCast(sum, e.i32()), e.c32(0x3F000000u));
  llvm::Value* h = b.CreateSelect(b.CreateICmpULT(a, e.c32(0x38800000u)), sub, normal);
  h = b.CreateSelect(b.CreateICmpUGE(a, e.c32(0x47800000u)), e.c32(0x7C00u), h);  // overflow, inf
  h = b.CreateSelect(b.CreateICmpUGT(a, e.c32(0x7F800000u)), e.c32(0x7E00u), h);  // NaN
  return b.CreateTrunc(b.CreateOr(sign, h), e.i16());
}

llvm::Value* half_bits_to_float(Emitter& e, llvm::Value* h16) {
  auto& b = e.b;
  llvm::Value* h = b.CreateZExt(h16, e.i32());
  llvm::Value* sign = b.CreateShl(b.CreateAnd(h, e.c32(0x8000u)), 16);
  llvm::Value* em = b.CreateAnd(h, e.c32(0x7FFFu));
  llvm::Value* normal = b.CreateAdd(b.CreateShl(em, 13), e.c32(112u << 23));
  llvm::Value* special = b.CreateAdd(normal, e.c32(112u << 23));  // exponent 31 -> 255
  llvm::Value* mant = b.CreateAnd(h, e.c32(0x3FFu));
  llvm::Value* sub = b.CreateBitCast(
      b.CreateFMul(b.CreateUIToFP(mant, e.f32()), e.cf(5.9604644775390625e-8f)), e.i32());
  llvm::Value* r = b.CreateSelect(b.CreateICmpUGE(em, e.c32(0x7C00u)), special, normal);
  r = b.CreateSelect(b.CreateICmpULT(em, e.c32(0x0400u)), sub, r);
  return b.CreateBitCast(b.CreateOr(sign, r), e.f32());
}

llvm::Value* float_to_bfloat16_bits(Emitter& e, llvm::Value* f) {
  auto& b = e.b;
  llvm::Value* x = b.CreateBitCast(f, e.i32());
  llvm::Value* hi = b.CreateLShr(x, 16);
  llvm::Value* rounded =
      b.CreateLShr(b.CreateAdd(x, b.CreateAdd(e.c32(0x7FFFu), b.CreateAnd(hi, e.c32(1)))), 16);
  llvm::Value* is_nan = b.CreateICmpUGT(b.CreateAnd(x, e.c32(0x7FFFFFFFu)), e.c32(0x7F800000u));
  llvm::Value* r = b.CreateSelect(is_nan, b.CreateOr(hi, e.c32(0x40u)), rounded);
  return b.CreateTrunc(r, e.i16());
}

llvm::Value* bfloat16_bits_to_float(Emitter& e, llvm::Value* h16) {
  return e.b.CreateBitCast(e.b.CreateShl(e.b.CreateZExt(h16, e.i32()), 16), e.f32());
}

// ---- wrapping, rounding, casts ----

namespace {

llvm::Value* wrap_int(Emitter& e, llvm::Value* v, DType t) {
  switch (t) {
    case DType::UInt8: return e.b.CreateAnd(v, e.c64(0xFF));
    case DType::Int32: return e.b.CreateSExt(e.b.CreateTrunc(v, e.i32()), e.i64());
    default: return v;
  }
}

// float / double -> int64, truncating; NaN and out-of-range give INT64_MIN.
llvm::Value* trunc_to_int64(Emitter& e, llvm::Value* x) {
  auto& b = e.b;
  llvm::Type* t = x->getType();
  llvm::Value* lo = llvm::ConstantFP::get(t, -9223372036854775808.0);
  llvm::Value* hi = llvm::ConstantFP::get(t, 9223372036854775808.0);
  llvm::Value* ok = b.CreateAnd(b.CreateFCmpOGE(x, lo), b.CreateFCmpOLT(x, hi));
  llvm::Value* safe = b.CreateSelect(ok, x, llvm::ConstantFP::get(t, 0.0));
  return b.CreateSelect(ok, b.CreateFPToSI(safe, e.i64()),
                        e.c64(std::numeric_limits<int64_t>::min()));
}

}  // namespace

llvm::Value* canonicalize(Emitter& e, llvm::Value* v, DType t) {
  switch (t) {
    case DType::UInt8:
    case DType::Int32: return wrap_int(e, v, t);
    case DType::Float16: return half_bits_to_float(e, float_to_half_bits(e, v));
    case DType::BFloat16: return bfloat16_bits_to_float(e, float_to_bfloat16_bits(e, v));
    default: return v;
  }
}

llvm::Value* cast_value(Emitter& e, llvm::Value* v, DType from, DType to) {
  auto& b = e.b;
  if (from == to) return v;
  const bool ffrom = is_float_dtype(from), fto = is_float_dtype(to);
  if (to == DType::Bool) {
    return ffrom ? b.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0))
                 : b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (from == DType::Bool) {
    return fto ? b.CreateUIToFP(v, repr_type(e, to)) : b.CreateZExt(v, e.i64());
  }
  if (ffrom && !fto) return wrap_int(e, trunc_to_int64(e, v), to);
  if (!ffrom && !fto) return wrap_int(e, v, to);
  if (to == DType::Float16 || to == DType::BFloat16) {  // one rounding from float
    llvm::Value* f = ffrom ? (from == DType::Float64 ? b.CreateFPTrunc(v, e.f32()) : v)
                           : b.CreateSIToFP(v, e.f32());
    return canonicalize(e, f, to);
  }
  if (to == DType::Float32) {
    if (!ffrom) return b.CreateSIToFP(v, e.f32());
    return from == DType::Float64 ? b.CreateFPTrunc(v, e.f32()) : v;
  }
  // to Float64
  return ffrom ? b.CreateFPExt(v, e.f64()) : b.CreateSIToFP(v, e.f64());
}

llvm::Value* const_value(Emitter& e, DType t, double f, int64_t i) {
  switch (t) {
    case DType::Bool: return e.b.getInt1(i != 0);
    case DType::UInt8: return e.c64(static_cast<int64_t>(static_cast<uint8_t>(i)));
    case DType::Int32: return e.c64(static_cast<int64_t>(static_cast<int32_t>(i)));
    case DType::Int64: return e.c64(i);
    case DType::Float16: return e.cf(static_cast<float>(Half(static_cast<float>(f))));
    case DType::BFloat16: return e.cf(static_cast<float>(BFloat16(static_cast<float>(f))));
    case DType::Float32: return e.cf(static_cast<float>(f));
    case DType::Float64: return e.cd(f);
  }
  KILN_INTERNAL_ASSERT(false, "unknown dtype ", static_cast<int>(t));
}

// ---- memory ----

llvm::Value* load_widen(Emitter& e, llvm::Value* base, llvm::Value* index, DType t) {
  auto& b = e.b;
  llvm::Type* mt = mem_type(e, t);
  llvm::Value* ptr = b.CreateInBoundsGEP(mt, base, index);
  llvm::Value* raw = b.CreateAlignedLoad(mt, ptr, llvm::Align(element_size(t)));
  switch (t) {
    case DType::Bool: return b.CreateICmpNE(raw, b.getInt8(0));
    case DType::UInt8: return b.CreateZExt(raw, e.i64());
    case DType::Int32: return b.CreateSExt(raw, e.i64());
    case DType::Int64: return raw;
    case DType::Float16: return half_bits_to_float(e, raw);
    case DType::BFloat16: return bfloat16_bits_to_float(e, raw);
    case DType::Float32:
    case DType::Float64: return raw;
  }
  KILN_INTERNAL_ASSERT(false, "unknown dtype ", static_cast<int>(t));
}

void store_narrow(Emitter& e, llvm::Value* base, llvm::Value* index, llvm::Value* v, DType from,
                  DType to) {
  auto& b = e.b;
  llvm::Value* c = cast_value(e, v, from, to);
  llvm::Value* raw = nullptr;
  switch (to) {
    case DType::Bool: raw = b.CreateZExt(c, e.i8()); break;
    case DType::UInt8: raw = b.CreateTrunc(c, e.i8()); break;
    case DType::Int32: raw = b.CreateTrunc(c, e.i32()); break;
    case DType::Int64: raw = c; break;
    case DType::Float16: raw = float_to_half_bits(e, c); break;
    case DType::BFloat16: raw = float_to_bfloat16_bits(e, c); break;
    case DType::Float32:
    case DType::Float64: raw = c; break;
  }
  llvm::Type* mt = mem_type(e, to);
  llvm::Value* ptr = b.CreateInBoundsGEP(mt, base, index);
  b.CreateAlignedStore(raw, ptr, llvm::Align(element_size(to)));
}

}  // namespace kiln::codegen::llvmcg
