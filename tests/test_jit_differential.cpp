// A randomized differential test of the JIT against the reference evaluator.
//
// tests/graph_gen.h generates programs through the public API (random shapes
// with size-1 and zero-size dims, broadcasting, every kind of view, all eight
// dtypes, reductions over random dim sets with and without keepdim, matmul,
// cat/stack/split, in-place writes through views), from fixed seeds. Each
// program's outputs (its last instruction and up to three other results no
// later instruction reads, evaluated together as the roots of one graph) are
// computed by reference::evaluate and by jit::evaluate in these modes:
//
//   interpret, fusion on      every program
//   interpret, fusion off     every program
//   compiled,  fusion on      every kCompileEvery-th program, when the LLVM backend is available
//   compiled,  fusion off     every 2*kCompileEvery-th program, likewise
//
// (Compiling dominates the run time, so compiled runs are a sample.)
//
// Each result is classified by what it depends on (tests/graph_gen.h):
// "tainted" when a step on its path may legitimately round differently: in
// compiled runs, transcendental math (exp/log/sin/cos/tanh/sigmoid/pow) and
// floating sums/products/means/var/softmax (another summation order); in
// every run, a floating matmul (the JIT hands it to BLAS even when
// interpreting). An untainted result must equal the reference's bit for bit
// (the sign of zero included) in every mode: the interpreter runs the
// reference's own scalar code in the reference's order, and the LLVM backend
// uses no fast-math and no FMA contraction. A tainted result is compared with
// these tolerances (|jit - ref| <= abs + rel * |ref|; NaN must match NaN and
// infinities must match exactly):
//
//   dtype            tainted result
//   bool, integers   exact (*)
//   float64          rel 1e-12, abs 1e-12
//   float32          rel 1e-5,  abs 1e-6
//   float16          rel 2^-10 (one ulp), abs 2^-14
//   bfloat16         rel 2^-7  (one ulp), abs 2^-14
//
// (*) A bool/integer result of a tainted computation (a comparison or cast
// of a value one ulp away, an argmax between near-ties) may differ: such
// elements are counted and printed (-s), not failed.
//
// A mismatch is shrunk before it is printed: the shortest failing prefix of
// the program is found, then every earlier instruction that is not needed for
// the failure is removed; the report gives the remaining C++ statements, the
// mode, and for the first mismatching root its dtype, shape, the first
// mismatching index and both values.
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cstring>
#include <sstream>

#include "codegen/backend.h"
#include "core/reference/evaluate.h"
#include "graph_gen.h"
#include "jit/executor.h"
#include "kiln/jit.h"

using namespace kiln_diff;
using kiln::BufferPtr;
using kiln::NodePtr;

namespace {

// Compiling a kernel takes ~25 ms here, so compiled runs are sampled.
constexpr int kCompileEvery = 48;

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

struct Counters {
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
    const uint8_t flags = env.taint[roots[k]];
    const bool tainted = m.interpret ? (flags & kBlas) != 0 : flags != 0;
    const Tol tol = compiled_tolerance(n.dtype);
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
        if (std::isnan(a) || std::isnan(b)) ok = std::isnan(a) && std::isnan(b);
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

std::string roots_text(const Program& p, const std::vector<int>& roots) {
  std::string s;
  for (int r : roots) s += (s.empty() ? "" : ", ") + vname(result_var(p, r));
  return s;
}

// Replays the kept instructions and compares: "" when instruction `last` did
// not run or the JIT agrees, else why not. roots: the sinks, or `last` alone.
std::string attempt(const Program& p, const std::vector<bool>& keep, int last, bool single, Mode m) {
  try {
    Env env = replay(p, keep);
    if (!env.ran[last]) return "";
    return compare(p, env, single ? std::vector<int>{last} : sinks(p, env, 4), m, nullptr);
  } catch (const std::exception& e) {  // an eager evaluation (a from_blob write) broke
    return std::string("building the program threw: ") + e.what();
  }
}

// Shrinks a failing program (shortest failing prefix, then drops every
// instruction the failure does not need) and returns the report.
std::string shrink(const Program& p, Mode m, const std::string& header, const std::string& original) {
  const int n = static_cast<int>(p.size());
  std::vector<bool> keep(p.size(), false);
  int last = -1;
  std::string why = original;
  for (int k = 0; k < n && last < 0; ++k) {
    keep[k] = true;
    std::string s = attempt(p, keep, k, false, m);
    if (!s.empty()) {
      last = k;
      why = s;
    }
  }
  if (last < 0) {  // the failure needs the whole program's roots together
    keep.assign(p.size(), true);
    last = n - 1;
  }
  bool single = !attempt(p, keep, last, true, m).empty();
  for (int j = last - 1; j >= 0; --j) {
    keep[j] = false;
    std::string s = attempt(p, keep, last, single, m);
    if (s.empty()) keep[j] = true;
    else why = s;
  }
  std::vector<int> roots{last};
  std::string text;
  int kept = 0;
  try {
    Env env = replay(p, keep);
    if (!single) roots = sinks(p, env, 4);
    for (int i = 0; i < n; ++i)
      if (keep[i] && env.ran[i]) {
        text += "  " + p[i].text + "\n";
        ++kept;
      }
  } catch (const std::exception&) {
    for (int i = 0; i < n; ++i)
      if (keep[i]) {
        text += "  " + p[i].text + "\n";
        ++kept;
      }
  }
  std::ostringstream os;
  os << header << "\nmode: " << m.name << "\nreproduction (" << kept << " of " << n
     << " instructions; compare reference::evaluate and jit::evaluate on the roots "
     << roots_text(p, roots) << "):\n"
     << text << why;
  return os.str();
}

struct Family {
  const char* name;
  uint64_t seed;
  int programs;
  int min_len, max_len;
  Weights weights;
};

Counters run_family(const Family& f) {
  Counters c;
  const bool compiled = kiln::codegen::cpu_backend().available();
  std::mt19937_64 lengths(f.seed ^ 0x9e3779b97f4a7c15ULL);
  for (int i = 0; i < f.programs; ++i) {
    const uint64_t seed = f.seed + static_cast<uint64_t>(i);
    const int len = f.min_len + static_cast<int>(lengths() % static_cast<uint64_t>(f.max_len - f.min_len + 1));
    const std::string header = std::string("jit differential [") + f.name + ", seed " +
                               std::to_string(seed) + "]: the JIT differs from the reference";
    Gen g(seed, f.weights);
    Program p;
    try {
      p = g.generate(len);
    } catch (const std::exception& e) {  // an eager evaluation (a from_blob write) broke
      ++c.failures;
      FAIL_CHECK(header << "\nwhile building the program:\n" << g.text_so_far() << e.what());
      continue;
    }
    const Env& env = g.env();
    ++c.programs;
    c.instructions += static_cast<int>(p.size());
    // Odd programs: every output as one multi-root graph; even: the last result alone.
    std::vector<int> roots = sinks(p, env, i % 2 ? 4 : 1);
    std::vector<Mode> modes{kInterpFused, kInterpUnfused};
    if (compiled && i % kCompileEvery == 0) modes.push_back(kCompiledFused);
    if (compiled && i % (2 * kCompileEvery) == 0) modes.push_back(kCompiledUnfused);
    for (const Mode& m : modes) {
      std::string s = compare(p, env, roots, m, &c);
      if (!s.empty()) {
        ++c.failures;
        FAIL_CHECK(shrink(p, m, header, s));
        break;
      }
      if (m.interpret && !m.fusion) ++c.compared_interpreted;
      if (!m.interpret && m.fusion) ++c.compared_compiled;
    }
  }
  return c;
}

void report(const Family& f, const Counters& c, double seconds) {
  MESSAGE(std::string(f.name) << ": " << c.programs << " programs (" << c.instructions << " instructions), "
                 << c.compared_interpreted << " compared interpreted, " << c.compared_compiled
                 << " compared compiled, " << c.elements << " elements, " << c.tolerated_flips
                 << " tolerated tainted int/bool flips, " << seconds << " s");
}

Counters run_and_report(const Family& f) {
  auto t0 = std::chrono::steady_clock::now();
  kiln::reset_stats();
  Counters c = run_family(f);
  report(f, c, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  const kiln::JitStats st = kiln::stats();
  MESSAGE(st.kernels_compiled << " kernels compiled in " << st.compile_seconds << " s, "
                              << st.cache_hits_memory << " cache hits, " << st.kernels_launched << " launches");
  CHECK(c.failures == 0);
  // The floor: a generator that silently produces nothing must fail.
  CHECK(c.compared_interpreted >= f.programs * 9 / 10);
  CHECK(c.instructions >= f.programs * f.min_len / 2);
  if (kiln::codegen::cpu_backend().available() && c.failures == 0)
    CHECK(c.compared_compiled >= f.programs / kCompileEvery);
  return c;
}

}  // namespace

TEST_CASE("jit differential: elementwise and views") {
  Weights w;
  w.leaf = 2; w.unary = 3; w.binary = 4; w.scalar_binary = 3; w.where_clamp = 2; w.cast = 1; w.view = 7;
  run_and_report({"elementwise and views", 10000, 1200, 4, 14, w});
}

TEST_CASE("jit differential: reductions") {
  Weights w;
  w.leaf = 1; w.unary = 2; w.binary = 3; w.scalar_binary = 2; w.where_clamp = 1; w.cast = 1; w.view = 3;
  w.reduce = 6;
  run_and_report({"reductions", 20000, 1200, 4, 12, w});
}

TEST_CASE("jit differential: matmul, cat and split mixed") {
  Weights w;
  w.leaf = 1; w.unary = 2; w.binary = 2; w.scalar_binary = 2; w.where_clamp = 1; w.cast = 1; w.view = 3;
  w.reduce = 2; w.matmul = 4; w.join = 4;
  run_and_report({"matmul, cat and split", 30000, 1000, 4, 12, w});
}

TEST_CASE("jit differential: in-place writes through views") {
  Weights w;
  w.leaf = 1; w.unary = 2; w.binary = 2; w.scalar_binary = 1; w.where_clamp = 1; w.cast = 1; w.view = 4;
  w.reduce = 1; w.inplace = 6;
  run_and_report({"in-place writes", 40000, 1200, 4, 12, w});
}

TEST_CASE("jit differential: every dtype and cast") {
  Weights w;
  w.leaf = 3; w.unary = 2; w.binary = 3; w.scalar_binary = 3; w.where_clamp = 1; w.cast = 6; w.view = 2;
  w.reduce = 2; w.matmul = 1; w.join = 1; w.inplace = 1;
  Family f{"every dtype and cast", 50000, 1200, 3, 10, w};
  Counters c = run_and_report(f);
  for (int d = 0; d < kiln::kNumDTypes; ++d) {
    CAPTURE(kiln::dtype_name(static_cast<DType>(d)));
    CHECK(c.root_dtypes[static_cast<size_t>(d)] >= 20);
  }
}
