// Comparing a program's results with the reference evaluator, shared by the
// JIT's differential test (test_jit_differential.cpp) and the fuzzer
// (fuzz/kiln_fuzz.cpp): the evaluation modes, the tolerances for results
// that may round differently ("tainted", graph_program.h), and compare().
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/reference/evaluate.h"
#include "graph_program.h"
#include "jit/executor.h"
#include "kiln/jit.h"

namespace kiln_diff {

using kiln::BufferPtr;
using kiln::NodePtr;

// The interpreter once picked the other zero than the reference in Max/Min
// (+0 vs -0); it is fixed, and interpreted runs compare the sign of zero too.
constexpr bool kInterpreterSignOfZeroTodo = false;

struct Tol {
  double rel, abs;
};
Tol compiled_tolerance(DType d) {
  switch (d) {
    case DType::Float64: return {1e-12, 1e-12};
    case DType::Float32: return {1e-5, 1e-6};
    case DType::Float16: return {std::ldexp(1.0, -10), std::ldexp(1.0, -14)};
    case DType::BFloat16: return {std::ldexp(1.0, -7), std::ldexp(1.0, -14)};
    default: return {0, 0};
  }
}

// A tainted result's tolerance: its own dtype's, or that of the least precise
// tainting step on its path when that is coarser.
Tol tolerance(DType d, Taint flags) {
  Tol t = compiled_tolerance(d);
  for (auto [bit, step] : {std::pair{kStepFloat32, DType::Float32}, std::pair{kStepFloat16, DType::Float16},
                           std::pair{kStepBFloat16, DType::BFloat16}})
    if (flags & bit) {
      const Tol s = compiled_tolerance(step);
      t = {std::max(t.rel, s.rel), std::max(t.abs, s.abs)};
    }
  if (flags & kAmplified) t.rel *= 1000;
  return t;
}

struct Mode {
  const char* name;
  bool interpret;
  bool fusion;
};
constexpr Mode kInterpFused{"interpreted, fusion on", true, true};
constexpr Mode kInterpUnfused{"interpreted, fusion off", true, false};
constexpr Mode kCompiledFused{"compiled, fusion on", false, true};
constexpr Mode kCompiledUnfused{"compiled, fusion off", false, false};

struct FusionGuard {
  bool old;
  explicit FusionGuard(bool on) : old(kiln::fusion_enabled()) { kiln::set_fusion_enabled(on); }
  ~FusionGuard() { kiln::set_fusion_enabled(old); }
};

double read_double(const kiln::Buffer& b, int64_t i) {
  switch (b.dtype()) {
    case DType::Bool: return b.as<bool>()[i] ? 1.0 : 0.0;
    case DType::UInt8: return b.as<uint8_t>()[i];
    case DType::Int32: return b.as<int32_t>()[i];
    case DType::Int64: return static_cast<double>(b.as<int64_t>()[i]);
    case DType::Float16: return static_cast<float>(b.as<kiln::Half>()[i]);
    case DType::BFloat16: return static_cast<float>(b.as<kiln::BFloat16>()[i]);
    case DType::Float32: return b.as<float>()[i];
    case DType::Float64: return b.as<double>()[i];
  }
  return 0;
}
int64_t read_int(const kiln::Buffer& b, int64_t i) {
  switch (b.dtype()) {
    case DType::Bool: return b.as<bool>()[i] ? 1 : 0;
    case DType::UInt8: return b.as<uint8_t>()[i];
    case DType::Int32: return b.as<int32_t>()[i];
    case DType::Int64: return b.as<int64_t>()[i];
    default: return 0;
  }
}

std::string index_of(const Shape& s, int64_t flat) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = s[d] ? flat % s[d] : 0;
    flat = s[d] ? flat / s[d] : 0;
  }
  return shape_text(Shape(idx));
}

// The largest finite magnitude among the reference values of `nodes` (the
// operands of a result's cancelling steps, kCancelled); 0 if none.
double largest_magnitude(const std::vector<NodePtr>& nodes) {
  if (nodes.empty()) return 0;
  double m = 0;
  try {
    for (const BufferPtr& b : kiln::reference::evaluate(nodes)) {
      if (!b) continue;
      for (int64_t i = 0; i < b->numel(); ++i) {
        const double v = std::fabs(read_double(*b, i));
        if (std::isfinite(v)) m = std::max(m, v);
      }
    }
  } catch (const std::exception&) {
    return 0;  // compared as before; the roots' own evaluation reports the error
  }
  return m;
}

struct Counters {  // what compare() saw, for the report
  int programs = 0;
  int instructions = 0;
  int compared_interpreted = 0;  // programs compared in both interpreted modes
  int compared_compiled = 0;     // programs compared compiled (either mode)
  int64_t elements = 0;
  int64_t tolerated_flips = 0;   // tainted bool/int elements that differed when compiled
  int failures = 0;
  std::array<int, kiln::kNumDTypes> root_dtypes{};
};

// Compares the roots (instruction ids) of a program. Returns "" when they
// agree, else a description of the first mismatching root.
std::string compare(const Program& p, const Env& env, const std::vector<int>& roots, Mode m,
                    Counters* c) {
  std::vector<NodePtr> nodes;
  for (int r : roots) nodes.push_back(env.vars[result_var(p, r)].impl()->node());
  std::vector<BufferPtr> ref, got;
  try {
    ref = kiln::reference::evaluate(nodes);
  } catch (const std::exception& e) {
    return std::string("the reference evaluator threw: ") + e.what();
  }
  try {
    FusionGuard g(m.fusion);
    got = kiln::jit::evaluate(nodes, m.interpret);
  } catch (const std::exception& e) {
    return std::string("jit::evaluate threw: ") + e.what();
  }
  if (got.size() != ref.size()) return "jit::evaluate returned the wrong number of buffers";
  for (size_t k = 0; k < roots.size(); ++k) {
    const kiln::Node& n = *nodes[k];
    const std::string who = "root " + vname(result_var(p, roots[k])) + " (" + kiln::dtype_name(n.dtype) +
                            ", shape " + shape_text(n.shape) + ")";
    if (!got[k] || got[k]->dtype() != n.dtype || got[k]->numel() != n.numel())
      return who + ": the JIT's buffer has the wrong dtype or size";
    const kiln::Buffer &R = *ref[k], &J = *got[k];
    const bool fl = kiln::is_floating_point(n.dtype);
    const Taint flags = env.taint[roots[k]];
    const bool tainted = m.interpret ? (flags & kBlas) != 0 : (flags & kTaintKinds) != 0;
    Tol tol = tolerance(n.dtype, flags);
    if (tainted && (flags & kCancelled)) {
      const double m = largest_magnitude(env.cancel_operands[roots[k]]);
      tol.abs = std::max(tol.abs, 2 * tol.rel * m);  // both operands' error
    }
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n.numel(); ++i) {
      bool ok;
      if (!fl) {
        ok = read_int(R, i) == read_int(J, i);
        if (!ok && tainted) {
          if (c) ++c->tolerated_flips;
          ok = true;
        }
      } else {
        const double a = read_double(R, i), b = read_double(J, i);
        if (tainted && (flags & kChaotic)) ok = true;  // no promise at all (see kChaotic)
        else if (std::isnan(a) || std::isnan(b)) ok = std::isnan(a) && std::isnan(b);
        else if (!tainted || std::isinf(a) || std::isinf(b))
          ok = a == b && (std::signbit(a) == std::signbit(b) || (m.interpret && kInterpreterSignOfZeroTodo));
        else ok = std::fabs(a - b) <= tol.abs + tol.rel * std::fabs(a);
      }
      if (!ok && bad++ == 0) first = i;
    }
    if (c) {
      c->elements += n.numel();
      ++c->root_dtypes[static_cast<size_t>(n.dtype)];
    }
    if (bad) {
      std::ostringstream os;
      os.precision(17);
      os << who << (tainted ? " [tainted]" : "") << ": " << bad << " of " << n.numel()
         << " elements differ; first at flat index " << first << " = " << index_of(n.shape, first)
         << ": reference " << (fl ? read_double(R, first) : static_cast<double>(read_int(R, first)))
         << ", jit " << (fl ? read_double(J, first) : static_cast<double>(read_int(J, first)));
      return os.str();
    }
  }
  return "";
}

}  // namespace kiln_diff
