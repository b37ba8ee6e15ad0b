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
// A floating result uses the tolerance of its own dtype or, when coarser, of
// the least precise dtype in which a tainting step on its path rounded (an
// exp of an int64 tensor is float32 even if it is then added to a float64).
// Ill-conditioned steps on a tainted argument widen that: after an exp or a
// pow the relative tolerance is a thousand times larger (the argument's
// error times its magnitude), and after a sin or cos nothing is promised (an
// ulp of exp(exp(exp(exp(x)))) is a whole period).
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

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "codegen/backend.h"
#include "core/reference/evaluate.h"
#include "graph_compare.h"
#include "graph_gen.h"
#include "jit/executor.h"
#include "kiln/jit.h"

using namespace kiln_diff;
using kiln::BufferPtr;
using kiln::NodePtr;

namespace {

// Compiling a kernel takes ~25 ms here, so compiled runs are sampled.
constexpr int kCompileEvery = 48;

// A soak run (not CI's): KILN_DIFF_SEED=N shifts every family's seeds by N
// (other programs than CI's fixed ones), KILN_DIFF_SCALE=K runs K times as
// many, KILN_DIFF_COMPILE_EVERY=M compiles every M-th program instead of
// every 48th. A failure prints its seed, so it replays with the same N.
int64_t env_int(const char* name, int64_t fallback) {
  const char* s = std::getenv(name);
  return s && *s ? std::atoll(s) : fallback;
}
const uint64_t kSeedShift = static_cast<uint64_t>(env_int("KILN_DIFF_SEED", 0));
const int kScale = static_cast<int>(std::max<int64_t>(1, env_int("KILN_DIFF_SCALE", 1)));
const int kCompileStep = static_cast<int>(std::max<int64_t>(1, env_int("KILN_DIFF_COMPILE_EVERY", kCompileEvery)));

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
  const uint64_t base = f.seed + kSeedShift;
  std::mt19937_64 lengths(base ^ 0x9e3779b97f4a7c15ULL);
  for (int i = 0; i < f.programs; ++i) {
    const uint64_t seed = base + static_cast<uint64_t>(i);
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
    if (compiled && i % kCompileStep == 0) modes.push_back(kCompiledFused);
    if (compiled && i % (2 * kCompileStep) == 0) modes.push_back(kCompiledUnfused);
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

void report(const Family& f, const Counters& c) {
  MESSAGE(std::string(f.name) << ": " << c.programs << " programs (" << c.instructions << " instructions), "
                 << c.compared_interpreted << " compared interpreted, " << c.compared_compiled
                 << " compared compiled, " << c.elements << " elements, " << c.tolerated_flips
                 << " tolerated tainted int/bool flips");
}

Counters run_and_report(Family f) {
  f.programs *= kScale;
  kiln::reset_stats();
  Counters c = run_family(f);
  report(f, c);
  const kiln::JitStats st = kiln::stats();
  MESSAGE(st.kernels_compiled << " kernels compiled, " << st.cache_hits_memory << " cache hits, " << st.kernels_launched << " launches");
  CHECK(c.failures == 0);
  // The floor: a generator that silently produces nothing must fail.
  CHECK(c.compared_interpreted >= f.programs * 9 / 10);
  CHECK(c.instructions >= f.programs * f.min_len / 2);
  if (kiln::codegen::cpu_backend().available() && c.failures == 0)
    CHECK(c.compared_compiled >= f.programs / kCompileStep);
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
