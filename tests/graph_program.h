// The program model of the JIT's differential test (test_jit_differential.cpp,
// graph_gen.h): instructions that keep their C++ text and a closure that
// re-runs them, replaying (a subset of) a program, finding its outputs, and
// the text forms of values used in reproductions.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tensor_impl.h"
#include "kiln/kiln.h"

namespace kiln_diff {

using kiln::DType;
using kiln::Scalar;
using kiln::Shape;
using kiln::Tensor;
namespace ix = kiln::indexing;

// ---------------------------------------------------------------------------
// Programs

// Why a result may legitimately differ from the reference's in the last bits:
// kInexact: compiled code may compute it differently (transcendental math,
//           floating sums / products in another order);
// kBlas:    a floating matmul, which every JIT mode hands to BLAS (its own
//           summation order), interpreted or not.
using Taint = uint16_t;
constexpr Taint kInexact = 1;
constexpr Taint kBlas = 2;
// Ill-conditioned steps, applied to an argument that may differ in its last
// bits (an inexact one):
// kChaotic:   the result of sin / cos (instruction flag kPeriodic): an ulp of
//             a large argument (exp(exp(exp(exp(x)))) ~ 1e7) is a whole
//             period, so the two evaluations may agree on nothing at all;
//             likewise a step (floor, round, sign, ...), where an ulp moves
//             the argument across the step;
// kAmplified: the result of exp / pow (instruction flag kAmplifying), whose
//             relative error is the argument's times its magnitude (up to
//             ~88 in float32 before overflow): compared with a thousand times
//             the dtype's relative tolerance.
// kCancelled: a sum or difference of operands that may differ in their last
//             bits (instruction flag kCancelling): when they nearly cancel,
//             the result's error is relative to the operands' magnitude, not
//             its own (cosh(x).to(float16) - cosh(x) ~ 0.02 from values
//             ~ 200). Compared with an absolute tolerance scaled by the
//             largest operand (Env::cancel_operands).
constexpr Taint kChaotic = 4;
constexpr Taint kAmplified = 8;
constexpr Taint kCancelled = 128;
constexpr Taint kPeriodic = 256;
constexpr Taint kAmplifying = 512;
constexpr Taint kCancelling = 1024;
// The precision of a tainting step's result, so that a value rounded in
// float32 (an exp of an integer tensor, say) and then widened to float64 is
// compared with float32's tolerance, not float64's. Set by run_instr.
constexpr Taint kStepFloat32 = 16;
constexpr Taint kStepFloat16 = 32;
constexpr Taint kStepBFloat16 = 64;
constexpr Taint kTaintKinds = kInexact | kBlas;

inline Taint step_precision(DType d) {
  switch (d) {
    case DType::Float32: return kStepFloat32;
    case DType::Float16: return kStepFloat16;
    case DType::BFloat16: return kStepBFloat16;
    default: return 0;  // float64 (the finest), or not floating
  }
}

struct Env {
  std::vector<Tensor> vars;  // vars[i]: the tensor instruction i defined (undefined if none)
  std::vector<bool> ran;     // whether instruction i ran (kept, inputs present, no error)
  std::vector<Taint> taint;  // instruction i's result depends on: kInexact / kBlas steps
  // The operands (as their nodes when read) of the cancelling steps on
  // instruction i's path (kCancelled), whose magnitude bounds its error.
  std::vector<std::vector<kiln::NodePtr>> cancel_operands;
  // Keyed by the storage itself (kept alive, so no address is reused).
  std::map<std::shared_ptr<kiln::Storage>, Taint> storage_taint;
  std::vector<std::shared_ptr<std::vector<unsigned char>>> blobs;  // from_blob memory
};

// Appends src to dst, keeping at most kMaxCancelOperands nodes (the
// tolerance reads the magnitudes of the first few operands only).
constexpr size_t kMaxCancelOperands = 8;
inline void add_cancel_operands(std::vector<kiln::NodePtr>& dst, const std::vector<kiln::NodePtr>& src) {
  for (const kiln::NodePtr& n : src)
    if (dst.size() < kMaxCancelOperands) dst.push_back(n);
}

struct Instr {
  std::string text;        // the C++ statement(s)
  std::vector<int> reads;  // vars read (an in-place write also lists its target)
  int target = -1;         // in-place: the var written; otherwise this instr defines v<index>
  // Taint flags of the instruction itself (see kInexact, kBlas).
  Taint inexact = 0;
  std::function<Tensor(Env&)> run;  // returns the defined tensor, or the written target
};

using Program = std::vector<Instr>;

inline std::string vname(int i) { return "v" + std::to_string(i); }
inline int result_var(const Program& p, int i) { return p[i].target >= 0 ? p[i].target : i; }

// Runs instruction i of p on env (whose vectors are sized for p). Returns
// whether it ran; kiln::Error counts as not running. Tracks taint.
inline bool run_instr(const Program& p, int i, Env& env) {
  const Instr& ins = p[i];
  for (int r : ins.reads)
    if (!env.vars[r].defined()) return false;
  std::vector<kiln::NodePtr> operands;  // as read (an in-place write replaces its target's)
  if (ins.inexact & kCancelling)
    for (int r : ins.reads) operands.push_back(env.vars[r].impl()->node());
  Tensor out;
  try {
    out = ins.run(env);
  } catch (const kiln::Error& e) {
    // An invalid program is skipped; a broken kiln invariant is a failure,
    // and so is a user error without its "[op] what is wrong" message.
    const std::string msg = e.what();
    if (msg.rfind("[internal]", 0) == 0) throw;
    const size_t close = msg.find("] ");
    if (msg.empty() || msg[0] != '[' || close == std::string::npos || close + 2 >= msg.size())
      throw std::logic_error("kiln::Error without an \"[op] message\": \"" + msg + "\"");
    return false;
  }
  Taint t = ins.inexact & ~(kPeriodic | kAmplifying | kCancelling);
  bool tainted_read = false;
  std::vector<kiln::NodePtr>& cancel = env.cancel_operands[i];
  for (int r : ins.reads) {
    if (env.taint[r] & kTaintKinds) {
      tainted_read = true;
      if (ins.inexact & kPeriodic) t |= kChaotic;
      if (ins.inexact & kAmplifying) t |= kAmplified;
    }
    t |= env.taint[r];
    add_cancel_operands(cancel, env.cancel_operands[r]);
  }
  if ((ins.inexact & kCancelling) && tainted_read) {
    t |= kCancelled;
    add_cancel_operands(cancel, operands);
  }
  // A result that may differ is rounded to its own dtype: a float32 value an
  // ulp off may round to another float16 (a cast, or float16 math on it).
  if (t & kTaintKinds) t |= step_precision(out.dtype());
  const std::shared_ptr<kiln::Storage>& st = out.impl()->storage;
  t |= env.storage_taint[st];
  env.storage_taint[st] |= t;
  env.ran[i] = true;
  env.taint[i] = t;
  if (ins.target < 0) {
    env.vars[i] = out;
  } else {
    env.taint[ins.target] |= t;
    add_cancel_operands(env.cancel_operands[ins.target], cancel);
  }
  return true;
}

// Replays the instructions of p with keep[i] set (all when keep is empty).
inline Env replay(const Program& p, const std::vector<bool>& keep = {}) {
  Env env;
  env.vars.resize(p.size());
  env.ran.assign(p.size(), false);
  env.taint.assign(p.size(), 0);
  env.cancel_operands.assign(p.size(), {});
  for (size_t i = 0; i < p.size(); ++i)
    if (keep.empty() || keep[i]) run_instr(p, static_cast<int>(i), env);
  return env;
}

// The instructions whose results nothing later reads (the program's outputs),
// the last one that ran always among them; at most `max_roots`, latest first.
inline std::vector<int> sinks(const Program& p, const Env& env, size_t max_roots) {
  std::vector<int> out;
  std::vector<bool> read(p.size(), false);
  for (int i = static_cast<int>(p.size()) - 1; i >= 0; --i) {
    if (!env.ran[i]) continue;
    const int rv = result_var(p, i);
    if (!read[rv] && out.size() < max_roots) {
      bool dup = false;
      for (int o : out) dup = dup || result_var(p, o) == rv;
      if (!dup) out.push_back(i);
    }
    read[rv] = true;  // earlier writes of the same var are covered by this one
    for (int r : p[i].reads) read[r] = true;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Text of values

inline const char* dtype_text(DType d) {
  static const char* names[] = {"kiln::kBool",    "kiln::kUInt8",    "kiln::kInt32",
                                "kiln::kInt64",   "kiln::kFloat16",  "kiln::kBFloat16",
                                "kiln::kFloat32", "kiln::kFloat64"};
  return names[static_cast<int>(d)];
}

inline std::string num_text(double v, bool force_float) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (force_float && s.find_first_of(".en") == std::string::npos) s += ".0";
  if (v == 0 && std::signbit(v)) s = "-0.0";
  return s;
}

inline std::string shape_text(const Shape& s) {
  std::string r = "{";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "}";
}

inline std::string scalar_text(const Scalar& s) {
  if (s.is_bool()) return s.to_bool() ? "true" : "false";
  if (s.is_integral()) return std::to_string(s.to_long());
  return num_text(s.to_double(), true);
}

inline std::string opt_text(const std::optional<int64_t>& v) {
  return v ? std::to_string(*v) : "kiln::indexing::None";
}

inline std::string opt_scalar_text(const std::optional<Scalar>& v) {
  return v ? scalar_text(*v) : "std::nullopt";
}

inline std::string index_text(const std::vector<ix::TensorIndex>& idx) {
  using K = ix::TensorIndex::Kind;
  std::string r = "{";
  for (size_t i = 0; i < idx.size(); ++i) {
    if (i) r += ", ";
    const auto& t = idx[i];
    switch (t.kind()) {
      case K::Integer: r += std::to_string(t.integer()); break;
      case K::Ellipsis: r += "kiln::indexing::Ellipsis"; break;
      case K::None: r += "kiln::indexing::None"; break;
      case K::Boolean: r += t.boolean() ? "true" : "false"; break;
      case K::Slice:
        r += "kiln::indexing::Slice(" + opt_text(t.slice().start) + ", " + opt_text(t.slice().stop) +
             ", " + opt_text(t.slice().step) + ")";
        break;
    }
  }
  return r + "}";
}

// Writes value v into element i of a buffer of dtype d (the reference's casts).
inline void store_as(DType d, void* p, int64_t i, double v) {
  switch (d) {
    case DType::Bool: static_cast<bool*>(p)[i] = v != 0; break;
    case DType::UInt8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(static_cast<int64_t>(v)); break;
    case DType::Int32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(static_cast<int64_t>(v)); break;
    case DType::Int64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
    case DType::Float16: static_cast<kiln::Half*>(p)[i] = kiln::Half(static_cast<float>(v)); break;
    case DType::BFloat16: static_cast<kiln::BFloat16*>(p)[i] = kiln::BFloat16(static_cast<float>(v)); break;
    case DType::Float32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case DType::Float64: static_cast<double*>(p)[i] = v; break;
  }
}

inline const char* blob_elem_text(DType d) {
  switch (d) {
    case DType::Bool: return "uint8_t";  // bool bytes, 0 / 1
    case DType::UInt8: return "uint8_t";
    case DType::Int32: return "int32_t";
    case DType::Int64: return "int64_t";
    case DType::Float16: return "kiln::Half";
    case DType::BFloat16: return "kiln::BFloat16";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
  }
  return "?";
}

}  // namespace kiln_diff
